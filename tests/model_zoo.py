"""Small, deterministic ONNX models built with ``onnx.helper`` + numpy, for tests.

Every builder returns an ``onnx.ModelProto`` (opset 13 unless stated) whose single graph input has an
explicit batch dimension of 1 (or a symbolic ``"N"`` with ``dynamic_batch=True`` where offered).
Weights come from a seeded ``numpy.random.Generator``, so a given seed always yields the same bytes.

Helpers:
  * ``random_inputs(model, n, seed)`` -- N(0, 1) float32 inputs ``[n, *input_shape_without_batch]``.
  * ``qdq_quantize(float_model, calib, ...)`` -- onnxruntime ``quantize_static`` in QDQ format.
  * ``run_ort(model, x, all_intermediates=False)`` -- onnxruntime with graph optimizations disabled,
    optionally exposing every node output (incl. the int8/uint8 tensors of QDQ models).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = [
    "GraphBuilder",
    "conv_bn",
    "dw_separable",
    "mlp",
    "nhwc_tf_style",
    "qdq_quantize",
    "random_inputs",
    "resnet_tiny",
    "run_ort",
]


class GraphBuilder:
    """Accumulates nodes and initializers in a fixed order; names are unique and sequential."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._count = 0

    def fresh(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}_{self._count}"

    def const(self, prefix: str, value: np.ndarray) -> str:
        name = self.fresh(prefix)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: Sequence[str], **attrs: object) -> str:
        out = self.fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=f"{out}_node", **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1,
             gain: float = 1.0, **attrs: object) -> str:
        """Conv with He-initialised weights (std = gain * sqrt(2 / fan_in)) and a small bias."""
        fan_in = (cin // group) * k * k
        w = self.rng.normal(0.0, gain * np.sqrt(2.0 / fan_in), (cout, cin // group, k, k))
        b = self.rng.normal(0.0, 0.05, cout)
        if "pads" not in attrs and "auto_pad" not in attrs:
            attrs["pads"] = [k // 2] * 4
        ins = [x, self.const("w", w.astype(np.float32)), self.const("b", b.astype(np.float32))]
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], group=group, **attrs)

    def bn(self, x: str, c: int, var: Iterable[float] | None = None, gamma: Iterable[float] | None = None,
           gamma_scale: float = 1.0) -> str:
        """BatchNormalization with realistic random statistics (overridable ``var`` / ``gamma``)."""
        g = self.rng.uniform(0.5, 1.5, c) * gamma_scale if gamma is None else np.asarray(list(gamma))
        beta = self.rng.normal(0.0, 0.1, c)
        mean = self.rng.normal(0.0, 0.1, c)
        v = self.rng.uniform(0.5, 2.0, c) if var is None else np.asarray(list(var))
        params = [self.const(n, a.astype(np.float32)) for n, a in
                  (("gamma", g), ("beta", beta), ("mean", mean), ("var", v))]
        return self.op("BatchNormalization", [x, *params], epsilon=1e-5)

    def dense(self, x: str, n_in: int, n_out: int) -> str:
        w = self.rng.normal(0.0, np.sqrt(2.0 / n_in), (n_out, n_in)).astype(np.float32)
        b = self.rng.normal(0.0, 0.05, n_out).astype(np.float32)
        return self.op("Gemm", [x, self.const("fc_w", w), self.const("fc_b", b)], transB=1)

    def model(self, x_shape: Sequence[int | str], y: str, y_shape: Sequence[int | str], name: str,
              opset: int = 13) -> onnx.ModelProto:
        """Finish the graph: input ``x``, output ``y`` (the last node's output, renamed to "y")."""
        if self.nodes[-1].output[0] != y:
            raise ValueError(f"graph output {y!r} must be produced by the last node")
        self.nodes[-1].output[0] = "y"
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))],
            initializer=self.inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="hlsgen-tests")
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        return model


def _batch(dynamic_batch: bool) -> int | str:
    return "N" if dynamic_batch else 1


def _conv_norm(g: GraphBuilder, x: str, cin: int, cout: int, k: int, stride: int, scale: float,
               with_bn: bool) -> str:
    """Conv(+BN); ``scale`` multiplies BN gamma, or the conv weights' gain when there is no BN."""
    pads = [k // 2] * 4
    if not with_bn:
        return g.conv(x, cin, cout, k, stride, gain=scale, pads=pads)
    return g.bn(g.conv(x, cin, cout, k, stride, pads=pads), cout, gamma_scale=scale)


def _basic_block(g: GraphBuilder, x: str, cin: int, cout: int, stride: int, with_bn: bool) -> str:
    """Conv3x3+BN+Relu, Conv3x3+BN, Add(skip), Relu; the skip input is ~3x larger than the residual."""
    h = g.op("Relu", [_conv_norm(g, x, cin, cout, 3, stride, 1.0, with_bn)])
    h = _conv_norm(g, h, cout, cout, 3, 1, 0.3, with_bn)
    skip = x
    if stride != 1 or cin != cout:
        skip = _conv_norm(g, x, cin, cout, 1, stride, 1.0, with_bn)
    return g.op("Relu", [g.op("Add", [skip, h])])


def resnet_tiny(seed: int = 0, with_bn: bool = True, dynamic_batch: bool = False,
                mean: bool = False) -> onnx.ModelProto:
    """Two-block ResNet on [1,3,16,16] -> softmax over 10 classes.

    The residual Adds see inputs of clearly different magnitude (skip ~3x the residual branch) so
    their quantization scales differ. ``with_bn=False`` omits every BatchNormalization. ``mean=True``
    pools as PyTorch 2 exports AdaptiveAvgPool2d(1) + flatten: ReduceMean(axes [2, 3] as an input,
    keepdims 0) at opset 18, instead of GlobalAveragePool + Flatten at opset 13.
    """
    g = GraphBuilder(seed)
    h = g.op("Relu", [_conv_norm(g, "x", 3, 8, 3, 1, 1.0, with_bn)])
    h = _basic_block(g, h, 8, 8, 1, with_bn)
    h = _basic_block(g, h, 8, 16, 2, with_bn)
    if mean:
        h = g.op("ReduceMean", [h, g.const("axes", np.array([-2, -1], np.int64))], keepdims=0)
    else:
        h = g.op("Flatten", [g.op("GlobalAveragePool", [h])], axis=1)
    y = g.op("Softmax", [g.dense(h, 16, 10)], axis=1)
    b = _batch(dynamic_batch)
    return g.model([b, 3, 16, 16], y, [b, 10], "resnet_tiny", opset=18 if mean else 13)


def dw_separable(seed: int = 0, dynamic_batch: bool = False) -> onnx.ModelProto:
    """Conv+Relu6, depthwise (SAME_UPPER, stride 2)+BN+Relu, pointwise+LeakyRelu, MaxPool, AvgPool, Gemm."""
    g = GraphBuilder(seed)
    h = g.conv("x", 8, 16, 3)
    lo, hi = g.const("min", np.array(0.0, np.float32)), g.const("max", np.array(6.0, np.float32))
    h = g.op("Clip", [h, lo, hi])
    h = g.conv(h, 16, 16, 3, stride=2, group=16, auto_pad="SAME_UPPER")
    h = g.op("Relu", [g.bn(h, 16)])
    h = g.op("LeakyRelu", [g.conv(h, 16, 24, 1, pads=[0, 0, 0, 0])], alpha=0.1)
    h = g.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = g.op("AveragePool", [h], kernel_shape=[2, 2], strides=[1, 1], count_include_pad=0)
    h = g.op("Flatten", [h], axis=1)
    y = g.dense(h, 24 * 2 * 2, 10)
    b = _batch(dynamic_batch)
    return g.model([b, 8, 12, 12], y, [b, 10], "dw_separable")


def mlp(seed: int = 0, dynamic_batch: bool = False) -> onnx.ModelProto:
    """MatMul+Add+Relu (32->24), Gemm(transB=1, alpha=0.5, beta=2)+Relu (24->16), MatMul+Add (16->10)."""
    g = GraphBuilder(seed)
    rng = g.rng
    h = g.op("MatMul", ["x", g.const("w", rng.normal(0, np.sqrt(2 / 32), (32, 24)).astype(np.float32))])
    h = g.op("Relu", [g.op("Add", [h, g.const("b", rng.normal(0, 0.05, 24).astype(np.float32))])])
    w2 = rng.normal(0, 2 * np.sqrt(2 / 24), (16, 24)).astype(np.float32)  # alpha=0.5 compensated
    b2 = rng.normal(0, 0.025, 16).astype(np.float32)  # beta=2.0 compensated
    h = g.op("Gemm", [h, g.const("w", w2), g.const("b", b2)], transB=1, alpha=0.5, beta=2.0)
    h = g.op("Relu", [h])
    h = g.op("MatMul", [h, g.const("w", rng.normal(0, np.sqrt(2 / 16), (16, 10)).astype(np.float32))])
    y = g.op("Add", [h, g.const("b", rng.normal(0, 0.05, 10).astype(np.float32))])
    b = _batch(dynamic_batch)
    return g.model([b, 32], y, [b, 10], "mlp")


def conv_bn(var: Iterable[float], seed: int = 0, gamma: Iterable[float] | None = None, relu: bool = True,
            dynamic_batch: bool = False) -> onnx.ModelProto:
    """Conv3x3(4->6, pad 1) + BN(+Relu) on [1,4,8,8] with the given BN variance (and optional gamma).

    Meant for edge cases: zero / tiny / negative / NaN variance, zero or negative gamma.
    """
    var = [float(v) for v in var]
    if len(var) != 6:
        raise ValueError(f"conv_bn needs 6 variances, got {len(var)}")
    g = GraphBuilder(seed)
    h = g.bn(g.conv("x", 4, 6, 3), 6, var=var, gamma=gamma)
    if relu:
        h = g.op("Relu", [h])
    b = _batch(dynamic_batch)
    return g.model([b, 4, 8, 8], h, [b, 6, 8, 8], "conv_bn")


def nhwc_tf_style(seed: int = 0) -> onnx.ModelProto:
    """tf2onnx-like NHWC graph, opset 11: Transpose, asymmetric Pad (SAME), Conv s2, Relu, Transpose,
    Reshape([1,-1] from a Constant node), MatMul + Add."""
    g = GraphBuilder(seed)
    h = g.op("Transpose", ["x"], perm=[0, 3, 1, 2])
    pads = g.const("pads", np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64))  # SAME, k3 s2 on 8: end-only
    h = g.op("Pad", [h, pads], mode="constant")
    h = g.op("Relu", [g.conv(h, 3, 8, 3, stride=2, pads=[0, 0, 0, 0])])
    h = g.op("Transpose", [h], perm=[0, 2, 3, 1])
    shape = g.op("Constant", [], value=numpy_helper.from_array(np.array([1, -1], np.int64), "shape"))
    h = g.op("Reshape", [h, shape])
    w = g.rng.normal(0, np.sqrt(2 / 128), (128, 10)).astype(np.float32)
    h = g.op("MatMul", [h, g.const("w", w)])
    y = g.op("Add", [h, g.const("b", g.rng.normal(0, 0.05, 10).astype(np.float32))])
    return g.model([1, 8, 8, 3], y, [1, 10], "nhwc_tf_style", opset=11)


def reshaped_weight_mlp(seed: int = 20) -> onnx.ModelProto:
    """x[1, 16] -> MatMul(Reshape(W1 flat)) + b1 -> Relu -> MatMul(W2) + b2 -> y[1, 4]. W1 is computed
    at load (a Reshape of a 1-D constant) and shifted positive, so its MinMax zero point is far from 0."""
    from onnx_builders import init, model, node, vi

    rng = np.random.default_rng(seed)
    nodes = [node("Reshape", ["w1_flat", "w1_shape"], ["w1"]),
             node("MatMul", ["x", "w1"], ["h"]), node("Add", ["h", "b1"], ["hb"]), node("Relu", ["hb"], ["r"]),
             node("MatMul", ["r", "w2"], ["m"]), node("Add", ["m", "b2"], ["y"])]
    w1 = rng.standard_normal(16 * 8) * 0.3 + 0.25
    inits = [init("w1_flat", w1), init("w1_shape", np.array([16, 8]), np.int64),
             init("b1", rng.standard_normal(8) * 0.1),
             init("w2", rng.standard_normal((8, 4)) * 0.4), init("b2", rng.standard_normal(4) * 0.1)]
    return model(nodes, [vi("x", [1, 16])], [vi("y", [1, 4])], inits, opset=13)


def _input_shape(model: onnx.ModelProto) -> tuple[str, list[int]]:
    """Name and per-sample shape (batch dim dropped) of the first non-initializer graph input."""
    inits = {t.name for t in model.graph.initializer}
    inp = next(i for i in model.graph.input if i.name not in inits)
    dims = inp.type.tensor_type.shape.dim[1:]
    return inp.name, [d.dim_value for d in dims]


def random_inputs(model: onnx.ModelProto, n: int, seed: int = 0) -> np.ndarray:
    """float32 ``[n, *input_shape_without_batch]`` drawn from N(0, 1) with ``default_rng(seed)``."""
    _, shape = _input_shape(model)
    return np.random.default_rng(seed).standard_normal((n, *shape)).astype(np.float32)


def _feed(model: onnx.ModelProto, x: np.ndarray | dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    if isinstance(x, dict):
        return x
    name, shape = _input_shape(model)
    x = np.asarray(x, dtype=np.float32)
    return {name: x[None] if x.ndim == len(shape) else x}


def _calib_reader(model: onnx.ModelProto, calib: np.ndarray):  # -> CalibrationDataReader
    from onnxruntime.quantization import CalibrationDataReader

    feeds = [_feed(model, sample) for sample in np.asarray(calib, dtype=np.float32)]

    class _Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter(feeds)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self._it, None)

    return _Reader()


def qdq_quantize(float_model: onnx.ModelProto, calib: np.ndarray, per_channel: bool = True,
                 activation_type: str = "int8", tmp_dir: str | Path | None = None,
                 extra_options: dict | None = None) -> onnx.ModelProto:
    """onnxruntime ``quantize_static`` (QDQ, int8 weights, MinMax calibration, no quant_pre_process).

    ``calib`` holds samples without (or with a leading 1) batch dim, one calibration batch each.
    Temporary files go under ``tmp_dir`` (a fresh temporary directory when None).

    What ORT 1.32 emits for these models (default extra_options suffice; ActivationSymmetric=False):
    asymmetric int8/uint8 activation Q/DQ pairs, int8 weights (per-channel axis 0 for Conv/Gemm),
    int32 biases; Relu/Clip vanish (their output range becomes the producer's output QDQ);
    BatchNormalization stays a float op between QDQs with per-tensor int8 gamma, int32 beta and float
    mean/var; Softmax and LeakyRelu stay float.
    """
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    act = {"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}[activation_type]
    opset = next(o.version for o in float_model.opset_import if o.domain in ("", "ai.onnx"))
    if per_channel and opset < 13:  # ORT would emit DequantizeLinear(axis=...), invalid before opset 13
        raise ValueError(f"per-channel QDQ needs opset >= 13 (model has {opset}); use per_channel=False")
    with tempfile.TemporaryDirectory(dir=tmp_dir) as tmp:
        src, dst = Path(tmp) / "float.onnx", Path(tmp) / "qdq.onnx"
        onnx.save(float_model, src)
        quantize_static(src, dst, _calib_reader(float_model, calib), quant_format=QuantFormat.QDQ,
                        per_channel=per_channel, activation_type=act, weight_type=QuantType.QInt8,
                        extra_options=extra_options)
        return onnx.load(dst)


def run_ort(model: onnx.ModelProto, x: np.ndarray | dict[str, np.ndarray],
            all_intermediates: bool = False) -> dict[str, np.ndarray]:
    """Run with onnxruntime (CPU, ORT_DISABLE_ALL, one thread); returns {output name: array}.

    ``x`` is a feed dict or an array for the single input (a missing batch dim is added). With
    ``all_intermediates`` every node output is returned, including QDQ models' int8/uint8 tensors.
    """
    import onnxruntime as ort

    if all_intermediates:
        from hlsgen.interop.ort import expose_all

        model = expose_all(model)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, _feed(model, x)), strict=True))

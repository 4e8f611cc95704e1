"""Shared helpers for the example model scripts (examples/*/make_model.py).

Builds small float ONNX models with ``onnx.helper`` + a seeded numpy Generator, makes synthetic
"images" (no dataset can be downloaded), and fits BatchNormalization running statistics to those
images so that every BN really normalises its input. Everything is deterministic, on every machine:
nodes and initializers are emitted in a fixed order, numpy's Generator draws the same numbers
everywhere, images lie on a grid of 2^-10 and the BN statistics (computed in float64 by hlsgen's
float reference, not by onnxruntime, whose float kernels differ between CPUs) are rounded to 6
significant digits, so a last-bit difference of the host's FFT or BLAS cannot reach the files
(README.md's printed numbers, run by tests/docs, depend on it). The QDQ example's scales still come
from onnxruntime's float calibration run (quantize_static).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
GRID = 1024  # synthetic images are multiples of 1/GRID


class Builder:
    """Accumulates nodes and initializers; tensor names are unique and sequential."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.nodes: list[onnx.NodeProto] = []
        self.inits: dict[str, onnx.TensorProto] = {}
        self._count = 0

    def fresh(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}_{self._count}"

    def const(self, prefix: str, value: np.ndarray) -> str:
        name = self.fresh(prefix)
        self.inits[name] = numpy_helper.from_array(np.ascontiguousarray(value, dtype=np.float32), name)
        return name

    def op(self, op_type: str, inputs: Sequence[str], **attrs: object) -> str:
        out = self.fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=f"{out}_node", **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1,
             bias: bool = False) -> str:
        """Conv, 'same' padding for odd k, He-initialised weights (std = sqrt(2 / fan_in))."""
        fan_in = (cin // group) * k * k
        w = self.rng.normal(0.0, np.sqrt(2.0 / fan_in), (cout, cin // group, k, k))
        ins = [x, self.const("w", w)]
        if bias:
            ins.append(self.const("b", self.rng.normal(0.0, 0.05, cout)))
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4,
                       group=group)

    def bn(self, x: str, c: int) -> str:
        """BatchNormalization; gamma ~ U(0.5, 1.5), beta ~ N(0, 0.1); mean/var are set by ``fit_bn``."""
        gamma = self.rng.uniform(0.5, 1.5, c)
        beta = self.rng.normal(0.0, 0.1, c)
        ins = [x, self.const("gamma", gamma), self.const("beta", beta),
               self.const("mean", np.zeros(c)), self.const("var", np.ones(c))]
        return self.op("BatchNormalization", ins, epsilon=1e-5)

    def dense(self, x: str, n_in: int, n_out: int) -> str:
        w = self.rng.normal(0.0, np.sqrt(2.0 / n_in), (n_out, n_in))
        b = self.rng.normal(0.0, 0.05, n_out)
        return self.op("Gemm", [x, self.const("fc_w", w), self.const("fc_b", b)], transB=1)

    def model(self, in_shape: Sequence[int | str], out: str | None = None,
              name: str = "model") -> onnx.ModelProto:
        """Graph from input "x" to ``out`` (default: last node's output) over the nodes that exist."""
        out = out or self.nodes[-1].output[0]
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)],
            initializer=list(self.inits.values()),
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="hlsgen-examples")
        model.ir_version = 8
        return model


def finish(b: Builder, in_shape: Sequence[int], out_shape: Sequence[int], name: str) -> onnx.ModelProto:
    """Final model: last node's output renamed to "y" with a fully typed shape; checked."""
    b.nodes[-1].output[0] = "y"
    model = b.model(in_shape, "y", name)
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape)))
    onnx.checker.check_model(model, full_check=True)
    return model


def session(model: onnx.ModelProto):  # -> onnxruntime.InferenceSession
    """Single-threaded CPU session with graph optimizations disabled (bit-reproducible on one machine;
    benchmarks/mlperf_models.py fits its BatchNorms with it)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def fit_bn(b: Builder, images: np.ndarray) -> None:
    """Set every BN's running mean/var to the per-channel statistics of its input on ``images``.

    BNs are fitted in graph order, each on a truncated copy of the graph (with a symbolic batch),
    so downstream statistics see the already-normalised upstream layers.
    """
    from hlsgen.frontend import from_onnx_model
    from hlsgen.golden import run_graph

    for idx, node in enumerate(b.nodes):
        if node.op_type != "BatchNormalization":
            continue
        partial = Builder(b.rng)
        partial.nodes, partial.inits = b.nodes[:idx], b.inits
        graph = from_onnx_model(partial.model(["N", *images.shape[1:]], node.input[0]))
        act = run_graph(graph, images.astype(np.float64))[graph.outputs[0]]
        mean, var = act.mean(axis=(0, 2, 3)), act.var(axis=(0, 2, 3))
        for name, value in ((node.input[3], mean), (node.input[4], var)):
            b.inits[name] = numpy_helper.from_array(significant(value, 6).astype(np.float32), name)


def significant(v: np.ndarray, digits: int) -> np.ndarray:
    """`v` rounded to `digits` significant decimal digits (through their decimal text: exact)."""
    return np.array([float(f"{x:.{digits - 1}e}") for x in np.ravel(v)]).reshape(np.shape(v))


def smooth_images(rng: np.random.Generator, n: int, shape: Sequence[int], sigma: float = 3.0) -> np.ndarray:
    """Synthetic images: Gaussian low-pass filtered white noise (blur ``sigma`` pixels), each image
    normalised to mean 0, std 1, then rounded to multiples of 1/GRID. float32 ``[n, *shape]``; stands
    in for a real dataset."""
    c, h, w = shape
    noise = rng.standard_normal((n, c, h, w))
    fy, fx = np.fft.fftfreq(h)[:, None], np.fft.rfftfreq(w)[None, :]
    gain = np.exp(-2.0 * (np.pi * sigma) ** 2 * (fy**2 + fx**2))
    img = np.fft.irfft2(np.fft.rfft2(noise) * gain, s=(h, w))
    img -= img.mean(axis=(1, 2, 3), keepdims=True)
    img /= img.std(axis=(1, 2, 3), keepdims=True)
    return (np.round(img * GRID) / GRID).astype(np.float32)  # on the grid: the host's FFT rounding is gone


def save(model: onnx.ModelProto, path: Path) -> None:
    path.write_bytes(model.SerializeToString())
    print(f"wrote {path}")


def save_npy(array: np.ndarray, path: Path) -> None:
    np.save(path, array)
    print(f"wrote {path} {array.dtype}{list(array.shape)}")

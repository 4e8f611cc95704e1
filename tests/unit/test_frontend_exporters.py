"""Exporters' graphs as they come (issue 7): each idiom built synthetically, checked against onnxruntime.

  * opsets 6..8 are upgraded with onnx.version_converter and compute the same as before;
  * a fixed batch in the declared input shape (a PyTorch trace of a whole data set) becomes 1;
  * 1-D Conv (rank 3, Keras "same" pads (1, 2)) becomes a 2-D Conv with H = 1, float and QDQ;
  * Flatten(axis=0) at batch 1;
  * a weight stored transposed behind a quantizer (Brevitas: Quant(W) -> Transpose -> MatMul);
  * 1-bit signed Quant and BipolarQuant of weights: codes +-1 with x >= 0 -> +1 (qonnx semantics);
  * an input quantizer behind a Transpose/Reshape: a QDQ model needs no calibration data.
The float checks compare hlsgen's float reference of the translated graph with onnxruntime on the
original model (floats, so a tolerance); integer codes compare with equality.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from model_zoo import qdq_quantize, run_ort
from onnx_builders import init, model, node, vi

from hlsgen import compile_model, float_reference, run_golden
from hlsgen.frontend.from_onnx import from_onnx_model

RNG = np.random.default_rng(7)
QONNX = "qonnx.custom_op.general"


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def keras_dense_opset7() -> onnx.ModelProto:
    nodes = [node("MatMul", ["x", "w1"], ["m1"]), node("Add", ["m1", "b1"], ["a1"]), node("Relu", ["a1"], ["r1"]),
             node("MatMul", ["r1", "w2"], ["m2"]), node("Add", ["m2", "b2"], ["y"])]
    inits = [init("w1", rand(16, 8)), init("b1", rand(8)), init("w2", rand(8, 4)), init("b2", rand(4))]
    return model(nodes, [vi("x", [1, 16])], [vi("y", [1, 4])], inits, opset=7)


def pytorch03_gemm_bn_opset6() -> onnx.ModelProto:
    """PyTorch 0.3: Gemm(broadcast=1), BatchNorm1d as Unsqueeze -> BatchNormalization(is_test) -> Squeeze,
    declared with the whole data set as batch."""
    nodes = [node("Gemm", ["x", "w", "b"], ["g"], broadcast=1, transB=1),
             node("Relu", ["g"], ["y"])]
    inits = [init("w", rand(6, 16)), init("b", rand(6))]
    return model(nodes, [vi("x", [789444, 16])], [vi("y", [789444, 6])], inits, opset=6)


def test_old_opsets_are_upgraded_and_compute_the_same() -> None:
    m = keras_dense_opset7()
    x = rand(5, 16)
    c = compile_model(from_onnx_model(m), calib=x)
    (ours,) = float_reference(c, x)
    want = np.concatenate([run_ort(m, xi[None])["y"] for xi in x])
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5)
    assert c.source.meta["opset"] == 13


def test_opset6_gemm_broadcast_and_fixed_batch() -> None:
    m = pytorch03_gemm_bn_opset6()
    g = from_onnx_model(m)
    assert g.tensor(g.inputs[0]).shape == (1, 16)
    x = rand(3, 16)
    (ours,) = float_reference(compile_model(from_onnx_model(m), calib=x), x)
    w, b = onnx.numpy_helper.to_array(m.graph.initializer[0]), onnx.numpy_helper.to_array(m.graph.initializer[1])
    np.testing.assert_allclose(ours, np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-5)


def conv1d_model() -> onnx.ModelProto:
    nodes = [node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
             node("Conv", ["t", "w", "b"], ["c"], name="conv1d", kernel_shape=[4], pads=[1, 2], strides=[1],
                  dilations=[1]),
             node("Relu", ["c"], ["r"]),
             node("Transpose", ["r"], ["rt"], perm=[0, 2, 1]),
             node("Flatten", ["rt"], ["f"], axis=0),
             node("Gemm", ["f", "wd", "bd"], ["y"])]
    inits = [init("w", rand(3, 4, 4)), init("b", rand(3)), init("wd", rand(30, 5)), init("bd", rand(5))]
    return model(nodes, [vi("x", [1, 10, 4])], [vi("y", [1, 5])], inits, opset=13)


def test_conv1d_becomes_2d_and_matches_onnxruntime() -> None:
    m = conv1d_model()
    g = from_onnx_model(m)
    conv = g.node("conv1d")
    assert (conv.attr("pads"), g.tensor(conv.inputs[1]).shape) == ((0, 1, 0, 2), (3, 4, 1, 4))
    x = rand(4, 10, 4)
    (ours,) = float_reference(compile_model(from_onnx_model(m), calib=x), x)
    want = np.concatenate([run_ort(m, xi[None])["y"] for xi in x])
    np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-4)


def test_qdq_conv1d_with_input_quantizer_behind_transpose_needs_no_calibration(tmp_path) -> None:
    x = rand(8, 10, 4)
    q = qdq_quantize(conv1d_model(), x, tmp_dir=tmp_path)
    first_q = next(n for n in q.graph.node if n.op_type == "QuantizeLinear")
    assert first_q.input[0] != q.graph.input[0].name  # the quantizer sits behind the Transpose
    c = compile_model(from_onnx_model(q))  # no calibration data
    x_q = c.graph.tensor(c.graph.inputs[0]).qtype
    scale = onnx.numpy_helper.to_array(next(t for t in q.graph.initializer if t.name == first_q.input[1]))
    assert x_q is not None and float(x_q.scale) == float(scale)
    codes = run_golden(c, x, integer=True)[0]
    assert codes.dtype.kind == "i" and codes.shape == (8, 5)


def brevitas_tfc_layer(op: str) -> onnx.ModelProto:
    """Brevitas TFC idiom: weight [out, in] through a bipolar quantizer, then Transpose, then MatMul."""
    quant = (node("BipolarQuant", ["w", "s"], ["wq"], name="wquant", domain=QONNX) if op == "BipolarQuant" else
             node("Quant", ["w", "s", "z", "one"], ["wq"], name="wquant", domain=QONNX, signed=1, narrow=1))
    nodes = [quant, node("Transpose", ["wq"], ["wt"], perm=[1, 0]), node("MatMul", ["x", "wt"], ["y"])]
    w = rand(6, 12)
    w[0, :3] = 0.0  # x >= 0 -> +1: zeros are +1
    inits = [init("w", w), init("s", 0.5), init("z", 0.0), init("one", 1.0)]
    return model(nodes, [vi("x", [1, 12])], [vi("y", [1, 6])], inits, opset=11, extra_domains=[QONNX])


@pytest.mark.parametrize("op", ["BipolarQuant", "Quant"])
def test_bipolar_weight_behind_transpose(op: str) -> None:
    m = brevitas_tfc_layer(op)
    w = onnx.numpy_helper.to_array(m.graph.initializer[0])
    x = rand(4, 12)
    c = compile_model(from_onnx_model(m), calib=x)
    (ours,) = float_reference(c, x)
    np.testing.assert_allclose(ours, x @ (np.where(w >= 0, 1.0, -1.0) * 0.5).T, rtol=1e-5, atol=1e-5)
    codes = next(t for t in c.graph.tensors.values() if t.integer and t.data is not None and 12 in t.shape)
    assert set(np.unique(codes.data)) <= {-1, 1}


def test_flat_input_reshaped_then_quantized_needs_no_calibration(tmp_path) -> None:
    """A flat [1, 40] input reshaped to [1, 1, 5, 8] before the first quantizer (a KWS-style model)."""
    nodes = [node("Reshape", ["x", "shape"], ["r"]),
             node("Conv", ["r", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", ["c"], ["y"])]
    inits = [init("shape", np.array([1, 1, 5, 8]), np.int64), init("w", rand(2, 1, 3, 3)), init("b", rand(2))]
    f = model(nodes, [vi("x", [1, 40])], [vi("y", [1, 2, 5, 8])], inits, opset=13)
    x = rand(8, 40)
    c = compile_model(from_onnx_model(qdq_quantize(f, x, tmp_dir=tmp_path)))
    assert c.graph.tensor(c.graph.inputs[0]).qtype is not None


def test_constant_subgraphs_are_folded_at_load() -> None:
    """A weight computed at run time (int8 codes -> Cast -> Mul by a scale -> Reshape, as a CNTK or
    hand-written export stores it) and a target shape computed from a constant: both are evaluated once."""
    codes = RNG.integers(-127, 128, (4 * 12,)).astype(np.int8)
    nodes = [node("Cast", ["wc"], ["wf"], to=onnx.TensorProto.FLOAT),
             node("Mul", ["wf", "ws"], ["wm"]),
             node("Reshape", ["wm", "wshape"], ["w"]),
             node("Shape", ["w"], ["wsh"]),
             node("Gather", ["wsh", "one"], ["n_out"], axis=0),
             node("Concat", ["batch", "n_out"], ["yshape"], axis=0),
             node("MatMul", ["x", "w"], ["m"]),
             node("Reshape", ["m", "yshape"], ["y"])]
    inits = [init("wc", codes, np.int8), init("ws", 0.05), init("wshape", np.array([12, 4]), np.int64),
             init("one", np.array([1]), np.int64), init("batch", np.array([1]), np.int64)]
    m = model(nodes, [vi("x", [1, 12])], [vi("y", [1, 4])], inits, opset=13)
    g = from_onnx_model(m)
    assert {n.op for n in g.nodes} <= {"MatMul", "Reshape"}  # no Cast, Mul, Shape, Gather, Concat left
    x = rand(3, 12)
    (ours,) = float_reference(compile_model(g, calib=x), x)
    np.testing.assert_allclose(ours, x @ (codes.astype(np.float32) * np.float32(0.05)).reshape(12, 4),
                               rtol=1e-5, atol=1e-5)


def test_reshape_of_a_quantized_weight_is_folded() -> None:
    """QONNX Quant(W [out, in, 1, 1]) -> Reshape [out, in] -> Transpose -> MatMul (a 1x1 conv weight reused)."""
    nodes = [node("Quant", ["w", "s", "z", "bits"], ["wq"], name="wquant", domain=QONNX, signed=1, narrow=1),
             node("Reshape", ["wq", "shape"], ["w2"]),
             node("Transpose", ["w2"], ["wt"], perm=[1, 0]),
             node("MatMul", ["x", "wt"], ["y"])]
    w = rand(6, 12, 1, 1)
    inits = [init("w", w), init("s", 0.25), init("z", 0.0), init("bits", 4.0),
             init("shape", np.array([6, 12]), np.int64)]
    m = model(nodes, [vi("x", [1, 12])], [vi("y", [1, 6])], inits, opset=11, extra_domains=[QONNX])
    x = rand(3, 12)
    (ours,) = float_reference(compile_model(from_onnx_model(m), calib=x), x)
    wq = np.clip(np.round(w.reshape(6, 12) / 0.25), -7, 7) * 0.25
    np.testing.assert_allclose(ours, x @ wq.T, rtol=1e-5, atol=1e-5)


def test_pytorch_batchnorm1d_between_unsqueeze_and_squeeze_folds() -> None:
    nodes = [node("Gemm", ["x", "w", "b"], ["g"], transB=1),
             node("Unsqueeze", ["g", "ax"], ["u"]),
             node("BatchNormalization", ["u", "gamma", "beta", "mu", "var"], ["n"], epsilon=1e-5),
             node("Squeeze", ["n", "ax"], ["s"]),
             node("Relu", ["s"], ["y"])]
    inits = [init("w", rand(6, 16)), init("b", rand(6)), init("ax", np.array([2]), np.int64),
             init("gamma", rand(6)), init("beta", rand(6)), init("mu", rand(6)), init("var", np.abs(rand(6)) + 0.5)]
    m = model(nodes, [vi("x", [1, 16])], [vi("y", [1, 6])], inits, opset=13)
    g = from_onnx_model(m)
    assert not {"Unsqueeze", "Squeeze", "Reshape"} & {n.op for n in g.nodes}
    x = rand(4, 16)
    c = compile_model(g, calib=x)
    assert [n.op for n in c.float_graph.nodes] == ["Gemm"]  # the BatchNorm folded into the Gemm
    (ours,) = float_reference(c, x)
    want = np.concatenate([run_ort(m, xi[None])["y"] for xi in x])
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5)


def qkeras_like() -> onnx.ModelProto:
    """A QKeras export: float input straight into a conv whose weights and output are quantized."""
    nodes = [node("Quant", ["w", "sw", "z", "b4"], ["wq"], name="wquant", domain=QONNX, signed=1, narrow=1),
             node("Conv", ["x", "wq"], ["c"], kernel_shape=[1, 1]),
             node("Relu", ["c"], ["r"]),
             node("Quant", ["r", "so", "z", "b8"], ["y"], name="oquant", domain=QONNX, signed=0, narrow=0)]
    inits = [init("w", rand(3, 2, 1, 1)), init("sw", 0.125), init("z", 0.0), init("b4", 4.0), init("b8", 8.0),
             init("so", 0.05)]
    return model(nodes, [vi("x", [1, 2, 4, 4])], [vi("y", [1, 3, 4, 4])], inits, opset=11, extra_domains=[QONNX])


def test_model_without_input_quantizer_asks_for_data_or_quant_input() -> None:
    from hlsgen.config.compile import config_from_dict
    from hlsgen.errors import HlsgenError

    g = from_onnx_model(qkeras_like())
    with pytest.raises(HlsgenError, match=r"--calib DATA.npy\) or the input quantizer in the config \(quant.input"):
        compile_model(g)
    cfg = config_from_dict({"quant": {"input": {"scale": 1 / 64, "zero_point": 0}}}, "cfg")
    c = compile_model(g, config=cfg)
    qx = c.graph.tensor(c.graph.inputs[0]).qtype
    assert qx is not None and (float(qx.scale), int(qx.zero_point), qx.int.bits) == (1 / 64, 0, 8)
    ranged = compile_model(g, config=config_from_dict({"quant": {"input": {"min": -2.0, "max": 2.0}}}, "cfg"))
    qr = ranged.graph.tensor(ranged.graph.inputs[0]).qtype
    assert qr is not None and float(qr.scale) == 4.0 / 255


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_tail_runs_on_the_host(mode: str) -> None:
    """ESPCN: Conv -> Relu -> Conv -> DepthToSpace; the sub-pixel shuffle is a host-side tail op."""
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", ["c1"], ["r1"]),
             node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("DepthToSpace", ["c2"], ["y"], name="d2s", blocksize=3, mode=mode)]
    inits = [init("w1", rand(4, 3, 3, 3)), init("b1", rand(4)), init("w2", rand(27, 4, 3, 3)), init("b2", rand(27))]
    m = model(nodes, [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 12, 12])], inits, opset=13)
    x = rand(2, 3, 4, 4)
    c = compile_model(from_onnx_model(m), calib=x)
    assert "d2s" not in {n.name for n in c.graph.nodes if n.op.startswith("Q")}
    (ours,) = float_reference(c, x)
    want = np.concatenate([run_ort(m, xi[None])["y"] for xi in x])
    np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-4)
    (golden,) = run_golden(c, x)
    assert golden.shape == (2, 3, 12, 12)


def test_opset22_and_a_24_bit_bias_quant() -> None:
    """Opset 22 is accepted; a QONNX Quant of a bias may be up to 32 bits (Brevitas Int24/Int32 bias)."""
    nodes = [node("Quant", ["b", "sb", "z", "bits"], ["bq"], name="bquant", domain=QONNX, signed=1, narrow=0),
             node("Conv", ["x", "w", "bq"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", ["c"], ["y"])]
    inits = [init("b", rand(4)), init("sb", 2.0 ** -20), init("z", 0.0), init("bits", 24.0),
             init("w", rand(4, 2, 3, 3))]
    m = model(nodes, [vi("x", [1, 2, 5, 5])], [vi("y", [1, 4, 5, 5])], inits, opset=22, extra_domains=[QONNX])
    x = rand(4, 2, 5, 5)
    c = compile_model(from_onnx_model(m), calib=x)
    assert c.source.meta["opset"] == 22
    b = onnx.numpy_helper.to_array(m.graph.initializer[0]).astype(np.float64)
    bq = np.clip(np.round(b / 2.0 ** -20), -(2 ** 23), 2 ** 23 - 1) * 2.0 ** -20
    float_graph = m
    float_graph.graph.node[1].input[2] = "bf"
    float_graph.graph.initializer.append(onnx.numpy_helper.from_array(bq.astype(np.float32), "bf"))
    del float_graph.graph.node[0]
    (ours,) = float_reference(c, x)
    want = np.concatenate([run_ort(float_graph, xi[None])["y"] for xi in x])
    np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-4)

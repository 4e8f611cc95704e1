"""The compiler passes, on models from tests/model_zoo.py and small hand-built ONNX graphs.

Float rewrites are checked against the unrewritten graph (the float golden model on the source) and
against independent numpy references built from the ONNX initializers; integer attributes against
exact rational arithmetic. Every exactness check comes with a negative control.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import model_zoo as zoo
import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from hlsgen.config.compile import BnConfig, Config, config_from_dict
from hlsgen.errors import HlsgenError, UnsupportedModelError
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.golden import run_graph
from hlsgen.ir import INT8, Graph, format_graph
from hlsgen.numerics import activation_qtype
from hlsgen.passes import FLOAT_PASSES, QUANT_PASSES, PassContext
from hlsgen.passes.calibrate import calibrate
from hlsgen.passes.cleanup import cleanup
from hlsgen.passes.fold_bn import fold_bn
from hlsgen.passes.quantize import quantize
from hlsgen.pipeline import compile_model, float_stage

pytest.importorskip("onnxruntime")  # model_zoo.qdq_quantize

NORMAL_VAR = [1.0, 0.5, 2.0, 1.5, 0.8, 1.2]
FLOOR = 2.0 ** -13  # exactly representable in float32, so "at the floor" is exact


# ---- helpers --------------------------------------------------------------------------------------
def ir(model: onnx.ModelProto, name: str = "model") -> Graph:
    return from_onnx_model(model, f"{name}.onnx")


def inits(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def onnx_node(model: onnx.ModelProto, op: str, index: int = 0) -> onnx.NodeProto:
    return [n for n in model.graph.node if n.op_type == op][index]


def stage(stages: list[tuple[str, Graph]], name: str) -> Graph:
    return dict(stages)[name]


def ops(graph: Graph) -> list[str]:
    return [n.op for n in graph.nodes]


def out(graph: Graph, x: np.ndarray) -> np.ndarray:
    (y,) = (run_graph(graph, x)[o] for o in graph.outputs)
    return np.asarray(y, dtype=np.float64)


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b|, per channel (axis 1) and max'ed: a channel near 0 keeps its own scale."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    a2, b2 = np.moveaxis(a, 1, 0).reshape(a.shape[1], -1), np.moveaxis(b, 1, 0).reshape(b.shape[1], -1)
    num = np.abs(a2 - b2).max(axis=1)
    den = np.maximum(np.abs(b2).max(axis=1), 1e-300)
    return float((num / den).max())


def ref_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, pads=(1, 1, 1, 1), stride: int = 1) -> np.ndarray:
    """Plain float64 2-D convolution (group 1), pads (top, left, bottom, right)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    t, le, bo, r = pads
    xp = np.zeros((n, c, h + t + bo, wd + le + r))
    xp[:, :, t:t + h, le:le + wd] = x
    oh, ow = (h + t + bo - kh) // stride + 1, (wd + le + r - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            y += np.einsum("ncij,oc->noij", patch, w[:, :, i, j].astype(np.float64))
    return y + b.astype(np.float64).reshape(1, -1, 1, 1)


def conv_bn_reference(model: onnx.ModelProto, x: np.ndarray, floor: float) -> np.ndarray:
    """model_zoo.conv_bn (relu=False) computed from its initializers, variances floored at `floor`."""
    p = inits(model)
    conv, bn = onnx_node(model, "Conv"), onnx_node(model, "BatchNormalization")
    w, b = (p[i].astype(np.float64) for i in conv.input[1:3])
    gamma, beta, mean, var = (p[i].astype(np.float64).reshape(1, -1, 1, 1) for i in bn.input[1:5])
    eps = next(onnx.helper.get_attribute_value(a) for a in bn.attribute if a.name == "epsilon")
    y = ref_conv(np.asarray(x, np.float64), w, b)
    return (y - mean) / np.sqrt(np.maximum(var, floor) + eps) * gamma + beta


def floor_ctx(floor: float = FLOOR, strict: bool = False) -> PassContext:
    return PassContext(Config(bn=BnConfig(var_floor=floor, floor_is_error=strict)))


def floor_notes(graph: Graph) -> list:
    return [n for n in graph.notes if n.kind == "bn_floor"]


def bn_name(graph: Graph) -> str:
    (name,) = [n.name for n in graph.nodes if n.op == "BatchNormalization"]
    return name


# ---- fold_bn: float -------------------------------------------------------------------------------
def test_fold_bn_equals_unfolded_model():
    model = zoo.conv_bn(NORMAL_VAR, relu=False)
    src = ir(model, "conv_bn")
    folded = fold_bn(src, floor_ctx())
    assert ops(folded) == ["Conv"]
    assert floor_notes(folded) == []
    x = zoo.random_inputs(model, 4, seed=3)
    y_src, y_fold = out(src, x), out(folded, x)
    assert rel_err(y_fold, y_src) <= 1e-9
    assert rel_err(y_fold, conv_bn_reference(model, x, FLOOR)) <= 1e-9
    # negative control: a 1e-6 change of one BN parameter is far outside the tolerance
    p = inits(model)
    bn = onnx_node(model, "BatchNormalization")
    gamma = p[bn.input[1]].astype(np.float64)
    nudged = np.concatenate([gamma[:1] * (1 + 1e-6), gamma[1:]])
    y_nudged = y_src.copy()
    y_nudged[:, 0] = (y_src[:, 0] - p[bn.input[2]][0]) * (nudged[0] / gamma[0]) + p[bn.input[2]][0]
    assert rel_err(y_fold, y_nudged) > 1e-8


def test_fold_bn_with_relu_through_all_float_passes():
    model = zoo.conv_bn(NORMAL_VAR, relu=True)
    src, fused, _, _ = float_stage(ir(model, "conv_bn"))
    (conv,) = fused.nodes
    assert conv.op == "Conv" and conv.attr("act") == "relu"
    x = zoo.random_inputs(model, 3, seed=4)
    assert rel_err(out(fused, x), np.maximum(conv_bn_reference(model, x, 1e-4), 0)) <= 1e-9
    assert rel_err(out(fused, x), out(src, x)) <= 1e-9


def test_fold_bn_variance_floor_notes():
    just_above = float(np.nextafter(np.float32(FLOOR), np.float32(1)))
    var = [0.0, 1e-9, FLOOR, just_above, 1.0, 0.5]
    model = zoo.conv_bn(var, relu=False)
    src = ir(model, "conv_bn")
    folded = fold_bn(src, floor_ctx())
    floored = [(n.node, n.data["channel"], n.data["variance"]) for n in floor_notes(folded)]
    assert floored == [(bn_name(src), 0, 0.0), (bn_name(src), 1, float(np.float32(1e-9)))]
    assert all(n.data["floor"] == FLOOR for n in floor_notes(folded))
    x = zoo.random_inputs(model, 3, seed=5)
    y_fold, y_src = out(folded, x), out(src, x)
    assert rel_err(y_fold, conv_bn_reference(model, x, FLOOR)) <= 1e-9  # all channels, floor applied
    assert rel_err(y_fold[:, 2:], y_src[:, 2:]) <= 1e-9  # at / above the floor: unchanged
    # negative control: the floored channels really differ from the unfloored BN
    assert rel_err(y_fold[:, :1], y_src[:, :1]) > 1e-3 and rel_err(y_fold[:, 1:2], y_src[:, 1:2]) > 1e-3


def test_fold_bn_floor_is_error():
    model = zoo.conv_bn([0.5, 1e-9, 1.0, 0.0, 1.0, 1.0], relu=False)
    src = ir(model, "conv_bn")
    with pytest.raises(HlsgenError) as e:
        fold_bn(src, floor_ctx(strict=True))
    msg = str(e.value)
    assert bn_name(src) in msg and "channel(s) 1 (var 1e-09), 3 (var 0)" in msg
    # negative control: no channel below the floor, no error
    fine = ir(zoo.conv_bn([FLOOR, 1.0, 1.0, 1.0, 1.0, 1.0], relu=False), "conv_bn")
    assert floor_notes(fold_bn(fine, floor_ctx(strict=True))) == []


@pytest.mark.parametrize(("var", "gamma", "what"), [
    ([1.0, 1.0, 1.0, 1.0, -0.5, 1.0], None, "variance is negative (-0.5) in channel 4"),
    ([1.0, 1.0, -1e-12, 1.0, 1.0, 1.0], None, "variance is negative (-1e-12) in channel 2"),
    ([1.0, 1.0, 1.0, 1.0, math.nan, 1.0], None, "var is nan in channel 4"),
    ([1.0, math.inf, 1.0, 1.0, 1.0, 1.0], None, "var is inf in channel 1"),
    (NORMAL_VAR, [1.0, 1.0, 1.0, math.nan, 1.0, 1.0], "scale is nan in channel 3"),
])
def test_fold_bn_bad_parameters(var, gamma, what):
    src = ir(zoo.conv_bn(var, gamma=gamma, relu=False), "conv_bn")
    with pytest.raises(HlsgenError) as e:
        fold_bn(src, floor_ctx())
    assert bn_name(src) in str(e.value) and what in str(e.value)


def test_fold_bn_zero_and_negative_gamma():
    gamma = [1.0, 0.0, -0.7, 1.3, -2.0, 0.5]
    model = zoo.conv_bn(NORMAL_VAR, gamma=gamma, relu=False)
    src = ir(model, "conv_bn")
    folded = fold_bn(src, floor_ctx())
    (conv,) = folded.nodes
    w_new, b_new = (folded.tensor(i).real_value() for i in conv.inputs[1:3])
    p = inits(model)
    w_old = p[onnx_node(model, "Conv").input[1]].astype(np.float64)
    beta = p[onnx_node(model, "BatchNormalization").input[2]].astype(np.float64)
    assert np.all(w_new[1] == 0.0) and b_new[1] == beta[1]  # gamma = 0: a constant channel
    for c in (2, 4):  # negative gamma flips the channel's weights
        assert np.array_equal(np.sign(w_new[c]), -np.sign(w_old[c]))
    for c in (0, 3, 5):
        assert np.array_equal(np.sign(w_new[c]), np.sign(w_old[c]))
    x = zoo.random_inputs(model, 3, seed=6)
    y = out(folded, x)
    assert np.all(y[:, 1] == beta[1])
    assert rel_err(y, out(src, x)) <= 1e-9
    assert rel_err(y, conv_bn_reference(model, x, FLOOR)) <= 1e-9
    assert not np.all(y[:, 0] == y[0, 0, 0, 0])  # control: an ordinary channel is not constant


# ---- fold_bn: QDQ models (integer weights keep their codes) ----------------------------------------
def inline_bn_dequantize(model: onnx.ModelProto) -> onnx.ModelProto:
    """Copy of a QDQ model whose BatchNormalization parameters are float initializers (the
    DequantizeLinear feeding them evaluated in float32, as onnxruntime would)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    p = inits(m)
    made_by = {o: n for n in m.graph.node for o in n.output}
    for bn in [n for n in m.graph.node if n.op_type == "BatchNormalization"]:
        for name in bn.input[1:]:
            dq = made_by.get(name)
            if dq is None or dq.op_type != "DequantizeLinear":
                continue
            q, s = p[dq.input[0]].astype(np.int64), p[dq.input[1]]
            zp = p[dq.input[2]].astype(np.int64) if len(dq.input) > 2 and dq.input[2] else 0
            value = ((q - zp).astype(np.float32) * s).astype(np.float32)
            m.graph.node.remove(dq)
            m.graph.initializer.append(numpy_helper.from_array(value, name))
    onnx.checker.check_model(m)
    return m


def _real(p: dict[str, np.ndarray], made_by: dict[str, onnx.NodeProto], name: str) -> np.ndarray:
    """Float64 value of an initializer or of a DequantizeLinear of one."""
    if name in p:
        return p[name].astype(np.float64)
    dq = made_by[name]
    zp = p[dq.input[2]].astype(np.int64) if len(dq.input) > 2 and dq.input[2] else 0
    scale = p[dq.input[1]].astype(np.float64)
    return (p[dq.input[0]].astype(np.int64) - zp) * scale


def check_qdq_fold(model: onnx.ModelProto, folded: Graph, across: bool = False) -> int:
    """Every Conv followed (through a Q/DQ pair) by a BN. Default (two-step): codes, weight scale and
    bias untouched, the conv output's quantizer kept (`mid`) and the BN is step 2 (post_a = a,
    post_b = β − a·μ). With fuse_across_qdq: codes kept, per-channel scale = s·a. Returns how many
    were checked."""
    p = inits(model)
    made_by = {o: n for n in model.graph.node for o in n.output}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in model.graph.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    checked = 0
    for conv in (n for n in model.graph.node if n.op_type == "Conv"):
        t = conv.output[0]
        while readers.get(t) and readers[t][0].op_type in ("QuantizeLinear", "DequantizeLinear"):
            t = readers[t][0].output[0]
        bn = readers.get(t, [None])[0]
        if bn is None or bn.op_type != "BatchNormalization":
            continue
        w_dq = made_by[conv.input[1]]
        codes, w_scale = p[w_dq.input[0]].astype(np.int64), p[w_dq.input[1]].astype(np.float64)
        gamma, beta, mean, var = (_real(p, made_by, i) for i in bn.input[1:5])
        eps = next(onnx.helper.get_attribute_value(a) for a in bn.attribute if a.name == "epsilon")
        a = gamma / np.sqrt(var + eps)
        node = folded.node(conv.name)
        w = folded.tensor(node.inputs[1])
        assert w.integer and w.qtype is not None
        b_real = _real(p, made_by, conv.input[2])
        if not across:
            assert np.array_equal(w.data, codes)
            assert np.array_equal(w.qtype.scale, np.broadcast_to(w_scale, w.qtype.scale.shape))
            assert node.attr("mid") is not None and node.attr("mid_tensor") == conv.output[0]
            np.testing.assert_allclose(node.attr("post_a"), a, rtol=1e-6, atol=0)
            np.testing.assert_allclose(node.attr("post_b"), beta - a * mean, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(folded.tensor(node.inputs[2]).real_value(), b_real, rtol=1e-6, atol=0)
            checked += 1
            continue
        assert w.qtype.axis == 0
        assert np.array_equal(w.qtype.zero_point, np.zeros(codes.shape[0], np.int64))
        live = a != 0
        assert np.array_equal(w.data[live], codes[live])  # the model's int8 codes, untouched
        assert np.all(w.data[~live] == 0)  # gamma = 0 zeroes a channel's codes
        want_scale = np.where(live, w_scale * a, w_scale)
        np.testing.assert_allclose(w.qtype.scale, want_scale, rtol=1e-6, atol=0)
        # negative control: the unabsorbed scale would not pass the same comparison
        assert not np.allclose(w.qtype.scale, w_scale, rtol=1e-6, atol=0)
        np.testing.assert_allclose(folded.tensor(node.inputs[2]).real_value(), b_real * a + beta - a * mean,
                                   rtol=1e-6, atol=1e-6 * float(np.abs(beta).max()))
        checked += 1
    return checked


ACROSS = config_from_dict({"quant": {"fuse_across_qdq": True}}, "across")


@pytest.fixture(scope="module")
def qdq_conv_bn() -> onnx.ModelProto:
    float_model = zoo.conv_bn(NORMAL_VAR, gamma=[1.0, 0.0, -0.7, 1.3, -2.0, 0.5], relu=False)
    return zoo.qdq_quantize(float_model, zoo.random_inputs(float_model, 8, seed=7))


@pytest.fixture(scope="module")
def qdq_resnet() -> onnx.ModelProto:
    float_model = zoo.resnet_tiny()
    return zoo.qdq_quantize(float_model, zoo.random_inputs(float_model, 8, seed=8))


@pytest.mark.parametrize("across", [False, True])
def test_fold_bn_qdq_conv_bn_keeps_codes(qdq_conv_bn, across):
    model = inline_bn_dequantize(qdq_conv_bn)
    _, fused, _, stages = float_stage(ir(model, "qdq_conv_bn"), ACROSS if across else None)
    folded = stage(stages, "fold_bn")
    assert "BatchNormalization" not in ops(folded)
    assert check_qdq_fold(model, folded, across) == 1
    node = folded.node("conv_3_node")
    if across:  # negative gamma: the scale's sign flips, codes stay
        assert np.all(folded.tensor(node.inputs[1]).qtype.scale[[2, 4]] < 0)
    else:  # the conv output's rounding stays, the BN (with its negative gammas) is step 2
        assert np.all(np.asarray(node.attr("post_a"))[[2, 4]] < 0)


@pytest.mark.parametrize("across", [False, True])
def test_fold_bn_qdq_resnet_keeps_codes(qdq_resnet, across):
    model = inline_bn_dequantize(qdq_resnet)
    _, _, _, stages = float_stage(ir(model, "qdq_resnet"), ACROSS if across else None)
    folded = stage(stages, "fold_bn")
    assert "BatchNormalization" not in ops(folded)
    assert check_qdq_fold(model, folded, across) == 6
    for conv in (n for n in model.graph.node if n.op_type == "Conv"):  # no gamma is 0: all codes equal
        dq = next(n for n in model.graph.node if conv.input[1] in n.output)
        w = folded.tensor(folded.node(conv.name).inputs[1])
        assert np.array_equal(w.data, inits(model)[dq.input[0]].astype(np.int64))


@pytest.mark.parametrize("which", ["conv_bn", "resnet"])
def test_fold_bn_qdq_with_dequantized_bn_parameters(which, qdq_conv_bn, qdq_resnet):
    """The model exactly as onnxruntime exports it: BN gamma/beta come from DequantizeLinear."""
    model = qdq_conv_bn if which == "conv_bn" else qdq_resnet
    _, _, _, stages = float_stage(ir(model, f"qdq_{which}"))
    assert check_qdq_fold(model, stage(stages, "fold_bn")) == (1 if which == "conv_bn" else 6)


# ---- fuse_matmul_add ------------------------------------------------------------------------------
def test_mlp_becomes_gemms():
    model = zoo.mlp()
    src, fused, _, stages = float_stage(ir(model, "mlp"))
    after = stage(stages, "fuse_matmul_add")
    assert "MatMul" not in ops(after) and "Add" not in ops(after)
    assert ops(after).count("Gemm") == 3
    assert ops(fused) == ["Gemm", "Gemm", "Gemm"]
    assert [n.attr("act") for n in fused.nodes] == ["relu", "relu", "none"]
    p = inits(model)
    mm = [n for n in model.graph.node if n.op_type == "MatMul"]
    adds = [n for n in model.graph.node if n.op_type == "Add"]
    first, last = fused.nodes[0], fused.nodes[2]
    for gemm, m, a in ((first, mm[0], adds[0]), (last, mm[1], adds[1])):
        assert np.array_equal(fused.tensor(gemm.inputs[1]).real_value(), p[m.input[1]].astype(np.float64).T)
        assert np.array_equal(fused.tensor(gemm.inputs[2]).real_value(), p[a.input[1]].astype(np.float64))
    x = zoo.random_inputs(model, 5, seed=9)
    assert rel_err(out(fused, x), out(src, x)) <= 1e-12
    assert np.array_equal(np.asarray(src.tensor(src.inputs[0]).shape), [1, 32])


def _matmul_model(bias_shape: tuple[int, ...] | None) -> onnx.ModelProto:
    g = zoo.GraphBuilder(5)
    h = g.op("MatMul", ["x", g.const("w", g.rng.normal(size=(4, 5)).astype(np.float32))])
    if bias_shape is not None:
        h = g.op("Add", [h, g.const("b", g.rng.normal(size=bias_shape).astype(np.float32))])
    rows = bias_shape[0] if bias_shape is not None and len(bias_shape) == 2 else 1
    return g.model([1, 4], h, [rows, 5], "matmul")


def test_bias_varying_along_m_is_an_error():
    model = _matmul_model((3, 5))
    with pytest.raises(HlsgenError) as e:
        float_stage(ir(model, "matmul"))
    mm, add = onnx_node(model, "MatMul").name, onnx_node(model, "Add").name
    assert mm in str(e.value) and add in str(e.value) and "varies along M" in str(e.value)
    _, fused, _, _ = float_stage(ir(_matmul_model((1, 5)), "matmul"))  # control: one row fuses
    assert ops(fused) == ["Gemm"]


def test_matmul_alone_becomes_gemm_with_zero_bias():
    model = _matmul_model(None)
    src, fused, _, _ = float_stage(ir(model, "matmul"))
    (gemm,) = fused.nodes
    assert gemm.op == "Gemm" and gemm.attr("act") == "none"
    w = inits(model)[onnx_node(model, "MatMul").input[1]].astype(np.float64)
    assert np.array_equal(fused.tensor(gemm.inputs[1]).real_value(), w.T)
    bias = fused.tensor(gemm.inputs[2]).real_value()
    assert bias.shape == (5,) and np.all(bias == 0.0)
    x = zoo.random_inputs(model, 3, seed=10)
    assert rel_err(out(fused, x), np.asarray(x, np.float64) @ w) <= 1e-12


# ---- fuse_epilogue --------------------------------------------------------------------------------
def test_resnet_residuals_fuse_into_convs():
    model = zoo.resnet_tiny()
    src, fused, _, _ = float_stage(ir(model, "resnet_tiny"))
    assert ops(fused) == ["Conv"] * 6 + ["GlobalAveragePool", "Reshape", "Gemm", "Softmax"]
    residual = [n for n in fused.nodes if n.op == "Conv" and len(n.inputs) == 4]
    assert len(residual) == 2
    for n in residual:
        assert n.attr("act") == "relu"
        skip = fused.producer(n.inputs[3])
        assert skip is not None and skip.op == "Conv"
        assert fused.tensor(n.inputs[3]).shape == fused.tensor(n.outputs[0]).shape
    x = zoo.random_inputs(model, 3, seed=11)
    assert rel_err(out(fused, x), out(src, x)) <= 1e-9


def test_residual_add_with_mismatched_shapes_is_an_error():
    g = zoo.GraphBuilder(2)
    c = g.conv("x", 2, 2, 3)
    p = g.op("GlobalAveragePool", ["x"])
    model = g.model([1, 2, 4, 4], g.op("Add", [c, p]), [1, 2, 4, 4], "bad_add")
    with pytest.raises(HlsgenError) as e:
        float_stage(ir(model, "bad_add"))
    assert onnx_node(model, "Conv").name in str(e.value)
    assert onnx_node(model, "GlobalAveragePool").name in str(e.value)


def test_clip_and_leaky_fuse_as_activations():
    _, fused, _, _ = float_stage(ir(zoo.dw_separable(), "dw_separable"))
    convs = [n for n in fused.nodes if n.op == "Conv"]
    assert [n.attr("act") for n in convs] == ["clip", "relu", "leaky"]
    assert (convs[0].attr("clip_min"), convs[0].attr("clip_max")) == (0.0, 6.0)
    assert convs[2].attr("alpha") == float(np.float32(0.1))
    assert "Clip" not in ops(fused) and "LeakyRelu" not in ops(fused)


def _conv_then(residual: bool, act: str, seed: int = 3) -> onnx.ModelProto:
    g = zoo.GraphBuilder(seed)
    h = g.conv("x", 4, 4, 3)
    if residual:
        h = g.op("Add", [h, "x"])
    h = g.op(act, [h], alpha=0.2) if act == "LeakyRelu" else g.op(act, [h])
    return g.model([1, 4, 5, 5], h, [1, 4, 5, 5], "conv_then")


def test_leaky_after_residual_is_not_fused():
    model = _conv_then(residual=True, act="LeakyRelu")
    src, fused, _, _ = float_stage(ir(model, "res_leaky"))
    assert ops(fused) == ["Conv", "LeakyRelu"]
    assert len(fused.nodes[0].inputs) == 4 and fused.nodes[0].attr("act") == "none"
    x = zoo.random_inputs(model, 2, seed=12)
    assert rel_err(out(fused, x), out(src, x)) <= 1e-9
    # controls: without the residual LeakyRelu fuses; after a residual Relu fuses
    _, plain, _, _ = float_stage(ir(_conv_then(residual=False, act="LeakyRelu"), "leaky"))
    assert ops(plain) == ["Conv"] and plain.nodes[0].attr("act") == "leaky"
    _, relu, _, _ = float_stage(ir(_conv_then(residual=True, act="Relu"), "res_relu"))
    assert ops(relu) == ["Conv"] and relu.nodes[0].attr("act") == "relu" and len(relu.nodes[0].inputs) == 4


def test_add_of_a_layer_to_itself_is_not_a_residual():
    """conv + conv: the Conv cannot be its own skip input (that made an invalid graph)."""
    g = zoo.GraphBuilder(1)
    c = g.conv("x", 3, 4, 3)
    model = g.model([1, 3, 6, 6], g.op("Relu", [g.op("Add", [c, c])]), [1, 4, 6, 6], "double")
    src, fused, _, _ = float_stage(ir(model, "double"))
    assert ops(fused) == ["Conv", "Add", "Relu"]
    x = zoo.random_inputs(model, 2, seed=13)
    assert rel_err(out(fused, x), out(src, x)) <= 1e-12


# ---- scalings_to_affine + lower_affine -----------------------------------------------------------
def _normalised_conv(scale: list[float]) -> onnx.ModelProto:
    g = zoo.GraphBuilder(4)
    mean = g.const("mean", np.array([0.5, -0.2, 0.1], np.float32).reshape(1, 3, 1, 1))
    std = g.const("std", np.array([0.25, 0.5, 2.0], np.float32).reshape(1, 3, 1, 1))
    h = g.conv(g.op("Div", [g.op("Sub", ["x", mean]), std]), 3, 4, 3)
    h = g.op("Mul", [h, g.const("scale", np.array(scale, np.float32).reshape(1, -1, 1, 1))])
    return g.model([1, 3, 6, 6], h, [1, 4, 6, 6], "normalised")


def test_input_normalisation_becomes_depthwise_conv_and_mul_folds():
    scale = [2.0, -0.5, 0.0, 3.0]
    model = _normalised_conv(scale)
    src, fused, _, stages = float_stage(ir(model, "normalised"))
    assert ops(stage(stages, "scalings_to_affine")) == ["Affine", "Affine", "Conv", "Affine"]
    assert ops(fused) == ["Conv", "Conv"]
    dw, conv = fused.nodes
    assert dw.attr("group") == 3 and fused.tensor(dw.inputs[1]).shape == (3, 1, 1, 1)
    assert (dw.attr("strides"), dw.attr("pads"), dw.attr("act")) == ((1, 1), (0, 0, 0, 0), "none")
    assert [n.node for n in fused.notes if n.kind == "lowered"] == [dw.name]
    mean = np.array([0.5, -0.2, 0.1], np.float32).astype(np.float64)
    std = np.array([0.25, 0.5, 2.0])  # exact in float32
    assert np.array_equal(fused.tensor(dw.inputs[1]).real_value().reshape(-1), 1 / std)
    np.testing.assert_allclose(fused.tensor(dw.inputs[2]).real_value(), -mean / std, rtol=1e-15, atol=0)
    p = inits(model)
    w_in, b_in = (p[i].astype(np.float64) for i in onnx_node(model, "Conv").input[1:3])
    s = np.array(scale)
    np.testing.assert_allclose(fused.tensor(conv.inputs[1]).real_value(), w_in * s.reshape(-1, 1, 1, 1),
                               rtol=1e-15, atol=0)
    np.testing.assert_allclose(fused.tensor(conv.inputs[2]).real_value(), b_in * s, rtol=1e-15, atol=0)
    x = zoo.random_inputs(model, 3, seed=14)
    y = out(fused, x)
    assert rel_err(y, out(src, x)) <= 1e-9
    want = ref_conv((np.asarray(x, np.float64) - mean.reshape(1, 3, 1, 1)) / std.reshape(1, 3, 1, 1), w_in, b_in)
    want = want * s.reshape(1, -1, 1, 1)
    assert rel_err(y, want) <= 1e-9
    assert np.all(y[:, 2] == 0.0)  # the channel scaled by 0
    assert rel_err(y[:, :2], want[:, :2] * 1.000001) > 1e-7  # control: a 1e-6 gain error is visible


def test_scalar_mul_and_add_after_conv_fold():
    g = zoo.GraphBuilder(6)
    h = g.conv("x", 3, 4, 3)
    h = g.op("Add", [g.op("Mul", [h, g.const("k", np.array(0.5, np.float32))]),
                     g.const("c", np.array([1.0, 2.0, 3.0, 4.0], np.float32).reshape(1, 4, 1, 1))])
    model = g.model([1, 3, 5, 5], h, [1, 4, 5, 5], "scaled")
    src, fused, _, _ = float_stage(ir(model, "scaled"))
    assert ops(fused) == ["Conv"]
    x = zoo.random_inputs(model, 2, seed=15)
    assert rel_err(out(fused, x), out(src, x)) <= 1e-9


# ---- cleanup --------------------------------------------------------------------------------------
def test_pad_folds_into_conv():
    model = zoo.nhwc_tf_style()
    src, fused, _, stages = float_stage(ir(model, "nhwc"))
    assert "Pad" in ops(src)
    after = stage(stages, "cleanup")
    assert "Pad" not in ops(after)
    (conv,) = [n for n in after.nodes if n.op == "Conv"]
    assert conv.attr("pads") == (0, 0, 1, 1)  # (top, left, bottom, right): SAME at the end only
    assert after.producer(conv.inputs[0]).op == "Transpose"
    x = zoo.random_inputs(model, 3, seed=16)
    assert rel_err(out(fused, x), out(src, x)) <= 1e-12


def test_pad_with_nonzero_value_does_not_fold():
    g = zoo.GraphBuilder(7)
    pads = g.const("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))
    h = g.op("Pad", ["x", pads, g.const("v", np.array(1.0, np.float32))], mode="constant")
    model = g.model([1, 2, 4, 4], g.conv(h, 2, 3, 3, pads=[0, 0, 0, 0]), [1, 3, 4, 4], "pad1")
    src = ir(model, "pad1")
    kept = cleanup(src, PassContext(Config()))
    assert ops(kept) == ["Pad", "Conv"]
    assert format_graph(kept) == format_graph(src)


# ---- check_supported -----------------------------------------------------------------------------
def _two_problems(with_mul: bool) -> onnx.ModelProto:
    g = zoo.GraphBuilder(1)
    a = g.conv("x", 3, 4, 3)
    h = g.op("Mul", [a, a]) if with_mul else a
    h = g.op("Softmax", [h], axis=1)
    h = g.conv(h, 4, 2, 1, pads=[0, 0, 0, 0])
    return g.model([1, 3, 6, 6], h, [1, 2, 6, 6], "two_bad")


def test_check_supported_lists_every_problem():
    model = _two_problems(with_mul=True)
    with pytest.raises(UnsupportedModelError) as e:
        float_stage(ir(model, "two_bad"))
    mul = onnx_node(model, "Mul").name
    late_conv = onnx_node(model, "Conv", 1).name
    assert [(name, op) for name, op, _ in e.value.problems] == [(mul, "Mul"), (late_conv, "Conv")]
    assert "2 unsupported node(s)" in str(e.value) and mul in str(e.value) and late_conv in str(e.value)
    assert "follows a host-side op" in str(e.value)
    with pytest.raises(UnsupportedModelError) as one:  # control: one problem, one entry
        float_stage(ir(_two_problems(with_mul=False), "one_bad"))
    assert len(one.value.problems) == 1


# ---- quantize -------------------------------------------------------------------------------------
def min_signed_bits(lo: int, hi: int) -> int:
    n = 1
    while not (-(1 << (n - 1)) <= lo and hi <= (1 << (n - 1)) - 1):
        n += 1
    return n


def worst_case_acc_bits(w_codes: np.ndarray, x_lo: int, x_hi: int, bias: np.ndarray) -> int:
    """Per tap the extreme input codes give the extreme products; taps are independent, so the
    extreme sums are the sums of per-tap extremes (with the bias on either side of zero)."""
    lo = hi = 0
    for c in range(w_codes.shape[0]):
        taps = [int(v) for v in w_codes[c].reshape(-1)]
        b = int(bias[c])
        top = max(b, 0) + sum(max(x_lo * t, x_hi * t) for t in taps)
        bottom = min(b, 0) + sum(min(x_lo * t, x_hi * t) for t in taps)
        lo, hi = min(lo, bottom), max(hi, top)
    return min_signed_bits(lo, hi)


def ref_round_half_even(x: Fraction) -> int:
    floor = x.numerator // x.denominator
    rest = x - floor
    if rest != Fraction(1, 2):
        return floor + (rest > Fraction(1, 2))
    return floor + (floor & 1)


@pytest.fixture(scope="module")
def resnet_compiled():
    model = zoo.resnet_tiny()
    return compile_model(ir(model, "resnet_tiny"), calib=zoo.random_inputs(model, 16, seed=1))


def layers(graph: Graph) -> list:
    return [n for n in graph.nodes if n.op in ("QConv", "QGemm")]


def test_quantized_resnet_ops(resnet_compiled):
    g = resnet_compiled.graph
    assert set(ops(g)) == {"QuantizeInput", "QConv", "QAvgPool", "Reshape", "QGemm", "DequantizeOutput", "Softmax"}
    assert ops(g)[0] == "QuantizeInput" and ops(g)[-2:] == ["DequantizeOutput", "Softmax"]


def test_quantized_acc_bits_cover_the_worst_case(resnet_compiled):
    g = resnet_compiled.graph
    for n in layers(g):
        qx = g.tensor(n.inputs[0]).qtype
        w, bias = g.tensor(n.inputs[1]).data, g.tensor(n.inputs[2]).data
        need = worst_case_acc_bits(w, qx.int.lo, qx.int.hi, bias)
        assert n.attr("acc_bits") >= need, n.name
        assert n.attr("acc_bits") == need, n.name  # and no wider than the worst case
        assert 2 < need < 48
    # control: the comparison notices a one-bit difference (every sum doubled)
    n = layers(g)[1]
    qx = g.tensor(n.inputs[0]).qtype
    w, bias = g.tensor(n.inputs[1]).data, g.tensor(n.inputs[2]).data
    assert worst_case_acc_bits(w, 2 * qx.int.lo, 2 * qx.int.hi, 2 * bias) == n.attr("acc_bits") + 1


def _ratios(g: Graph, n) -> tuple[list[Fraction], list[Fraction] | None]:
    s_x = Fraction(float(g.tensor(n.inputs[0]).qtype.scale))
    s_y = Fraction(float(g.tensor(n.outputs[0]).qtype.scale))
    s_w = [Fraction(float(s)) for s in g.tensor(n.inputs[1]).qtype.scale]
    main = [s_x * s / s_y for s in s_w]
    skip = None
    if len(n.inputs) > 3:
        skip = [Fraction(float(g.tensor(n.inputs[3]).qtype.scale)) / s_y] * len(s_w)
    return main, skip


def test_quantized_multipliers_reproduce_the_scale_ratio(resnet_compiled):
    g, bits = resnet_compiled.graph, resnet_compiled.config.quant.multiplier_bits
    plain = 0
    for n in layers(g):
        main, skip = _ratios(g, n)
        for c, r in enumerate(main):
            m, s = n.attr("epilogue").out.mult[c], n.attr("epilogue").out.shift[c]
            assert s >= 0 and abs(m) < 1 << 31
            approx = Fraction(m, 1 << s)
            assert abs(approx - r) <= r / (1 << (bits - 2)), (n.name, c)
            if skip is None:
                assert abs(m) < 1 << (bits - 1)
                continue
            # residual: one shift for both multipliers, chosen so the smaller one keeps `bits` bits;
            # both are then within 2**-(bits-2) relative and the smaller one has exactly `bits` bits
            mb = n.attr("epilogue").skip.mult[c]
            assert abs(Fraction(mb, 1 << s) - skip[c]) <= skip[c] / (1 << (bits - 2))
            assert min(abs(m), abs(mb)) < 1 << (bits - 1) <= 2 * min(abs(m), abs(mb))
        plain += skip is None
    assert plain == 5  # four plain convs and the Gemm
    # control: the relative bound fails for a multiplier one unit off
    n = layers(g)[0]
    r = _ratios(g, n)[0][0]
    off = Fraction(n.attr("epilogue").out.mult[0] + 1, 1 << n.attr("epilogue").out.shift[0])
    assert abs(off - r) > r / (1 << bits)


def test_residual_main_multiplier_precision(resnet_compiled):
    g, bits = resnet_compiled.graph, resnet_compiled.config.quant.multiplier_bits
    for n in (n for n in layers(g) if len(n.inputs) > 3):
        main, _ = _ratios(g, n)
        for c, r in enumerate(main):
            out = n.attr("epilogue").out
            assert abs(Fraction(out.mult[c], 1 << out.shift[c]) - r) <= r / (1 << (bits - 2))


def test_relu_lower_clamp_is_the_zero_point(resnet_compiled):
    g = resnet_compiled.graph
    for n in layers(g):
        q = g.tensor(n.outputs[0]).qtype
        if n.attr("act") == "relu":
            assert n.attr("epilogue").out.lo == int(q.zero_point), n.name
        else:  # control: without ReLU the clamp is the type's range, away from the zero point
            assert n.attr("epilogue").out.lo == q.int.lo and n.attr("epilogue").out.lo != int(q.zero_point), n.name
        assert n.attr("epilogue").out.hi == q.int.hi


def test_relu_clamp_with_symmetric_activations():
    """With symmetric signed activations the zero point is 0, so ReLU really raises the clamp."""
    model = zoo.resnet_tiny()
    cfg = config_from_dict({"quant": {"act_symmetric": True}}, "test")
    c = compile_model(ir(model, "resnet_tiny"), cfg, zoo.random_inputs(model, 8, seed=2))
    relu_layers = [n for n in layers(c.graph) if n.attr("act") == "relu"]
    assert len(relu_layers) == 5
    for n in relu_layers:
        out = n.attr("epilogue").out
        assert out.zp == 0 and out.lo == 0 > c.graph.tensor(n.outputs[0]).qtype.int.lo


def _dw_calibrated(clip_out_range: tuple[float, float] | None):
    model = zoo.dw_separable()
    _, fused, cfg, _ = float_stage(ir(model, "dw_separable"))
    ctx = PassContext(cfg, zoo.random_inputs(model, 8, seed=3))
    calibrated = calibrate(fused, ctx)
    conv = next(n for n in calibrated.nodes if n.attr("act") == "clip")
    if clip_out_range is not None:
        t = calibrated.tensor(conv.outputs[0])
        calibrated = calibrated.with_tensor(replace(t, qtype=activation_qtype(*clip_out_range, INT8)))
    return quantize(calibrated, ctx), conv.name


def test_relu6_upper_clamp():
    g, name = _dw_calibrated((-2.0, 10.0))
    n = g.node(name)
    q = g.tensor(n.outputs[0]).qtype
    s, zp = float(q.scale), int(q.zero_point)
    assert zp == -86  # -128 + 42.5, a tie rounded to even
    assert n.attr("epilogue").out.hi == zp + ref_round_half_even(Fraction(6.0 / s)) == 42
    assert n.attr("epilogue").out.lo == zp
    # as calibrated the clip output spans at most [0, 6], so hi is the type's top code
    g2, _ = _dw_calibrated(None)
    n2 = g2.node(name)
    q2 = g2.tensor(n2.outputs[0]).qtype
    hi2 = min(q2.int.hi, int(q2.zero_point) + ref_round_half_even(Fraction(6.0 / float(q2.scale))))
    assert n2.attr("epilogue").out.hi == hi2
    assert n2.attr("epilogue").out.lo == int(q2.zero_point)
    assert n2.attr("epilogue").out.hi != n.attr("epilogue").out.hi  # control


# ---- determinism and purity -----------------------------------------------------------------------
MODELS = {
    "resnet_tiny": zoo.resnet_tiny,
    "dw_separable": zoo.dw_separable,
    "mlp": zoo.mlp,
    "nhwc_tf_style": zoo.nhwc_tf_style,
}


@pytest.mark.parametrize("name", list(MODELS))
def test_compile_is_deterministic(name):
    def texts(seed: int) -> list[tuple[str, str]]:
        model = MODELS[name]()
        c = compile_model(ir(model, name), calib=zoo.random_inputs(model, 8, seed=seed))
        return [(stage_name, format_graph(g)) for stage_name, g in c.stages]

    first, second = texts(0), texts(0)
    assert [s for s, _ in first] == ["source"] + [p.__name__ for p in FLOAT_PASSES + QUANT_PASSES]
    assert first == second
    other = dict(texts(1))  # control: other calibration data changes the quantized stage
    assert other["quantize"] != dict(first)["quantize"]
    assert other["check_supported"] == dict(first)["check_supported"]


def _snapshot(g: Graph) -> tuple[str, dict[str, np.ndarray], tuple]:
    data = {k: np.array(t.data, copy=True) for k, t in g.tensors.items() if t.data is not None}
    return format_graph(g), data, (g.nodes, g.inputs, g.outputs, g.notes, dict(g.meta))


def _unchanged(g: Graph, snap) -> bool:
    text, data, rest = snap
    same_data = all(np.array_equal(g.tensors[k].data, v, equal_nan=True) for k, v in data.items())
    return format_graph(g) == text and same_data and (g.nodes, g.inputs, g.outputs, g.notes, dict(g.meta)) == rest


@pytest.mark.parametrize("name", ["resnet_tiny", "dw_separable", "mlp", "nhwc_tf_style", "qdq_resnet"])
def test_passes_do_not_modify_their_input(name, qdq_resnet):
    model = qdq_resnet if name == "qdq_resnet" else MODELS[name]()
    if name == "qdq_resnet":
        model = inline_bn_dequantize(model)
    graph = ir(model, name)
    ctx = PassContext(Config(), zoo.random_inputs(model, 8, seed=0))
    changed = []
    for p in FLOAT_PASSES + QUANT_PASSES:
        snap = _snapshot(graph)
        result = p(graph, ctx)
        assert _unchanged(graph, snap), f"{p.__name__} modified its input graph"
        if format_graph(result) != snap[0]:
            changed.append(p.__name__)
        graph = result
    # control: the comparison sees real rewrites (these passes change every one of these models)
    # (the QDQ resnet's epilogues are all BN two-steps: fold_bn makes them, fuse_epilogue has nothing left)
    assert "quantize" in changed and {"fuse_epilogue", "fold_bn"} & set(changed)


def test_purity_check_detects_in_place_changes():
    """Negative control for the purity test: mutating a constant array in place is caught."""
    graph = ir(zoo.conv_bn(NORMAL_VAR), "conv_bn")
    snap = _snapshot(graph)
    w = next(t for t in graph.tensors.values() if t.data is not None and t.data.ndim == 4)
    w.data[0, 0, 0, 0] += 1.0
    assert not _unchanged(graph, snap)


# ---- two-step epilogues (fusing across the model's own quantizers) -----------------------------
def test_qdq_resnet_two_step_layers_and_no_third_rounding(qdq_resnet):
    """conv → Q(c) → BN → Q(b) → Add → Q: the BN is step 2 of the conv; the Add would be a third
    rounding, so it stays an Add. Nothing is approximated by default."""
    _, fused, _, _ = float_stage(ir(qdq_resnet, "qdq_resnet"))
    convs = [n for n in fused.nodes if n.op == "Conv"]
    assert len(convs) == 6 and all(n.attr("mid") is not None for n in convs)
    assert all(n.attr("mid_tensor") == n.name.replace("_node", "") for n in convs)
    assert ops(fused).count("Add") == 2 and all(len(n.inputs) == 3 for n in convs)
    assert {n.kind for n in fused.notes} >= {"two_step"} and "fused_rounding" not in {n.kind for n in fused.notes}
    _, approx, _, _ = float_stage(ir(qdq_resnet, "qdq_resnet"), ACROSS)  # the opt-in approximation
    assert all(n.attr("mid") is None for n in approx.nodes)
    assert "fused_rounding" in {n.kind for n in approx.notes} and "Add" not in ops(approx)


def test_qdq_mlp_bias_add_is_step_two():
    float_model = zoo.mlp()
    qdq = zoo.qdq_quantize(float_model, zoo.random_inputs(float_model, 8, seed=3))
    _, fused, _, _ = float_stage(ir(qdq, "qdq_mlp"))
    gemms = {n.name: n for n in fused.nodes if n.op == "Gemm"}
    assert set(ops(fused)) == {"Gemm", "Reshape"} or set(ops(fused)) == {"Gemm"}
    first = gemms["matmul_2_node"]
    assert first.attr("mid") is not None and first.attr("mid_tensor") == "matmul_2"
    assert np.count_nonzero(first.attr("post_b")) == 24 and first.attr("post_act") == "none"
    assert not np.any(fused.tensor(first.inputs[2]).real_value())  # the bias is step 2's, not the layer's
    assert gemms["gemm_8_node"].attr("mid") is None  # a Gemm with its own bias: one rounding


def test_two_step_attributes_reach_the_integer_graph(qdq_resnet):
    c = compile_model(ir(qdq_resnet, "qdq_resnet"))
    conv = c.graph.node("conv_3_node")
    e = conv.attr("epilogue")
    assert e.mid is not None and e.post_bias is not None and len(e.out.mult) == len(e.out.shift) == len(e.mid.mult)
    assert len(conv.attr("reproduces")) == 2 and conv.attr("reproduces")[0].startswith("Q(conv_3) ")
    qt = c.float_graph.node("conv_3_node").attr("mid")
    assert e.mid.zp == int(qt.zero_point) and (e.mid.lo, e.mid.hi) == (-128, 127)


def test_report_lists_the_reproduced_roundings(qdq_resnet):
    from hlsgen.report.summary import build_report, render_markdown

    md = render_markdown(build_report(compile_model(ir(qdq_resnet, "qdq_resnet"))))
    section = md.split("## Roundings per layer")[1].split("\n## ")[0]
    assert "| conv_3_node | Q(conv_3) i8(" in section and ", Q(relu_9) i8(" in section
    float_md = render_markdown(build_report(compile_model(ir(zoo.resnet_tiny(), "resnet_tiny"),
                                                          calib=zoo.random_inputs(zoo.resnet_tiny(), 4))))
    assert "## Roundings per layer" not in float_md  # a float source has no quantizers to reproduce

"""Nearest-neighbour Resize/Upsample by integer factors: the front-end's index map against onnxruntime on
every mode combination (accepted exactly when it is the plain repeat i // f, refused otherwise with the
node and its mode), the golden model against onnxruntime on small nets (float with calibration through
the QDQ export, and onnxruntime's own quantize_static QDQ model), each with a negative control."""

from __future__ import annotations

import re
from pathlib import Path

import model_zoo
import numpy as np
import onnx
import pytest
from onnx_builders import init, model, node, run_ort, vi
from ort_agreement import agreement_from, layer_agreement, ort_integers

from hlsgen import compile_model
from hlsgen.errors import HlsgenError
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.frontend.onnx_ops_resize import MODES, ROUNDINGS, source_index
from hlsgen.golden.execute import run_graph
from hlsgen.interop.export_qdq import export_qdq
from hlsgen.ir import Op

RNG = np.random.default_rng(5)


def one_resize(h: int, w: int, scales, opset: int = 13, op: str = "Resize", sizes=None, **attrs) -> onnx.ModelProto:
    """y = Resize(x) of an [1, 2, h, w] input: scales (or sizes) as constants."""
    if op == "Upsample" or opset < 11:
        n, inits = node(op, ["x", "sc"], ["y"], name="up", **attrs), [init("sc", scales)]
    elif sizes is not None:
        n = node("Resize", ["x", "", "", "sz"], ["y"], name="up", **attrs)
        inits = [init("sz", sizes, np.int64)]
    else:
        n, inits = node("Resize", ["x", "", "sc"], ["y"], name="up", **attrs), [init("sc", scales)]
    return model([n], [vi("x", [1, 2, h, w])], [vi("y", None)], inits, opset)


def ort_index_map(h: int, f: int, ctm: str, nearest: str) -> np.ndarray:
    """The input row onnxruntime reads for every output row (an input holding its row index)."""
    m = one_resize(h, 1, [1, 1, f, 1], opset=19, coordinate_transformation_mode=ctm, nearest_mode=nearest)
    x = np.broadcast_to(np.arange(h, dtype=np.float32).reshape(1, 1, h, 1), (1, 2, h, 1))
    return run_ort(m, np.ascontiguousarray(x))[0, 0, :, 0].astype(np.int64)


@pytest.mark.parametrize("f", [1, 2, 3, 4])
@pytest.mark.parametrize("nearest", ROUNDINGS)
@pytest.mark.parametrize("ctm", MODES)
def test_index_map_is_onnxruntimes_and_decides_acceptance(ctm: str, nearest: str, f: int) -> None:
    h = 5
    ours = source_index(h, h * f, float(f), ctm, nearest)
    assert np.array_equal(ours, ort_index_map(h, f, ctm, nearest))
    m = one_resize(h, 3, [1, 1, f, 1], opset=19, coordinate_transformation_mode=ctm, nearest_mode=nearest)
    if np.array_equal(ours, np.arange(h * f) // f):
        n = next(n for n in from_onnx_model(m, "rz").nodes if n.op == Op.RESIZE)
        assert n.attr("factors") == (f, 1)
    else:
        with pytest.raises(HlsgenError, match=rf"up \(Resize\): coordinate_transformation_mode {ctm}, "
                                              rf"nearest_mode {nearest} at factors \({f}, 1\)"):
            from_onnx_model(m, "rz")


def test_the_default_modes_repeat_at_every_factor_and_asymmetric_rounding_does_not() -> None:
    """Negative control of the map: half_pixel + round_prefer_floor (the default) is the repeat at
    factor 3; asymmetric + round_prefer_floor is not (x/3 = 0.67 rounds up)."""
    assert np.array_equal(source_index(4, 12, 3.0, "half_pixel", "round_prefer_floor"), np.arange(12) // 3)
    assert not np.array_equal(source_index(4, 12, 3.0, "asymmetric", "round_prefer_floor"), np.arange(12) // 3)


@pytest.mark.parametrize(("op", "opset"), [("Resize", 10), ("Upsample", 9), ("Upsample", 7), ("Resize", 13),
                                           ("Resize", 18), ("Resize", 19)])
def test_each_opset_golden_equals_onnxruntime(op: str, opset: int) -> None:
    attrs = {"mode": "nearest"} if op == "Upsample" and opset == 9 else {}
    if op == "Upsample" and opset == 7:
        m = model([node("Upsample", ["x"], ["y"], name="up", scales=[1.0, 1.0, 3.0, 2.0])],
                  [vi("x", [1, 2, 3, 4])], [vi("y", None)], [], 7)
    else:
        m = one_resize(3, 4, [1, 1, 3, 2], opset=opset, op=op, **attrs)
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    g = from_onnx_model(m, "rz")
    ours = run_graph(g, x.astype(np.float64))[g.outputs[0]]
    assert ours.shape == (1, 2, 9, 8)
    assert np.array_equal(ours.astype(np.float32), run_ort(m, x))


def test_sizes_input_and_a_wrong_repeat_is_caught() -> None:
    """Resize-13 by sizes; negative control: the golden kernel with the factors swapped differs."""
    m = one_resize(3, 4, None, sizes=[1, 2, 6, 12])
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    g = from_onnx_model(m, "rz")
    n = next(n for n in g.nodes if n.op == Op.RESIZE)
    assert n.attr("factors") == (2, 3)
    ref = run_ort(m, x)
    assert np.array_equal(run_graph(g, x.astype(np.float64))[g.outputs[0]].astype(np.float32), ref)
    from hlsgen.golden.window import upsample

    assert upsample(x, (2, 3)).shape == ref.shape and not np.array_equal(upsample(x[:, :, ::-1], (2, 3)), ref)


@pytest.mark.parametrize(("build", "why"), [
    (lambda: one_resize(3, 4, [1, 1, 2, 2], mode="linear"), "up (Resize): mode linear is not supported"),
    (lambda: one_resize(3, 4, [1, 1, 2, 2], mode="cubic"), "up (Resize): mode cubic is not supported"),
    (lambda: one_resize(4, 4, [1, 1, 1.5, 2]), "[1, 2, 4, 4] -> [1, 2, 6, 8]: only integer upsampling"),
    (lambda: one_resize(4, 4, [1, 1, 0.5, 1]), "only integer upsampling factors"),
    (lambda: one_resize(4, 4, [1, 2, 2, 2]), "up (Resize): resizes N or C ([1, 2, 4, 4] -> [1, 4, 8, 8])"),
    (lambda: one_resize(4, 4, [1, 1, 2, 2], coordinate_transformation_mode="tf_crop_and_resize"),
     "up (Resize): coordinate_transformation_mode tf_crop_and_resize is not supported"),
    (lambda: one_resize(4, 4, [1, 1, 2, 2], opset=11, coordinate_transformation_mode="tf_half_pixel_for_nearest"),
     "coordinate_transformation_mode tf_half_pixel_for_nearest is not supported"),
    (lambda: one_resize(4, 4, None, opset=18, sizes=[1, 2, 8, 8], keep_aspect_ratio_policy="not_larger"),
     "up (Resize): keep_aspect_ratio_policy not_larger is not supported"),
    (lambda: one_resize(4, 4, [1, 1, 2, 2], op="Upsample", opset=9, mode="linear"), "up (Upsample): mode linear"),
])
def test_refusals_name_the_node_and_the_reason(build, why: str) -> None:
    with pytest.raises(HlsgenError, match=re.escape(why)):
        from_onnx_model(build(), "rz")


def test_scales_computed_at_run_time_are_refused() -> None:
    nodes = [node("Shape", ["x"], ["s"]), node("Cast", ["s"], ["sf"], to=onnx.TensorProto.FLOAT),
             node("Mul", ["sf", "k"], ["sc"]), node("Resize", ["x", "", "sc"], ["y"], name="up")]
    m = model(nodes, [vi("x", [1, 2, 4, 4])], [vi("y", None)], [init("k", [1, 1, 0.5, 0.5])], 13)
    with pytest.raises(HlsgenError, match=r"up \(Resize\): scales must be a constant"):
        from_onnx_model(m, "rz")


# ---- golden vs onnxruntime on small nets -------------------------------------------------------------
def upsample_net(factors: tuple[int, int]) -> onnx.ModelProto:
    """conv -> maxpool -> conv -> Resize(factors) -> conv, on a [1, 3, 8, 6] input."""
    fh, fw = factors
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", ["c1"], ["r1"]),
             node("MaxPool", ["r1"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
             node("Conv", ["m", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", ["c2"], ["r2"]),
             node("Resize", ["r2", "", "sc"], ["u"], name="up", mode="nearest"),
             node("Conv", ["u", "w3", "b3"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    inits = [init("w1", RNG.standard_normal((4, 3, 3, 3)) * 0.3), init("b1", RNG.standard_normal(4) * 0.1),
             init("w2", RNG.standard_normal((5, 4, 3, 3)) * 0.3), init("b2", RNG.standard_normal(5) * 0.1),
             init("sc", [1, 1, fh, fw]),
             init("w3", RNG.standard_normal((2, 5, 3, 3)) * 0.3), init("b3", RNG.standard_normal(2) * 0.1)]
    return model(nodes, [vi("x", [1, 3, 8, 6])], [vi("y", [1, 2, 4 * fh, 3 * fw])], inits, 13)


FACTORS = [(2, 2), (3, 1), (1, 2)]


@pytest.mark.parametrize("factors", FACTORS)
def test_float_net_with_calibration_agrees_with_onnxruntime(factors: tuple[int, int]) -> None:
    m = upsample_net(factors)
    x = RNG.standard_normal((12, 3, 8, 6)).astype(np.float32)
    c = compile_model(from_onnx_model(m, "rz"), calib=x)
    (q,) = [n for n in c.graph.nodes if n.op == Op.QRESIZE]
    assert q.attr("factors") == factors
    floats = run_graph(c.float_graph, x.astype(np.float64))[c.float_graph.outputs[0]]
    assert np.allclose(floats, np.concatenate([run_ort(m, x[i:i + 1]) for i in range(len(x))]), atol=1e-4)
    rows = layer_agreement(c, export_qdq(c.graph), x[:4])  # the integer kernels vs onnxruntime's
    assert rows and max(r.max_fed for r in rows) <= 1
    assert [r.max_fed for r in rows if r.op == Op.QRESIZE] == [0]  # exact on codes


@pytest.mark.parametrize("factors", FACTORS)
def test_qdq_net_from_onnxruntime_within_one_lsb(factors: tuple[int, int], tmp_path: Path) -> None:
    m = upsample_net(factors)
    calib = model_zoo.random_inputs(m, 16, seed=1)
    qdq = model_zoo.qdq_quantize(m, calib, tmp_dir=tmp_path)
    x = model_zoo.random_inputs(m, 4, seed=2)
    c = compile_model(from_onnx_model(qdq, "rz_qdq"))
    assert any(n.op == Op.QRESIZE for n in c.graph.nodes)
    ort = ort_integers(qdq, x)
    rows = agreement_from(c, ort, x)
    assert rows and max(r.max_fed for r in rows) <= 1
    assert [r.max_fed for r in rows if r.op == Op.QRESIZE] == [0]


def test_qresize_fed_onnxruntimes_codes_is_exact_and_a_shifted_input_is_caught() -> None:
    """The QResize kernel on onnxruntime's own input codes gives onnxruntime's output codes exactly;
    negative control: the same input one column late does not."""
    from hlsgen.golden import KERNELS

    m = upsample_net((2, 2))
    x = RNG.standard_normal((6, 3, 8, 6)).astype(np.float32)
    c = compile_model(from_onnx_model(m, "rz"), calib=x)
    ort = ort_integers(export_qdq(c.graph), x[:2])
    (q,) = [n for n in c.graph.nodes if n.op == Op.QRESIZE]
    codes = ort[q.inputs[0]].astype(np.int64)
    assert np.array_equal(KERNELS[q.op](q, c.graph, [codes]), ort[q.outputs[0]])
    late = np.roll(codes, 1, axis=3)
    assert not np.array_equal(KERNELS[q.op](q, c.graph, [late]), ort[q.outputs[0]])


@pytest.mark.parametrize("by", ["scales", "sizes"])
def test_resize_18_with_axes_golden_equals_onnxruntime(by: str) -> None:
    """Resize-18's `axes`: scales or sizes for H and W only."""
    if by == "scales":
        n, inits = node("Resize", ["x", "", "sc"], ["y"], name="up", axes=[2, 3]), [init("sc", [2, 3])]
    else:
        n, inits = node("Resize", ["x", "", "", "sz"], ["y"], name="up", axes=[-2, -1]), [init("sz", [6, 12], np.int64)]
    m = model([n], [vi("x", [1, 2, 3, 4])], [vi("y", None)], inits, 18)
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    g = from_onnx_model(m, "rz")
    assert next(n for n in g.nodes if n.op == Op.RESIZE).attr("factors") == (2, 3)
    assert np.array_equal(run_graph(g, x.astype(np.float64))[g.outputs[0]].astype(np.float32), run_ort(m, x))


def test_a_resize_quantized_otherwise_gets_a_requant_within_one_lsb() -> None:
    """A QDQ model whose Resize output has another quantizer than its input: QResize on the input's
    codes, then a QRequant to the output's (passes/quantize._passthrough); within 1 LSB of
    onnxruntime at every rounding point, and the QResize exact."""
    def qdq(t: str, s: str) -> list:
        return [node("QuantizeLinear", [t, f"{s}_s", f"{s}_z"], [f"{t}_q"]),
                node("DequantizeLinear", [f"{t}_q", f"{s}_s", f"{s}_z"], [f"{t}_d"])]

    w = RNG.standard_normal((2, 3, 3, 3)) * 0.3
    nodes = [*qdq("x", "a"), node("Resize", ["x_d", "", "sc"], ["u"], name="up", mode="nearest"), *qdq("u", "b"),
             node("DequantizeLinear", ["w_q", "w_s", "w_z"], ["w_d"]),
             node("Conv", ["u_d", "w_d", "bias"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    inits = [init("a_s", 0.02), init("a_z", 3, np.int8), init("b_s", 0.03), init("b_z", -5, np.int8),
             init("sc", [1, 1, 2, 2]), init("w_q", np.clip(np.round(w / 0.01), -127, 127), np.int8),
             init("w_s", 0.01), init("w_z", 0, np.int8), init("bias", np.zeros(2))]
    m = model(nodes, [vi("x", [1, 3, 4, 5])], [vi("y", None)], inits, 13)
    c = compile_model(from_onnx_model(m, "rz_requant"))
    ops = [n.op for n in c.graph.nodes]
    assert Op.QRESIZE in ops and ops[ops.index(Op.QRESIZE) + 1] == Op.QREQUANT
    x = RNG.uniform(-1.5, 1.5, (4, 3, 4, 5)).astype(np.float32)
    rows = agreement_from(c, ort_integers(m, x), x)
    assert rows and max(r.max_fed for r in rows) <= 1
    assert [r.max_fed for r in rows if r.op == Op.QRESIZE] == [0]

"""Concat, Split and Slice along the channels (the concat and slice layers).

Checks: the float kernels against onnxruntime on a U-Net-like skip concat and a split/slice net; the
integer graph of a calibrated float model (a QRequant in front of each concat input whose scale
differs, none where it is the output's); the integer concat and slice kernels against numpy on the
golden model's own tensors; a QDQ model from onnxruntime's quantize_static agreeing with onnxruntime
within 1 LSB at every rounding point (the concat's input requants included), with negative controls
(concat inputs swapped, requants dropped); the Split forms (sizes as input, attribute, equal parts);
and the refusals, one line naming the node.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from channel_nets import bounds, single, split_slice, unet
from model_zoo import qdq_quantize, run_ort
from onnx_builders import init, model, node, vi

from hlsgen import compile_model, float_reference
from hlsgen.errors import UnsupportedModelError
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.golden import KERNELS
from hlsgen.interop.compare import concat_input_requant, layer_agreement
from hlsgen.ir import Op
from hlsgen.pipeline import intermediates

RNG = np.random.default_rng(61)
X = RNG.uniform(-1, 1, (16, 3, 6, 6)).astype(np.float32)


def _ops(c) -> list[Op]:
    return [n.op for n in c.graph.nodes]


@pytest.mark.parametrize("net", [unet, split_slice])
def test_float_kernels_match_onnxruntime(net) -> None:
    m = net()
    (ours,) = float_reference(compile_model(from_onnx_model(m), calib=X), X[:4])
    want = np.concatenate([run_ort(m, xi[None])["y"] for xi in X[:4]])
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5)


def test_concat_inputs_of_another_scale_get_a_requant() -> None:
    c = compile_model(from_onnx_model(unet()), calib=X)
    (cat,) = [n for n in c.graph.nodes if n.op == Op.QCONCAT]
    q = c.graph.tensor(cat.outputs[0]).qtype
    a, b = (c.graph.producer(i) for i in cat.inputs)
    # the skip a (a Relu, narrower) is requantized; the wide branch b spans the concat's range: as it is
    assert a is not None and a.op == Op.QREQUANT and concat_input_requant(c.graph, a)
    assert c.graph.tensor(a.inputs[0]).qtype != q
    assert b is not None and b.op == Op.QCONV and c.graph.tensor(b.outputs[0]).qtype == q
    assert all(c.graph.tensor(i).qtype == q for i in cat.inputs)


def test_inputs_with_the_output_qtype_pass_as_they_are() -> None:
    """split_slice: every concat input is a slice of one tensor and covers its range: no requant."""
    c = compile_model(from_onnx_model(split_slice()), calib=X)
    assert _ops(c).count(Op.QSLICE) == 3 and Op.QREQUANT not in _ops(c)
    (cat,) = [n for n in c.graph.nodes if n.op == Op.QCONCAT]
    assert len(cat.inputs) == 3 and all(c.graph.producer(i).op == Op.QSLICE for i in cat.inputs)


@pytest.mark.parametrize("net", [unet, split_slice])
def test_integer_kernels_against_numpy(net) -> None:
    c = compile_model(from_onnx_model(net()), calib=X)
    v = intermediates(c, X[:4])
    for n in c.graph.nodes:
        if n.op == Op.QCONCAT:
            np.testing.assert_array_equal(v[n.outputs[0]], np.concatenate([v[i] for i in n.inputs], axis=1))
        if n.op == Op.QSLICE:
            x = v[n.inputs[0]]
            np.testing.assert_array_equal(v[n.outputs[0]], x[:, n.attr("start"):n.attr("end")])
            assert c.graph.tensor(n.outputs[0]).qtype == c.graph.tensor(n.inputs[0]).qtype


@pytest.fixture(scope="module")
def qdq_unet(tmp_path_factory: pytest.TempPathFactory) -> onnx.ModelProto:
    return qdq_quantize(unet(), X, tmp_dir=tmp_path_factory.mktemp("ort"))


def test_qdq_unet_agrees_with_onnxruntime(qdq_unet: onnx.ModelProto) -> None:
    c = compile_model(from_onnx_model(qdq_unet))  # everything quantized: no calibration data
    assert _ops(c).count(Op.QREQUANT) == 1 and Op.QCONCAT in _ops(c)  # the skip's scale differs
    rows = {r.name: r for r in layer_agreement(c, qdq_unet, X[:8])}
    cat = next(n.name for n in c.graph.nodes if n.op == Op.QCONCAT)
    assert cat in rows and all(r.max_fed <= 1 for r in rows.values()), rows


def test_swapped_concat_inputs_are_caught(qdq_unet: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: a concat kernel that takes its inputs in the other order disagrees."""
    c = compile_model(from_onnx_model(qdq_unet))
    right = KERNELS[Op.QCONCAT]
    monkeypatch.setitem(KERNELS, Op.QCONCAT, lambda n, g, ins: right(n, g, ins[::-1]))
    cat = next(n.name for n in c.graph.nodes if n.op == Op.QCONCAT)
    rows = {r.name: r for r in layer_agreement(c, qdq_unet, X[:8])}
    assert rows[cat].max_fed > 1


def test_dropped_requants_are_caught(qdq_unet: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: concatenating the inputs' codes at their own scales disagrees."""
    quantize = importlib.import_module("hlsgen.passes.quantize")
    monkeypatch.setattr(quantize, "_requant_to", lambda b, n, i, x, qy: x)
    c = compile_model(from_onnx_model(qdq_unet))
    assert Op.QREQUANT not in _ops(c)
    cat = next(n.name for n in c.graph.nodes if n.op == Op.QCONCAT)
    rows = {r.name: r for r in layer_agreement(c, qdq_unet, X[:8])}
    assert rows[cat].max_fed > 1


def test_qdq_split_slice_agrees_with_onnxruntime(tmp_path: Path) -> None:
    q = qdq_quantize(split_slice(), X, tmp_dir=tmp_path)
    c = compile_model(from_onnx_model(q))
    assert _ops(c).count(Op.QSLICE) == 3
    rows = layer_agreement(c, q, X[:8])
    assert {r.op for r in rows} >= {Op.QSLICE, Op.QCONCAT} and all(r.max_fed <= 1 for r in rows), rows


def _slices(m: onnx.ModelProto) -> list[tuple[int, int]]:
    g = from_onnx_model(m)
    return [(n.attr("start"), n.attr("end")) for n in g.nodes if n.op == Op.SLICE]


def test_split_forms() -> None:
    assert _slices(split_slice(opset=13)) == [(0, 3), (3, 8), (1, 4)]
    assert _slices(split_slice(opset=11)) == [(0, 3), (3, 8), (1, 4)]
    equal = single([node("Split", ["x"], ["a", "b"], axis=-3), node("Concat", ["b", "a"], ["y"], axis=1)], [],
                   [1, 4, 6, 6])
    assert _slices(equal) == [(0, 2), (2, 4)]
    n18 = single([node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2), node("Concat", ["b", "a"], ["y"], axis=1)],
                 [], [1, 4, 6, 6], opset=18)
    assert _slices(n18) == [(0, 2), (2, 4)]


def test_flat_concat_of_two_dense_layers() -> None:
    """Along the feature axis of [1, N]: two Gemms of a flat input, concatenated, then a Gemm."""
    rng = np.random.default_rng(4)
    nodes = [node("Gemm", ["x", "w1", "b1"], ["a"], transB=1), node("Gemm", ["x", "w2", "b2"], ["b"], transB=1),
             node("Concat", ["a", "b"], ["c"], axis=-1), node("Gemm", ["c", "w3", "b3"], ["y"], transB=1)]
    inits = [init("w1", rng.standard_normal((3, 8))), init("b1", np.zeros(3)), init("w2", rng.standard_normal((5, 8))),
             init("b2", np.zeros(5)), init("w3", rng.standard_normal((2, 8))), init("b3", np.zeros(2))]
    m = model(nodes, [vi("x", [1, 8])], [vi("y", [1, 2])], inits)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    c = compile_model(from_onnx_model(m), calib=x)
    assert Op.QCONCAT in _ops(c)
    (ours,) = float_reference(c, x[:2])
    np.testing.assert_allclose(ours, np.concatenate([run_ort(m, xi[None])["y"] for xi in x[:2]]), rtol=1e-5,
                               atol=1e-5)


REFUSED = [
    ("concat along H", [node("Concat", ["x", "x"], ["y"], name="cat", axis=2)], [], [1, 4, 12, 6],
     r"cat \(Concat\): Concat along axis 2 of shape \[1, 4, 6, 6\]: only the channel axis"),
    ("concat of a constant", [node("Concat", ["x", "k"], ["y"], name="cat", axis=1)],
     [init("k", np.zeros((1, 2, 6, 6)))], [1, 6, 6, 6], r"cat \(Concat\): Concat of the constant k"),
    ("slice step 2", [node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], name="sl")],
     bounds([0], [4], [1], [2]), [1, 2, 6, 6], r"sl \(Slice\): Slice with step 2: only step 1"),
    ("slice along W", [node("Slice", ["x", "starts", "ends", "axes"], ["y"], name="sl")],
     bounds([0], [3], [3]), [1, 4, 6, 3], r"sl \(Slice\): Slice along axis 3 of shape \[1, 4, 6, 6\]"),
    ("computed starts", [node("Shape", ["x"], ["shp"]), node("Gather", ["shp", "zero"], ["st"], axis=0),
                         node("Unsqueeze", ["st", "ax0"], ["st1"]),
                         node("Slice", ["x", "st1", "ends", "axes"], ["y"], name="sl")],
     [init("zero", np.array(0), np.int64), init("ax0", np.array([0]), np.int64),
      *bounds([0], [2], [1])[1:]], [1, 1, 6, 6], r"sl \(Slice\): starts must be a constant"),
    ("split along H", [node("Split", ["x"], ["a", "b"], name="sp", axis=2), node("Concat", ["a", "b"], ["y"], axis=1)],
     [], [1, 8, 3, 6], r"sp \(Split\): Split along axis 2 of shape \[1, 4, 6, 6\]"),
]


@pytest.mark.parametrize(("what", "nodes", "inits", "out_shape", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refusals_name_the_node(what, nodes, inits, out_shape, message) -> None:
    with pytest.raises(UnsupportedModelError, match=message) as err:
        from_onnx_model(single(nodes, inits, out_shape), "m.onnx")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("net", "ops"), [(unet, {"Concat"}), (split_slice, {"Concat", "Slice"})])
def test_float_models_compare_through_export(net, ops: set[str]) -> None:
    """`hlsgen compare` of a float model: the compiled graph exported as QDQ (QConcat as a Concat of
    the codes, QSlice as a Slice) agrees with the golden model at every rounding point, the concat's
    input requants included."""
    from hlsgen.interop.export_qdq import export_qdq

    c = compile_model(from_onnx_model(net()), calib=X)
    exported = export_qdq(c.graph)
    onnx.checker.check_model(exported, full_check=True)
    assert ops <= {n.op_type for n in exported.graph.node}
    rows = layer_agreement(c, exported, X[:8])
    assert Op.QCONCAT in {r.op for r in rows} and all(r.max_fed <= 1 for r in rows), rows


def test_a_tensor_concatenated_with_itself_renders_in_both_backends() -> None:
    from hlsgen.backends.hls import hls_context
    from hlsgen.backends.verilog import design_context
    from hlsgen.hw.dataflow import build_dataflow
    from hlsgen.hw.model import Kind

    m = single([node("Concat", ["x", "x", "x"], ["c"], axis=1),
                node("Conv", ["c", "w", "b"], ["y"], kernel_shape=[1, 1])],
               [init("w", RNG.standard_normal((2, 12, 1, 1))), init("b", np.zeros(2))], [1, 2, 6, 6])
    c = compile_model(from_onnx_model(m), calib=RNG.standard_normal((8, 4, 6, 6)).astype(np.float32))
    df = build_dataflow(c.graph, c.config.hw)
    (cat,) = [lay for lay in df.layers if lay.kind == Kind.CONCAT]
    assert len(cat.inputs) == 3 and len(set(cat.inputs)) == 1
    (u,) = [u for u in design_context(df, "m")["units"] if u["module"] == "hg_concat"]
    assert len(set(u["in_edges"])) == 3  # one FIFO edge per input port
    calls = [k for k in hls_context(df, c.config.hw)["calls"] if k["func"] == "concat_layer"]
    assert len(calls) == 1 and len(set(calls[0]["args"][:3])) == 3


def test_hls_refuses_a_concat_of_five_inputs() -> None:
    from hlsgen.backends.hls import hls_context
    from hlsgen.errors import HlsgenError
    from hlsgen.hw.dataflow import build_dataflow

    m = single([node("Concat", ["x"] * 5, ["y"], axis=1)], [], [1, 20, 6, 6])
    c = compile_model(from_onnx_model(m), calib=RNG.standard_normal((8, 4, 6, 6)).astype(np.float32))
    with pytest.raises(HlsgenError, match=r"HLS: layer \w+ concatenates 5 inputs; the HLS kernel takes 2 to 4"):
        hls_context(build_dataflow(c.graph, c.config.hw), c.config.hw)


def test_resource_model_of_the_channel_layers() -> None:
    """A concat or slice is its output register and a valid flag, 2 LUTs of handshake: what Yosys 0.70
    (synth_xilinx, xc7) gave for this net's layers (concat 2 LUT / 89 FF; slices 2 / 25, 2 / 41)."""
    from hlsgen.hw.dataflow import build_dataflow
    from hlsgen.hw.model import Kind
    from hlsgen.hw.resources import layer_resources

    c = compile_model(from_onnx_model(split_slice()), calib=X)
    df = build_dataflow(c.graph, c.config.hw)
    got = {(lay.kind, int(layer_resources(lay, df.streams[lay.inputs[0]], df.streams[lay.output]).lut),
            int(layer_resources(lay, df.streams[lay.inputs[0]], df.streams[lay.output]).ff))
           for lay in df.layers if lay.kind in (Kind.CONCAT, Kind.SLICE)}
    assert got == {(Kind.CONCAT, 2, 89), (Kind.SLICE, 2, 25), (Kind.SLICE, 2, 41)}

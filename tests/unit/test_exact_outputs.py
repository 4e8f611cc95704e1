"""A last layer the model does not quantize (issue 20): finn-examples' KWS MLP ends in a MatMul with no
quantizer after it, everything before quantized. hlsgen gives that layer its exact accumulator type
(scale s_x·s_w[c], zero point 0), so the hardware's output codes are the integer sum itself,
dequantized on the host, and no calibration data is asked for."""

from __future__ import annotations

import importlib
from pathlib import Path

import model_zoo
import numpy as np
import onnx
import pytest
from onnx_builders import init, model, node, vi

from hlsgen import compile_model, intermediates
from hlsgen.config.compile import config_from_dict
from hlsgen.errors import HlsgenError
from hlsgen.frontend import from_onnx_model


def _strip_output_quantizer(qdq: onnx.ModelProto) -> onnx.ModelProto:
    """The QDQ model with the QuantizeLinear -> DequantizeLinear pair on its output removed: the last
    layer's float result is the output."""
    m = onnx.ModelProto()
    m.CopyFrom(qdq)
    g = m.graph
    out = g.output[0].name
    dq = next(n for n in g.node if out in n.output)
    q = next(n for n in g.node if dq.input[0] in n.output)
    assert (q.op_type, dq.op_type) == ("QuantizeLinear", "DequantizeLinear")
    source = q.input[0]
    g.node.remove(dq)
    g.node.remove(q)
    for n in g.node:
        n.output[:] = [out if o == source else o for o in n.output]
        n.input[:] = [out if i == source else i for i in n.input]
    return m


def kws_like_mlp() -> onnx.ModelProto:
    """x[1, 32] -> MatMul + Add + Relu (32 -> 24) -> MatMul (24 -> 10) = y: a last MatMul without bias,
    as finn-examples' KWS MLP ends."""
    rng = np.random.default_rng(9)
    nodes = [node("MatMul", ["x", "w1"], ["h"]), node("Add", ["h", "b1"], ["hb"]), node("Relu", ["hb"], ["r"]),
             node("MatMul", ["r", "w2"], ["y"])]
    inits = [init("w1", rng.normal(0, 0.25, (32, 24))), init("b1", rng.normal(0, 0.05, 24)),
             init("w2", rng.normal(0, 0.3, (24, 10)))]
    return model(nodes, [vi("x", ["N", 32])], [vi("y", ["N", 10])], inits, opset=13)


@pytest.fixture(scope="module", params=[True, False], ids=["per_channel", "per_tensor"])
def stripped(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> onnx.ModelProto:
    float_model = kws_like_mlp()
    calib = model_zoo.random_inputs(float_model, 16, seed=1)
    qdq = model_zoo.qdq_quantize(float_model, calib, per_channel=request.param, tmp_dir=tmp_path_factory.mktemp("q"))
    return _strip_output_quantizer(qdq)


def test_no_calibration_is_asked_and_the_output_is_the_exact_sum(stripped: onnx.ModelProto) -> None:
    c = compile_model(from_onnx_model(stripped, "mlp"), config_from_dict({}, "test"))
    last = [n for n in c.graph.nodes if n.op == "QGemm"][-1]
    y, x_in = c.graph.tensor(last.outputs[0]), c.graph.tensor(last.inputs[0])
    assert y.qtype is not None and not np.any(y.qtype.zero_point) and y.qtype.int.bits == last.attr("acc_bits")
    x = model_zoo.random_inputs(kws_like_mlp(), 5, seed=4)
    values = intermediates(c, x)
    w = c.graph.tensor(last.inputs[1]).data
    b = c.graph.tensor(last.inputs[2]).data  # already holds −zp_x·Σw
    exact = values[x_in.name] @ w.T + b
    assert np.array_equal(values[y.name], exact)  # the codes are the sum itself: no rounding, no clamp


def test_the_float_output_is_the_sum_times_the_scales(stripped: onnx.ModelProto,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The dequantized output against onnxruntime's float32 evaluation of the same model: the only
    difference is float32's own rounding of the products' sum (relative 1e-5). Negative control: the
    former way, an 8-bit output calibrated on the inputs, is off by far more."""
    x = model_zoo.random_inputs(kws_like_mlp(), 5, seed=4)
    ort = model_zoo.run_ort(stripped, x)[stripped.graph.output[0].name]
    bound = 1e-5 * float(np.max(np.abs(ort)))

    def output_error(calib: np.ndarray | None) -> float:
        c = compile_model(from_onnx_model(stripped, "mlp"), config_from_dict({}, "test"), calib)
        return float(np.max(np.abs(intermediates(c, x)[c.graph.outputs[0]] - ort)))

    assert output_error(None) <= bound
    monkeypatch.setattr(importlib.import_module("hlsgen.passes.calibrate"), "exact_output_qtype", lambda graph, n: None)
    assert output_error(x) > bound


def test_a_float_bias_off_the_grid_still_asks_for_calibration(stripped: onnx.ModelProto, tmp_path: Path) -> None:
    m = onnx.ModelProto()
    m.CopyFrom(stripped)
    out = m.graph.output[0].name
    producer = next(n for n in m.graph.node if out in n.output)
    bias = onnx.numpy_helper.from_array(np.full((1, 10), 0.1234567, np.float32), "odd_bias")
    m.graph.initializer.append(bias)
    producer.output[:] = ["pre_bias"]
    m.graph.node.append(onnx.helper.make_node("Add", ["pre_bias", "odd_bias"], [out], name="odd_add"))
    with pytest.raises(HlsgenError, match="give calibration data"):
        compile_model(from_onnx_model(m, "mlp"), config_from_dict({}, "test"))


def test_export_qdq_keeps_the_float_result(stripped: onnx.ModelProto) -> None:
    """`hlsgen export-qdq` writes the exact layer as its float result (no output quantizer): onnxruntime
    on the export agrees with the golden model within float32 rounding."""
    from hlsgen.interop.export_qdq import export_qdq

    c = compile_model(from_onnx_model(stripped, "mlp"), config_from_dict({}, "test"))
    exported = export_qdq(c.graph)
    last = exported.graph.output[0].name
    assert next(n for n in exported.graph.node if last in n.output).op_type == "Identity"
    x = model_zoo.random_inputs(kws_like_mlp(), 5, seed=4)
    ort = model_zoo.run_ort(exported, x)[last]
    ours = intermediates(c, x)[c.graph.outputs[0]]
    assert np.max(np.abs(ours - ort)) <= 1e-5 * float(np.max(np.abs(ours)))

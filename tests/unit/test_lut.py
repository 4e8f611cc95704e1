"""Elementwise functions (Sigmoid, Tanh, Elu, Selu, HardSigmoid, HardSwish, Softplus, Softsign, Erf,
Exp, Gelu) on a quantized input become exact lookup tables (QLut) in the integer graph (issue 7).

Checks: each function's float kernel against onnxruntime; a QDQ model quantized by onnxruntime with
a Sigmoid and a Tanh between convs gets two QLut layers, each within 1 LSB of onnxruntime fed its
inputs (optimizations off), no calibration data needed; a table entry is the function of the
dequantized code, requantized (checked by hand for one entry); a final Sigmoid of a float model
stays on the host.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from model_zoo import qdq_quantize, run_ort
from onnx_builders import init, model, node, vi

from hlsgen import compile_model, float_reference, run_golden
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.interop.compare import layer_agreement
from hlsgen.numerics import dequantize, quantize

RNG = np.random.default_rng(21)
OPS = [("Sigmoid", {}), ("Tanh", {}), ("Elu", {"alpha": 0.7}), ("Selu", {}), ("HardSigmoid", {"alpha": 0.3}),
       ("HardSwish", {}), ("Softplus", {}), ("Softsign", {}), ("Erf", {}), ("Exp", {}),
       ("Gelu", {"approximate": "tanh"}), ("Gelu", {})]


@pytest.mark.parametrize(("op", "attrs"), OPS)
def test_float_kernel_matches_onnxruntime(op: str, attrs: dict) -> None:
    m = model([node(op, ["x"], ["y"], **attrs)], [vi("x", [1, 64])], [vi("y", [1, 64])], [], opset=20)
    x = RNG.uniform(-4, 4, (2, 64)).astype(np.float32)
    (ours,) = float_reference(compile_model(from_onnx_model(m), calib=x), x)
    want = np.concatenate([run_ort(m, xi[None])["y"] for xi in x])
    np.testing.assert_allclose(ours, want, rtol=2e-6, atol=2e-6)


def conv_sigmoid_tanh() -> onnx.ModelProto:
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Sigmoid", ["c1"], ["s"]),
             node("Conv", ["s", "w2", "b2"], ["c2"], kernel_shape=[1, 1]),
             node("Tanh", ["c2"], ["t"]),
             node("Conv", ["t", "w3", "b3"], ["y"], kernel_shape=[1, 1])]
    inits = [init("w1", RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)), init("b1", np.zeros(4, np.float32)),
             init("w2", RNG.standard_normal((4, 4, 1, 1)).astype(np.float32)), init("b2", np.zeros(4, np.float32)),
             init("w3", RNG.standard_normal((2, 4, 1, 1)).astype(np.float32)), init("b3", np.zeros(2, np.float32))]
    return model(nodes, [vi("x", [1, 3, 6, 6])], [vi("y", [1, 2, 6, 6])], inits, opset=13)


def test_qdq_sigmoid_and_tanh_become_tables_within_one_lsb(tmp_path) -> None:
    x = RNG.uniform(-1, 1, (16, 3, 6, 6)).astype(np.float32)
    q = qdq_quantize(conv_sigmoid_tanh(), x, tmp_dir=tmp_path)
    c = compile_model(from_onnx_model(q))  # the model quantizes everything: no calibration data
    luts = [n for n in c.graph.nodes if n.op == "QLut"]
    assert len(luts) == 2 and all(len(n.attr("table")) == 256 for n in luts)
    rows = {r.name: r for r in layer_agreement(c, q, x[:8])}
    assert all(rows[n.name].max_fed <= 1 for n in luts)
    # one entry by hand: the table is the function on the grid, requantized
    n = luts[0]
    qx, qy = c.graph.tensor(n.inputs[0]).qtype, c.graph.tensor(n.outputs[0]).qtype
    code = 17
    real = 1 / (1 + np.exp(-float(dequantize(np.array(code), qx))))
    assert n.attr("table")[code - n.attr("x_lo")] == int(quantize(np.array(real), qy))


def test_tanh_in_a_float_model_is_a_table_and_a_final_sigmoid_stays_on_the_host() -> None:
    m = conv_sigmoid_tanh()
    m.graph.node.append(node("Sigmoid", ["y"], ["z"]))
    m.graph.output[0].CopyFrom(vi("z", [1, 2, 6, 6]))
    x = RNG.uniform(-1, 1, (16, 3, 6, 6)).astype(np.float32)
    c = compile_model(from_onnx_model(m), calib=x)
    assert [n.op for n in c.graph.nodes if n.op == "QLut"] == ["QLut", "QLut"]
    assert c.graph.nodes[-1].op == "Sigmoid"  # host-side tail after DequantizeOutput
    (ours,), (ref,) = run_golden(c, x), float_reference(c, x)
    assert float(np.max(np.abs(ours - ref))) < 0.05

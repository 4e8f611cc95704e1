"""A tensor quantized differently on two branches (issue 20: nn2fpga's QONNX ResNet-8 quantizes a block
output u4 s=0.5 for the skip and u4 s=0.25 for the next conv). Each branch is rounded once from the
tensor's exact value: the producer keeps its exact integer (a layer's accumulator, or a sum on the
finest term grid) and each quantizer becomes a requant of it, so every branch's codes agree with
onnxruntime's QuantizeLinear of the float tensor within 1 LSB (the requant multiplier's own bound).

Two nets, QDQ written by hand so the scales are the ones the case needs:
- `conv_fork`: Conv+Relu (an int32 bias on the grid) read by Q(0.05) -> Conv and Q(0.08) -> Add;
- `sum_fork`: a residual Add of Q(0.25) and Q(0.5) terms + Relu (power-of-two scales, as Brevitas
  writes) read by Q(0.5) -> Conv and Q(0.25) -> Add.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx_builders import init, model, node, vi

from hlsgen import compile_model, intermediates
from hlsgen.config.compile import config_from_dict
from hlsgen.errors import HlsgenError
from hlsgen.frontend import from_onnx_model
from hlsgen.interop.ort import ort_integers
from hlsgen.ir import Op

RNG = np.random.default_rng(20)
C = 4


def _qdq(x: str, out: str, scale: float, zp: int = 0, dtype: type = np.uint8) -> tuple[list, list]:
    nodes = [node("QuantizeLinear", [x, f"{out}_s", f"{out}_z"], [f"{out}_q"], name=f"{out}_Q"),
             node("DequantizeLinear", [f"{out}_q", f"{out}_s", f"{out}_z"], [out], name=f"{out}_DQ")]
    return nodes, [init(f"{out}_s", scale), init(f"{out}_z", zp, dtype)]


def _conv(x: str, out: str, s_x: float, cin: int, cout: int, s_w: float | np.ndarray = 0.02,
          rng: np.random.Generator | None = None) -> tuple[list, list]:
    """Conv 3x3 (pad 1) with int8 weight codes (per channel when s_w is an array) and an int32 bias at
    s_x·s_w (on the accumulator grid)."""
    rng = rng or np.random.default_rng(sum(map(ord, out)))  # each model the same, whatever ran before
    w = rng.integers(-60, 61, (cout, cin, 3, 3)).astype(np.int8)
    b = rng.integers(-200, 201, cout).astype(np.int32)
    nodes = [node("DequantizeLinear", [f"{out}_wq", f"{out}_ws"], [f"{out}_w"], axis=0),
             node("DequantizeLinear", [f"{out}_bq", f"{out}_bs"], [f"{out}_b"], axis=0),
             node("Conv", [x, f"{out}_w", f"{out}_b"], [out], name=out, kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    inits = [init(f"{out}_wq", w, np.int8), init(f"{out}_ws", s_w), init(f"{out}_bq", b, np.int32),
             init(f"{out}_bs", s_x * s_w)]
    return nodes, inits


def _net(parts: list[tuple[list, list]]) -> onnx.ModelProto:
    nodes = [n for p in parts for n in p[0]]
    inits = [i for p in parts for i in p[1]]
    return model(nodes, [vi("x", [1, C, 6, 6])], [vi("y", [1, C, 6, 6])], inits, opset=13)


def conv_fork(second_scale: float = 0.08, per_channel: bool = False) -> onnx.ModelProto:
    s_x = 1 / 32
    s_w = np.array([0.02, 0.015, 0.03, 0.01], np.float32) if per_channel else 0.02
    return _net([_qdq("x", "xd", s_x, 0, np.int8), _conv("xd", "c1", s_x, C, C, s_w),
                 ([node("Relu", ["c1"], ["r"])], []),
                 _qdq("r", "ra", 0.05), _qdq("r", "rb", second_scale),
                 _conv("ra", "c2", 0.05, C, C), _qdq("c2", "c2d", 0.1, 0, np.int8),
                 ([node("Add", ["c2d", "rb"], ["s"], name="add")], []), _qdq("s", "y", 0.15, 0, np.int8)])


def sum_fork() -> onnx.ModelProto:
    s_x = 1 / 32
    return _net([_qdq("x", "xd", s_x, 0, np.int8), _conv("xd", "c1", s_x, C, C), _qdq("c1", "a", 0.25, 0, np.int8),
                 _conv("xd", "c0", s_x, C, C, 0.03), _qdq("c0", "b", 0.5, 0, np.int8),
                 ([node("Add", ["a", "b"], ["t"], name="res"), node("Relu", ["t"], ["r"])], []),
                 _qdq("r", "ra", 0.5), _qdq("r", "rb", 0.25),
                 _conv("ra", "c2", 0.5, C, C), _qdq("c2", "c2d", 0.25, 0, np.int8),
                 ([node("Add", ["c2d", "rb"], ["s"], name="add")], []), _qdq("s", "y", 0.5, 0, np.int8)])


def _compile(m: onnx.ModelProto):
    return compile_model(from_onnx_model(m, "fork"), config_from_dict({}, "test"))


def _branch_codes(m: onnx.ModelProto, x: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """For each branch quantizer of `r`: (golden codes, onnxruntime's QuantizeLinear codes)."""
    c = _compile(m)
    ours = intermediates(c, x)
    ort = ort_integers(m, x)
    out = {}
    for q in ("ra_q", "rb_q"):
        t = next(t for t in c.graph.tensors.values() if q in t.aliases)
        out[q] = (ours[t.name], ort[q].astype(np.int64))
    return out


def conv_fork_per_channel() -> onnx.ModelProto:
    return conv_fork(per_channel=True)


@pytest.mark.parametrize("make", [conv_fork, conv_fork_per_channel, sum_fork])
def test_each_branch_is_rounded_once_from_the_exact_value(make) -> None:
    m = make()
    x = RNG.uniform(-1, 1, (6, C, 6, 6)).astype(np.float32)
    c = _compile(m)
    requants = [n for n in c.graph.nodes if n.op == Op.QREQUANT and n.inputs[0] == "r"]
    assert len(requants) == 2  # one per distinct quantizer, both reading r's exact codes
    assert any(note.kind == "fork_requant" for note in c.graph.notes)
    for ours, ort in _branch_codes(m, x).values():
        assert np.abs(ours - ort).max() <= 1
        assert np.mean(ours != ort) < 0.02  # 1-LSB differences are the multiplier's near-ties only


def test_sum_fork_branches_are_the_exact_sum_rounded_once() -> None:
    """On power-of-two scales every branch requant is exact: each branch's codes are numpy's
    round-half-even of r·g/s_k from r's exact codes (g = 0.25, the finest term scale). Negative
    control: the 0.25 branch is not the 0.5 branch's codes doubled (what a shared quantizer gives)."""
    c = _compile(sum_fork())
    x = RNG.uniform(-1, 1, (6, C, 6, 6)).astype(np.float32)
    values = intermediates(c, x)
    r = c.graph.tensor("r")
    assert r.qtype is not None and float(r.qtype.scale) == 0.25 and not r.qtype.int.bipolar
    branch = {float(c.graph.tensor(n.outputs[0]).qtype.scale): values[n.outputs[0]]
              for n in c.graph.nodes if n.op == Op.QREQUANT and n.inputs[0] == "r"}
    assert sorted(branch) == [0.25, 0.5]
    for scale, codes in branch.items():
        assert np.array_equal(codes, np.clip(np.round(values["r"] * 0.25 / scale), 0, 255).astype(np.int64))
    assert not np.array_equal(np.clip(branch[0.5] * 2, 0, 255), branch[0.25])


def test_the_exact_value_is_the_accumulator_and_the_float_model_agrees() -> None:
    c = _compile(conv_fork())
    r = c.graph.tensor("r")
    producer = next(n for n in c.graph.nodes if "r" in n.outputs)
    assert r.qtype is not None and r.qtype.int.bits == producer.attr("acc_bits") and not np.any(r.qtype.zero_point)


def test_same_quantizer_twice_is_one_tensor() -> None:
    """Two quantizers with equal parameters are one: no fork, no requant."""
    c = _compile(conv_fork(second_scale=0.05))
    assert not any(n.op == Op.QREQUANT for n in c.graph.nodes)
    assert not any(note.kind == "fork_requant" for note in c.graph.notes)


def test_no_exact_value_is_a_clear_error() -> None:
    """A float bias off the accumulator grid leaves no exact integer to requantize from."""
    m = conv_fork()
    bias = next(i for i in m.graph.initializer if i.name == "c1_bq")
    values = onnx.numpy_helper.to_array(bias).astype(np.float32) * np.float32(1 / 32 * 0.02) + np.float32(1e-4)
    m.graph.initializer.remove(bias)
    m.graph.initializer.append(onnx.numpy_helper.from_array(values, "c1_b_float"))
    for n in m.graph.node:
        if "c1_b" in n.output:
            m.graph.node.remove(n)
            break
    for n in m.graph.node:
        n.input[:] = ["c1_b_float" if i == "c1_b" else i for i in n.input]
    assert all(i.data_type != TensorProto.INT32 or i.name != "c1_bq" for i in m.graph.initializer)
    with pytest.raises(HlsgenError, match=r"tensor r is quantized twice .* its producer c1 \(Conv\) has no exact"):
        _compile(m)


@pytest.mark.parametrize("make", [conv_fork, conv_fork_per_channel, sum_fork])
def test_hlsgen_compare_feeds_each_branch_through_the_exact_value(make) -> None:
    """`hlsgen compare`'s rows: the producer of r is compared through its branches (onnxruntime has
    no codes for r's exact value), each branch within 1 LSB fed onnxruntime's inputs; on the
    power-of-two scales of sum_fork exactly equal."""
    from ort_agreement import agreement_from

    m = make()
    c = _compile(m)
    x = RNG.uniform(-1, 1, (6, C, 6, 6)).astype(np.float32)
    rows = {r.name: r for r in agreement_from(c, ort_integers(m, x), x)}
    assert {"r.fork0", "r.fork1"} <= set(rows)
    assert all(r.max_fed <= 1 for r in rows.values()), [(r.name, r.max_fed, r.mismatch_fed) for r in rows.values()]
    if make is sum_fork:
        assert rows["r.fork0"].max_fed == rows["r.fork1"].max_fed == 0


def qonnx_fork() -> onnx.ModelProto:
    """The issue's case in QONNX: Relu_4_out0 read by Quant u4 s=0.5 (the skip) and u4 s=0.25 (the next conv)."""
    from qonnx_models import QONNX

    def quant(x: str, out: str, scale: float, bits: int, signed: int) -> onnx.NodeProto:
        return node("Quant", [x, f"{out}_s", "zero", f"b{bits}"], [out], name=f"{out}_Q", domain=QONNX,
                    signed=signed, narrow=0, rounding_mode="ROUND")

    rng = np.random.default_rng(4)
    w1, w2 = (rng.integers(-7, 8, (C, C, 3, 3)) * 2.0 ** -4 for _ in range(2))
    nodes = [quant("x", "xq", 2.0 ** -5, 8, 1), quant("w1", "w1q", 2.0 ** -4, 4, 1),
             quant("w2", "w2q", 2.0 ** -4, 4, 1),
             node("Conv", ["xq", "w1q"], ["c1"], name="c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", ["c1"], ["Relu_4_out0"], name="Relu_4"),
             quant("Relu_4_out0", "skip", 0.5, 4, 0), quant("Relu_4_out0", "ra", 0.25, 4, 0),
             node("Conv", ["ra", "w2q"], ["c2"], name="c2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             quant("c2", "c2q", 0.5, 8, 1), node("Add", ["c2q", "skip"], ["s"], name="add"), quant("s", "y", 0.5, 8, 1)]
    inits = [init("w1", w1), init("w2", w2), init("zero", 0.0), init("b4", 4.0), init("b8", 8.0),
             *(init(f"{t}_s", s) for t, s in [("xq", 2.0 ** -5), ("w1q", 2.0 ** -4), ("w2q", 2.0 ** -4),
                                             ("skip", 0.5), ("ra", 0.25), ("c2q", 0.5), ("y", 0.5)])]
    return model(nodes, [vi("x", [1, C, 6, 6])], [vi("y", [1, C, 6, 6])], inits, opset=11, extra_domains=[QONNX])


def test_the_qonnx_case_of_the_issue_compiles_and_each_u4_branch_is_exact() -> None:
    """Refused before ("tensor Relu_4_out0 is quantized twice with different parameters"). The
    accumulator grid 2^-9 makes both requants exact: each branch is numpy's round-half-even of the
    exact value, clamped to u4. Negative control: the s=0.5 branch is not the s=0.25 codes halved."""
    c = _compile(qonnx_fork())
    x = RNG.uniform(-1, 1, (6, C, 6, 6)).astype(np.float32)
    values = intermediates(c, x)
    r = c.graph.tensor("Relu_4_out0")
    assert r.qtype is not None and float(r.qtype.scale) == 2.0 ** -9
    branch = {float(c.graph.tensor(n.outputs[0]).qtype.scale): values[n.outputs[0]]
              for n in c.graph.nodes if n.op == Op.QREQUANT and n.inputs[0] == r.name}
    assert sorted(branch) == [0.25, 0.5]
    for scale, codes in branch.items():
        assert np.array_equal(codes, np.clip(np.round(values[r.name] * 2.0 ** -9 / scale), 0, 15).astype(np.int64))
    assert not np.array_equal(np.round(branch[0.25] / 2), branch[0.5])

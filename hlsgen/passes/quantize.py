"""Pass quantize: the calibrated float graph becomes the integer graph of docs/ir.md.

Before:  x ─Conv{act, skip}─► … ─Gemm─► y ─Softmax─► p       (every hardware tensor has a qtype)
After:   x ─QuantizeInput─► x.q ─QConv─► … ─QGemm─► y ─DequantizeOutput─► y.real ─Softmax─► p
Requires: calibrate.
Math:    per op, see hlsgen/passes/quantize_layer.py and docs/numerics.md. Integer tensors keep the
         float graph's names; the host sides are QuantizeInput (float → codes, rounding from the
         config) and DequantizeOutput before the host tail. Pass-through ops (MaxPool, Resize, Slice, Reshape,
         Transpose) keep codes; where the model gives their output another qtype a QRequant follows.
         A Concat works on codes of the output's qtype: every input of another qtype gets a
         QRequant in front (one rounding from its own codes, as DQ -> Concat -> Q rounds).
Refuses when: a per-layer requant does not fit (accumulator wider than quant.max_acc_bits, a ratio
         too large for the multiplier, a bias out of range): error naming the node.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hlsgen import numerics
from hlsgen.errors import HlsgenError
from hlsgen.golden.unary import FUNCTIONS
from hlsgen.ir import Graph, IntType, Node, Note, QType, Tensor
from hlsgen.ir.ops import SPECS, UNARY_OPS, Op
from hlsgen.numerics import bias_scale_floor
from hlsgen.passes.check_supported import host_head, host_tail
from hlsgen.passes.context import PassContext
from hlsgen.passes.fuse_epilogue import activation_attrs
from hlsgen.passes.quantize_layer import LayerSettings, clamp_codes, layer_attrs, multipliers, weight_codes


@dataclass
class _Builder:
    """Collects the integer graph's nodes and tensors while the float graph is walked."""

    float_graph: Graph
    settings: Callable[[str], LayerSettings]
    rounding: numerics.Rounding
    nodes: list[Node]
    tensors: dict[str, Tensor]
    notes: list[Note] = field(default_factory=list)

    def int_tensor(self, name: str, qtype_from: str | None = None) -> str:
        t = self.float_graph.tensor(name)
        src = self.float_graph.tensor(qtype_from) if qtype_from else t
        self.tensors[name] = replace(t, qtype=src.qtype, integer=True)
        return name

    def const(self, name: str, values: np.ndarray, qtype: QType) -> str:
        self.tensors[name] = Tensor(name, tuple(values.shape), qtype, values.astype(np.int64), True)
        return name


def quantize(graph: Graph, ctx: PassContext) -> Graph:
    b = _Builder(graph, lambda name: _settings(ctx, name), ctx.config.quant.rounding, [], {})
    tail, head = host_tail(graph), host_head(graph)
    x = _host_head(graph, b, head)
    b.tensors[x] = graph.tensor(x)
    b.nodes.append(Node(f"{x}.quantize", Op.QUANTIZE_INPUT, (x,), (f"{x}.q",),
                        {"rounding": ctx.config.quant.rounding}))
    b.tensors[f"{x}.q"] = replace(graph.tensor(x), name=f"{x}.q", integer=True)
    b.float_graph = graph.with_tensor(replace(graph.tensor(x), name=f"{x}.q"))
    renamed = {x: f"{x}.q"}
    for n in graph.nodes:
        if n.name in tail or n.name in head:
            continue
        n = replace(n, inputs=tuple(renamed.get(i, i) for i in n.inputs))
        LOWERINGS[n.op](b, n)
    outputs = _host_side(graph, b, tail)
    return replace(graph, nodes=tuple(b.nodes), tensors=b.tensors, outputs=outputs,
                   notes=graph.notes + tuple(b.notes),
                   meta={**graph.meta, "quantized": True}).prune()


def _host_head(graph: Graph, b: _Builder, head: tuple[str, ...]) -> str:
    """The float preprocessing before the input quantizer stays as it is (run by the host); returns
    the tensor the host quantizes."""
    for name in head:
        n = graph.node(name)
        b.nodes.append(n)
        b.tensors.update({t: graph.tensor(t) for t in (*n.inputs, *n.outputs)})
        b.notes.append(Note("host_head", name, f"{n.op} runs on the host in float, before the input quantizer"))
    return graph.node(head[-1]).outputs[0] if head else graph.inputs[0]


def _host_side(graph: Graph, b: _Builder, tail: set[str]) -> tuple[str, ...]:
    """DequantizeOutput for every hardware tensor the host reads; the tail ops follow unchanged."""
    produced_by_tail = {o for n in graph.nodes if n.name in tail for o in n.outputs}
    boundary = [o for o in graph.outputs if o not in produced_by_tail]
    for n in graph.nodes:
        if n.name in tail:
            boundary += [i for i in n.inputs if i not in produced_by_tail and not graph.is_const(i)]
    real = {t: f"{t}.real" for t in dict.fromkeys(boundary)}
    for t, r in real.items():
        b.nodes.append(Node(f"{t}.dequantize", Op.DEQUANTIZE_OUTPUT, (t,), (r,)))
        b.tensors[r] = replace(graph.tensor(t), name=r, integer=False)
    for n in graph.nodes:
        if n.name in tail:
            b.nodes.append(replace(n, inputs=tuple(real.get(i, i) for i in n.inputs)))
            b.tensors.update({o: graph.tensor(o) for o in n.outputs})
            b.tensors.update({i: graph.tensor(i) for i in n.inputs if graph.is_const(i)})
    return tuple(real.get(o, o) for o in graph.outputs)


def _settings(ctx: PassContext, name: str) -> LayerSettings:
    q = ctx.config.quant
    override = ctx.config.layers.get(name)
    bits = override.weight_bits if override is not None and override.weight_bits is not None else q.weight_bits
    return LayerSettings(int(bits), q.multiplier_bits, q.bias_bits, q.max_acc_bits, q.rounding)


# ---- lowerings, one per float op ------------------------------------------------------------------
QUANTIZED_LAYER = {Op.CONV: Op.QCONV, Op.GEMM: Op.QGEMM}


def _layer(b: _Builder, n: Node) -> None:
    st = b.settings(n.name)
    w = b.float_graph.tensor(n.inputs[1])
    codes, s_w, w_type = weight_codes(w, st.weight_bits, n, _scale_floor(b, n, st))
    attrs, bias = layer_attrs(b.float_graph, n, codes, s_w, st)
    zeros = np.zeros(len(s_w), dtype=np.int64)
    w_name = b.const(f"{n.name}.w", codes, QType(w_type, s_w, zeros, axis=0))
    s_x = float(b.float_graph.tensor(n.inputs[0]).qtype.scale)  # type: ignore[union-attr]
    bias_type = IntType(max(attrs["acc_bits"], 2), True)
    bias_name = b.const(f"{n.name}.bias", bias, QType(bias_type, s_x * s_w, zeros, axis=0))
    geometry = {k: n.attrs[k] for k in ("strides", "pads", "dilations", "group") if k in n.attrs}
    if n.op == Op.CONV:
        geometry["pad_value"] = int(b.float_graph.tensor(n.inputs[0]).qtype.zero_point)  # type: ignore[union-attr]
    inputs = (n.inputs[0], w_name, bias_name) + n.inputs[3:]
    b.nodes.append(Node(n.name, QUANTIZED_LAYER[n.op], inputs, n.outputs, {**geometry, **attrs}))
    b.int_tensor(n.outputs[0])


LUT_MAX_BITS = 10


def _scale_floor(b: _Builder, n: Node, st: LayerSettings) -> np.ndarray | None:
    """Per-channel weight-scale floor that keeps the bias within bias_bits; channels it raises are
    reported (a `weight_scale_floor` note), since their weights lose precision or round to 0."""
    w, qx = b.float_graph.tensor(n.inputs[1]), b.float_graph.tensor(n.inputs[0]).qtype
    if w.integer or qx is None:
        return None
    floor = bias_scale_floor(b.float_graph.tensor(n.inputs[2]).real_value(), float(qx.scale), st.bias_bits)
    _, s_natural, _ = weight_codes(w, st.weight_bits, n)
    raised = np.flatnonzero(floor > s_natural)
    if raised.size:
        b.notes.append(Note("weight_scale_floor", n.name,
                            f"{raised.size} channel(s) ({', '.join(map(str, raised[:8]))}) have weights too small "
                            f"for their bias at {st.bias_bits} bits: weight scale raised so the bias fits",
                            {"channels": [int(c) for c in raised]}))
    return floor


def _add(b: _Builder, n: Node) -> None:
    qa, qb, qy = (b.float_graph.tensor(t).qtype for t in (*n.inputs, n.outputs[0]))
    assert qa is not None and qb is not None and qy is not None
    (ma, mb), shift = multipliers(n, [np.float64(qa.scale / qy.scale),
                                                np.float64(qb.scale / qy.scale)], b.settings(n.name).multiplier_bits)
    attrs = {"a_zp": int(qa.zero_point), "b_zp": int(qb.zero_point), "a_mult": _ints(ma), "b_mult": _ints(mb),
             **_requant(b, n, shift, qy)}
    b.nodes.append(Node(n.name, Op.QADD, n.inputs, n.outputs, attrs))
    b.int_tensor(n.outputs[0])


def _activation(b: _Builder, n: Node) -> None:
    """A standalone Relu/Clip/LeakyRelu: a per-tensor requant with clamps."""
    qx, qy = (b.float_graph.tensor(t).qtype for t in (n.inputs[0], n.outputs[0]))
    assert qx is not None and qy is not None
    act = activation_attrs(n)
    ratio = np.float64(qx.scale / qy.scale)
    ratios = [ratio, ratio * act["alpha"]] if act["act"] == "leaky" else [ratio]
    mults, shift = multipliers(n, ratios, b.settings(n.name).multiplier_bits)
    _emit_requant(b, n.name, n.inputs[0], n.outputs[0], mults, shift, act)


def _identity(b: _Builder, n: Node) -> None:
    """One branch of a tensor quantized differently on several branches: a requant from its exact
    value (passes/calibrate._exact_forks; per channel when it is a layer's accumulator)."""
    qx, qy = b.float_graph.tensor(n.inputs[0]).qtype, b.float_graph.tensor(n.outputs[0]).qtype
    assert qx is not None and qy is not None
    ratio = np.asarray(qx.scale, np.float64).reshape(-1) / np.float64(qy.scale)
    mults, shift = multipliers(n, [ratio], b.settings(n.name).multiplier_bits)
    _emit_requant(b, n.name, n.inputs[0], n.outputs[0], mults, shift, {})


def _emit_requant(b: _Builder, name: str, x: str, y: str, mults: list[np.ndarray], shift: np.ndarray,
                  act: dict[str, Any]) -> None:
    qx, qy = b.float_graph.tensor(x).qtype, b.float_graph.tensor(y).qtype
    assert qx is not None and qy is not None
    lo, hi = clamp_codes(name, qy, act.get("clip_min", -math.inf), act.get("clip_max", math.inf))
    x_zp = np.unique(np.asarray(qx.zero_point))
    assert x_zp.size == 1, f"{name}: per-channel input zero points"
    attrs = {"x_zp": int(x_zp[0]), "axis": 1, "mult": _ints(mults[0]), "shift": _ints(shift),
             "mult_neg": _ints(mults[1]) if len(mults) > 1 else None, "zp": int(qy.zero_point),
             "lo": lo, "hi": hi, "rounding": b.rounding}
    b.nodes.append(Node(name, Op.QREQUANT, (x,), (y,), attrs))
    b.int_tensor(y)


def _avgpool(b: _Builder, n: Node) -> None:
    x = b.float_graph.tensor(n.inputs[0])
    qx, qy = x.qtype, b.float_graph.tensor(n.outputs[0]).qtype
    assert qx is not None and qy is not None
    geometry: dict[str, Any]
    if n.op == Op.GLOBAL_AVGPOOL:
        geometry = {"kernel": tuple(x.shape[2:]), "strides": (1, 1), "pads": (0, 0, 0, 0), "count_include_pad": 1}
    else:
        geometry = {k: n.attrs[k] for k in ("kernel", "strides", "pads", "count_include_pad")}
    area = int(np.prod(geometry["kernel"]))
    mults, shift = multipliers(n, [np.float64(qx.scale / (qy.scale * area))],
                                            b.settings(n.name).multiplier_bits)
    attrs = {**geometry, "x_zp": int(qx.zero_point), "mult": _ints(mults[0]), **_requant(b, n, shift, qy)}
    b.nodes.append(Node(n.name, Op.QAVGPOOL, n.inputs, n.outputs, attrs))
    b.int_tensor(n.outputs[0])


# else the op itself (Reshape, Transpose)
PASSTHROUGH_INT = {Op.MAXPOOL: Op.QMAXPOOL, Op.RESIZE: Op.QRESIZE, Op.SLICE: Op.QSLICE}


def _passthrough(b: _Builder, n: Node) -> None:
    """MaxPool/Resize/Slice/Reshape/Transpose work on codes; a differing output qtype gets a QRequant after."""
    x, y = n.inputs[0], n.outputs[0]
    qx, qy = b.float_graph.tensor(x).qtype, b.float_graph.tensor(y).qtype
    attrs = dict(n.attrs)
    if n.op == Op.MAXPOOL:
        assert qx is not None
        attrs["pad_value"] = qx.int.lo
    op = PASSTHROUGH_INT.get(Op(n.op), n.op)
    if qx == qy:
        b.nodes.append(Node(n.name, op, n.inputs, n.outputs, attrs))
        b.int_tensor(y)
        return
    mid = f"{y}.pre"
    b.tensors[mid] = replace(b.float_graph.tensor(y), name=mid, qtype=qx, integer=True, aliases=())  # hlsgen's own
    b.nodes.append(Node(n.name, op, n.inputs, (mid,), attrs))
    assert qx is not None and qy is not None
    ratio = np.float64(qx.scale / qy.scale)
    mults, shift = multipliers(n, [ratio], b.settings(n.name).multiplier_bits)
    b.float_graph = b.float_graph.with_tensor(b.tensors[mid])
    _emit_requant(b, f"{n.name}.requant", mid, y, mults, shift, {})


def _concat(b: _Builder, n: Node) -> None:
    """A Concat on codes of its output's qtype; an input of another qtype is requantized to it first."""
    qy = b.float_graph.tensor(n.outputs[0]).qtype
    assert qy is not None
    inputs = [x if b.float_graph.tensor(x).qtype == qy else _requant_to(b, n, i, x, qy) for i, x in enumerate(n.inputs)]
    b.nodes.append(Node(n.name, Op.QCONCAT, tuple(inputs), n.outputs, dict(n.attrs)))
    b.int_tensor(n.outputs[0])


def _requant_to(b: _Builder, n: Node, i: int, x: str, qy: QType) -> str:
    """Input i of node `n` as codes of qtype `qy`: the tensor `{n}.in{i}` a QRequant writes."""
    qx = b.float_graph.tensor(x).qtype
    assert qx is not None
    if qx.per_channel:
        raise HlsgenError(f"node {n.name} ({n.op}): input {x} is quantized per channel; a Concat needs "
                          "per-tensor inputs")
    mid = f"{n.name}.in{i}"
    b.float_graph = b.float_graph.with_tensor(replace(b.float_graph.tensor(x), name=mid, qtype=qy, aliases=()))
    mults, shift = multipliers(n, [np.float64(qx.scale / qy.scale)], b.settings(n.name).multiplier_bits)
    _emit_requant(b, f"{n.name}.requant{i}", x, mid, mults, shift, {})
    return mid


def _requant(b: _Builder, n: Node, shift: np.ndarray, qy: QType) -> dict[str, Any]:
    lo, hi = clamp_codes(n.name, qy, -math.inf, math.inf)
    return {"shift": _ints(shift), "zp": int(qy.zero_point), "lo": lo, "hi": hi, "rounding": b.rounding,
            "mult_neg": None}


def _ints(a: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in np.asarray(a).reshape(-1))


def _lut(b: _Builder, n: Node) -> None:
    """An elementwise function of a quantized input becomes a lookup table over every input code,
    computed in float64 from the graph's own scales (exact: the table is the function on the grid)."""
    qx, qy = b.float_graph.tensor(n.inputs[0]).qtype, b.float_graph.tensor(n.outputs[0]).qtype
    assert qx is not None and qy is not None
    if qx.per_channel or qy.per_channel or qx.int.bits > LUT_MAX_BITS:
        raise HlsgenError(f"node {n.name} ({n.op}): a lookup table needs a per-tensor input of at most "
                          f"{LUT_MAX_BITS} bits, got {qx!r}")
    x = np.arange(qx.int.lo, qx.int.hi + 1)
    real = FUNCTIONS[n.op](numerics.dequantize(x, qx), {k: n.attr(k) for k in SPECS[Op(n.op)].attrs})
    table = numerics.quantize(real, qy, b.rounding)
    b.nodes.append(Node(n.name, Op.QLUT, n.inputs, n.outputs, {"table": _ints(table), "x_lo": int(qx.int.lo)}))
    b.int_tensor(n.outputs[0])


def _trunc(b: _Builder, n: Node) -> None:
    """QONNX Trunc on codes: y = f(q / 2^k) as a requant with M = 1, S = k and an offset c in x_zp,
    round_shift(q − c, k): FLOOR c = 2^(k−1) half up (floor(q/2^k) = floor((q − 2^(k−1))/2^k + 1/2)),
    CEIL c = 1 − 2^(k−1) half up, ROUND c = 0 half even. The output code is y itself (its qtype
    carries the model's zero point, so the requant adds none)."""
    qy = b.float_graph.tensor(n.outputs[0]).qtype
    assert qy is not None
    k, mode = int(n.attr("shift")), n.attr("trunc_mode")
    half = (1 << (k - 1)) if k > 0 else 0
    offset = {"FLOOR": half, "CEIL": 1 - half if k > 0 else 0, "ROUND": 0}[mode]
    attrs = {"x_zp": offset, "axis": 1, "mult": (1,), "shift": (k,), "mult_neg": None, "zp": 0,
             "lo": qy.int.lo, "hi": qy.int.hi, "rounding": "half_even" if mode == "ROUND" else "half_up"}
    b.nodes.append(Node(n.name, Op.QREQUANT, n.inputs, n.outputs, attrs))
    b.int_tensor(n.outputs[0])


LOWERINGS: dict[str, Callable[[_Builder, Node], None]] = {
    "Trunc": _trunc,
    "Identity": _identity,
    **{str(op): _lut for op in UNARY_OPS},
    "Conv": _layer,
    "Gemm": _layer,
    "Add": _add,
    "Relu": _activation,
    "Clip": _activation,
    "LeakyRelu": _activation,
    "AveragePool": _avgpool,
    "GlobalAveragePool": _avgpool,
    "MaxPool": _passthrough,
    "Resize": _passthrough,
    "Reshape": _passthrough,
    "Transpose": _passthrough,
    "Slice": _passthrough,
    "Concat": _concat,
}

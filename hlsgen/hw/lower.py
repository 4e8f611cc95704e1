"""One integer IR node -> one streaming hardware Layer: geometry, tables, folding options, cycles.

See hlsgen/hw/dataflow.py for the conventions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hlsgen.config.hw import HwConfig
from hlsgen.errors import HlsgenError
from hlsgen.hw.model import Layer, Stream, canonical_order
from hlsgen.ir import Graph, Node, Op
from hlsgen.ir.ops import ELEMENTWISE_INT_OPS, MVU_OPS
from hlsgen.support.names import Namer

REQUANT_KEYS = ("zp", "lo", "hi", "rounding")
MID_KEYS = ("mid_zp", "mid_lo", "mid_hi")  # step 1 of a two-step epilogue (absent: None)
EPILOGUE_ARRAYS = ("mult", "shift", "mult_neg", "mid_mult", "mid_mult_neg", "mid_shift", "post_bias")
WINDOW_KINDS = ("conv", "dwconv", "maxpool", "avgpool")


def lower_node(graph: Graph, n: Node, ins: list[Stream], hw: HwConfig, namer: Namer) -> tuple[list[Layer], Stream]:
    """The layer for node `n` in every folding it may take (hlsgen/hw/fold.py picks one), and its output."""
    out = output_stream(graph, n, ins[0], namer)
    kind, params, arrays, macs = LOWER[n.op](graph, n, ins, out)
    params = {**params, "in_bits": ins[0].bits, "in_signed": ins[0].signed, "out_bits": out.bits,
              "out_signed": out.signed}
    layer = Layer(namer("layer_" + n.name), n.name, kind, tuple(s.name for s in ins), out.name, 1, 1,
                  params, arrays, 0, macs)
    options = [_with_cycles(_folded(layer, pe, simd), ins[0], out)
               for pe, simd in parallelism_options(kind, n.name, params, hw)]
    return options, out


def _folded(layer: Layer, pe: int, simd: int) -> Layer:
    return Layer(layer.name, layer.node, layer.kind, layer.inputs, layer.output, pe, simd, layer.params,
                 layer.arrays, layer.cycles, layer.macs)


def output_stream(graph: Graph, n: Node, src: Stream, namer: Namer) -> Stream:
    t = graph.tensor(n.outputs[0])
    assert t.qtype is not None
    bits, signed = t.qtype.int.bits, t.qtype.int.signed
    shape = t.shape[1:]
    if n.op in ELEMENTWISE_INT_OPS:  # elementwise: same layout as the input
        return Stream(namer(t.name), t.name, src.pixels, src.channels, bits, signed, src.height, src.width, src.order)
    if len(shape) == 3:
        c, h, w = shape
        return Stream(namer(t.name), t.name, h * w, c, bits, signed, h, w, canonical_order(shape))
    size = int(np.prod(shape))
    return Stream(namer(t.name), t.name, 1, size, bits, signed, 1, 1, np.arange(size))


def _geometry(graph: Graph, n: Node, x: Stream, out: Stream) -> dict[str, Any]:
    require_canonical(graph, n, x)
    return {"kernel": tuple(n.attr("kernel") or graph.tensor(n.inputs[1]).shape[2:]),
            "strides": tuple(n.attr("strides")), "pads": tuple(n.attr("pads")),
            "dilations": tuple(n.attr("dilations") or (1, 1)),
            "in_h": x.height, "in_w": x.width, "in_c": x.channels,
            "out_h": out.height, "out_w": out.width, "out_c": out.channels}


def _requant_arrays(n: Node, *keys: str) -> dict[str, np.ndarray]:
    return {k: np.asarray(n.attr(k), dtype=np.int64) for k in keys if n.attr(k) is not None}


def _conv(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> tuple[str, dict, dict, int]:
    geo = _geometry(graph, n, ins[0], out)
    w = graph.tensor(n.inputs[1])
    assert w.data is not None and w.qtype is not None
    group = int(n.attr("group"))
    kind = "dwconv" if group == geo["in_c"] == geo["out_c"] and group > 1 else "conv"
    params = {**geo, "group": group, "pad_value": n.attr("pad_value"), "act": n.attr("act"),
              "acc_bits": n.attr("acc_bits"), "mult_bits": n.attr("mult_bits"), "weight_bits": w.qtype.int.bits,
              "skip_zp": n.attr("skip_zp", 0), "residual": len(ins) > 1,
              "skip_bits": ins[1].bits if len(ins) > 1 else 0,
              **{k: n.attr(k) for k in REQUANT_KEYS + MID_KEYS}}
    arrays = {"weights": w.data.astype(np.int64).transpose(0, 2, 3, 1).copy(),  # OIHW -> OHWI (stream order)
              "bias": graph.tensor(n.inputs[2]).data.astype(np.int64),  # type: ignore[union-attr]
              **_requant_arrays(n, *EPILOGUE_ARRAYS, "skip_mult")}
    return kind, params, arrays, node_macs(graph, n)


def _gemm(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> tuple[str, dict, dict, int]:
    x = ins[0]
    w = graph.tensor(n.inputs[1])
    assert w.data is not None and w.qtype is not None
    params = {"in_pixels": x.pixels, "in_c": x.channels, "out_c": out.channels, "act": n.attr("act"),
              "acc_bits": n.attr("acc_bits"), "mult_bits": n.attr("mult_bits"), "weight_bits": w.qtype.int.bits,
              "pad_value": 0, **{k: n.attr(k) for k in REQUANT_KEYS + MID_KEYS}}
    arrays = {"weights": w.data.astype(np.int64)[:, x.order].copy(),  # columns in stream order
              "bias": graph.tensor(n.inputs[2]).data.astype(np.int64),  # type: ignore[union-attr]
              **_requant_arrays(n, *EPILOGUE_ARRAYS)}
    return "gemm", params, arrays, node_macs(graph, n)


def node_macs(g: Graph, n: Node) -> int:
    """Multiply-accumulates per input image of a QConv/QGemm node (0 for other ops)."""
    if n.op not in MVU_OPS:
        return 0
    w = g.tensor(n.inputs[1]).shape
    if n.op == Op.QGEMM:
        return int(np.prod(w))
    return int(np.prod(g.tensor(n.outputs[0]).shape[2:]) * np.prod(w))


def _pool(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> tuple[str, dict, dict, int]:
    params = _geometry(graph, n, ins[0], out)
    if n.op == Op.QMAXPOOL:
        return "maxpool", {**params, "pad_value": n.attr("pad_value")}, {}, 0
    params |= {"x_zp": n.attr("x_zp"), "count_include_pad": n.attr("count_include_pad"),
               **{k: n.attr(k) for k in REQUANT_KEYS}}
    return "avgpool", params, _requant_arrays(n, "mult", "shift"), 0


def _add(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> tuple[str, dict, dict, int]:
    if not np.array_equal(ins[0].order, ins[1].order):
        raise HlsgenError(f"node {n.name}: its two inputs arrive in different layouts")
    params = {"channels": out.channels, "a_zp": n.attr("a_zp"), "b_zp": n.attr("b_zp"),
              **{k: n.attr(k) for k in REQUANT_KEYS}}
    return "add", params, _requant_arrays(n, "a_mult", "b_mult", "shift"), 0


def _requant(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> tuple[str, dict, dict, int]:
    if len(n.attr("mult")) > 1:
        require_canonical(graph, n, ins[0])
    params = {"channels": out.channels, "x_zp": n.attr("x_zp"), **{k: n.attr(k) for k in REQUANT_KEYS}}
    return "requant", params, _requant_arrays(n, "mult", "shift", "mult_neg"), 0


def _lut(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> tuple[str, dict, dict, int]:
    """An elementwise function as a table over every input code; all channels of a pixel per cycle."""
    return "lut", {"channels": out.channels, "x_lo": n.attr("x_lo")}, \
        {"table": np.asarray(n.attr("table"), dtype=np.int64)}, 0


LOWER = {Op.QCONV: _conv, Op.QGEMM: _gemm, Op.QMAXPOOL: _pool, Op.QAVGPOOL: _pool, Op.QADD: _add,
         Op.QREQUANT: _requant, Op.QLUT: _lut}


def require_canonical(graph: Graph, node: Node, stream: Stream) -> None:
    shape = graph.tensor(stream.tensor).shape[1:]
    if stream.order.size != int(np.prod(shape)) or not np.array_equal(stream.order, canonical_order(shape)):
        raise HlsgenError(f"node {node.name}: its input {stream.tensor} arrives in a transposed layout; "
                          "hardware supports layout changes only at the input or before a Gemm")


# ---- parallelism and cycles ------------------------------------------------------------------------
FOLDED_LANES = ("avgpool", "add", "requant")  # PE = requant lanes, channels per cycle


def parallelism_options(kind: str, node: str, params: dict[str, Any], hw: HwConfig) -> list[tuple[int, int]]:
    """Candidate (PE, SIMD) pairs, fewest multipliers first: the lane counts of the output channels
    (PE) and of the input channels per group (SIMD), see `lane_counts`. A value set in `hw.layers`
    or as the `hw` default is the only choice for that dimension. Average pools, adds and requants
    fold their channels over PE requant lanes (SIMD 1; only `hw.layers` sets their PE); other
    layers have one form. A `hw.layers` value beyond the layer's channels is an error; the `hw`
    default is capped at each layer's channels (the report lists the capped layers)."""
    over = hw.layers.get(node)
    pe_set = (over.pe if over and over.pe else None) or hw.pe
    simd_set = (over.simd if over and over.simd else None) or hw.simd
    if kind in FOLDED_LANES:
        c = params["in_c"] if kind == "avgpool" else params["channels"]
        lanes = over.pe if over and over.pe else None  # hw.pe/simd are for matrix-vector layers
        _check_override(node, "pe", lanes, c, "channels")
        return [(lanes, 1)] if lanes else [(d, 1) for d in lane_counts(c)]
    if kind not in ("conv", "dwconv", "gemm"):
        return [(1, 1)]
    cin = params["in_c"] // params.get("group", 1)
    _check_override(node, "pe", over.pe if over else None, params["out_c"], "output channels")
    if kind != "dwconv":
        _check_override(node, "simd", over.simd if over else None, cin, "input channels per group")
    pes = [min(pe_set, params["out_c"])] if pe_set else lane_counts(params["out_c"])
    simds = [1] if kind == "dwconv" else ([min(simd_set, cin)] if simd_set else lane_counts(cin))
    return sorted(((p, s) for p in pes for s in simds), key=lambda ps: (ps[0] * ps[1], ps))


def _check_override(node: str, key: str, value: int | None, channels: int, what: str) -> None:
    if value and value > channels:
        raise HlsgenError(f"hw.layers.{node}.{key}: {value} is more than the layer's {channels} {what} "
                          f"(at most {channels})")


def capped_defaults(layer_kind: str, node: str, params: dict[str, Any], hw: HwConfig) -> list[tuple[str, int, int]]:
    """(key, asked, used) for each `hw.pe`/`hw.simd` default that this conv/gemm layer caps at its
    channels (a `hw.layers` entry of its own is not a default)."""
    if layer_kind not in ("conv", "dwconv", "gemm"):
        return []
    over = hw.layers.get(node)
    cin = params["in_c"] // params.get("group", 1)
    caps = [("pe", hw.pe, params["out_c"], over.pe if over else None)]
    if layer_kind != "dwconv":
        caps.append(("simd", hw.simd, cin, over.simd if over else None))
    return [(key, asked, limit) for key, asked, limit, own in caps if not own and asked > limit]


FINE_FOLDS = 32  # lane counts for every fold count up to this many (non-divisors of the channels)


def lane_counts(n: int) -> list[int]:
    """Lane counts worth considering for n channels: every divisor of n (no padding lane), and for
    each fold count k <= FINE_FOLDS the fewest lanes that take n channels in k folds, ceil(n / k)
    (padding lanes in the last fold, but a rate between two divisors: 640 channels in 7 folds of 92
    where the divisors offer 8 folds of 80 or 5 of 128)."""
    fine = {math.ceil(n / k) for k in range(1, min(n, FINE_FOLDS) + 1)}
    return sorted(fine | {d for d in range(1, n + 1) if n % d == 0})


def _with_cycles(layer: Layer, x: Stream, out: Stream) -> Layer:
    p = layer.params
    if layer.kind == "conv":
        kk = p["kernel"][0] * p["kernel"][1]
        c = out.pixels * math.ceil(p["out_c"] / layer.pe) * kk * math.ceil(p["in_c"] // p["group"] / layer.simd)
    elif layer.kind == "dwconv":
        c = out.pixels * math.ceil(p["out_c"] / layer.pe) * p["kernel"][0] * p["kernel"][1]
    elif layer.kind == "gemm":
        c = math.ceil(p["out_c"] / layer.pe) * x.pixels * math.ceil(x.channels / layer.simd)
    elif layer.kind == "maxpool":
        c = max(x.pixels, out.pixels * p["kernel"][0] * p["kernel"][1])
    elif layer.kind == "avgpool":  # the requant of one output pixel overlaps the next one's window
        c = max(x.pixels, out.pixels * max(p["kernel"][0] * p["kernel"][1], math.ceil(out.channels / layer.pe)))
    elif layer.kind in FOLDED_LANES:
        c = out.pixels * math.ceil(out.channels / layer.pe)
    else:
        c = out.pixels
    return Layer(layer.name, layer.node, layer.kind, layer.inputs, layer.output, layer.pe, layer.simd,
                 layer.params, layer.arrays, int(c), layer.macs)


def last_input_pixel(layer: Layer, x: Stream, out: Stream) -> np.ndarray:
    """For each output pixel, the index of the last input pixel it depends on (raster order)."""
    if layer.kind in ("gemm", "reorder"):  # every output waits for the whole input frame
        return np.full(out.pixels, x.pixels - 1)
    if layer.kind not in WINDOW_KINDS:
        return np.arange(out.pixels)
    p = layer.params
    oh, ow = np.divmod(np.arange(out.pixels), p["out_w"])
    (kh, kw), (sh, sw), (dh, dw) = p["kernel"], p["strides"], p["dilations"]
    r = np.clip(oh * sh - p["pads"][0] + (kh - 1) * dh, 0, p["in_h"] - 1)
    c = np.clip(ow * sw - p["pads"][1] + (kw - 1) * dw, 0, p["in_w"] - 1)
    return r * p["in_w"] + c

"""Golden kernels of the integer ops of docs/ir.md: exact, every value an int64 code.

Inputs are integer codes (the executor passes constants' int64 codes). The requant step is always
`numerics.scale_accumulator` followed by `numerics.requantize` (for QConv/QGemm both inside
`numerics.fused_epilogue`, which adds the optional first step); nothing here rounds on its own.
QConv and QGemm read their `epilogue` (ir/epilogue.py). The per-channel attributes of the other
requant ops (mult, shift, mult_neg, a_mult, ...) are tuples with one entry per channel or a single
entry for the whole tensor; their absent `zp`, `lo`, `hi` default to the output tensor's qtype
(zero point, type range).

The conv and dense products go through `exact_int_matmul` (float64 BLAS when provably exact). The
conv input codes are turned into float64 before im2col so the large column matrix is built once,
directly in the dtype BLAS reads; integers up to 32 bits are exact in float64.
"""

from __future__ import annotations

import numpy as np

from hlsgen import numerics
from hlsgen.golden.exact import exact_int_matmul
from hlsgen.golden.float_ops import channel_range
from hlsgen.golden.window import conv2d, pad_hw, pads4, pair, reduce_windows, upsample
from hlsgen.ir.epilogue import Epilogue, Step
from hlsgen.ir.graph import Graph, Node


# ---- helpers --------------------------------------------------------------------------------------
def codes(inputs: list[np.ndarray], i: int) -> np.ndarray:
    return np.asarray(inputs[i], dtype=np.int64)


def channel_param(node: Node, key: str, ndim: int, axis: int, default: object = None) -> np.ndarray | None:
    """An integer attribute (int or tuple) shaped to broadcast along `axis` of a rank-`ndim` tensor.

    One entry gives a scalar (per tensor); None (attribute absent, no default) gives None.
    """
    value = node.attr(key, default)
    return None if value is None else along_axis(value, ndim, axis)


def along_axis(values: object, ndim: int, axis: int) -> np.ndarray:
    """Per-channel integers (or one for all) shaped to broadcast along `axis` of a rank-`ndim` tensor."""
    arr = np.asarray(values, dtype=np.int64).reshape(-1)
    if arr.size == 1:
        return arr.reshape(())
    shape = [1] * ndim
    shape[axis] = -1
    return arr.reshape(shape)


def requant_step(step: Step, ndim: int, axis: int = 1) -> numerics.RequantStep:
    """An epilogue step (ir/epilogue.py) as the arrays numerics.fused_epilogue reads."""
    neg = None if step.mult_neg is None else along_axis(step.mult_neg, ndim, axis)
    return numerics.RequantStep(along_axis(step.mult, ndim, axis), along_axis(step.shift, ndim, axis), step.zp,
                                step.lo, step.hi, neg)


def _required(node: Node, key: str, ndim: int, axis: int) -> np.ndarray:
    value = channel_param(node, key, ndim, axis)
    if value is None:
        raise ValueError(f"{node.name} ({node.op}): missing attribute {key!r}")
    return value


def requant(node: Node, graph: Graph, v: np.ndarray, axis: int = 1) -> np.ndarray:
    """y = clamp(zp + round_shift(v, shift), lo, hi) with the node's requant attributes."""
    zp, lo, hi = _out_requant(node, graph)
    shift = _required(node, "shift", v.ndim, axis)
    return numerics.requantize(v, shift, zp, lo, hi, node.attr("rounding"))


def _out_requant(node: Node, graph: Graph) -> tuple[int, int, int]:
    """(zp, lo, hi) of the output requant: attributes, else the output tensor's qtype."""
    qt = graph.tensor(node.outputs[0]).qtype
    zp = node.attr("zp", None if qt is None else int(qt.zero_point.reshape(-1)[0]))
    lo = node.attr("lo", None if qt is None else qt.int.lo)
    hi = node.attr("hi", None if qt is None else qt.int.hi)
    if zp is None or lo is None or hi is None:
        raise ValueError(f"{node.name} ({node.op}): needs zp/lo/hi attributes or an output qtype")
    zps = np.asarray(zp, dtype=np.int64).reshape(-1)
    if zps.size != 1:
        raise ValueError(f"{node.name} ({node.op}): output zero point must be one integer, got {zp}")
    return int(zps[0]), int(lo), int(hi)


def _scaled_acc(node: Node, graph: Graph, acc: np.ndarray, skip: np.ndarray | None) -> np.ndarray:
    """QConv/QGemm epilogue (ir/epilogue.py, numerics.fused_epilogue): with a `mid` step the model's own
    intermediate quantizer first, then acc or (t − mid zp) times mult [+ skip] [+ post_bias], requant."""
    nd = acc.ndim
    e: Epilogue = node.attr("epilogue")
    skip_args = None
    if skip is not None:
        if e.skip is None:
            raise ValueError(f"{node.name} ({node.op}): a skip input without the epilogue's skip scaling")
        skip_args = (skip, along_axis(e.skip.zp, nd, 1), along_axis(e.skip.mult, nd, 1))
    mid = None if e.mid is None else requant_step(e.mid, nd)
    post_bias = None if e.post_bias is None else along_axis(e.post_bias, nd, 1)
    return numerics.fused_epilogue(acc, requant_step(e.out, nd), mid, skip_args, post_bias, e.rounding)


# ---- host boundary --------------------------------------------------------------------------------
def quantize_input(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    qt = graph.tensor(node.outputs[0]).qtype
    if qt is None:
        raise ValueError(f"{node.name} (QuantizeInput): output has no qtype")
    return numerics.quantize(np.asarray(inputs[0], dtype=np.float64), qt, node.attr("rounding"))


def dequantize_output(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    qt = graph.tensor(node.inputs[0]).qtype
    if qt is None:
        raise ValueError(f"{node.name} (DequantizeOutput): input has no qtype")
    return numerics.dequantize(codes(inputs, 0), qt)


# ---- compute ops ----------------------------------------------------------------------------------
def qconv(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    x, w, bias = codes(inputs, 0), codes(inputs, 1), codes(inputs, 2)
    pad_value = node.attr("pad_value")
    if pad_value is None:
        qt = graph.tensor(node.inputs[0]).qtype
        pad_value = 0 if qt is None else int(qt.zero_point.reshape(-1)[0])
    acc = conv2d(x.astype(np.float64), w, pads=pads4(node.attr("pads")), pad_value=float(pad_value),
                 strides=pair(node.attr("strides"), 1), dilations=pair(node.attr("dilations"), 1),
                 group=int(node.attr("group")), matmul=exact_int_matmul)
    acc += bias.reshape(1, -1, 1, 1)
    skip = codes(inputs, 3) if len(inputs) > 3 else None
    return _scaled_acc(node, graph, acc, skip)


def qgemm(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    x, w, bias = codes(inputs, 0), codes(inputs, 1), codes(inputs, 2)
    if x.ndim != 2:
        raise ValueError(f"{node.name} (QGemm): input must be [N, K], got shape {x.shape}")
    acc = exact_int_matmul(x, w.T) + bias.reshape(1, -1)
    return _scaled_acc(node, graph, acc, None)


def qadd(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    a, b = codes(inputs, 0), codes(inputs, 1)
    nd = max(a.ndim, b.ndim)
    a_term = (a - _required(node, "a_zp", nd, 1)) * _required(node, "a_mult", nd, 1)
    b_term = (b - _required(node, "b_zp", nd, 1)) * _required(node, "b_mult", nd, 1)
    return requant(node, graph, a_term + b_term)


def qmaxpool(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    x = codes(inputs, 0)
    pad_value = node.attr("pad_value")
    if pad_value is None:
        qt = graph.tensor(node.inputs[0]).qtype
        pad_value = np.iinfo(np.int64).min if qt is None else qt.int.lo
    xp = pad_hw(x, pads4(node.attr("pads")), int(pad_value))
    return reduce_windows(xp, pair(node.attr("kernel"), 1), pair(node.attr("strides"), 1),
                          pair(node.attr("dilations"), 1), np.maximum)


def qresize(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """Every code repeated fh times down and fw times across (exact: no rescaling)."""
    return upsample(codes(inputs, 0), node.attr("factors"))


def qavgpool(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """v = (Σ window − n·x_zp)·mult with n the kernel area, padded taps holding x_zp.

    count_include_pad=0 only has this meaning when no window reaches into the padding (a per-window
    divisor is not expressible with one multiplier), otherwise it raises ValueError.
    """
    x = codes(inputs, 0)
    kernel, strides, dil = pair(node.attr("kernel"), 1), pair(node.attr("strides"), 1), pair(
        node.attr("dilations"), 1)
    pads = pads4(node.attr("pads"))
    n = kernel[0] * kernel[1]
    if not int(node.attr("count_include_pad")) and any(pads):
        taps = reduce_windows(pad_hw(np.ones((1, 1) + x.shape[2:], np.int64), pads, 0), kernel, strides,
                              dil, np.add)
        if int(taps.min()) < n:
            raise ValueError(f"{node.name} (QAvgPool): count_include_pad=0 with windows over padding")
    x_zp = _required(node, "x_zp", x.ndim, 1)
    xp = pad_hw(x, pads, int(x_zp) if x_zp.ndim == 0 else 0)
    if x_zp.ndim:  # per-channel input zero point: pad each channel with its own
        xp = np.where(pad_hw(np.zeros_like(x, dtype=bool), pads, True), x_zp, xp)
    total = reduce_windows(xp, kernel, strides, dil, np.add)
    v = numerics.scale_accumulator(total - n * x_zp, _required(node, "mult", x.ndim, 1),
                                   channel_param(node, "mult_neg", x.ndim, 1))
    return requant(node, graph, v)


def qrequant(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    x = codes(inputs, 0)
    axis = int(node.attr("axis")) % max(x.ndim, 1)
    x_zp = channel_param(node, "x_zp", x.ndim, axis, 0)
    v = numerics.scale_accumulator(x - x_zp, _required(node, "mult", x.ndim, axis),
                                   channel_param(node, "mult_neg", x.ndim, axis))
    return requant(node, graph, v, axis=axis)


def qlut(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """An elementwise function as a lookup table over every input code: y = table[x - x_lo]."""
    table = np.asarray(node.attr("table"), dtype=np.int64)
    return table[codes(inputs, 0) - int(node.attr("x_lo"))]


def qconcat(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """The inputs' codes, channels one after the other: every input already has the output's qtype
    (the quantize pass put a QRequant in front of any that had not), so nothing is rescaled."""
    return np.concatenate([codes(inputs, i) for i in range(len(inputs))], axis=int(node.attr("axis")))


def qslice(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """Channels [start, end) of the input's codes, unchanged."""
    return channel_range(codes(inputs, 0), node)

"""Pools (maxpool, avgpool): lowering, folding, cycles. One unit in both backends: hg_pool and pool.h.

A max pool takes the largest code of each window; an average pool sums its window per channel and
requantizes the sum (the division by the window size folded into the multiplier) over PE lanes.
A global average pool whose pixel or per-pixel sums are wider than WIDEST_BEAT (MobileNetV2's head:
1,280 channels) reads its input PE channels a beat instead (`reads_folded`): PE sums per beat, the
ceil(C/PE) beats of a pixel consecutive, requantized on the last pixel's beats (HLS
global_avgpool_folded, Verilog hg_gap); it writes PE channels a beat or, where that fits, whole pixels.
A windowed max pool on such pixels reads and writes common.widest_fold channels a beat and takes its
window one fold at a time (`reads_fold_major`, common.fold_major_window, as a wide depthwise conv
does): the max of a fold's taps is that fold of the output pixel, so its units are the whole-pixel
ones on a fold's channels (HLS maxpool, Verilog hg_pool) and a frame takes `folds` times as long.
A global max pool on such pixels reads and writes common.widest_fold channels a beat as well
(`reads_folded`): the running max of each fold, written as the last pixel's beats are read (HLS
global_maxpool_folded, Verilog hg_gmax), a beat a cycle. A windowed average pool on such pixels is
A windowed average pool on such pixels takes its window fold-major as the max pool does, where its
requant is one multiplier and shift for every channel (per tensor, as every exporter writes it): its
unit is the whole-pixel one on a fold's channels, PE requant lanes over the fold, and the padding
lanes of a pixel's last fold are written as zero (they would requantize to the zero point; HLS
requant_lanes and Verilog hg_pool LAST_C). One with per-channel multipliers is refused by the HLS
backend (Vitis's 4,096-bit limit); the Verilog takes it whole.
"""

from __future__ import annotations

import math

import numpy as np

from hlsgen.config.hw import HwConfig
from hlsgen.devices.families import Family
from hlsgen.errors import HlsgenError
from hlsgen.hw.convert import WIDEST_BEAT
from hlsgen.hw.cost import NONE, RequantShape, Resources, memory
from hlsgen.hw.layers.common import (
    Lowered,
    array_mult_bits,
    int_arrays,
    is_wide,
    lane_folds,
    lane_options,
    no_macs,
    one_form,
    requant_of,
    whole_pixel_in,
    whole_pixel_out,
    widest_fold,
    window_buffer,
    window_last_pixel,
    window_of,
    window_rows,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.packing import code_range
from hlsgen.hw.params import AvgPoolParams, MaxPoolParams, Window
from hlsgen.ir import Graph, Node, Op
from hlsgen.numerics import signed_bits_for

OPS = (Op.QMAXPOOL, Op.QAVGPOOL)
KINDS = (Kind.MAXPOOL, Kind.AVGPOOL)
mac_dsp = no_macs


def window(layer: Layer) -> Window:
    assert isinstance(layer.params, MaxPoolParams | AvgPoolParams), layer.kind
    return layer.params.window


def lower(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> Lowered:
    w = window_of(graph, n, ins[0], out)
    if n.op == Op.QMAXPOOL:
        return Lowered(Kind.MAXPOOL, MaxPoolParams(w, n.attr("pad_value")), {})
    arrays = int_arrays(n, "mult", "shift")
    x, x_zp = ins[0], n.attr("x_zp")
    per_tensor = all(np.unique(arrays[k]).size == 1 for k in ("mult", "shift")) and isinstance(x_zp, int)
    fold = w.in_c
    if not _whole_image(w) and per_tensor and w.in_c * max(x.bits, _sum_bits(w.taps, x, x_zp)) > WIDEST_BEAT:
        fold = 1 << (WIDEST_BEAT // max(x.bits, _sum_bits(w.taps, x, x_zp))).bit_length() - 1
    return Lowered(Kind.AVGPOOL, AvgPoolParams(w, n.attr("x_zp"), n.attr("count_include_pad"), requant_of(n), fold),
                   arrays)


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """Every input pixel, or every window tap, whichever is more; an average pool's requant of one
    output pixel (over PE lanes) overlaps the next one's window."""
    taps = window(layer).taps
    if reads_folded(layer, x):  # a beat a cycle, the last pixel's requant (or max) overlapped
        return x.pixels * math.ceil(x.channels / in_folds(layer, 0, x)[0])
    folds = math.ceil(x.channels / beat_fold(layer, x)) if reads_fold_major(layer, x) else 1
    if layer.kind == Kind.MAXPOOL:
        return max(x.pixels, out.pixels * taps) * folds
    return max(x.pixels, out.pixels * max(taps, math.ceil(lanes_over(layer) / layer.pe))) * folds


def sum_bits(layer: Layer, x: Stream) -> int:
    """Bits of an average pool's per-channel sum over its window (the input zero point included)."""
    p = layer.params
    assert isinstance(p, AvgPoolParams) and isinstance(p.x_zp, int)
    return _sum_bits(window(layer).in_h * window(layer).in_w if is_global(layer) else window(layer).taps, x, p.x_zp)


def _sum_bits(taps: int, x: Stream, x_zp: int) -> int:
    return signed_bits_for(taps * (max(abs(c) for c in code_range(x)) + abs(x_zp)))


def reads_folded(layer: Layer, x: Stream) -> bool:
    """A global pool whose whole pixel (or, averaging, whose sums of one) would be wider than
    WIDEST_BEAT: it reads the frame a fold at a time, the folds of a pixel consecutive."""
    if not is_global(layer):
        return False
    if layer.kind == Kind.MAXPOOL:
        return is_wide(x)
    return x.channels * max(x.bits, sum_bits(layer, x)) > WIDEST_BEAT


def reads_fold_major(layer: Layer, x: Stream) -> bool:
    """A windowed max pool on pixels wider than WIDEST_BEAT, or such an average pool of one requant
    for every channel: common.widest_fold channels a beat, the window one fold at a time."""
    if layer.kind == Kind.AVGPOOL:
        return lanes_over(layer) < window(layer).in_c
    return layer.kind == Kind.MAXPOOL and not is_global(layer) and is_wide(x)


def beat_fold(layer: Layer, x: Stream) -> int:
    """The channels a beat of a fold-major or folded max pool (common.widest_fold) or of a fold-major
    average pool (`lanes_over`: a power of two whose sums fit WIDEST_BEAT too)."""
    return lanes_over(layer) if layer.kind == Kind.AVGPOOL else widest_fold(x)


def lanes_over(layer: Layer) -> int:
    """The channels an average pool's PE requant lanes fold over: a window's, or a fold-major one's fold."""
    assert isinstance(layer.params, AvgPoolParams)
    return layer.params.fold


def out_folds(layer: Layer, x: Stream, out: Stream) -> tuple[int, ...]:
    """Whole pixels; a folded global average pool also PE channels a beat (one requant fold); a
    fold-major or folded global max pool the fold it reads."""
    if reads_fold_major(layer, x) or (layer.kind == Kind.MAXPOOL and reads_folded(layer, x)):
        return (beat_fold(layer, x),)
    return lane_folds(out.channels, layer.pe) if reads_folded(layer, x) else whole_pixel_out(layer, x, out)


def in_folds(layer: Layer, index: int, s: Stream) -> tuple[int, ...]:
    """Whole pixels; a folded global average pool PE channels a beat; a fold-major or folded global
    max pool common.widest_fold channels a beat."""
    if reads_fold_major(layer, s) or (layer.kind == Kind.MAXPOOL and reads_folded(layer, s)):
        return (beat_fold(layer, s),)
    return (min(layer.pe, s.channels),) if reads_folded(layer, s) else whole_pixel_in(layer, index, s)


def options(layer: Layer, hw: HwConfig) -> list[tuple[int, int]]:
    if layer.kind == Kind.MAXPOOL:
        return one_form(layer, hw)
    lanes = lane_options(layer, lanes_over(layer), hw)
    if lanes_over(layer) == window(layer).in_c:
        return lanes
    # fold-major: whole lane folds in a beat of `lanes_over` channels (FoldedBeat, hg_collect)
    if len(lanes) == 1 and lanes_over(layer) % lanes[0][0]:
        raise HlsgenError(f"hw.layers.{layer.node}.pe: {lanes[0][0]} does not divide the {lanes_over(layer)} "
                          "channels this average pool takes a beat (a power of two: its pixels are wider than "
                          f"{WIDEST_BEAT} bits)")
    return [(pe, simd) for pe, simd in lanes if lanes_over(layer) % pe == 0]


def last_input_pixel(layer: Layer, x: Stream, out: Stream) -> np.ndarray:
    return window_last_pixel(window(layer), out)


def is_global(layer: Layer) -> bool:
    """The window is the whole unpadded image: the pool reads the frame directly (no window generator)."""
    return _whole_image(window(layer))


def _whole_image(w: Window) -> bool:
    return w.kernel == (w.in_h, w.in_w) and not any(w.pads) and (w.out_h, w.out_w) == (1, 1)


# ---- resources (hw/resources.py) ------------------------------------------------------------------------
def requant_shape(layer: Layer, x: Stream) -> RequantShape | None:
    """An average pool's PE requant lanes; a max pool has none."""
    return RequantShape(layer.pe, x.bits + 2, array_mult_bits(layer, "mult")) if layer.kind == Kind.AVGPOOL else None


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    """The line buffer; a folded global average pool instead keeps its sums in a memory of ceil(C/PE)
    words of PE sums (hg_gap's acc, the acc[FOLD][PE] of global_avgpool_folded), a folded global max
    pool its maxima in one of a beat a fold (hg_gmax's best, global_maxpool_folded's)."""
    if layer.kind == Kind.MAXPOOL and reads_folded(layer, x):
        return NONE + memory(math.ceil(x.channels / widest_fold(x)), widest_fold(x) * x.bits, family)
    if reads_folded(layer, x):
        return NONE + memory(math.ceil(x.channels / layer.pe), layer.pe * sum_bits(layer, x), family)
    return NONE + window_buffer(window_rows(window(layer)), x, family)


def features(layer: Layer, x: Stream, out: Stream) -> dict[str, float]:
    """An average pool's per-channel sums (adders, the held register its lanes drain); a folded global
    pool adds PE sums a cycle (its sums live in `memories`)."""
    if layer.kind != Kind.AVGPOOL:
        return {}
    channels = layer.pe if reads_folded(layer, x) else lanes_over(layer)
    return {"pool_acc_bits": channels * (x.bits + max(1, window(layer).taps - 1).bit_length())}

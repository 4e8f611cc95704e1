"""Pools (maxpool, avgpool): lowering, folding, cycles. One unit in both backends: hg_pool and pool.h.

A max pool takes the largest code of each window; an average pool sums its window per channel and
requantizes the sum (the division by the window size folded into the multiplier) over PE lanes.
"""

from __future__ import annotations

import math

import numpy as np

from hlsgen.config.hw import HwConfig
from hlsgen.devices.families import Family
from hlsgen.hw.cost import NONE, RequantShape, Resources
from hlsgen.hw.layers.common import (
    Lowered,
    array_mult_bits,
    int_arrays,
    lane_options,
    no_macs,
    one_form,
    requant_of,
    whole_pixel_in,
    whole_pixel_out,
    window_buffer,
    window_last_pixel,
    window_of,
    window_rows,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import AvgPoolParams, MaxPoolParams, Window
from hlsgen.ir import Graph, Node, Op

OPS = (Op.QMAXPOOL, Op.QAVGPOOL)
KINDS = (Kind.MAXPOOL, Kind.AVGPOOL)
out_folds, in_folds = whole_pixel_out, whole_pixel_in
mac_dsp = no_macs


def window(layer: Layer) -> Window:
    assert isinstance(layer.params, MaxPoolParams | AvgPoolParams), layer.kind
    return layer.params.window


def lower(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> Lowered:
    w = window_of(graph, n, ins[0], out)
    if n.op == Op.QMAXPOOL:
        return Lowered(Kind.MAXPOOL, MaxPoolParams(w, n.attr("pad_value")), {})
    params = AvgPoolParams(w, n.attr("x_zp"), n.attr("count_include_pad"), requant_of(n))
    return Lowered(Kind.AVGPOOL, params, int_arrays(n, "mult", "shift"))


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """Every input pixel, or every window tap, whichever is more; an average pool's requant of one
    output pixel (over PE lanes) overlaps the next one's window."""
    taps = window(layer).taps
    if layer.kind == Kind.MAXPOOL:
        return max(x.pixels, out.pixels * taps)
    return max(x.pixels, out.pixels * max(taps, math.ceil(out.channels / layer.pe)))


def options(layer: Layer, hw: HwConfig) -> list[tuple[int, int]]:
    if layer.kind == Kind.MAXPOOL:
        return one_form(layer, hw)
    return lane_options(layer, window(layer).in_c, hw)


def last_input_pixel(layer: Layer, x: Stream, out: Stream) -> np.ndarray:
    return window_last_pixel(window(layer), out)


def is_global(layer: Layer) -> bool:
    """The window is the whole unpadded image: the pool reads the frame directly (no window generator)."""
    w = window(layer)
    return w.kernel == (w.in_h, w.in_w) and not any(w.pads) and (w.out_h, w.out_w) == (1, 1)


# ---- resources (hw/resources.py) ------------------------------------------------------------------------
def requant_shape(layer: Layer, x: Stream) -> RequantShape | None:
    """An average pool's PE requant lanes; a max pool has none."""
    return RequantShape(layer.pe, x.bits + 2, array_mult_bits(layer, "mult")) if layer.kind == Kind.AVGPOOL else None


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    return NONE + window_buffer(window_rows(window(layer)), x, family)


def features(layer: Layer, x: Stream, out: Stream) -> dict[str, float]:
    """An average pool's per-channel sums (adders, the held register its lanes drain)."""
    if layer.kind != Kind.AVGPOOL:
        return {}
    return {"pool_acc_bits": x.channels * (x.bits + max(1, window(layer).taps - 1).bit_length())}

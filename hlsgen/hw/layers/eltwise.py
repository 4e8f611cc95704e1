"""Elementwise requant layers (add, requant): lowering, folding, cycles. One unit in both backends:
hg_eltwise and eltwise.h (add_layer, requant_layer).

An add requantizes (a - a_zp)·Ma + (b - b_zp)·Mb of two streams in the same layout; a requant
rescales one stream (x - x_zp)·M (M_neg where negative: a LeakyReLU). Both fold their channels over
PE requant lanes.
"""

from __future__ import annotations

import math

import numpy as np

from hlsgen.config.hw import HwConfig
from hlsgen.errors import HlsgenError
from hlsgen.hw.cost import RequantShape
from hlsgen.hw.layers.common import (
    Lowered,
    array_mult_bits,
    int_arrays,
    lane_folds,
    lane_options,
    no_features,
    no_macs,
    no_memories,
    requant_of,
    require_canonical,
    same_pixel,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import AddParams, RequantParams
from hlsgen.ir import Graph, Node, Op

OPS = (Op.QADD, Op.QREQUANT)
KINDS = (Kind.ADD, Kind.REQUANT)
INPUTS_ALIKE = True  # an add reads its two inputs at one fold (hw/stream_folds.py)
last_input_pixel = same_pixel
features, mac_dsp, memories = no_features, no_macs, no_memories


def channels(layer: Layer) -> int:
    assert isinstance(layer.params, AddParams | RequantParams), layer.kind
    return layer.params.channels


def lower(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> Lowered:
    if n.op == Op.QADD:
        if not np.array_equal(ins[0].order, ins[1].order):
            raise HlsgenError(f"node {n.name}: its two inputs arrive in different layouts")
        params = AddParams(out.channels, n.attr("a_zp"), n.attr("b_zp"), requant_of(n))
        return Lowered(Kind.ADD, params, int_arrays(n, "a_mult", "b_mult", "shift"))
    if len(n.attr("mult")) > 1:
        require_canonical(graph, n, ins[0])
    params_rq = RequantParams(out.channels, n.attr("x_zp"), requant_of(n))
    return Lowered(Kind.REQUANT, params_rq, int_arrays(n, "mult", "shift", "mult_neg"))


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    return out.pixels * math.ceil(out.channels / layer.pe)


def options(layer: Layer, hw: HwConfig) -> list[tuple[int, int]]:
    return lane_options(layer, channels(layer), hw)


def requant_shape(layer: Layer, x: Stream) -> RequantShape:
    """PE requant lanes; an add's take its second input too."""
    return RequantShape(layer.pe, x.bits + 2, array_mult_bits(layer, "mult", "mult_neg", "a_mult", "b_mult"),
                        second_operand=layer.kind == Kind.ADD)


def out_folds(layer: Layer, x: Stream, out: Stream) -> tuple[int, ...]:
    """PE channels a beat (one requant fold), or the whole pixel."""
    return lane_folds(out.channels, layer.pe)


def in_folds(layer: Layer, index: int, s: Stream) -> tuple[int, ...]:
    """PE channels a beat (one fold's operands), or the whole pixel; an add's two inputs alike."""
    return lane_folds(s.channels, layer.pe)

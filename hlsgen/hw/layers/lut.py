"""Lookup-table layers (lut): an elementwise function as a table over every input code, all channels
of a pixel per cycle. One unit in both backends: hg_lut and eltwise.h (lut_layer)."""

from __future__ import annotations

import numpy as np

from hlsgen.devices.families import Family
from hlsgen.hw.cost import NONE, Resources, rom
from hlsgen.hw.layers.common import (
    Lowered,
    no_features,
    no_macs,
    no_requant,
    one_form,
    same_pixel,
    whole_pixel_in,
    whole_pixel_out,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import LutParams
from hlsgen.ir import Graph, Node, Op

OPS = (Op.QLUT,)
KINDS = (Kind.LUT,)
out_folds, in_folds = whole_pixel_out, whole_pixel_in
options = one_form
last_input_pixel = same_pixel
requant_shape, features, mac_dsp = no_requant, no_features, no_macs


def lower(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> Lowered:
    return Lowered(Kind.LUT, LutParams(out.channels, n.attr("x_lo")), {"table": np.asarray(n.attr("table"),
                                                                                          dtype=np.int64)})


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    return out.pixels


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    """The table: one output code per input code."""
    return NONE + rom(int(layer.arrays["table"].size), out.bits, family)

"""Lookup-table layers (lut): an elementwise function as a table over every input code, all channels
of a pixel per cycle. One unit in both backends: hg_lut and eltwise.h (lut_layer). A pixel wider than
WIDEST_BEAT goes common.widest_fold channels a beat in and out, a beat a cycle, the padding lanes of a
pixel's last beat written as zero."""

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
    widest_fold,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import LutParams
from hlsgen.ir import Graph, Node, Op

OPS = (Op.QLUT,)
KINDS = (Kind.LUT,)
options = one_form
last_input_pixel = same_pixel
requant_shape, features, mac_dsp = no_requant, no_features, no_macs


def params_of(layer: Layer) -> LutParams:
    assert isinstance(layer.params, LutParams), layer.kind
    return layer.params


def lower(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> Lowered:
    fold = min(widest_fold(ins[0]), widest_fold(out))  # the input's and output's beats both fit
    return Lowered(Kind.LUT, LutParams(out.channels, n.attr("x_lo"), fold),
                   {"table": np.asarray(n.attr("table"), dtype=np.int64)})


def out_folds(layer: Layer, x: Stream, out: Stream) -> tuple[int, ...]:
    return (params_of(layer).fold,)


def in_folds(layer: Layer, index: int, s: Stream) -> tuple[int, ...]:
    return (params_of(layer).fold,)


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """A beat a cycle."""
    return out.pixels * params_of(layer).folds


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    """The table: one output code per input code."""
    return NONE + rom(int(layer.arrays["table"].size), out.bits, family)

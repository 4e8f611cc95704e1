"""Reorders (reorder): a frame buffer written in arrival order and read in canonical order, inserted
by hw/dataflow.py in front of a layer whose input a mid-network Transpose/Reshape left in another
layout. One unit in both backends: hg_reorder and reorder.h (reorder_layer). No IR op lowers to it."""

from __future__ import annotations

import numpy as np

from hlsgen.devices.families import Family
from hlsgen.hw.cost import NONE, Resources, memory
from hlsgen.hw.layers.common import (
    no_features,
    no_macs,
    no_requant,
    one_form,
    whole_frame,
    whole_pixel_in,
    whole_pixel_out,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import ReorderParams

OPS = ()
KINDS = (Kind.REORDER,)
out_folds, in_folds = whole_pixel_out, whole_pixel_in
options = one_form
last_input_pixel = whole_frame
requant_shape, features, mac_dsp = no_requant, no_features, no_macs


def reorder_layer(name: str, node: str, x: Stream, out: Stream, perm: np.ndarray) -> Layer:
    """Output element k of `out` is arriving element perm[k] of `x`."""
    params = ReorderParams(x.pixels, x.channels, out.pixels, out.channels, int(perm.size))
    layer = Layer(name, node, Kind.REORDER, (x.name,), out.name, 1, 1, params, {"perm": perm}, 0, 0)
    return layer.with_cycles(cycles(layer, x, out))


def params_of(layer: Layer) -> ReorderParams:
    assert isinstance(layer.params, ReorderParams), layer.kind
    return layer.params


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """The frame is written, then read: every input beat and every element once."""
    return x.pixels + params_of(layer).elements


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    """The frame buffer: every input beat."""
    return NONE + memory(x.pixels, x.channels * x.bits, family)

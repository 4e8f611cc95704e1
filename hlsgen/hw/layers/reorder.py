"""Reorders (reorder): a frame buffer written in arrival order and read in canonical order, inserted
by hw/dataflow.py in front of a layer whose input a mid-network Transpose/Reshape left in another
layout. One unit in both backends: hg_reorder and reorder.h (reorder_layer). No IR op lowers to it.
The buffer has two banks, so the next frame is written while this one is read: a frame takes the
longer of its write (input beats) and its read (one element a cycle). With one bank the two phases
serialized with the producer's frame: the test net of tests/sim/test_reorder_hw.py measured 331 cycles
a frame in rtlsim against 216 modelled.

Whole pixels in and out, or where a pixel is wider than WIDEST_BEAT, common.widest_fold channels a
beat (the beats of a pixel consecutive): the frame buffer holds the input beats as they arrive (a
beat's lanes, the last beat of a pixel zero above its channels: `buffer_index`), and the read phase
packs the output codes into beats of the output fold, a pixel's last beat zero-padded.
"""

from __future__ import annotations

import math

import numpy as np

from hlsgen.devices.families import Family
from hlsgen.hw.cost import NONE, Resources, memory
from hlsgen.hw.layers.common import (
    no_features,
    no_macs,
    no_requant,
    one_form,
    whole_frame,
    widest_fold,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import ReorderParams

OPS = ()
KINDS = (Kind.REORDER,)
options = one_form
last_input_pixel = whole_frame
requant_shape, features, mac_dsp = no_requant, no_features, no_macs


def out_folds(layer: Layer, x: Stream, out: Stream) -> tuple[int, ...]:
    """Whole pixels, or common.widest_fold channels a beat where they do not fit one."""
    return (widest_fold(out),)


def in_folds(layer: Layer, index: int, s: Stream) -> tuple[int, ...]:
    """Whole pixels, or common.widest_fold channels a beat where they do not fit one."""
    return (widest_fold(s),)


def reorder_layer(name: str, node: str, x: Stream, out: Stream, perm: np.ndarray) -> Layer:
    """Output element k of `out` is arriving element perm[k] of `x`."""
    params = ReorderParams(x.pixels, x.channels, out.pixels, out.channels, int(perm.size))
    layer = Layer(name, node, Kind.REORDER, (x.name,), out.name, 1, 1, params, {"perm": perm}, 0, 0)
    return layer.with_cycles(cycles(layer, x, out))


def params_of(layer: Layer) -> ReorderParams:
    assert isinstance(layer.params, ReorderParams), layer.kind
    return layer.params


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """Every input beat written and every element read once, the next frame written while this one is
    read (two banks)."""
    return max(x.pixels * math.ceil(x.channels / widest_fold(x)), params_of(layer).elements)


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    """The frame buffer: every input beat, in two banks (hg_reorder's bank0/bank1, the PIPO of
    reorder.h)."""
    lanes = widest_fold(x)
    bank = memory(x.pixels * math.ceil(x.channels / lanes), lanes * x.bits, family)
    return NONE + bank + bank


def buffer_index(layer: Layer, x: Stream) -> np.ndarray:
    """For output element k, where its code sits in the frame buffer of input beats (`x` as it
    arrives, x.fold lanes a beat): beat * x.fold + lane. With whole pixels, its arrival index."""
    arrival = np.asarray(layer.arrays["perm"], dtype=np.int64)
    pixel, channel = np.divmod(arrival, x.channels)
    return (pixel * x.folds + channel // x.fold) * x.fold + channel % x.fold

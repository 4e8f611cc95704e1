"""Nearest-neighbour upsampling by integer factors (upsample, from QResize): lowering, cycles,
dependencies, memory. One unit in both backends: hg_upsample and resize.h (upsample).

The unit reads each input row once, writing each of its pixels fw times while it stores the row in
a row buffer (in_w pixels), then replays the buffered row fh - 1 more times without reading: one
output beat a cycle, so a frame takes its output beats, in_h·fh·in_w·fw·folds. Output pixel (i, j)
is input pixel (i // fh, j // fw): it waits for that pixel and nothing after it. It reads and writes
whole pixels, or, where a whole pixel is wider than WIDEST_BEAT, WIDEST_BEAT // bits channels a beat
(common.widest_fold), a pixel's beats repeated together; it reads and writes the same fold.
"""

from __future__ import annotations

import numpy as np

from hlsgen.devices.families import Family
from hlsgen.hw.cost import NONE, Resources
from hlsgen.hw.layers.common import (
    Lowered,
    no_features,
    no_macs,
    no_requant,
    one_form,
    require_canonical,
    widest_fold,
    window_buffer,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import UpsampleParams
from hlsgen.ir import Graph, Node, Op

OPS = (Op.QRESIZE,)
KINDS = (Kind.UPSAMPLE,)
options = one_form
requant_shape, features, mac_dsp = no_requant, no_features, no_macs


def params_of(layer: Layer) -> UpsampleParams:
    assert isinstance(layer.params, UpsampleParams), layer.kind
    return layer.params


def lower(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> Lowered:
    require_canonical(graph, n, ins[0])
    fh, fw = (int(f) for f in n.attr("factors"))
    x = ins[0]
    return Lowered(Kind.UPSAMPLE, UpsampleParams(x.height, x.width, x.channels, fh, fw, widest_fold(x)), {})


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """One output beat a cycle: every output pixel's beats (the input rows are read meanwhile)."""
    return out.pixels * params_of(layer).folds


def out_folds(layer: Layer, x: Stream, out: Stream) -> tuple[int, ...]:
    """The fold it reads (common.widest_fold: whole pixels where they fit)."""
    return (params_of(layer).fold,)


def in_folds(layer: Layer, index: int, s: Stream) -> tuple[int, ...]:
    return (params_of(layer).fold,)


def last_input_pixel(layer: Layer, x: Stream, out: Stream) -> np.ndarray:
    """Output pixel (i, j) needs input pixel (i // fh, j // fw) only."""
    p = params_of(layer)
    i, j = np.divmod(np.arange(out.pixels), p.in_w * p.fw)
    return (i // p.fh) * p.in_w + j // p.fw


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    """The row buffer: one input row of beats (hg_upsample, resize.h)."""
    return NONE + window_buffer(1, x, family)

"""Channel-range layers (concat, slice): lowering, cycles, dependencies. One unit each in both
backends: hg_concat and hg_slice, concat_layer and slice_layer (channels.h).

A concat joins 2+ streams of the same pixels and code type: per pixel it takes one whole-pixel beat of
every input, in the same cycle, and writes their channels one after the other (input 0 in the low
bits), so the output beat is the inputs' beats side by side. A slice writes channels [start, end) of
each whole-pixel beat it reads. Both move codes only (the quantize pass gave a concat's inputs the
output's qtype), take one pixel a cycle (cycles = pixels: every beat read and written once), and
output pixel i needs input pixel i of every input (hw/fifo.py sizes each concat input's FIFO for the
lead its branch can build up over the others, as for an add's).

Where a whole pixel is wider than WIDEST_BEAT (the concat's output, the slice's input), both move beats
of `fold` channels instead (`fold_of`: the largest divisor of every channel range that a beat holds), so
no realignment is needed: a concat writes input 0's beats of a pixel, then input 1's, ... (it reads its
inputs in turn: hw/fifo.py gives each input a pixel of beats more), a slice drops the beats outside
[start, end). A beat a cycle: cycles = pixels x beats of the output (concat) or input (slice) pixel.
Channel counts with a small common divisor make small beats (the fold of 300 + 301 channels is 1):
correct, and as slow as its beats.
"""

from __future__ import annotations

import math

import numpy as np

from hlsgen.devices.families import Family
from hlsgen.errors import HlsgenError
from hlsgen.hw.convert import WIDEST_BEAT
from hlsgen.hw.cost import Resources
from hlsgen.hw.layers.common import (
    Lowered,
    is_wide,
    no_macs,
    no_requant,
    one_form,
    require_canonical,
    same_pixel,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import ConcatParams, SliceParams
from hlsgen.ir import Graph, Node, Op

OPS = (Op.QCONCAT, Op.QSLICE)
KINDS = (Kind.CONCAT, Kind.SLICE)
options = one_form
last_input_pixel = same_pixel
requant_shape, mac_dsp = no_requant, no_macs
HANDSHAKE_LUTS = 2  # the valid flag's and the ready's logic
JOIN_LATENCY_SLACK = True  # hw/fifo.py: a concat's input FIFOs also cover its branches' pipeline latencies


def _require_pixels(graph: Graph, n: Node, s: Stream) -> None:
    """The input in raster order, channels innermost; a flat [K] input as one pixel of K channels."""
    require_canonical(graph, n, s)
    if len(graph.tensor(s.tensor).shape) == 2 and s.pixels != 1:
        raise HlsgenError(f"node {n.name}: its flat input {s.tensor} arrives as {s.pixels} pixels of {s.channels} "
                          "channels; a concat or slice of a flat tensor needs it as one pixel")


def lower(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> Lowered:
    for s in ins:
        _require_pixels(graph, n, s)
    if n.op == Op.QSLICE:
        start, end, x = n.attr("start"), n.attr("end"), ins[0]
        fold = fold_of((start, end - start), x.bits) if is_wide(x) else x.channels
        return Lowered(Kind.SLICE, SliceParams(out.pixels, x.channels, start, end, fold), {})
    if any((s.bits, s.signed) != (out.bits, out.signed) for s in ins):
        raise HlsgenError(f"node {n.name}: its inputs must all be {out.bits}-bit codes of the output's type")
    in_c = tuple(s.channels for s in ins)
    fold = fold_of(in_c, out.bits) if is_wide(out) else out.channels
    return Lowered(Kind.CONCAT, ConcatParams(out.pixels, in_c, out.channels, fold), {})


def fold_of(ranges: tuple[int, ...], bits: int) -> int:
    """Channels a beat of a folded concat or slice: the largest divisor of every channel range (a
    concat's inputs; a slice's start and length) whose codes fit WIDEST_BEAT."""
    g = math.gcd(*ranges)
    return max(d for d in range(1, min(g, WIDEST_BEAT // bits) + 1) if g % d == 0)


def is_folded(p: ConcatParams | SliceParams) -> bool:
    """The layer moves beats of `fold` channels, not whole pixels."""
    return p.fold < (p.channels if isinstance(p, ConcatParams) else p.in_c)


def beats(p: ConcatParams | SliceParams) -> int:
    """Beats a pixel: of the output (concat) or of the input (slice)."""
    return math.ceil((p.channels if isinstance(p, ConcatParams) else p.in_c) / p.fold)


def beat_ends(p: ConcatParams) -> np.ndarray:
    """A folded concat's input k covers beats [ends[k-1], ends[k]) of an output pixel (ends[-1] = beats)."""
    return offsets(p)[1:] // p.fold


def _beat_fold(layer: Layer, s: Stream) -> tuple[int, ...]:
    """The one fold a concat or slice reads and writes: `fold` channels, or whole pixels of `s`."""
    p = params_of(layer)
    return (p.fold,) if is_folded(p) else (s.channels,)


def out_folds(layer: Layer, x: Stream, out: Stream) -> tuple[int, ...]:
    return _beat_fold(layer, out)


def in_folds(layer: Layer, index: int, s: Stream) -> tuple[int, ...]:
    return _beat_fold(layer, s)


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """One beat a cycle: a pixel a cycle, or its `beats` where the layer is folded."""
    return out.pixels * beats(params_of(layer))


def features(layer: Layer, x: Stream, out: Stream) -> dict[str, float]:
    """None of the fitted features: a concat or slice is costed by its structure (memories)."""
    return {"base": 0.0, "in_bits": 0.0, "out_bits": 0.0}


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    """The output register (the pixel's bits and a valid flag) and the handshake: no logic between the
    input and the register but wires. Measured by Yosys 0.70 (synth_xilinx, xc7) on the split/slice
    test net: concat of 88 bits 2 LUT / 89 FF, slices of 24 and 40 bits 2 / 25 and 2 / 41 (the model's).
    Folded, a beat counter and (concat) the input select and its multiplexer of the inputs' beats
    (about half a LUT a bit per level of 2:1 multiplexers) come on top; estimated, not yet measured."""
    p = params_of(layer)
    base = Resources(lut=HANDSHAKE_LUTS, ff=out.data_bits + 1)
    if not is_folded(p):
        return base
    counter = 2 * math.ceil(math.log2(beats(p) + 1))
    levels = math.ceil(math.log2(len(p.in_c))) if isinstance(p, ConcatParams) else 0
    return base + Resources(lut=counter + out.data_bits * levels // 2, ff=counter)


def reads_inputs_in_turn(layer: Layer) -> bool:
    """A folded concat reads a pixel's beats of input 0, then of input 1, ...: each input's FIFO holds a
    pixel of beats more, so a branch forked from another input's stream never waits on it (hw/fifo.py)."""
    return layer.kind == Kind.CONCAT and is_folded(params_of(layer))


def params_of(layer: Layer) -> ConcatParams | SliceParams:
    assert isinstance(layer.params, ConcatParams | SliceParams), layer.kind
    return layer.params


def offsets(p: ConcatParams) -> np.ndarray:
    """The first channel of each input in the output pixel, and the total (len(in_c) + 1 values)."""
    return np.concatenate([[0], np.cumsum(p.in_c)]).astype(np.int64)

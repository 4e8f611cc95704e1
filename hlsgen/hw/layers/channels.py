"""Channel-range layers (concat, slice): lowering, cycles, dependencies. One unit each in both
backends: hg_concat and hg_slice, concat_layer and slice_layer (channels.h).

A concat joins 2+ streams of the same pixels and code type: per pixel it takes one whole-pixel beat of
every input, in the same cycle, and writes their channels one after the other (input 0 in the low
bits), so the output beat is the inputs' beats side by side. A slice writes channels [start, end) of
each whole-pixel beat it reads. Both move codes only (the quantize pass gave a concat's inputs the
output's qtype), take one pixel a cycle (cycles = pixels: every beat read and written once), and
output pixel i needs input pixel i of every input (hw/fifo.py sizes each concat input's FIFO for the
lead its branch can build up over the others, as for an add's).
"""

from __future__ import annotations

import numpy as np

from hlsgen.devices.families import Family
from hlsgen.errors import HlsgenError
from hlsgen.hw.cost import Resources
from hlsgen.hw.layers.common import (
    Lowered,
    no_macs,
    no_requant,
    one_form,
    require_canonical,
    same_pixel,
    whole_pixel_in,
    whole_pixel_out,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import ConcatParams, SliceParams
from hlsgen.ir import Graph, Node, Op

OPS = (Op.QCONCAT, Op.QSLICE)
KINDS = (Kind.CONCAT, Kind.SLICE)
out_folds, in_folds = whole_pixel_out, whole_pixel_in
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
        return Lowered(Kind.SLICE, SliceParams(out.pixels, ins[0].channels, n.attr("start"), n.attr("end")), {})
    if any((s.bits, s.signed) != (out.bits, out.signed) for s in ins):
        raise HlsgenError(f"node {n.name}: its inputs must all be {out.bits}-bit codes of the output's type")
    return Lowered(Kind.CONCAT, ConcatParams(out.pixels, tuple(s.channels for s in ins), out.channels), {})


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """One pixel a cycle: every input beat and every output beat once."""
    return out.pixels


def features(layer: Layer, x: Stream, out: Stream) -> dict[str, float]:
    """None of the fitted features: a concat or slice is costed by its structure (memories)."""
    return {"base": 0.0, "in_bits": 0.0, "out_bits": 0.0}


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    """The output register (the pixel's bits and a valid flag) and the handshake: no logic between the
    input and the register but wires. Measured by Yosys 0.70 (synth_xilinx, xc7) on the split/slice
    test net: concat of 88 bits 2 LUT / 89 FF, slices of 24 and 40 bits 2 / 25 and 2 / 41 (the model's)."""
    return Resources(lut=HANDSHAKE_LUTS, ff=out.data_bits + 1)


def params_of(layer: Layer) -> ConcatParams | SliceParams:
    assert isinstance(layer.params, ConcatParams | SliceParams), layer.kind
    return layer.params


def offsets(p: ConcatParams) -> np.ndarray:
    """The first channel of each input in the output pixel, and the total (len(in_c) + 1 values)."""
    return np.concatenate([[0], np.cumsum(p.in_c)]).astype(np.int64)

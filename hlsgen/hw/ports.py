"""The network's ports: the format of the input and output streams at `hw.io_bits` bits of TDATA.

A frame enters and leaves as consecutive beats of the tensor in its stream order; no code straddles
a beat, so an int8 tensor at 64 bits is the byte-dense buffer a DMA moves:
  - a pixel wider than the port (channels · bits > io_bits) goes as ceil(channels / E) beats of
    E <= io_bits // bits codes (a stream of fold E; `port_fold`: the E with the fewest cycles, E
    dividing the channels where that costs no beat), the last one of each pixel zero-padded;
  - a narrower pixel goes M = io_bits // (channels · bits) to a beat (pixel j of the beat in bits
    [j·channels·bits, ...)); the frame's last beat holds the pixels left, zero above them;
  - io_bits 0: one pixel a beat, as wide as the pixel (rounded up to whole bytes).
hw/stream_folds.py inserts the converters between the ports and the layers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hlsgen.hw.model import Dataflow, Stream
from hlsgen.ir import Graph, Op


def port_fold(channels: int, most: int) -> int:
    """Codes a port beat carries of a pixel wider than the port: the E <= `most` with the fewest cycles a
    pixel, max(beats, sub-beats of the converter from whole pixels) = max(ceil(C/E), C/gcd(C, E)), the
    larger E on a tie. 640 codes at most 8: 8 (80 beats); 10 at most 8: 5 (2 beats, one split) rather
    than 8 + 2 through 1-code sub-beats (10 cycles)."""
    return min(range(1, most + 1), key=lambda e: (max(-(-channels // e), channels // math.gcd(channels, e)), -e))


def port_format(s: Stream, io_bits: int) -> Stream:
    """Stream `s` (whole pixels) in the format of a port of `io_bits` bits."""
    if io_bits == 0:
        return s
    pixel = s.channels * s.bits
    if pixel > io_bits:  # a code wider than the port (an exact output) goes one a beat, in whole bytes
        fold = port_fold(s.channels, max(1, io_bits // s.bits))
        return s.refolded(s.name, fold, 1, max(io_bits, 8 * -(-fold * s.bits // 8)))
    return s.refolded(s.name, s.channels, min(s.pixels, io_bits // pixel), io_bits)


@dataclass(frozen=True)
class PortCodes:
    """How the host turns a port's floats into codes and back (OUT/host/, backends/host.py): the port
    stream, the frame's IR shape, its quantization (per tensor, or per `axis` of the frame) and, for the
    input, the rounding of its quantizer."""

    stream: Stream
    shape: tuple[int, ...]
    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int | None  # of the frame (the batch axis removed)
    lo: int
    hi: int
    bipolar: bool
    rounding: str


def port_codes(graph: Graph, df: Dataflow) -> tuple[PortCodes, ...]:
    """The input port's, then each output port's (in df.outputs order)."""
    quant_in = next(n for n in graph.nodes if n.op == Op.QUANTIZE_INPUT)
    tensors = [(df.input, quant_in.outputs[0], str(quant_in.attr("rounding")))]
    tensors += [(s, n.inputs[0], "") for s, n in zip(df.outputs, [n for n in graph.nodes
                                                                  if n.op == Op.DEQUANTIZE_OUTPUT], strict=True)]
    ports = []
    for s, name, rounding in tensors:
        t = graph.tensor(name)
        q = t.qtype
        assert q is not None
        ports.append(PortCodes(s, tuple(int(d) for d in t.shape[1:]), tuple(float(v) for v in q.scale.reshape(-1)),
                               tuple(int(v) for v in q.zero_point.reshape(-1)), None if q.axis is None else q.axis - 1,
                               q.int.lo, q.int.hi, q.int.bipolar, rounding))
    return tuple(ports)

"""The network's ports: the format of the input and output streams at `hw.io_bits` bits of TDATA.

A frame enters and leaves as consecutive beats of the tensor in its stream order; no code straddles
a beat, so an int8 tensor at 64 bits is the byte-dense buffer a DMA moves:
  - a pixel wider than the port (channels · bits > io_bits) goes as ceil(channels / E) beats of
    E = io_bits // bits codes (a stream of fold E), the last one of each pixel zero-padded;
  - a narrower pixel goes M = io_bits // (channels · bits) to a beat (pixel j of the beat in bits
    [j·channels·bits, ...)); the frame's last beat holds the pixels left, zero above them;
  - io_bits 0: one pixel a beat, as wide as the pixel (rounded up to whole bytes).
hw/stream_folds.py inserts the converters between the ports and the layers.
"""

from __future__ import annotations

from hlsgen.hw.model import Stream


def port_format(s: Stream, io_bits: int) -> Stream:
    """Stream `s` (whole pixels) in the format of a port of `io_bits` bits."""
    if io_bits == 0:
        return s
    pixel = s.channels * s.bits
    if pixel > io_bits:  # a code wider than the port (an exact output) goes one a beat, in whole bytes
        fold = max(1, io_bits // s.bits)
        return s.refolded(s.name, fold, 1, max(io_bits, 8 * -(-fold * s.bits // 8)))
    return s.refolded(s.name, s.channels, min(s.pixels, io_bits // pixel), io_bits)

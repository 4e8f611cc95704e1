"""The frozen test vectors of OUT/vectors/ (meta.json + one hex beat per line), read without hlsgen.

A beat holds `fold` channels of one pixel (the pixel's ceil(channels/fold) beats are consecutive, the last
zero-padded): channel f*fold + c of the pixel's beat f (two's complement, `bits` wide) sits at bits
[c*bits, (c+1)*bits). A port wider than a pixel packs `pack` whole pixels a beat.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class StreamInfo:
    name: str
    beats_per_frame: int
    channels: int
    bits: int
    signed: bool
    beat_bits: int
    file: str
    layer: str = ""
    node: str = ""
    fold: int = 0  # channels per beat (0: all)
    pack: int = 1  # whole pixels per beat (a port wider than a pixel)

    @classmethod
    def from_meta(cls, m: dict[str, Any], file: str) -> StreamInfo:
        return cls(m["name"], m["beats_per_frame"], m["channels"], m["bits"], m["signed"], m["beat_bits"],
                   file, m.get("layer", ""), m.get("node", ""), m.get("fold", m["channels"]), m.get("pack", 1))

    @property
    def beat_channels(self) -> int:
        """Codes in a beat: a fold of one pixel, or `pack` whole pixels."""
        return (self.fold or self.channels) * self.pack

    @property
    def folds(self) -> int:
        """Beats per pixel."""
        return -(-self.channels // self.beat_channels)

    def channel(self, beat: int, c: int) -> int:
        """Code of channel c of a beat, as a signed or unsigned integer."""
        v = (beat >> (c * self.bits)) & ((1 << self.bits) - 1)
        return v - (1 << self.bits) if self.signed and v >> (self.bits - 1) else v

    def locate(self, index: int) -> tuple[int, int, int]:
        """(frame, pixel, first channel) of the index-th beat of a back-to-back run."""
        frame, beat = divmod(index, self.beats_per_frame)
        if self.pack > 1:  # the codes of `pack` pixels: channel numbers run on across them
            return frame, beat * self.pack, 0
        pixel, fold = divmod(beat, self.folds)
        return frame, pixel, fold * self.beat_channels


@dataclass(frozen=True)
class Vectors:
    folder: Path
    frames: int
    input: StreamInfo
    output: StreamInfo
    layers: tuple[StreamInfo, ...]

    def beats(self, s: StreamInfo, frames: int) -> list[int]:
        """The stream's beats for `frames` frames, cycling through the stored frames."""
        stored = read_hex(self.folder / s.file)
        per = s.beats_per_frame
        return [stored[(f % self.frames) * per + i] for f in range(frames) for i in range(per)]


def load_vectors(folder: str | Path) -> Vectors:
    folder = Path(folder)
    meta = json.loads((folder / "meta.json").read_text())
    if len(meta["outputs"]) != 1:
        raise ValueError(f"{folder}: the testbench drives one output stream, meta.json lists {len(meta['outputs'])}")
    out = meta["outputs"][0]
    layers = tuple(StreamInfo.from_meta(m, m["file"]) for m in meta["layers"])
    return Vectors(folder, int(meta["frames"]), StreamInfo.from_meta(meta["input"], "input.hex"),
                   StreamInfo.from_meta(out, out["file"]), layers)


def read_hex(path: Path) -> list[int]:
    return [int(line, 16) for line in path.read_text().split()]

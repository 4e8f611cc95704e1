"""Bit-exact comparison of streams with the golden vectors: the network output beat by beat, and
(when the RTL wrote debug traces) every layer's output stream, to name the first divergent layer."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hlsgen_tb.vectors import StreamInfo, Vectors, read_hex

UNKNOWN = -1  # a beat holding X/Z bits


@dataclass(frozen=True)
class Mismatch:
    stream: str
    index: int  # beat index in the run (frames back to back)
    frame: int
    pixel: int
    channel: int
    got: int | None  # code of that channel; None when the beat was unknown (X/Z) or missing
    expected: int

    def describe(self) -> str:
        got = "X/missing" if self.got is None else str(self.got)
        return (f"{self.stream}: frame {self.frame}, pixel {self.pixel}, channel {self.channel}: "
                f"got {got}, expected {self.expected}")


def first_mismatch(info: StreamInfo, index: int, got: int | None, expected: int) -> Mismatch | None:
    """None when the beats are equal, else the first channel that differs."""
    if got == expected:
        return None
    frame, pixel, base = info.locate(index)
    for c in range(info.beat_channels):
        want = info.channel(expected, c)
        have = None if got is None or got == UNKNOWN else info.channel(got, c)
        if have != want:
            return Mismatch(info.name, index, frame, pixel, base + c, have, want)
    # equal channels but different beats: bits above the last channel (AXI byte padding)
    return Mismatch(info.name, index, frame, pixel, base + info.beat_channels, None, 0)


class Scoreboard:
    """Checks each output beat as it arrives; keeps the first mismatch and the count."""

    def __init__(self, info: StreamInfo, expected: list[int]) -> None:
        self.info, self.expected = info, expected
        self.first: Mismatch | None = None
        self.errors = 0
        self.seen = 0

    def check(self, index: int, beat: int) -> None:
        self.seen += 1
        if index >= len(self.expected):
            self.errors += 1
            return
        m = first_mismatch(self.info, index, beat, self.expected[index])
        if m is not None:
            self.errors += 1
            self.first = self.first or m

    @property
    def passed(self) -> bool:
        return self.errors == 0 and self.seen == len(self.expected)


def check_layers(vectors: Vectors, frames: int, trace_dir: Path) -> list[dict[str, Any]]:
    """Compare every layer's debug trace (trace_<stream>.hex) with vectors/layers/; [] without traces."""
    rows = []
    for s in vectors.layers:
        path = trace_dir / f"trace_{s.name}.hex"
        if not path.exists():
            return []
        got = _read_trace(path)
        want = vectors.beats(s, frames)
        mismatch = next((m for i, (g, w) in enumerate(zip(got, want, strict=False))
                         if (m := first_mismatch(s, i, g, w)) is not None), None)
        rows.append({"layer": s.layer, "node": s.node, "stream": s.name, "beats": len(got),
                     "expected_beats": len(want), "first_mismatch": asdict(mismatch) if mismatch else None,
                     "describe": mismatch.describe() if mismatch else None})
    return rows


def first_divergent_layer(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first layer (network order) whose trace differs from its vectors, or stopped short."""
    for row in rows:
        if row["first_mismatch"] is not None:
            return row
    for row in rows:
        if row["beats"] < row["expected_beats"]:
            return dict(row, describe=f"{row['stream']}: stopped after {row['beats']} of "
                                      f"{row['expected_beats']} beats")
    return None


def _read_trace(path: Path) -> list[int]:
    try:
        return read_hex(path)
    except ValueError:  # X/Z digits
        return [int(t, 16) if all(ch in "0123456789abcdefABCDEF" for ch in t) else UNKNOWN
                for t in path.read_text().split()]

"""The hardware model's data: streams between layers, folded layers, the dataflow of a network.

Streams carry pixels in raster order; a pixel's channels go `fold` to a beat (channel 0 in the low
bits), the ceil(channels/fold) beats of a pixel back to back, the last one zero-padded; a port wider than
a pixel packs `pack` whole pixels into a beat. Layout ops
(Reshape, Transpose) cost nothing: they only change which IR element a stream position holds
(`Stream.order`). A `Layer` is one streaming unit with its folding (PE, SIMD), its
cycles per frame and its MAC count, computed once by hlsgen.hw and rendered by every backend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from hlsgen.devices.families import DEFAULT_FAMILY, Family
from hlsgen.hw.params import LayerParams

if TYPE_CHECKING:
    from hlsgen.hw.fold import Folding


class Kind(str, Enum):
    """The hardware layer kinds: one unit each in both backends (hw/layers/ has a module per unit).
    A `str` enum, so report.json and the templates print the plain name."""

    CONV = "conv"
    DWCONV = "dwconv"
    GEMM = "gemm"
    MAXPOOL = "maxpool"
    AVGPOOL = "avgpool"
    ADD = "add"
    REQUANT = "requant"
    LUT = "lut"
    REORDER = "reorder"
    CONVERT = "convert"
    CONCAT = "concat"
    SLICE = "slice"
    UPSAMPLE = "upsample"

    def __str__(self) -> str:
        return self.value


MVU_KINDS = (Kind.CONV, Kind.DWCONV, Kind.GEMM)  # matrix-vector units (hg_mvu, mvu.h)
POOL_KINDS = (Kind.MAXPOOL, Kind.AVGPOOL)  # hg_pool, pool.h


@dataclass(frozen=True, eq=False)
class Stream:
    name: str  # identifier in generated code
    tensor: str  # IR tensor
    pixels: int
    channels: int
    bits: int
    signed: bool
    height: int = 1
    width: int = 1
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # stream pos -> IR flat index
    fold: int = 0  # channels per beat (0 when built: all of them, one pixel per beat)
    pack: int = 1  # whole pixels per beat (a port wider than a pixel); the frame's last beat holds the rest
    tdata: int = 0  # TDATA bits of a port (0: the beat's codes rounded up to whole bytes)

    def __post_init__(self) -> None:
        if self.fold == 0:
            object.__setattr__(self, "fold", self.channels)
        if not 1 <= self.fold <= self.channels:
            raise ValueError(f"stream {self.name}: fold {self.fold} outside 1..{self.channels} channels")
        if self.pack < 1 or (self.pack > 1 and self.fold < self.channels):
            raise ValueError(f"stream {self.name}: {self.pack} pixels a beat, {self.fold} of {self.channels} channels")
        if self.tdata and self.tdata < self.data_bits:
            raise ValueError(f"stream {self.name}: {self.data_bits} bits of codes in a {self.tdata}-bit TDATA")

    @property
    def folds(self) -> int:
        """Beats per pixel: the channel folds of a pixel, the last one zero-padded."""
        return math.ceil(self.channels / self.fold)

    @property
    def beats(self) -> int:
        """Beats per frame."""
        return self.pixels * self.folds if self.pack == 1 else math.ceil(self.pixels / self.pack)

    @property
    def data_bits(self) -> int:
        """The codes of one beat: fold · bits, times the pixels it packs (the RTL stream width)."""
        return self.fold * self.bits * self.pack

    @property
    def beat_bits(self) -> int:
        """TDATA width: a port's, else the beat's codes rounded up to whole bytes (AXI-Stream)."""
        return self.tdata or 8 * math.ceil(self.data_bits / 8)

    def refolded(self, name: str, fold: int, pack: int = 1, tdata: int = 0) -> Stream:
        """The same tensor in the same order, `fold` channels (or `pack` pixels) per beat."""
        return replace(self, name=name, fold=fold, pack=pack, tdata=tdata)


@dataclass(frozen=True, eq=False)
class Layer:
    name: str
    node: str  # IR node name
    kind: Kind
    inputs: tuple[str, ...]  # stream names; a residual conv or an add has a second one
    output: str
    pe: int
    simd: int
    params: LayerParams  # the kind's typed record (hw/params.py)
    arrays: Mapping[str, np.ndarray]  # weights [Cout, Kh, Kw, Cin/g] or [Nout, K]; bias, mult, shift, ...
    cycles: int
    macs: int

    def folded(self, pe: int, simd: int) -> Layer:
        return replace(self, pe=pe, simd=simd)

    def with_cycles(self, cycles: int) -> Layer:
        return replace(self, cycles=cycles)


@dataclass(frozen=True, eq=False)
class Dataflow:
    name: str
    top: str
    input: Stream
    outputs: tuple[Stream, ...]
    streams: Mapping[str, Stream]
    layers: tuple[Layer, ...]
    fifo_depth: Mapping[tuple[str, str], int]  # (stream, consumer layer) -> depth in beats
    folding: Folding | None = None  # how the layers' PE/SIMD were chosen (hlsgen/hw/fold.py)
    family: Family = DEFAULT_FAMILY  # the FPGA family of hw.part: its multipliers decide hg_mvu's packing

    @property
    def cycles_per_frame(self) -> int:
        return max([self.input.beats] + [lay.cycles for lay in self.layers])

    @property
    def bottleneck(self) -> str:
        return max(self.layers, key=lambda lay: lay.cycles).name

    def consumers(self, stream: str) -> list[Layer]:
        return [lay for lay in self.layers if stream in lay.inputs]


def canonical_order(shape: tuple[int, ...]) -> np.ndarray:
    """Stream order of an NCHW tensor [C, H, W] (or a dense [K]): pixels raster, channels innermost."""
    if len(shape) == 3:
        c, h, w = shape
        return np.arange(c * h * w).reshape(c, h, w).transpose(1, 2, 0).ravel()
    return np.arange(int(np.prod(shape)))



"""The typed parameters of a hardware layer, one frozen record per kind (hls4ml's CONFIG_T idea).

A `Layer` (hw/model.py) carries its `Kind` and one of these records, computed once when hw/layers/
lowers the IR node; every backend renders it and the cycle and resource models read it, so no layer
parameter is looked up by a string key. Per-channel tables (weights, multipliers, shifts, ...) stay
in `Layer.arrays`, whose keys are listed with each record.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlsgen.hw.convert import Convert
from hlsgen.ir.epilogue import Epilogue

ZeroPoint = int | tuple[int, ...]  # one code, or one per channel


@dataclass(frozen=True)
class Requant:
    """The scalars of a layer's output requant step (arrays: mult, shift, mult_neg): zero point,
    clamp bounds and the rounding of the shift."""

    zp: int
    lo: int
    hi: int
    rounding: str


@dataclass(frozen=True)
class Window:
    """A sliding window over an [in_h, in_w, in_c] image giving an [out_h, out_w, out_c] one."""

    kernel: tuple[int, int]
    strides: tuple[int, int]
    pads: tuple[int, int, int, int]  # top, left, bottom, right
    dilations: tuple[int, int]
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    out_c: int

    @property
    def taps(self) -> int:
        return self.kernel[0] * self.kernel[1]


@dataclass(frozen=True)
class MvuParams:
    """conv, dwconv, gemm: a matrix-vector unit (arrays: weights, bias). A conv or dwconv reads a
    `window`; a gemm reads its whole input frame of `in_pixels` pixels. Its `epilogue` is the IR
    node's (ir/epilogue.py), read as is: the requant chain, the skip scaling, the step-2 bias."""

    in_c: int
    out_c: int
    in_pixels: int
    group: int
    window: Window | None
    weight_bits: int
    acc_bits: int
    mult_bits: int
    act: str
    pad_value: int
    epilogue: Epilogue
    residual: bool = False
    skip_bits: int = 0

    @property
    def requant(self) -> Requant:
        """The output step's scalars."""
        out = self.epilogue.out
        return Requant(out.zp, out.lo, out.hi, self.epilogue.rounding)


@dataclass(frozen=True)
class MaxPoolParams:
    window: Window
    pad_value: int


@dataclass(frozen=True)
class AvgPoolParams:
    """arrays: mult, shift (the division by the window size as a requant). `fold`: the channels of a
    window the unit takes at a time (all of them, or on pixels wider than a beat, common.widest_fold:
    hw/layers/pool.reads_fold_major)."""

    window: Window
    x_zp: ZeroPoint
    count_include_pad: int
    requant: Requant
    fold: int


@dataclass(frozen=True)
class AddParams:
    """arrays: a_mult, b_mult, shift."""

    channels: int
    a_zp: ZeroPoint
    b_zp: ZeroPoint
    requant: Requant


@dataclass(frozen=True)
class RequantParams:
    """arrays: mult, shift, mult_neg."""

    channels: int
    x_zp: ZeroPoint
    requant: Requant


@dataclass(frozen=True)
class LutParams:
    """arrays: table (one output code per input code from x_lo up); read and written `fold` channels a
    beat (the whole pixel where input and output pixels fit one beat)."""

    channels: int
    x_lo: int
    fold: int

    @property
    def folds(self) -> int:
        """Beats a pixel."""
        return -(-self.channels // self.fold)

    @property
    def last_lanes(self) -> int:
        """The channels of a pixel's last beat (its other lanes are padding, zero)."""
        return self.channels - (self.folds - 1) * self.fold


@dataclass(frozen=True)
class ReorderParams:
    """arrays: perm (output element k is arriving element perm[k])."""

    in_pixels: int
    in_c: int
    out_pixels: int
    out_c: int
    elements: int


@dataclass(frozen=True)
class ConvertParams:
    """A data-width converter between two formats of one stream (hw/convert.py; no arrays): one split
    or join over `groups` groups a frame (a pixel's folds, or a frame's pixels at a port)."""

    channels: int
    step: Convert
    groups: int


@dataclass(frozen=True)
class ConcatParams:
    """A pixel's channels from each input in turn (no arrays): `in_c[k]` channels of input k, `channels`
    their sum, over `pixels` pixels a frame; `fold` channels a beat on every input and the output (the
    whole output pixel, or where that is wider than WIDEST_BEAT a divisor of every `in_c`:
    hw/layers/channels.py)."""

    pixels: int
    in_c: tuple[int, ...]
    channels: int
    fold: int


@dataclass(frozen=True)
class SliceParams:
    """Channels [start, end) of each input pixel of `in_c` channels (no arrays), `pixels` a frame;
    `fold` channels a beat in and out (`in_c`: whole pixels, else a divisor of start and end - start)."""

    pixels: int
    in_c: int
    start: int
    end: int
    fold: int


@dataclass(frozen=True)
class UpsampleParams:
    """A nearest-neighbour upsampling (no arrays): an [in_h, in_w, channels] image whose every pixel
    is repeated fh times down and fw times across, read and written `fold` channels a beat."""

    in_h: int
    in_w: int
    channels: int
    fh: int
    fw: int
    fold: int

    @property
    def folds(self) -> int:
        """Beats a pixel."""
        return -(-self.channels // self.fold)



LayerParams = (MvuParams | MaxPoolParams | AvgPoolParams | AddParams | RequantParams | LutParams | ReorderParams
               | ConvertParams | ConcatParams | SliceParams | UpsampleParams)


def requant_step(p: LayerParams) -> Requant | None:
    """The layer's output requant step (None for a max pool, a table or a reorder)."""
    return p.requant if isinstance(p, MvuParams | AvgPoolParams | AddParams | RequantParams) else None


def sliding_window(p: LayerParams) -> Window | None:
    """The sliding window the layer reads (None: a dense layer, an elementwise one, a reorder)."""
    return p.window if isinstance(p, MvuParams | MaxPoolParams | AvgPoolParams) else None

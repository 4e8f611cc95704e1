"""Numbers for the Verilog templates: parameters, packed per-channel vectors and ROM words.

Python formats no HDL here: a `Param` carries a name and a number (with its width when it is a packed
vector), and top.sv.j2 writes it as `NAME(value)` or `NAME(W'hDIGITS)`. Packing follows the stream
convention: element i of a vector sits at bits [i*width, (i+1)*width), two's complement.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from hlsgen.hw.packing import per_channel
from hlsgen.numerics import signed_bits_for


@dataclass(frozen=True)
class Param:
    """One Verilog parameter override: an int, a packed vector (width + hex digits) or a file name."""

    name: str
    value: int | str
    width: int | None = None  # set for packed vectors: value is then a hex digit string

    @property
    def is_text(self) -> bool:
        return isinstance(self.value, str) and self.width is None


def flag(name: str, value: bool) -> Param:
    """A 1-bit parameter, written 1'h0/1'h1 (Icarus 11 would widen a plain 1 to 32 bits)."""
    return Param(name, "1" if value else "0", 1)


def vector(name: str, values: Iterable[int], width: int) -> Param:
    """A packed vector parameter of len(values) elements of `width` bits (element 0 lowest)."""
    codes = np.asarray(list(values), dtype=np.int64).reshape(1, -1)
    return Param(name, hex_words(codes, width)[0], codes.size * width)


def hex_words(codes: np.ndarray, width: int) -> list[str]:
    """Rows of a 2-D integer array as hex words: element j of a row at bits [j*width, (j+1)*width)."""
    codes = np.asarray(codes, dtype=np.int64)
    rows, lanes = codes.shape
    total = lanes * width
    digits = max(1, math.ceil(total / 4))
    u = codes & ((1 << width) - 1) if width < 63 else codes
    bits = ((u[:, :, None] >> np.arange(width, dtype=np.int64)) & 1).reshape(rows, total)
    bits = np.concatenate([bits, np.zeros((rows, digits * 4 - total), dtype=np.int64)], axis=1)
    nibbles = bits.reshape(rows, digits, 4) @ np.array([1, 2, 4, 8], dtype=np.int64)
    table = np.array(list("0123456789abcdef"))
    return ["".join(row) for row in table[nibbles[:, ::-1]]]


def mult_bits(*arrays: np.ndarray | None) -> int:
    """Signed width holding every multiplier given (at least 2 bits)."""
    vals = [int(np.max(np.abs(a))) for a in arrays if a is not None and np.size(a)]
    return max(2, signed_bits_for(max(vals, default=0)))


def unsigned_bits(value: int) -> int:
    """Bits of an unsigned field holding 0 .. value (at least 1)."""
    return max(1, int(value).bit_length())


def shift_bits(shift: np.ndarray) -> int:
    return unsigned_bits(int(np.max(shift, initial=0)))


def min_shift(shift: np.ndarray) -> int:
    """The smallest shift of a layer (hg_requant's shifter spans MIN_SHIFT .. MAX_SHIFT only)."""
    return int(np.min(shift)) if np.size(shift) else 0


def pad_word(code: int | Iterable[int], channels: int, bits: int) -> Param:
    """The PAD parameter of hg_window: one code per channel (the same code, or one each)."""
    codes = per_channel(code, channels)
    return vector("PAD", codes, bits)

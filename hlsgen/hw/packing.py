"""Per-channel tables in the order the hardware reads them, shared by every layer kind and backend.

A per-tensor or per-channel attribute becomes one value per channel (`per_channel`), zero-padded to
whole folds of PE lanes (`padded`, `folded`: [fold][PE]); a stream's code range bounds its clamp.
The weight words and MAC packing of matrix-vector layers are in hw/layers/mvu.py.
"""

from __future__ import annotations

import numpy as np

from hlsgen.errors import HlsgenError
from hlsgen.hw.model import Stream


def per_channel(values: object, n: int, default: int = 0) -> np.ndarray:
    """A per-tensor (scalar or length-1) or per-channel integer attribute as n values."""
    if values is None:
        return np.full(n, default, dtype=np.int64)
    v = np.asarray(values, dtype=np.int64).reshape(-1)
    if v.size not in (1, n):
        raise HlsgenError(f"{v.size} per-channel values for {n} channels")
    return np.broadcast_to(v, (n,)).copy()


def padded(values: np.ndarray, n: int) -> np.ndarray:
    """A 1-D array zero-padded to n entries (lanes of the last fold beyond the channel count)."""
    out = np.zeros(n, dtype=np.int64)
    out[:values.size] = values
    return out


def folded(values: np.ndarray, fold: int, pe: int) -> np.ndarray:
    """[C] per-channel values as [fold][pe], zero-padded."""
    return padded(values, fold * pe).reshape(fold, pe)


def code_range(s: Stream) -> tuple[int, int]:
    """The smallest and largest code of a stream's integer type."""
    lo = -(1 << (s.bits - 1)) if s.signed else 0
    return lo, lo + (1 << s.bits) - 1

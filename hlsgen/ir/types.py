"""Integer and quantization types of the IR.

`IntType` is a storage type (bits, signedness, optional narrow range). `QType` says what real
number an integer stands for: real = scale * (q - zero_point), per tensor (axis None) or per channel
along `axis`. Rounding and saturation are not part of a type; they belong to the requant step
(see hlsgen/numerics.py).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from enum import Enum

import numpy as np


class Rounding(str, Enum):
    """How a requant step rounds a tie (numerics.round_shift). A `str` enum: it compares equal to,
    and serializes as, its value ("half_even"), which is how configs and node attributes spell it."""

    HALF_EVEN = "half_even"  # ONNX QuantizeLinear's rule (the default)
    HALF_UP = "half_up"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class IntType:
    bits: int
    signed: bool
    narrow: bool = False  # signed narrow range drops the most negative code (-127..127 for 8 bit)
    bipolar: bool = False  # codes -1 and +1 only; quantization is x >= 0 -> +1 (QONNX BipolarQuant)

    def __post_init__(self) -> None:
        if not 2 <= self.bits <= 64:
            raise ValueError(f"IntType bits must be 2..64, got {self.bits}")
        if self.bipolar and (self.bits, self.signed, self.narrow) != (2, True, True):
            raise ValueError("a bipolar IntType is 2-bit signed narrow")

    @property
    def lo(self) -> int:
        if not self.signed:
            return 0
        return -(1 << (self.bits - 1)) + (1 if self.narrow else 0)

    @property
    def hi(self) -> int:
        if self.signed:
            return (1 << (self.bits - 1)) - 1
        return (1 << self.bits) - 1 - (1 if self.narrow else 0)

    def __str__(self) -> str:
        if self.bipolar:
            return "bipolar"
        return f"{'i' if self.signed else 'u'}{self.bits}{'n' if self.narrow else ''}"


INT8 = IntType(8, True)
BIPOLAR = IntType(2, True, narrow=True, bipolar=True)
UINT8 = IntType(8, False)
INT32 = IntType(32, True)


def _frozen_array(values: object, dtype: type) -> np.ndarray:
    arr: np.ndarray = np.array(values, dtype=dtype)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class QType:
    """real = scale * (q - zero_point); scale/zero_point are scalars or 1-D along `axis`."""

    int: IntType
    scale: np.ndarray = field()
    zero_point: np.ndarray = field()
    axis: builtins.int | None = None

    def __init__(self, int: IntType, scale: object, zero_point: object = 0, axis: builtins.int | None = None):
        s = _frozen_array(scale, np.float64)
        z = _frozen_array(zero_point, np.int64)
        if axis is None and (s.ndim != 0 or z.ndim != 0):
            if s.size == 1 and z.size == 1:
                s, z = _frozen_array(s.reshape(()), np.float64), _frozen_array(z.reshape(()), np.int64)
            else:
                raise ValueError("per-tensor QType needs scalar scale and zero point")
        if axis is not None:
            s = _frozen_array(np.broadcast_to(s.reshape(-1), (max(s.size, z.size),)), np.float64)
            z = _frozen_array(np.broadcast_to(z.reshape(-1), s.shape), np.int64)
        if not np.all(np.isfinite(s)):
            raise ValueError("QType scale must be finite")
        if np.any(z < int.lo) or np.any(z > int.hi):
            raise ValueError(f"zero point {z.tolist()} outside {int}")
        object.__setattr__(self, "int", int)
        object.__setattr__(self, "scale", s)
        object.__setattr__(self, "zero_point", z)
        object.__setattr__(self, "axis", axis)

    @property
    def per_channel(self) -> bool:
        return self.axis is not None

    def broadcast(self, ndim: builtins.int) -> tuple[np.ndarray, np.ndarray]:
        """scale and zero point shaped to broadcast against a tensor of rank `ndim`."""
        if self.axis is None:
            return self.scale, self.zero_point
        shape = [1] * ndim
        shape[self.axis] = -1
        return self.scale.reshape(shape), self.zero_point.reshape(shape)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, QType)
            and self.int == other.int
            and self.axis == other.axis
            and np.array_equal(self.scale, other.scale)
            and np.array_equal(self.zero_point, other.zero_point)
        )

    def __hash__(self) -> builtins.int:
        return hash((self.int, self.axis, self.scale.tobytes(), self.zero_point.tobytes()))

    def __repr__(self) -> str:
        if self.axis is None:
            return f"{self.int}(s={float(self.scale):.6g}, zp={int(self.zero_point)})"
        return f"{self.int}(per-channel axis={self.axis}, C={self.scale.size})"

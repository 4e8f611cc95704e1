"""The epilogue of an integer matrix-vector layer (QConv, QGemm): one typed, frozen attribute.

    acc ─► [step 1: t = clamp(zp1 + round_shift(acc·M1 (M1_neg where < 0), S1), lo1, hi1);  x = t − zp1]
        ─► v = x·M (M_neg where x·M < 0) [+ (skip − zp_s)·Mb] [+ B2]
        ─► y = clamp(zp + round_shift(v, S), lo, hi)

`Epilogue.out` is the output step, `Epilogue.mid` the first step of a two-step layer (the model's own
intermediate quantizer, docs/numerics.md §8); `skip` the residual input's scaling, `post_bias` B2 (at
the scale 2^S of v). Per-channel values are tuples of one entry per output channel, or one entry for
all. golden (numerics.fused_epilogue), hw/layers/mvu.py, the exporter and the report read it as is;
the schema (ir/ops.py) requires it of QConv and QGemm and `problems` checks it against the layer.
The requant ops with one step of their own (QAdd, QAvgPool, QRequant) keep flat attributes; `step_of`
reads them as a `Step`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlsgen.ir.types import Rounding

Ints = tuple[int, ...]


@dataclass(frozen=True)
class Step:
    """One rounding: y = clamp(zp + round_shift(x·M (M_neg where x·M < 0), S), lo, hi)."""

    mult: Ints
    shift: Ints
    zp: int
    lo: int
    hi: int
    mult_neg: Ints | None = None

    def channels(self) -> set[int]:
        return {len(self.mult), len(self.shift)} | ({len(self.mult_neg)} if self.mult_neg is not None else set())


@dataclass(frozen=True)
class Skip:
    """The residual input of a fused Conv + Add: (skip − zp)·mult joins v before the output step."""

    mult: Ints
    zp: int = 0


@dataclass(frozen=True)
class Epilogue:
    out: Step
    mid: Step | None = None
    skip: Skip | None = None
    post_bias: Ints | None = None
    rounding: Rounding = Rounding.HALF_EVEN

    def __post_init__(self) -> None:
        object.__setattr__(self, "rounding", Rounding(self.rounding))  # a name of one is converted

    @property
    def steps(self) -> tuple[Step, ...]:
        """The chain of roundings, in order."""
        return (self.out,) if self.mid is None else (self.mid, self.out)

    def problems(self, channels: int) -> list[str]:
        """What does not fit a layer of `channels` output channels (empty when nothing)."""
        found: list[str] = []
        sizes = set().union(*(s.channels() for s in self.steps))
        sizes |= {len(self.skip.mult)} if self.skip is not None else set()
        sizes |= {len(self.post_bias)} if self.post_bias is not None else set()
        if not sizes <= {1, channels}:
            found.append(f"epilogue tables of {sorted(sizes)} entries for {channels} channels")
        if any(s.lo > s.hi for s in self.steps):
            found.append("an epilogue step clamps to an empty range")
        return found


def ints(values: Any) -> Ints:
    return tuple(int(v) for v in np.asarray(values).reshape(-1))


def _maybe(values: Any) -> Ints | None:
    return None if values is None else ints(values)


def step_of(attrs: Mapping[str, Any], prefix: str = "") -> Step:
    """The step held by flat attributes (`mult`, `shift`, `zp`, `lo`, `hi`, `mult_neg`, each after
    `prefix`): the form of QAdd, QAvgPool and QRequant (QAdd's multipliers are its a_mult/b_mult,
    so its `mult` is empty), and the one the quantize pass computes an epilogue in."""
    return Step(ints(attrs.get(f"{prefix}mult", ())), ints(attrs[f"{prefix}shift"]), int(attrs[f"{prefix}zp"]),
                int(attrs[f"{prefix}lo"]), int(attrs[f"{prefix}hi"]), _maybe(attrs.get(f"{prefix}mult_neg")))


FLAT_KEYS = ("mult", "shift", "zp", "lo", "hi", "mult_neg", "mid_mult", "mid_mult_neg", "mid_shift", "mid_zp",
             "mid_lo", "mid_hi", "skip_mult", "skip_zp", "post_bias", "rounding")


def epilogue_of(attrs: Mapping[str, Any]) -> Epilogue:
    """An Epilogue from the flat attributes `FLAT_KEYS` (a `mid_mult` makes it two-step, a `skip_mult`
    residual); the quantize pass computes them so."""
    mid = step_of(attrs, "mid_") if attrs.get("mid_mult") is not None else None
    skip = Skip(ints(attrs["skip_mult"]), int(attrs.get("skip_zp") or 0)) if attrs.get("skip_mult") is not None \
        else None
    return Epilogue(step_of(attrs), mid, skip, _maybe(attrs.get("post_bias")),
                    Rounding(attrs.get("rounding") or Rounding.HALF_EVEN))


def two_step(node: Any) -> bool:
    """A QConv/QGemm node whose epilogue keeps the model's intermediate quantizer (False for other ops)."""
    e = node.attrs.get("epilogue")
    return isinstance(e, Epilogue) and e.mid is not None

"""Data-width converters of folded streams: the split and join primitives and the Python reference.

Folded streams. A stream of C channels of b-bit codes with fold F carries F channels per beat: the
ceil(C/F) beats of one pixel are consecutive, channel c of a beat sits at bits [c*b, (c+1)*b), and the
last beat of a pixel is zero above its channels. Between a producer of fold A and a consumer of fold B a
converter regroups the same bits; it is built from two primitives over *sub-beats* of W bits taken in
groups of S sub-beats (a group is one pixel's worth of sub-beats):

  split(W, S, K)  each input beat holds up to K sub-beats, sub-beat j at bits [j*W, (j+1)*W). A group is
                  G = ceil(S/K) input beats: the first G-1 carry K sub-beats, the last L = S - (G-1)*K
                  (bits above them are padding and are dropped). Output: the S sub-beats one per beat
                  (W bits), in order.
  join(W, S, K)   the inverse: S input beats of one sub-beat (W bits) become G beats of K*W bits, sub-beat
                  j of a beat at bits [j*W, ...), the group's last beat holding L sub-beats and zeros above.

Groups repeat forever; both primitives move one sub-beat per cycle (`Convert.cycles`).

A fold change A -> B of a stream of C channels of b bits (`fold_change`):
  A == B        nothing;
  A == k*B      split(W=B*b, S=ceil(C/B), K=k);
  B == k*A      join(W=A*b, S=ceil(C/A), K=k);
  otherwise     through g = gcd(A, B): split(W=g*b, S=ceil(C/g), K=A/g), then join(W=g*b, S=ceil(C/g), K=B/g),
                ceil(C/g) cycles a pixel each; or, when that would slow the design (more cycles a pixel
                than its slowest layer takes) and L = lcm(A, B) channels fit one beat (L <= C,
                L*b <= WIDEST_BEAT), through L: join(W=A*b, S=ceil(C/A), K=L/A), then split(W=B*b,
                S=ceil(C/B), K=L/B), max(ceil(C/A), ceil(C/B)) cycles a pixel (wider registers for
                speed: 34 -> 5 of 640 channels takes 128 cycles a pixel instead of 640).
Through L the same argument runs the other way: beat j at fold L holds the sub-beats j*L/A ..
(j+1)*L/A - 1 of fold A, i.e. channels [j*L, (j+1)*L), and splits into the fold-B beats of those channels.
Why this is exact: the beats of a pixel at fold A are ceil(C/A) = ceil(ceil(C/g)/(A/g)) = G beats, and
reading them as sub-beats of g*b bits gives the pixel's channels in order, g per sub-beat; the S = ceil(C/g)
sub-beats kept hold every channel (the last one possibly zero above channel C-1: input padding), those
dropped hold padding only. Joining S sub-beats K' = B/g at a time gives ceil(C/B) beats with the channels
in place and zeros above the last: exactly the fold-B packing, because the padding of the input was zero.
(A producer that left garbage in its padding would leak it into the partial last sub-beat;
tests/unit/test_convert.py shows that too.)

The reference works on Python ints (beats of any width): `split_beats`, `join_beats`, `apply` (a chain),
and `fold_beats` / `unfold_beats` (codes <-> folded beats). The hardware: templates/verilog/rtl/hg_split.sv,
hg_join.sv and templates/hls/kernels/dwc.h (hlsgen::split, hlsgen::join).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import gcd, lcm
from typing import Literal

import numpy as np

WIDEST_BEAT = 4096  # bits: the widest stream (or register) Vitis HLS takes (AP_INT_MAX_W)

ConvertKind = Literal["split", "join"]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Convert:
    """One primitive: `kind` over sub-beats of `w` bits, groups of `s` sub-beats, `k` sub-beats per wide beat."""

    kind: ConvertKind
    w: int
    s: int
    k: int

    def __post_init__(self) -> None:
        if self.kind not in ("split", "join"):
            raise ValueError(f"Convert kind must be 'split' or 'join', not {self.kind!r}")
        for name in ("w", "s", "k"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Convert.{name} must be an int >= 1, not {value!r}")

    @property
    def wide_beats(self) -> int:
        """G: wide beats per group (ceil(s/k))."""
        return _ceil_div(self.s, self.k)

    @property
    def last_subs(self) -> int:
        """L: sub-beats in the group's last wide beat (1 .. k)."""
        return self.s - (self.wide_beats - 1) * self.k

    @property
    def in_bits(self) -> int:
        return self.k * self.w if self.kind == "split" else self.w

    @property
    def out_bits(self) -> int:
        return self.w if self.kind == "split" else self.k * self.w

    def beats_in(self, groups: int) -> int:
        return groups * (self.wide_beats if self.kind == "split" else self.s)

    def beats_out(self, groups: int) -> int:
        return groups * (self.s if self.kind == "split" else self.wide_beats)

    def cycles(self, groups: int) -> int:
        """Cycles at full rate: one sub-beat per cycle."""
        return self.s * groups


def fold_change(channels: int, bits: int, a: int, b: int, within: int | None = None) -> tuple[Convert, ...]:
    """The converters from fold `a` to fold `b` of a stream of `channels` codes of `bits` bits. Where
    neither fold divides the other: through gcd(a, b), unless that takes more cycles a pixel than
    `within` (the design's slowest layer allows; None: than the lcm path) and the lcm path fits."""
    if bits < 1:
        raise ValueError(f"bits must be >= 1, not {bits}")
    for name, fold in (("a", a), ("b", b)):
        if not 1 <= fold <= channels:
            raise ValueError(f"fold {name}={fold} outside 1 .. {channels} (the channel count)")
    if a == b:
        return ()
    if a % b == 0:
        return (Convert("split", b * bits, _ceil_div(channels, b), a // b),)
    if b % a == 0:
        return (Convert("join", a * bits, _ceil_div(channels, a), b // a),)
    g, wide = gcd(a, b), lcm(a, b)
    s = _ceil_div(channels, g)
    fast = max(_ceil_div(channels, a), _ceil_div(channels, b))
    if wide <= channels and wide * bits <= WIDEST_BEAT and fast < s and (within is None or s > within):
        return (Convert("join", a * bits, _ceil_div(channels, a), wide // a),
                Convert("split", b * bits, _ceil_div(channels, b), wide // b))
    return Convert("split", g * bits, s, a // g), Convert("join", g * bits, s, b // g)


def _check_beats(beats: Sequence[int], per_group: int, c: Convert) -> None:
    if len(beats) % per_group:
        raise ValueError(f"{c}: {len(beats)} beats is not a whole number of groups of {per_group}")
    if any(v < 0 for v in beats):
        raise ValueError(f"{c}: beats are unsigned bit patterns (a negative int was given)")


def split_beats(beats: Sequence[int], c: Convert) -> list[int]:
    """Reference split: the sub-beats of every wide beat, one per output beat; padding dropped."""
    if c.kind != "split":
        raise ValueError(f"split_beats needs a split, not {c}")
    g_beats, mask = c.wide_beats, (1 << c.w) - 1
    _check_beats(beats, g_beats, c)
    out: list[int] = []
    for i, beat in enumerate(beats):
        n = c.last_subs if i % g_beats == g_beats - 1 else c.k
        out.extend((beat >> (j * c.w)) & mask for j in range(n))
    return out


def join_beats(beats: Sequence[int], c: Convert) -> list[int]:
    """Reference join: every k sub-beats (fewer at a group's end) packed low first, zeros above."""
    if c.kind != "join":
        raise ValueError(f"join_beats needs a join, not {c}")
    _check_beats(beats, c.s, c)
    mask = (1 << c.w) - 1
    out: list[int] = []
    for start in range(0, len(beats), c.s):
        group = beats[start:start + c.s]
        for first in range(0, c.s, c.k):
            out.append(sum((v & mask) << (j * c.w) for j, v in enumerate(group[first:first + c.k])))
    return out


def apply(beats: Sequence[int], chain: Iterable[Convert]) -> list[int]:
    """The beats after every converter of `chain` in turn."""
    out = list(beats)
    for c in chain:
        out = split_beats(out, c) if c.kind == "split" else join_beats(out, c)
    return out


def _check_fold(channels: int, bits: int, fold: int) -> None:
    if bits < 1 or not 1 <= fold <= channels:
        raise ValueError(f"need bits >= 1 and 1 <= fold <= {channels} channels (bits={bits}, fold={fold})")


def fold_beats(codes: np.ndarray, bits: int, fold: int) -> list[int]:
    """Pack codes [pixels, channels] into folded beats: `fold` channels per beat, two's complement codes
    masked to `bits`, the last beat of each pixel zero above its channels."""
    if codes.ndim != 2:
        raise ValueError(f"codes must be [pixels, channels], got shape {codes.shape}")
    channels = codes.shape[1]
    _check_fold(channels, bits, fold)
    mask = (1 << bits) - 1
    out: list[int] = []
    for pixel in codes.tolist():
        for first in range(0, channels, fold):
            out.append(sum((int(v) & mask) << (j * bits) for j, v in enumerate(pixel[first:first + fold])))
    return out


def unfold_beats(beats: Sequence[int], channels: int, bits: int, signed: bool, fold: int) -> np.ndarray:
    """Codes [pixels, channels] (int64) of folded beats; bits above a pixel's channels are ignored."""
    _check_fold(channels, bits, fold)
    if bits > (64 if signed else 63):
        raise ValueError(f"{bits}-bit {'signed' if signed else 'unsigned'} codes do not fit int64")
    per_pixel = _ceil_div(channels, fold)
    if len(beats) % per_pixel:
        raise ValueError(f"{len(beats)} beats is not a whole number of pixels of {per_pixel} beats")
    mask = (1 << bits) - 1
    rows = []
    for start in range(0, len(beats), per_pixel):
        row = [(beats[start + c // fold] >> ((c % fold) * bits)) & mask for c in range(channels)]
        rows.append([v - (1 << bits) if signed and v >> (bits - 1) else v for v in row])
    return np.array(rows, dtype=np.int64).reshape(-1, channels)

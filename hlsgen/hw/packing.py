"""Tables in the order the hardware reads them, computed once for every backend.

A matrix-vector layer (conv, dwconv, gemm) with PE output lanes and SIMD input lanes reads one weight
word per cycle: word (nf·KK + tap)·SF + sf holds lane (pe, s) = weight of output channel nf·PE + pe,
tap `tap`, input channel sf·SIMD + s of its group, zero where PE or SIMD do not divide the channel
counts (NF = ceil(Cout/PE), SF = ceil(Cin_per_group/SIMD), KK taps; depthwise: SIMD = SF = 1).
Per-channel values (bias, multipliers, shifts) are [NF][PE] tables indexed by the output fold.

Requant units are time-shared: a layer whose output fold takes KK·SF cycles needs only
R = PE / Q requant units, Q <= KK·SF sub-steps per fold (`requant_units`). Lane r of sub-step q of
fold nf requantizes channel nf·PE + q·R + r = (nf·Q + q)·R + r, so the [NF][PE] tables read as
[NF·Q][R] tables in the same order: the requant units see a layer of PE = R and NF·Q folds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlsgen.errors import HlsgenError
from hlsgen.hw.model import Layer, Stream

MVU_KINDS = ("conv", "dwconv", "gemm")


# ---- how the MACs are built: decided once, rendered by hg_mvu and counted by the resource model ----
LUT_WEIGHT_BITS = 4  # weights this narrow multiply as shift-adds in LUTs (DSPs are the scarce resource)


def lut_multipliers(layer: Layer) -> bool:
    """hg_mvu LUTMUL: products as shift-adds over the weight bits (about 8 LUTs per weight bit for
    8-bit codes) instead of a DSP slice each, for weights of at most LUT_WEIGHT_BITS bits."""
    return int(layer.params["weight_bits"]) <= LUT_WEIGHT_BITS


def packs_pairs(layer: Layer, x: Stream) -> bool:
    """hg_mvu PACK: two PE lanes share one multiplier (A = w0 + w1*2^F, F = WB + IB, times the
    activation as an unsigned code). Only where the lanes of a step read the same activation (dense
    conv, gemm), the operands fit hg_mvu's packed 25 x 18 signed product (A: 2*WB + IB + 1 <= 25 bits,
    B: IB + 1 <= 18; the same RTL on every family) and PE >= 2."""
    wb = int(layer.params["weight_bits"])
    dense = layer.kind == "gemm" or (layer.kind == "conv" and int(layer.params.get("group", 1)) == 1)
    fits = 2 * wb + x.bits + 1 <= 25 and x.bits <= 17
    return dense and layer.pe >= 2 and fits and not lut_multipliers(layer)

HANDOFF_MAX_BITS = 4096  # time-shared requant units take a fold's accumulators (and skip codes) in one beat


@dataclass(frozen=True)
class MvuShape:
    """The loop nest of a matrix-vector layer: NF output folds x KK taps x SF input folds."""

    pe: int
    simd: int
    nf: int
    kk: int
    sf: int
    cin_g: int  # input channels per group (1 for depthwise)
    cout: int

    @property
    def words(self) -> int:
        return self.nf * self.kk * self.sf


def mvu_shape(layer: Layer, x: Stream) -> MvuShape:
    p = layer.params
    cout = int(p["out_c"])
    if layer.kind == "gemm":
        kk, cin_g = x.pixels, x.channels
    else:
        kk = int(p["kernel"][0] * p["kernel"][1])
        cin_g = 1 if layer.kind == "dwconv" else int(p["in_c"]) // int(p["group"])
    simd = 1 if layer.kind == "dwconv" else layer.simd
    return MvuShape(layer.pe, simd, math.ceil(cout / layer.pe), kk, math.ceil(cin_g / simd), cin_g, cout)


def requant_units(layer: Layer, x: Stream) -> int:
    """Requant units R of a matrix-vector layer: the fewest that keep up with its folds, the smallest
    divisor of PE with PE / R <= KK·SF (one fold's accumulators are requantized in PE / R cycles
    while the next fold accumulates). R = PE (no sharing) where one fold takes a single cycle or the
    hand-off beat (PE accumulators and their residual skip codes) would exceed HANDOFF_MAX_BITS."""
    m = mvu_shape(layer, x)
    lane_bits = int(layer.params.get("acc_bits") or 32) + int(layer.params.get("skip_bits") or 0)
    if m.pe * lane_bits > HANDOFF_MAX_BITS:
        return m.pe
    return min(r for r in range(1, m.pe + 1) if m.pe % r == 0 and r * m.kk * m.sf >= m.pe)


def weight_words(layer: Layer, x: Stream) -> np.ndarray:
    """Weights [Cout, taps..., Cin/group] (OHWI, or [N, K] in stream order) as [NF·KK·SF, PE·SIMD]."""
    m = mvu_shape(layer, x)
    w = np.asarray(layer.arrays["weights"], dtype=np.int64).reshape(m.cout, m.kk, m.cin_g)
    padded = np.zeros((m.nf * m.pe, m.kk, m.sf * m.simd), dtype=np.int64)
    padded[:m.cout, :, :m.cin_g] = w
    words = padded.reshape(m.nf, m.pe, m.kk, m.sf, m.simd).transpose(0, 2, 3, 1, 4)
    return words.reshape(m.words, m.pe * m.simd)


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


def clamp_bounds(params: Mapping[str, Any], out: Stream) -> tuple[int, int]:
    """A layer's output clamp [lo, hi]: its own bounds where set, else its output type's range."""
    lo_type, hi_type = code_range(out)
    lo, hi = params.get("lo"), params.get("hi")
    return int(lo_type if lo is None else lo), int(hi_type if hi is None else hi)

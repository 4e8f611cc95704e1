"""The fixed-point contract, implemented once. docs/numerics.md is its prose version.

Every integer the hardware computes is defined here: how reals become codes (host quantization),
how weights and biases are quantized, how a 64-bit scaled accumulator is rounded back to an
activation (requant), and how wide accumulators must be. The golden model, the quantize pass and
the backends all call these functions; nothing else rounds.

Requant, the rounding step inside the network:
    v = acc * M                     (plus (skip - zp_s) * Mb for a residual add; M_neg for v < 0 leaky)
    y = clamp(zp_y + round_shift(v, S), lo, hi)
with integer multipliers M (signed, |M| < 2**(bits-1)) and a shift S >= 0 per output channel.
A layer fused across a tensor the source model quantizes (conv -> Q(t) -> DQ -> BN/Add/act -> Q(y))
rounds twice, exactly as the model does (`fused_epilogue` with a `mid` step):
    t = clamp(zp_t + round_shift(acc * M1, S1), lo_t, hi_t)
    y = clamp(zp_y + round_shift((t - zp_t) * M + (skip - zp_s) * Mb + B2, S), lo, hi)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hlsgen.ir.ops import ROUNDINGS as OP_ROUNDINGS
from hlsgen.ir.types import IntType, QType, Rounding

ROUNDINGS: tuple[str, ...] = OP_ROUNDINGS  # the op schema's list (hlsgen/ir/ops.py), defined once
MAX_SHIFT = 62


# ---- rounding ---------------------------------------------------------------------------------
def round_shift(v: np.ndarray, shift: np.ndarray | int, rounding: Rounding = Rounding.HALF_EVEN) -> np.ndarray:
    """round(v / 2**shift) on int64, exactly; ties to even or toward +inf. shift >= 0."""
    v = np.asarray(v, dtype=np.int64)
    s = np.broadcast_to(np.asarray(shift, dtype=np.int64), v.shape)
    if np.any(s < 0) or np.any(s > MAX_SHIFT):
        raise ValueError("round_shift needs 0 <= shift <= 62")
    q = v >> s  # floor division by 2**s
    r = v - (q << s)  # remainder in [0, 2**s)
    half = np.where(s > 0, np.left_shift(np.int64(1), np.maximum(s - 1, 0)), 0)
    if rounding == "half_up":
        up = (s > 0) & (r >= half)
    elif rounding == "half_even":
        up = (s > 0) & ((r > half) | ((r == half) & ((q & 1) == 1)))
    else:
        raise ValueError(f"unknown rounding {rounding!r}; choose one of {ROUNDINGS}")
    return q + up.astype(np.int64)


def round_real(x: np.ndarray, rounding: Rounding = Rounding.HALF_EVEN) -> np.ndarray:
    """Round reals to integers with the same tie rule as round_shift (float64 in, int64 out)."""
    x = np.asarray(x, dtype=np.float64)
    if rounding == "half_even":
        r = np.rint(x)
    else:  # not floor(x + 0.5): that addition rounds (0.49999999999999994 + 0.5 == 1.0)
        f = np.floor(x)
        r = f + (x - f >= 0.5)  # x - floor(x) is exact in binary floating point
    return r.astype(np.int64)


# ---- host-side conversion -------------------------------------------------------------------------
def quantize(x: np.ndarray, qtype: QType, rounding: Rounding = Rounding.HALF_EVEN) -> np.ndarray:
    """Reals to codes like ONNX QuantizeLinear: clamp(round(x / scale) + zp). Computed in float64."""
    x = np.asarray(x, dtype=np.float64)
    if qtype.int.bipolar:  # QONNX BipolarQuant: the sign, with 0 -> +1 (the scale is positive)
        return np.where(x >= 0, 1, -1).astype(np.int64)
    scale, zp = qtype.broadcast(x.ndim)
    # saturate before the int64 cast: a quotient beyond int64 (1e20, inf) would wrap around
    ratio = np.clip(x / scale, qtype.int.lo - zp - 1, qtype.int.hi - zp + 1)
    q = round_real(ratio, rounding) + zp
    return np.clip(q, qtype.int.lo, qtype.int.hi).astype(np.int64)


def dequantize(q: np.ndarray, qtype: QType) -> np.ndarray:
    scale, zp = qtype.broadcast(np.ndim(q))
    return (scale * (np.asarray(q, dtype=np.int64) - zp)).astype(np.float64)


# ---- choosing quantization parameters ---------------------------------------------------------------
def weight_qtype_and_codes(w: np.ndarray, bits: int, axis: int = 0,
                           min_scale: np.ndarray | None = None) -> tuple[QType, np.ndarray]:
    """Symmetric, narrow-range, per-output-channel weight quantization (axis = output channel).
    `min_scale` floors the scale per channel (see bias_scale_floor)."""
    w = np.asarray(w, dtype=np.float64)
    itype = IntType(bits, True, narrow=True)
    other = tuple(i for i in range(w.ndim) if i != axis)
    absmax = np.max(np.abs(w), axis=other) if other else np.abs(w)
    scale = np.where(absmax > 0, absmax / itype.hi, 1.0)
    if min_scale is not None:
        scale = np.maximum(scale, min_scale)
    qt = QType(itype, scale, np.zeros_like(scale, dtype=np.int64), axis=axis)
    return qt, quantize(w, qt)


def activation_qtype(lo: float, hi: float, itype: IntType, symmetric: bool = False) -> QType:
    """Per-tensor activation parameters covering [lo, hi] (widened to include 0 so 0 is exact)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"activation range [{lo}, {hi}] is not finite")
    if symmetric:
        bound = max(-lo, hi)
        zp = 0 if itype.signed else (itype.hi + 1) // 2
        scale = bound / (itype.hi - zp) if bound > 0 else 1.0  # codes zp ± (hi - zp) cover ±bound
        return QType(itype, scale, zp)
    if hi == lo:
        return QType(itype, 1.0, 0 if itype.signed else 0)
    scale = (hi - lo) / (itype.hi - itype.lo)
    zp = int(np.clip(round_real(np.float64(itype.lo - lo / scale)), itype.lo, itype.hi))
    return QType(itype, scale, zp)


def bias_scale_floor(b: np.ndarray, s_x: float, bits: int = 32) -> np.ndarray:
    """The smallest weight scale per channel at which the bias still fits `bits` bits at the
    accumulator scale s_x * s_w: |b| / (s_x * (2^(bits-1) - 1)), with a relative margin of 2^-40
    so that round(b / (s_x * s_w)) cannot exceed the limit. A dead or near-constant channel (weights
    ~1e-30 beside a bias of 0.15, as in a trained network) gets a scale its weights round to 0 in,
    which is what they contribute."""
    limit = float((1 << (bits - 1)) - 1)
    return np.abs(np.asarray(b, dtype=np.float64)) / (float(s_x) * limit) * (1.0 + 2.0 ** -40)


def sign_bias(b: np.ndarray, acc_scale: np.ndarray, bits: int = 32) -> np.ndarray:
    """Bias codes for a layer whose output is bipolar: rounded toward the threshold, floor(b/s) on
    a channel with a positive accumulator scale and ceil(b/s) on a negative one, so that for every
    integer partial sum n:  s·(n + b/s) >= 0  <=>  n + code >= 0 (resp. <= 0). Error if out of range."""
    exact = np.asarray(b, dtype=np.float64) / acc_scale
    codes = np.where(np.asarray(acc_scale) > 0, np.floor(exact), np.ceil(exact))
    _check_bias_range(exact, codes, bits)
    return codes.astype(np.int64)


def quantize_bias(b: np.ndarray, acc_scale: np.ndarray, bits: int = 32) -> np.ndarray:
    """Bias codes at the accumulator scale s_x * s_w[c], round half even; error if out of range."""
    exact = np.asarray(b, dtype=np.float64) / acc_scale
    _check_bias_range(exact, np.rint(exact), bits)  # before the int64 cast, which would wrap around
    return round_real(exact)


def _check_bias_range(exact: np.ndarray, codes: np.ndarray, bits: int) -> None:
    """ValueError naming the first channel whose bias code does not fit `bits` bits (NaN does not)."""
    too_big = ~(np.abs(codes) <= (1 << (bits - 1)) - 1)
    if np.any(too_big):
        worst = int(np.flatnonzero(too_big.reshape(-1))[0])
        raise ValueError(f"bias of channel {worst} needs more than {bits} bits "
                         f"({float(exact.reshape(-1)[worst]):.6g})")


# ---- requant multipliers ----------------------------------------------------------------------------
def multiplier_and_shift(ratio: np.ndarray, bits: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Integers M, S with M / 2**S ~= ratio, |M| < 2**(bits-1), S >= 0, the largest such S."""
    ms, s = shared_shift_multipliers([ratio], bits)
    return ms[0], s


def shared_shift_multipliers(
    ratios: list[np.ndarray], bits: int = 16
) -> tuple[list[np.ndarray], np.ndarray]:
    """Several multipliers per channel sharing one shift (residual add: Ma, Mb; leaky: M, M_neg).

    Per channel, the shift gives the smallest nonzero |ratio| a multiplier of `bits` bits
    (2**(bits-2) <= |M| < 2**(bits-1)); a larger ratio sharing the shift gets a proportionally wider
    multiplier, up to WIDE_MULT_BITS bits signed (beyond that the shift shrinks and the smallest
    multiplier keeps fewer bits). So a residual add whose branch scales differ by 2**14 keeps full
    precision on both branches.
    """
    arrs = [np.atleast_1d(np.asarray(r, dtype=np.float64)) for r in ratios]
    n = max(a.size for a in arrs)
    table = np.stack([np.broadcast_to(a, (n,)) for a in arrs])  # [ratios, channels]
    shifts = np.array([_channel_shift(table[:, c], bits) for c in range(n)], dtype=np.int64)
    mults = [round_real(row * np.exp2(shifts.astype(np.float64))) for row in table]
    return mults, shifts


WIDE_MULT_BITS = 32


def _channel_shift(ratios: np.ndarray, bits: int) -> int:
    nonzero = np.abs(ratios[ratios != 0])
    if nonzero.size == 0:
        return 0
    small, big = float(nonzero.min()), float(nonzero.max())
    shift = min(bits - 1 - math.frexp(small)[1], WIDE_MULT_BITS - 1 - math.frexp(big)[1], MAX_SHIFT - 1)
    # rounding may reach the limit (e.g. 0.99999 * 2**15 -> 2**15): one bit less of shift
    while shift >= 0 and (abs(round_real(np.float64(small * 2.0**shift))) >= 1 << (bits - 1) or
                          abs(round_real(np.float64(big * 2.0**shift))) >= 1 << (WIDE_MULT_BITS - 1)):
        shift -= 1
    if shift < 0:
        raise ValueError(f"requant ratio {big:.6g} too large for a {bits}-bit multiplier")
    return shift


def requantize(
    v: np.ndarray, shift: np.ndarray, zero_point: int, lo: int, hi: int, rounding: Rounding = Rounding.HALF_EVEN
) -> np.ndarray:
    """The requant step: clamp(zp + round_shift(v, S), lo, hi); `v` is the scaled int64 sum,
    `shift` broadcasts against it (per channel)."""
    return np.clip(zero_point + round_shift(v, shift, rounding), lo, hi)


def scale_accumulator(acc: np.ndarray, mult: np.ndarray, mult_neg: np.ndarray | None = None) -> np.ndarray:
    """v = acc * M, or acc * M_neg where acc * M < 0 (LeakyReLU folded into the multiplier)."""
    acc = np.asarray(acc, dtype=np.int64)
    v = acc * mult
    if mult_neg is not None:
        v = np.where(v < 0, acc * mult_neg, v)
    return v


@dataclass(frozen=True)
class RequantStep:
    """One rounding step: y = clamp(zp + round_shift(x * M (M_neg where negative), S), lo, hi).
    Arrays broadcast per channel against the value they scale."""

    mult: np.ndarray
    shift: np.ndarray
    zero_point: int
    lo: int
    hi: int
    mult_neg: np.ndarray | None = None


def fused_epilogue(acc: np.ndarray, last: RequantStep, mid: RequantStep | None = None,
                   skip: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                   bias: np.ndarray | None = None, rounding: Rounding = Rounding.HALF_EVEN) -> np.ndarray:
    """The epilogue of a Conv/Gemm layer, one or two roundings.

    mid (the model's own intermediate quantizer, two-step form):
        t = clamp(zp_t + round_shift(acc * M1, S1), lo_t, hi_t);  x = t - zp_t      (else x = acc)
    then v = x * M (M_neg where x * M < 0) + (skip - zp_s) * Mb + B2 and
        y = clamp(zp_y + round_shift(v, S), lo, hi).
    `skip` is (codes, zp_s, Mb); `bias` is B2 (already at the scale 2^S of v).
    """
    x = np.asarray(acc, dtype=np.int64)
    if mid is not None:
        t = requantize(scale_accumulator(x, mid.mult, mid.mult_neg), mid.shift, mid.zero_point, mid.lo, mid.hi,
                       rounding)
        x = t - mid.zero_point
    v = scale_accumulator(x, last.mult, last.mult_neg)
    if skip is not None:
        codes, zp_s, mult_s = skip
        v = v + (np.asarray(codes, dtype=np.int64) - zp_s) * mult_s
    if bias is not None:
        v = v + bias
    return requantize(v, last.shift, last.zero_point, last.lo, last.hi, rounding)


def scaled_bias(real_bias: np.ndarray, out_scale: float, shift: np.ndarray) -> np.ndarray:
    """B2 = round_half_even(b / s_y * 2^S): a real additive term at the scale of v = x·M (2^S per LSB)."""
    return round_real(np.asarray(real_bias, dtype=np.float64) / out_scale * np.exp2(np.asarray(shift, np.float64)))


# ---- accumulator width ----------------------------------------------------------------------------
def signed_bits_for(bound: int) -> int:
    """Bits of a signed integer holding every value in [-bound, bound]."""
    return int(bound).bit_length() + 1


def accumulator_bits(w_codes: np.ndarray, x_type: IntType, bias_codes: np.ndarray | None) -> int:
    """Width of acc = bias + sum(x * w) over the worst input, per output channel (axis 0), max'ed.

    Uses the actual weights: for each tap the worst of x_lo*w and x_hi*w, so partial sums in any
    order stay inside the bound too. The result is the smallest two's complement width holding
    both the most negative and the most positive reachable sum.
    """
    w = np.asarray(w_codes, dtype=np.int64).reshape(w_codes.shape[0], -1)
    bias = np.zeros(w.shape[0], dtype=np.int64) if bias_codes is None else \
        np.broadcast_to(np.asarray(bias_codes, dtype=np.int64).reshape(-1), (w.shape[0],))
    ends = (w * x_type.lo, w * x_type.hi)
    top = np.maximum(*ends).sum(axis=1) + np.maximum(bias, 0)  # x_lo <= 0 <= x_hi: each tap's
    bottom = np.minimum(*ends).sum(axis=1) + np.minimum(bias, 0)  # range holds 0, so partial sums fit
    need = [int(t).bit_length() + 1 for t in top] + [(-int(b) - 1).bit_length() + 1 for b in bottom if b < 0]
    return max(need, default=1)

"""Exact integer matrix product through float64 BLAS when that is provably exact.

numpy's int64 matmul does not use BLAS and is one to two orders of magnitude slower than dgemm.
`exact_int_matmul(a, b)` multiplies integer-valued matrices (any integer dtype, or float64 arrays
holding integers) and returns the exact int64 product, using float64 BLAS whenever it is exact.

Why float64 is exact under the bound. Let B be an integer with |Σ_{k∈S} a_ik·b_kj| ≤ B for every
output (i, j) and every subset S of the K terms; B = max_i Σ_k |a_ik| · max |b| and
B = max |a| · max_j Σ_k |b_kj| both qualify (we use the smaller one we can get cheaply). A float64
represents every integer of magnitude ≤ 2**53 exactly, and an IEEE-754 operation (×, +, fused
multiply-add) whose operands are exactly represented and whose exact result is representable
returns that result without rounding. A classical dgemm (OpenBLAS, MKL, BLIS, reference BLAS)
computes each output as the sum of its K products, in any order, blocking or vector split: every
operand and every intermediate is then an integer partial sum of magnitude ≤ B. So if B < 2**53
no operation ever rounds and the float64 result equals the integer one; the conversions in and
out are exact too (|a|, |b| ≤ B when the other factor is non-zero; zero factors give 0 either
way). Strassen-like algorithms would break the argument; no mainstream dgemm uses them.

The bound is computed with Python integers (no overflow). The row/column abs sums are taken in
float64 and inflated by a relative margin of 2**-20, far above their rounding error for any
K < 2**30. Above the bound the product falls back to numpy int64 matmul, exact as long as the true
result fits in int64 (the accumulator widths of hlsgen stay far below that).
"""

from __future__ import annotations

import numpy as np

EXACT_LIMIT = 1 << 53
_MARGIN = 1.0 + 2.0**-20


def _abs_max(x: np.ndarray) -> int:
    """max |x| as a Python int (0 for an empty array)."""
    if x.size == 0:
        return 0
    return max(abs(int(x.max())), abs(int(x.min())))


def _max_abs_sum(x: np.ndarray, axis: int) -> float:
    """Upper bound of the largest abs sum along `axis` (float64 sum, inflated by the margin)."""
    if x.size == 0:
        return 0.0
    sums = np.abs(x.astype(np.float64, copy=False)).sum(axis=axis)
    return float(sums.max()) * _MARGIN


def float_product_is_exact(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether a @ b in float64 is provably exact (see the module docstring)."""
    a_max, b_max = _abs_max(a), _abs_max(b)
    if a_max == 0 or b_max == 0:
        return True
    if a.shape[-1] * a_max * b_max < EXACT_LIMIT:  # K·max|a|·max|b|: cheapest, often enough
        return True
    bound = min(a_max * _max_abs_sum(b, axis=-2 if b.ndim > 1 else 0), _max_abs_sum(a, axis=-1) * b_max)
    return bound < EXACT_LIMIT


def exact_int_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact int64 matrix product of integer-valued arrays (numpy matmul broadcasting rules)."""
    a, b = np.asarray(a), np.asarray(b)
    for name, x in (("a", a), ("b", b)):
        if not (np.issubdtype(x.dtype, np.integer) or np.issubdtype(x.dtype, np.floating)):
            raise TypeError(f"exact_int_matmul: {name} has dtype {x.dtype}, expected integers")
    if float_product_is_exact(a, b):
        prod = np.matmul(a.astype(np.float64, copy=False), b.astype(np.float64, copy=False))
        return prod.astype(np.int64)
    return np.matmul(_as_int64(a), _as_int64(b))


def _as_int64(x: np.ndarray) -> np.ndarray:
    if np.issubdtype(x.dtype, np.integer):
        return x.astype(np.int64, copy=False)
    if not np.all(np.isfinite(x)) or np.any(np.abs(x) >= 2.0**63):
        raise ValueError("exact_int_matmul: float input out of int64 range")
    return x.astype(np.int64)

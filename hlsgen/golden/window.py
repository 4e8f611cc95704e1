"""Sliding-window helpers shared by the float and integer conv/pool kernels of the golden model.

Layout conventions follow docs/ir.md: activations NCHW, conv weights OIHW with I = C / group,
`pads` = (top, left, bottom, right), `kernel`/`strides`/`dilations` = (h, w).

Windows are numpy views made with `sliding_window_view` (no copy); a dilated window is the
undilated window of span d·(k−1)+1 sliced with step d, and strides slice the window positions.
Convolution is im2col + one matrix product per group; the product is a parameter so that the
float kernels use float64 BLAS and the integer kernels the exact integer product (golden/exact.py).
Pools reduce the window view tap by tap (a loop over kernel taps only). A nearest-neighbour
upsampling by integer factors repeats every pixel (`upsample`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

MatMul = Callable[[np.ndarray, np.ndarray], np.ndarray]

# Largest im2col block (elements) built at once; the batch is processed in chunks below it.
IM2COL_BLOCK = 1 << 22


def pair(value: Sequence[int] | int | None, default: int) -> tuple[int, int]:
    """An (h, w) attribute as two ints; None gives (default, default), an int is used twice."""
    if value is None:
        return default, default
    if isinstance(value, int | np.integer):
        return int(value), int(value)
    h, w = (int(v) for v in value)
    return h, w


def pads4(value: Sequence[int] | None) -> tuple[int, int, int, int]:
    """`pads` as (top, left, bottom, right); None means no padding."""
    if value is None:
        return 0, 0, 0, 0
    t, left, b, r = (int(v) for v in value)
    if min(t, left, b, r) < 0:
        raise ValueError(f"negative pads {value}")
    return t, left, b, r


def out_size(size: int, k: int, stride: int, pad_lo: int, pad_hi: int, dilation: int) -> int:
    """Output length of a window sweep (floor mode, as ONNX with ceil_mode=0)."""
    span = dilation * (k - 1) + 1
    n = (size + pad_lo + pad_hi - span) // stride + 1
    if n < 1:
        raise ValueError(f"window of span {span} does not fit in padded size {size + pad_lo + pad_hi}")
    return n


def pad_hw(
    x: np.ndarray, pads: Sequence[int], value: float | int, axes: tuple[int, int] = (2, 3)
) -> np.ndarray:
    """Constant padding of the two spatial axes (default H, W of NCHW) with `value`."""
    t, left, b, r = pads4(pads)
    if t == left == b == r == 0:
        return x
    width = [(0, 0)] * x.ndim
    width[axes[0]] = (t, b)
    width[axes[1]] = (left, r)
    return np.pad(x, width, mode="constant", constant_values=value)


def windows(
    x_pad: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
    axes: tuple[int, int] = (2, 3),
) -> np.ndarray:
    """View of every (strided, dilated) window of an already padded tensor.

    The window positions replace `axes`, the two window axes (kh, kw) are appended at the end:
    NCHW with axes (2, 3) gives [N, C, Ho, Wo, kh, kw].
    """
    (kh, kw), (sh, sw), (dh, dw) = pair(kernel, 1), pair(strides, 1), pair(dilations, 1)
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    for ax, s in zip(axes, span, strict=True):
        if x_pad.shape[ax] < s:
            raise ValueError(f"window of span {s} does not fit in padded size {x_pad.shape[ax]}")
    view = sliding_window_view(x_pad, span, axis=axes)
    index: list[slice] = [slice(None)] * view.ndim
    index[axes[0]], index[axes[1]] = slice(None, None, sh), slice(None, None, sw)
    index[-2], index[-1] = slice(None, None, dh), slice(None, None, dw)
    return view[tuple(index)]


def reduce_windows(
    x_pad: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
    ufunc: np.ufunc,
) -> np.ndarray:
    """ufunc-reduce (np.maximum, np.add) every window of a padded NCHW tensor -> [N, C, Ho, Wo]."""
    view = windows(x_pad, kernel, strides, dilations)
    kh, kw = view.shape[-2:]
    acc = np.array(view[..., 0, 0])
    for i in range(kh):
        for j in range(kw):
            if i or j:
                ufunc(acc, view[..., i, j], out=acc)
    return acc


def im2col(
    x_pad_nhwc: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
    group: int,
) -> np.ndarray:
    """Columns [G, N·Ho·Wo, kh·kw·Cg] of a padded NHWC tensor; column order (kh, kw, c)."""
    view = windows(x_pad_nhwc, kernel, strides, dilations, axes=(1, 2))  # [N, Ho, Wo, C, kh, kw]
    n, ho, wo, c, kh, kw = view.shape
    if c % group:
        raise ValueError(f"{c} input channels do not split into {group} groups")
    view = view.reshape(n, ho, wo, group, c // group, kh, kw).transpose(3, 0, 1, 2, 5, 6, 4)
    return view.reshape(group, n * ho * wo, kh * kw * (c // group))


def conv_weight_matrix(w: np.ndarray, group: int) -> np.ndarray:
    """OIHW weights as [G, kh·kw·Cg, Og], rows in the im2col column order."""
    o, cg, kh, kw = w.shape
    if o % group:
        raise ValueError(f"{o} output channels do not split into {group} groups")
    wg = w.reshape(group, o // group, cg, kh, kw).transpose(0, 3, 4, 2, 1)
    return np.ascontiguousarray(wg.reshape(group, kh * kw * cg, o // group))


def conv2d(
    x: np.ndarray, w: np.ndarray, *, pads: Sequence[int], pad_value: float | int,
    strides: Sequence[int], dilations: Sequence[int], group: int, matmul: MatMul,
) -> np.ndarray:
    """Grouped 2-D convolution (cross-correlation, as ONNX) of NCHW `x` with OIHW `w`, no bias.

    The result dtype is whatever `matmul` returns. The batch is split in chunks so that an im2col
    block stays below IM2COL_BLOCK elements.
    """
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    if cg * group != c:
        raise ValueError(f"weights expect {cg}x{group} input channels, input has {c}")
    xp = pad_hw(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), pads, pad_value, axes=(1, 2))
    wm = conv_weight_matrix(w, group)
    probe = windows(xp[:1], (kh, kw), strides, dilations, axes=(1, 2))
    ho, wo = probe.shape[1:3]
    chunk = max(1, IM2COL_BLOCK // max(1, ho * wo * kh * kw * c))
    out: np.ndarray | None = None
    for start in range(0, max(n, 1), chunk):
        cols = im2col(xp[start:start + chunk], (kh, kw), strides, dilations, group)
        prod = matmul(cols[0], wm[0])[None] if group == 1 else matmul(cols, wm)  # [G, nb·Ho·Wo, Og]
        nb = cols.shape[1] // (ho * wo)
        if out is None:
            out = np.empty((n, o, ho, wo), dtype=prod.dtype)
        dest = out[start:start + nb].reshape(nb, group, o // group, ho, wo)
        dest[...] = prod.reshape(group, nb, ho, wo, o // group).transpose(1, 0, 4, 2, 3)
    assert out is not None
    return out


def upsample(x: np.ndarray, factors: Sequence[int]) -> np.ndarray:
    """Nearest-neighbour upsampling of an NCHW array by integer factors (fh, fw):
    y[n, c, i, j] = x[n, c, i // fh, j // fw]. Values and dtype unchanged (reals or codes)."""
    fh, fw = pair(tuple(int(f) for f in factors), 1)
    return np.repeat(np.repeat(np.asarray(x), fh, axis=2), fw, axis=3)

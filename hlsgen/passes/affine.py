"""Shared helpers for passes that create or consume per-channel Affine nodes (y = x·a + b)."""

from __future__ import annotations

import numpy as np

from hlsgen.ir import Node, Op, Tensor


def affine_node(name: str, x: str, y: str, a: np.ndarray, b: np.ndarray) -> tuple[Node, tuple[Tensor, ...]]:
    """An Affine node plus its two constant tensors (named after the node)."""
    ta = Tensor(f"{name}.a", (a.size,), None, np.asarray(a, dtype=np.float64))
    tb = Tensor(f"{name}.b", (b.size,), None, np.asarray(b, dtype=np.float64))
    return Node(name, Op.AFFINE, (x, ta.name, tb.name), (y,), {"axis": 1}), (ta, tb)


def per_channel_vector(value: np.ndarray, x_shape: tuple[int, ...]) -> np.ndarray | None:
    """The length-C vector a constant stands for when broadcast against x along axis 1, or None
    when it varies along any other axis (then it is not a per-channel scaling)."""
    if value.ndim > len(x_shape):
        return None
    try:
        full = np.broadcast_to(value, (1,) + tuple(x_shape[1:]))
    except ValueError:
        return None
    channels = x_shape[1]
    flat = full.reshape(1, channels, -1)
    if not np.all(flat == flat[:, :, :1]):
        return None
    return np.array(flat[0, :, 0], dtype=np.float64)

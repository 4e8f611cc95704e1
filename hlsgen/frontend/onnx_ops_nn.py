"""Compute-heavy ONNX translators: Conv, pools, MatMul, Gemm, BatchNormalization and Pad.

Conv and the pools share the window geometry (`window`: strides, dilations, auto_pad resolved to
explicit (top, left, bottom, right) pads, output (h, w)). Gemm is normalised to w [N, K] and a bias
b [N] with alpha and beta folded in (`Ctx.derived_static`). Pad is constant padding of H and W only
(a later pass folds it into the window op after it). Registered by op type in onnx_ops.TRANSLATORS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from hlsgen.frontend.onnx_ops_common import (
    EPILOGUE,
    Ctx,
    Unsupported,
    axes_of,
    ints,
    norm_axis,
    operand,
    scalar,
    single_output,
)


# ---- normalisation ------------------------------------------------------------------------------
def batchnorm(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    a = ctx.attrs(node)
    if a.get("training_mode", 0):
        raise Unsupported("training_mode=1")
    out = single_output(node, "training statistics")
    if len(xs) < 2:
        raise Unsupported(f"input rank {len(xs)} has no channel axis")
    params = []
    for i, what in enumerate(("scale", "B", "mean", "var"), start=1):
        pname, ps = operand(ctx, node, i)
        if not ctx.is_static(pname):
            raise Unsupported(f"{what} must be a constant")
        if math.prod(ps) != xs[1]:
            raise Unsupported(f"{what} must have {xs[1]} values")
        params.append(pname)
    eps = float(a.get("epsilon", float(np.float32(1e-5))))
    ctx.add_node(name, "BatchNormalization", [x, *params], [out], {"epsilon": eps}, [xs])


# ---- windows: Conv and pooling ------------------------------------------------------------------
def _same_pads(a: dict[str, Any], in_hw: Sequence[int], eff: Sequence[int],
               strides: Sequence[int]) -> tuple[int, int, int, int]:
    total = [max(0, (math.ceil(i / s) - 1) * s + e - i) for i, e, s in zip(in_hw, eff, strides, strict=True)]
    small = [t // 2 for t in total]
    big = [t - t // 2 for t in total]
    begin, end = (small, big) if a["auto_pad"] == "SAME_UPPER" else (big, small)
    return begin[0], begin[1], end[0], end[1]


def window(a: dict[str, Any], in_hw: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
           dil: Sequence[int]) -> tuple[tuple[int, int, int, int], tuple[int, int]]:
    """Explicit (top, left, bottom, right) pads (auto_pad resolved) and the output (h, w)."""
    eff = [(k - 1) * d + 1 for k, d in zip(kernel, dil, strict=True)]
    auto = a.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        pads = _same_pads(a, in_hw, eff, strides)
    elif auto == "VALID":
        pads = (0, 0, 0, 0)
    elif auto == "NOTSET":
        p = ints(a.get("pads", (0, 0, 0, 0)), 4, "pads")
        pads = (p[0], p[1], p[2], p[3])
    else:
        raise Unsupported(f"auto_pad {auto}")
    if min(pads) < 0:
        raise Unsupported(f"negative pads {pads}")
    out = [(i + pads[j] + pads[j + 2] - eff[j]) // strides[j] + 1 for j, i in enumerate(in_hw)]
    if min(out) <= 0:
        raise Unsupported(f"window larger than the padded input {tuple(in_hw)}")
    return pads, (out[0], out[1])


def _window_attrs(a: dict[str, Any], kernel: Sequence[int], in_hw: Sequence[int]) -> dict[str, Any]:
    strides = ints(a.get("strides", (1, 1)), 2, "strides")
    dil = ints(a.get("dilations", (1, 1)), 2, "dilations")
    if min(strides) <= 0 or min(dil) <= 0:
        raise Unsupported("strides and dilations must be positive")
    pads, out = window(a, in_hw, kernel, strides, dil)
    return {"strides": strides, "dilations": dil, "pads": pads, "out": out}


def conv(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    (x, xs), (w, ws) = operand(ctx, node, 0), operand(ctx, node, 1)
    if len(xs) != 4 or len(ws) != 4:
        raise Unsupported("only 2-D convolutions (rank-4 input and weight) are supported")
    if not ctx.is_static(w):
        raise Unsupported("the weight must be a constant")
    a = ctx.attrs(node)
    group = int(a.get("group", 1))
    if ws[1] * group != xs[1] or ws[0] % group:
        raise Unsupported(f"weight {ws} with group={group} does not fit input {xs}")
    if tuple(a.get("kernel_shape", ws[2:])) != ws[2:]:
        raise Unsupported(f"kernel_shape differs from the weight shape {ws}")
    win = _window_attrs(a, ws[2:], xs[2:])
    b = _conv_bias(ctx, node, name, ws[0])
    attrs = {k: win[k] for k in ("strides", "pads", "dilations")} | {"group": group, **EPILOGUE}
    ctx.add_node(name, "Conv", [x, w, b], node.output[:1], attrs, [(xs[0], ws[0], *win["out"])])


def _conv_bias(ctx: Ctx, node: onnx.NodeProto, name: str, channels: int) -> str:
    b = ctx.inp(node, 2)
    if b is None:
        return ctx.new_const(f"{name}__bias", np.zeros(channels))
    if not ctx.is_static(b):
        raise Unsupported("the bias must be a constant")
    if ctx.shape(b) != (channels,):
        raise Unsupported(f"bias shape {ctx.shape(b)} is not ({channels},)")
    return b


def _pool_input(ctx: Ctx, node: onnx.NodeProto) -> tuple[str, tuple[int, ...], dict[str, Any]]:
    x, xs = operand(ctx, node)
    if len(xs) != 4:
        raise Unsupported("only 2-D pooling (rank-4 input) is supported")
    a = ctx.attrs(node)
    if "kernel_shape" not in a:
        raise Unsupported("kernel_shape is missing")
    kernel = ints(a["kernel_shape"], 2, "kernel_shape")
    win = _window_attrs(a, kernel, xs[2:])
    if a.get("ceil_mode", 0):
        eff = [(k - 1) * d + 1 for k, d in zip(kernel, win["dilations"], strict=True)]
        pads, strides = win["pads"], win["strides"]
        if any((xs[2 + j] + pads[j] + pads[j + 2] - eff[j]) % strides[j] for j in range(2)):
            raise Unsupported("ceil_mode=1 changes the output size")
    return x, xs, {**win, "kernel": kernel}


def maxpool(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs, w = _pool_input(ctx, node)
    if ctx.attrs(node).get("storage_order", 0):
        raise Unsupported("storage_order=1")
    out = single_output(node, "Indices")
    attrs = {k: w[k] for k in ("kernel", "strides", "pads", "dilations")}
    ctx.add_node(name, "MaxPool", [x], [out], attrs, [(*xs[:2], *w["out"])])


def avgpool(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs, w = _pool_input(ctx, node)
    if w["dilations"] != (1, 1):
        raise Unsupported("dilated AveragePool")
    attrs = {k: w[k] for k in ("kernel", "strides", "pads")}
    attrs["count_include_pad"] = int(ctx.attrs(node).get("count_include_pad", 0))
    ctx.add_node(name, "AveragePool", [x], node.output[:1], attrs, [(*xs[:2], *w["out"])])


def global_avgpool(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    if len(xs) != 4:
        raise Unsupported("only rank-4 inputs are supported")
    _global_pool(ctx, name, "GlobalAveragePool", x, xs, node.output[0])


def global_maxpool(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """GlobalMaxPool: a MaxPool whose window is the whole image (hw/layers/pool.is_global)."""
    x, xs = operand(ctx, node)
    if len(xs) != 4:
        raise Unsupported("only rank-4 inputs are supported")
    _global_pool(ctx, name, "MaxPool", x, xs, node.output[0])


def _global_pool(ctx: Ctx, name: str, op: str, x: str, xs: tuple[int, ...], out: str) -> None:
    """`op` over the whole image of NCHW `x` into `out` ([N, C, 1, 1]): a GlobalAveragePool, or a
    MaxPool with the image as its window."""
    attrs: dict[str, Any] = {}
    if op == "MaxPool":
        attrs = {"kernel": (xs[2], xs[3]), "strides": (1, 1), "pads": (0, 0, 0, 0), "dilations": (1, 1)}
    ctx.add_node(name, op, [x], [out], attrs, [(xs[0], xs[1], 1, 1)])


def reduce_mean(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """ReduceMean over the spatial axes of an NCHW tensor, the way PyTorch exports AdaptiveAvgPool2d(1)
    and x.mean((2, 3)): a GlobalAveragePool (the same mean), then a Reshape to [N, C] when keepdims=0.
    Other axes reduce channels or the batch, which no layer here computes."""
    _spatial_reduce(ctx, node, name, "GlobalAveragePool", "a global average pool")


def reduce_max(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """ReduceMax over the spatial axes of an NCHW tensor (tf2onnx's GlobalMaxPooling2D, PyTorch's
    AdaptiveMaxPool2d(1) and x.amax((2, 3))): a global max pool, then a Reshape to [N, C] when
    keepdims=0."""
    _spatial_reduce(ctx, node, name, "MaxPool", "a global max pool")


def _spatial_reduce(ctx: Ctx, node: onnx.NodeProto, name: str, op: str, what: str) -> None:
    x, xs = operand(ctx, node)
    if len(xs) != 4:
        raise Unsupported("only rank-4 inputs (NCHW, reduced over H and W) are supported")
    axes = axes_of(ctx, node, 4, input_since=18)
    if axes != [2, 3]:
        shown = "none (all axes)" if axes is None else axes
        raise Unsupported(f"axes {shown}: only the spatial axes [2, 3] ({what}) are supported")
    if int(ctx.attrs(node).get("keepdims", 1)):
        _global_pool(ctx, name, op, x, xs, node.output[0])
        return
    mid = ctx.fresh(f"{node.output[0]}_pooled")
    _global_pool(ctx, name, op, x, xs, mid)
    ctx.add_node(ctx.fresh(f"{name}_squeeze"), "Reshape", [mid], node.output[:1], {"shape": (xs[1],)},
                 [(xs[0], xs[1])])


# ---- dense ---------------------------------------------------------------------------------------
def matmul(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    (x, xs), (w, ws) = operand(ctx, node, 0), operand(ctx, node, 1)
    if len(xs) != 2:
        raise Unsupported(f"the activation input must be 2-D, got shape {xs}")
    if not ctx.is_static(w):
        raise Unsupported(f"the right operand {w} is computed by the graph (an activation), not a constant: "
                          "a MatMul between two activations has no hardware unit yet (only weights on the right)")
    if len(ws) != 2 or ws[0] != xs[1]:
        raise Unsupported(f"the right operand {w} must have shape [{xs[1]}, N] to multiply the input's "
                          f"{xs[1]} columns, got {list(ws)}")
    ctx.add_node(name, "MatMul", [x, w], node.output[:1], {}, [(xs[0], ws[1])])


def gemm(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    a = ctx.attrs(node)
    if len(xs) != 2:
        raise Unsupported(f"input A must be 2-D, got shape {xs}")
    if a.get("transA", 0) and xs != (1, 1):
        raise Unsupported("transA=1 (a transposed activation) is not supported")
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    w, n = _gemm_weight(ctx, node, name, bool(a.get("transB", 0)), alpha, xs[1])
    b = _gemm_bias(ctx, node, name, beta, n)
    ctx.add_node(name, "Gemm", [x, w, b], node.output[:1], dict(EPILOGUE), [(xs[0], n)])


def _gemm_weight(ctx: Ctx, node: onnx.NodeProto, name: str, trans_b: bool, alpha: float,
                 k: int) -> tuple[str, int]:
    """w [N, K] = alpha · B'ᵀ; a new tensor unless B already is exactly that."""
    bname, bs = operand(ctx, node, 1)
    ws = bs if trans_b else bs[::-1]
    if len(bs) != 2 or ws[1] != k:
        raise Unsupported(f"B {bs} (transB={int(trans_b)}) does not fit K={k}")
    if not ctx.is_static(bname):
        raise Unsupported("B must be a constant")
    if trans_b and alpha == 1.0:
        return bname, ws[0]
    if trans_b:
        return ctx.derived_static(bname, f"{name}__weight", _same, _same_axis, alpha), ws[0]
    return ctx.derived_static(bname, f"{name}__weight", _transposed, _swap_axis, alpha), ws[0]


def _same(v: np.ndarray) -> np.ndarray:
    return v


def _same_axis(axis: int | None) -> int | None:
    return axis


def _transposed(v: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(v.T)


def _swap_axis(axis: int | None) -> int | None:
    return None if axis is None else 1 - axis


def _gemm_bias(ctx: Ctx, node: onnx.NodeProto, name: str, beta: float, n: int) -> str:
    """b [N] = beta · C, C broadcast along the output features only."""
    c = ctx.inp(node, 2)
    if c is None:
        return ctx.new_const(f"{name}__bias", np.zeros(n))
    cs = ctx.shape(c)
    if not (cs in ((n,), (1, n)) or (math.prod(cs) == 1 and len(cs) <= 2)):
        raise Unsupported(f"C of shape {cs} is not broadcast along the {n} output features")
    if not ctx.is_static(c):
        raise Unsupported("C must be a constant")
    if cs == (n,) and beta == 1.0:
        return c

    def to_features(v: np.ndarray) -> np.ndarray:
        return np.broadcast_to(v.reshape(-1), (n,)).copy()

    return ctx.derived_static(c, f"{name}__bias", to_features, _feature_axis, beta)


def _feature_axis(axis: int | None) -> int | None:
    return None if axis is None else 0


# ---- padding -------------------------------------------------------------------------------------
def _pad_values(ctx: Ctx, node: onnx.NodeProto, rank: int) -> tuple[list[int], float]:
    """All-axes ONNX pads [begin..., end...] and the constant value, from attributes or inputs."""
    a = ctx.attrs(node)
    if a.get("mode", "constant") != "constant":
        raise Unsupported(f"mode {a.get('mode')} (only constant padding)")
    if ctx.opset < 11:
        return [int(p) for p in a.get("pads", ())], float(a.get("value", 0.0))
    pads = [int(p) for p in ctx.need_const(ctx.inp(node, 1), "pads").reshape(-1)]
    value_name = ctx.inp(node, 2)
    value = 0.0 if value_name is None else scalar(ctx.need_const(value_name, "constant_value"), "value")
    axes_name = ctx.inp(node, 3)
    if axes_name is None:
        return pads, value
    axes = [norm_axis(int(v), rank) for v in ctx.need_const(axes_name, "axes").reshape(-1)]
    full = [0] * (2 * rank)
    for j, ax in enumerate(axes):
        full[ax], full[ax + rank] = pads[j], pads[j + len(axes)]
    return full, value


def pad(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    if len(xs) != 4:
        raise Unsupported("only rank-4 inputs are supported")
    full, value = _pad_values(ctx, node, 4)
    if len(full) != 8:
        raise Unsupported(f"pads must have 8 values, got {len(full)}")
    if any(full[i] for i in (0, 1, 4, 5)):
        raise Unsupported("only H and W may be padded")
    if min(full) < 0:
        raise Unsupported("negative pads (cropping)")
    pads = (full[2], full[3], full[6], full[7])
    out = (xs[0], xs[1], xs[2] + pads[0] + pads[2], xs[3] + pads[1] + pads[3])
    ctx.add_node(name, "Pad", [x], node.output[:1], {"pads": pads, "value": value}, [out])


"""Per-op translators of the ONNX front-end (see from_onnx.py and docs/ir.md).

Each translator reads one ONNX node through a `Ctx` (the translation state), computes its output
shapes, and emits IR nodes with `ctx.add_node`. It raises `Unsupported(reason)` for anything the IR
cannot express; the driver collects those for every node before reporting.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
import onnx

from hlsgen.ir.types import IntType, QType

INF = math.inf
EPILOGUE: dict[str, Any] = {"act": "none", "clip_min": -INF, "clip_max": INF, "alpha": 0.0}
QONNX_DOMAINS = ("qonnx.custom_op.general", "finn.custom_op.general", "onnx.brevitas")
_T = onnx.TensorProto
ZP_TYPES: dict[int, IntType] = {
    _T.INT8: IntType(8, True), _T.UINT8: IntType(8, False), _T.INT16: IntType(16, True),
    _T.UINT16: IntType(16, False), _T.INT4: IntType(4, True), _T.UINT4: IntType(4, False),
    _T.INT32: IntType(32, True),
}


class Unsupported(Exception):
    """The node cannot be mapped to the IR; the message is the reason."""


class Poisoned(Exception):
    """An input's shape is unknown because its producer was reported unsupported."""


class Ctx(Protocol):
    opset: int

    def inp(self, node: onnx.NodeProto, i: int) -> str | None: ...
    def shape(self, name: str) -> tuple[int, ...]: ...
    def inferred_shape(self, name: str) -> tuple[int | None, ...] | None: ...
    def const(self, name: str | None) -> np.ndarray | None: ...
    def shape_value(self, name: str) -> np.ndarray | None: ...
    def need_const(self, name: str | None, what: str) -> np.ndarray: ...
    def is_static(self, name: str) -> bool: ...
    def elem_type(self, name: str) -> int | None: ...
    def attrs(self, node: onnx.NodeProto) -> dict[str, Any]: ...
    def fresh(self, base: str) -> str: ...
    def new_const(self, base: str, value: np.ndarray) -> str: ...
    def derived_static(self, name: str, base: str, fn: Callable[[np.ndarray], np.ndarray],
                       axis_map: Callable[[int | None], int | None], factor: float) -> str: ...
    def add_node(self, name: str, op: str, inputs: Sequence[str], outputs: Sequence[str],
                 attrs: dict[str, Any], shapes: Sequence[tuple[int, ...]]) -> None: ...
    def set_qtype(self, name: str, qtype: QType, elem: int | None = None) -> None: ...


Translator = Callable[[Ctx, onnx.NodeProto, str], None]
TRANSLATORS: dict[tuple[str, str], Translator] = {}


def _op(*ops: str, domains: Sequence[str] = ("",)) -> Callable[[Translator], Translator]:
    def register(fn: Translator) -> Translator:
        for d in domains:
            for op in ops:
                TRANSLATORS[(d, op)] = fn
        return fn
    return register


def unsupported_reason(domain: str, op: str) -> str:
    if domain in QONNX_DOMAINS:
        return f"QONNX op {op} is not supported (only Quant)"
    if domain not in ("", "ai.onnx"):
        return f"custom op {domain}.{op} is not supported"
    return f"op {op} is not supported"


# ---- small helpers ------------------------------------------------------------------------------
def _x(ctx: Ctx, node: onnx.NodeProto, i: int = 0) -> tuple[str, tuple[int, ...]]:
    name = ctx.inp(node, i)
    if name is None:
        raise Unsupported(f"input {i} is missing")
    return name, ctx.shape(name)


def _single_output(node: onnx.NodeProto, what: str) -> str:
    if any(o for o in node.output[1:]):
        raise Unsupported(f"the {what} output is not supported")
    return node.output[0]


def _norm_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _scalar(value: np.ndarray, what: str) -> float:
    if value.size != 1:
        raise Unsupported(f"{what} must be a scalar")
    return float(value.reshape(()))


def _ints(values: Any, n: int, what: str) -> tuple[int, ...]:
    out = tuple(int(v) for v in values)
    if len(out) != n:
        raise Unsupported(f"{what} must have {n} values, got {len(out)}")
    return out


# ---- elementwise ----------------------------------------------------------------------------------
@_op("Relu", "Sigmoid", "Tanh")
def _unary(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    ctx.add_node(name, node.op_type, [x], node.output[:1], {}, [xs])


@_op("LeakyRelu")
def _leaky(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    alpha = float(ctx.attrs(node).get("alpha", float(np.float32(0.01))))
    ctx.add_node(name, "LeakyRelu", [x], node.output[:1], {"alpha": alpha}, [xs])


def _clip_bound(ctx: Ctx, node: onnx.NodeProto, i: int, absent: float, what: str) -> float:
    name = ctx.inp(node, i)
    if name is None:
        return absent
    return _scalar(ctx.need_const(name, f"Clip {what}"), f"Clip {what}")


@_op("Clip")
def _clip(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    if ctx.opset < 11:
        a = ctx.attrs(node)
        lo, hi = float(a.get("min", -INF)), float(a.get("max", INF))
    else:
        lo, hi = _clip_bound(ctx, node, 1, -INF, "min"), _clip_bound(ctx, node, 2, INF, "max")
    ctx.add_node(name, "Clip", [x], node.output[:1], {"min": lo, "max": hi}, [xs])


@_op("Add", "Sub", "Mul", "Div")
def _binary(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    (a, sa), (b, sb) = _x(ctx, node, 0), _x(ctx, node, 1)
    try:
        out = tuple(np.broadcast_shapes(sa, sb))
    except ValueError as e:
        raise Unsupported(f"operand shapes {sa} and {sb} do not broadcast") from e
    ctx.add_node(name, node.op_type, [a, b], node.output[:1], {}, [out])


@_op("Softmax", "LogSoftmax")
def _softmax(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    axis = _norm_axis(int(ctx.attrs(node).get("axis", 1 if ctx.opset < 13 else -1)), len(xs))
    if ctx.opset < 13 and any(d != 1 for d in xs[axis + 1:]):
        raise Unsupported(f"opset {ctx.opset} {node.op_type} flattens dims {axis}.. of {xs} into one")
    ctx.add_node(name, node.op_type, [x], node.output[:1], {"axis": axis}, [xs])


@_op("BatchNormalization")
def _batchnorm(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    a = ctx.attrs(node)
    if a.get("training_mode", 0):
        raise Unsupported("training_mode=1")
    out = _single_output(node, "training statistics")
    if len(xs) < 2:
        raise Unsupported(f"input rank {len(xs)} has no channel axis")
    params = []
    for i, what in enumerate(("scale", "B", "mean", "var"), start=1):
        pname, ps = _x(ctx, node, i)
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
        p = _ints(a.get("pads", (0, 0, 0, 0)), 4, "pads")
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
    strides = _ints(a.get("strides", (1, 1)), 2, "strides")
    dil = _ints(a.get("dilations", (1, 1)), 2, "dilations")
    if min(strides) <= 0 or min(dil) <= 0:
        raise Unsupported("strides and dilations must be positive")
    pads, out = window(a, in_hw, kernel, strides, dil)
    return {"strides": strides, "dilations": dil, "pads": pads, "out": out}


@_op("Conv")
def _conv(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    (x, xs), (w, ws) = _x(ctx, node, 0), _x(ctx, node, 1)
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
    x, xs = _x(ctx, node)
    if len(xs) != 4:
        raise Unsupported("only 2-D pooling (rank-4 input) is supported")
    a = ctx.attrs(node)
    if "kernel_shape" not in a:
        raise Unsupported("kernel_shape is missing")
    kernel = _ints(a["kernel_shape"], 2, "kernel_shape")
    win = _window_attrs(a, kernel, xs[2:])
    if a.get("ceil_mode", 0):
        eff = [(k - 1) * d + 1 for k, d in zip(kernel, win["dilations"], strict=True)]
        pads, strides = win["pads"], win["strides"]
        if any((xs[2 + j] + pads[j] + pads[j + 2] - eff[j]) % strides[j] for j in range(2)):
            raise Unsupported("ceil_mode=1 changes the output size")
    return x, xs, {**win, "kernel": kernel}


@_op("MaxPool")
def _maxpool(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs, w = _pool_input(ctx, node)
    if ctx.attrs(node).get("storage_order", 0):
        raise Unsupported("storage_order=1")
    out = _single_output(node, "Indices")
    attrs = {k: w[k] for k in ("kernel", "strides", "pads", "dilations")}
    ctx.add_node(name, "MaxPool", [x], [out], attrs, [(*xs[:2], *w["out"])])


@_op("AveragePool")
def _avgpool(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs, w = _pool_input(ctx, node)
    if w["dilations"] != (1, 1):
        raise Unsupported("dilated AveragePool")
    attrs = {k: w[k] for k in ("kernel", "strides", "pads")}
    attrs["count_include_pad"] = int(ctx.attrs(node).get("count_include_pad", 0))
    ctx.add_node(name, "AveragePool", [x], node.output[:1], attrs, [(*xs[:2], *w["out"])])


@_op("GlobalAveragePool")
def _gap(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    if len(xs) != 4:
        raise Unsupported("only rank-4 inputs are supported")
    ctx.add_node(name, "GlobalAveragePool", [x], node.output[:1], {}, [(xs[0], xs[1], 1, 1)])


# ---- dense ---------------------------------------------------------------------------------------
@_op("MatMul")
def _matmul(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    (x, xs), (w, ws) = _x(ctx, node, 0), _x(ctx, node, 1)
    if len(xs) != 2:
        raise Unsupported(f"the activation input must be 2-D, got shape {xs}")
    if not ctx.is_static(w) or len(ws) != 2 or ws[0] != xs[1]:
        raise Unsupported(f"the right operand must be a constant [{xs[1]}, N], got {ws}")
    ctx.add_node(name, "MatMul", [x, w], node.output[:1], {}, [(xs[0], ws[1])])


@_op("Gemm")
def _gemm(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
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
    bname, bs = _x(ctx, node, 1)
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


# ---- layout: Pad, Reshape family, Transpose -------------------------------------------------------
def _pad_values(ctx: Ctx, node: onnx.NodeProto, rank: int) -> tuple[list[int], float]:
    """All-axes ONNX pads [begin..., end...] and the constant value, from attributes or inputs."""
    a = ctx.attrs(node)
    if a.get("mode", "constant") != "constant":
        raise Unsupported(f"mode {a.get('mode')} (only constant padding)")
    if ctx.opset < 11:
        return [int(p) for p in a.get("pads", ())], float(a.get("value", 0.0))
    pads = [int(p) for p in ctx.need_const(ctx.inp(node, 1), "pads").reshape(-1)]
    value_name = ctx.inp(node, 2)
    value = 0.0 if value_name is None else _scalar(ctx.need_const(value_name, "constant_value"), "value")
    axes_name = ctx.inp(node, 3)
    if axes_name is None:
        return pads, value
    axes = [_norm_axis(int(v), rank) for v in ctx.need_const(axes_name, "axes").reshape(-1)]
    full = [0] * (2 * rank)
    for j, ax in enumerate(axes):
        full[ax], full[ax + rank] = pads[j], pads[j + len(axes)]
    return full, value


@_op("Pad")
def _pad(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
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


def _emit_reshape(ctx: Ctx, node: onnx.NodeProto, name: str, x: str, xs: tuple[int, ...],
                  out: Sequence[int]) -> None:
    out = tuple(int(d) for d in out)
    if not out or out[0] != xs[0]:
        raise Unsupported(f"{xs} -> {out} does not keep dim 0 as the batch")
    if math.prod(out) != math.prod(xs):
        raise Unsupported(f"{xs} -> {out} changes the element count")
    ctx.add_node(name, "Reshape", [x], node.output[:1], {"shape": out[1:]}, [out])


@_op("Flatten")
def _flatten(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    axis = int(ctx.attrs(node).get("axis", 1))
    axis = axis + len(xs) if axis < 0 else axis
    if not 1 <= axis <= len(xs):
        raise Unsupported(f"Flatten axis {axis} merges the batch dimension")
    _emit_reshape(ctx, node, name, x, xs, (math.prod(xs[:axis]), math.prod(xs[axis:])))


def _reshape_target(xs: tuple[int, ...], target: np.ndarray, allowzero: bool) -> list[int]:
    dims = [int(v) for v in target.reshape(-1)]
    for i, d in enumerate(dims):
        if d == 0 and (allowzero or i >= len(xs)):
            raise Unsupported("a zero-sized target dimension")
        if d == 0:
            dims[i] = xs[i]
    if dims.count(-1) > 1 or min(dims, default=0) < -1:
        raise Unsupported(f"invalid target shape {dims}")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or math.prod(xs) % known:
            raise Unsupported(f"target shape {dims} does not fit {xs}")
        dims[dims.index(-1)] = math.prod(xs) // known
    return dims


@_op("Reshape")
def _reshape(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    shape_input = ctx.inp(node, 1)
    target = None if shape_input is None else ctx.shape_value(shape_input)
    if target is not None:
        out = _reshape_target(xs, target, bool(ctx.attrs(node).get("allowzero", 0)))
    else:
        inferred = ctx.inferred_shape(node.output[0])
        if inferred is None or any(d is None for d in inferred):
            raise Unsupported("the target shape is computed at run time and could not be inferred")
        out = [int(d) for d in inferred if d is not None]
    _emit_reshape(ctx, node, name, x, xs, out)


def _axes(ctx: Ctx, node: onnx.NodeProto, rank: int) -> list[int] | None:
    """Squeeze/Unsqueeze axes (attribute before opset 13, input since) normalised against `rank`
    (the input rank for Squeeze, the output rank for Unsqueeze); None if absent."""
    if ctx.opset < 13:
        raw = ctx.attrs(node).get("axes")
    else:
        name = ctx.inp(node, 1)
        raw = None if name is None else ctx.need_const(name, "axes").reshape(-1)
    if raw is None:
        return None
    axes = sorted(_norm_axis(int(v), rank) for v in raw)
    if len(set(axes)) != len(axes):
        raise Unsupported(f"repeated axes {axes}")
    return axes


@_op("Squeeze")
def _squeeze(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """Without axes, every size-1 dimension except the batch (dim 0) is removed."""
    x, xs = _x(ctx, node)
    axes = _axes(ctx, node, len(xs))
    if axes is None:
        axes = [i for i, d in enumerate(xs) if d == 1 and i > 0]
    if 0 in axes:
        raise Unsupported("Squeeze removes the batch dimension")
    if any(xs[i] != 1 for i in axes):
        raise Unsupported(f"cannot squeeze axes {axes} of shape {xs}")
    _emit_reshape(ctx, node, name, x, xs, [d for i, d in enumerate(xs) if i not in axes])


def _unsqueeze_rank(ctx: Ctx, node: onnx.NodeProto, rank: int) -> int:
    if ctx.opset < 13:
        return rank + len(ctx.attrs(node).get("axes", ()))
    return rank + ctx.need_const(ctx.inp(node, 1), "axes").size


@_op("Unsqueeze")
def _unsqueeze(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    n_out = _unsqueeze_rank(ctx, node, len(xs))
    axes = _axes(ctx, node, n_out)
    if not axes:
        raise Unsupported("axes are missing")
    if 0 in axes:
        raise Unsupported("Unsqueeze at axis 0 moves the batch dimension")
    rest = iter(xs)
    out = [1 if i in axes else next(rest) for i in range(n_out)]
    _emit_reshape(ctx, node, name, x, xs, out)


@_op("Transpose")
def _transpose(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    perm = tuple(int(p) for p in ctx.attrs(node).get("perm", range(len(xs) - 1, -1, -1)))
    if sorted(perm) != list(range(len(xs))):
        raise Unsupported(f"perm {perm} is not a permutation of rank {len(xs)}")
    if perm[0] != 0:
        raise Unsupported(f"perm {perm} moves the batch dimension")
    out = tuple(xs[p] for p in perm)
    ctx.add_node(name, "Transpose", [x], node.output[:1], {"perm": perm}, [out])


# ---- quantization --------------------------------------------------------------------------------
def _qtype(itype: IntType, scale: np.ndarray, zp: np.ndarray, axis: int | None) -> QType:
    try:
        if axis is None:
            return QType(itype, scale.reshape(()), zp.reshape(()))
        return QType(itype, scale.reshape(-1), zp.reshape(-1), axis)
    except ValueError as e:
        raise Unsupported(str(e)) from e


def _linear_qtype(ctx: Ctx, node: onnx.NodeProto, xs: tuple[int, ...], default_elem: int | None) -> QType:
    """QType of a QuantizeLinear/DequantizeLinear: constant scale and zero point, per tensor or axis."""
    a = ctx.attrs(node)
    if a.get("block_size", 0):
        raise Unsupported("blocked quantization (block_size)")
    scale = ctx.need_const(ctx.inp(node, 1), "scale").astype(np.float64)
    zp_name = ctx.inp(node, 2)
    zp = np.zeros((), np.int64) if zp_name is None else ctx.need_const(zp_name, "zero point")
    elem = default_elem if zp_name is None else ctx.elem_type(zp_name)
    if elem not in ZP_TYPES:
        raise Unsupported(f"quantized type {onnx.helper.tensor_dtype_to_string(elem or 0)}")
    if scale.size == 1 and zp.size == 1:
        return _qtype(ZP_TYPES[elem], scale, zp, None)
    axis = _norm_axis(int(a.get("axis", 1)), len(xs))
    if scale.ndim != 1 or scale.size != xs[axis] or zp.size not in (1, scale.size):
        raise Unsupported(f"scale of shape {scale.shape} does not fit axis {axis} of {xs}")
    return _qtype(ZP_TYPES[elem], scale, np.broadcast_to(zp.reshape(-1), scale.shape), axis)


@_op("QuantizeLinear")
def _quantize(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    default = int(ctx.attrs(node).get("output_dtype", 0)) or _T.UINT8
    zp_name = ctx.inp(node, 2)
    qt = _linear_qtype(ctx, node, xs, default)
    elem = default if zp_name is None else ctx.elem_type(zp_name)
    ctx.add_node(name, "QuantizeLinear", [x], node.output[:1], {}, [xs])
    ctx.set_qtype(node.output[0], qt, elem)


@_op("DequantizeLinear")
def _dequantize(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = _x(ctx, node)
    qt = _linear_qtype(ctx, node, xs, ctx.elem_type(x))
    ctx.set_qtype(x, qt)
    ctx.add_node(name, "DequantizeLinear", [x], node.output[:1], {}, [xs])


def _qonnx_axis(shape: tuple[int, ...], xs: tuple[int, ...]) -> int | None:
    """Per-tensor (None) or the one axis of x along which the scale/zero point vary."""
    if len(shape) > len(xs):
        raise Unsupported(f"scale rank {len(shape)} exceeds input rank {len(xs)}")
    varying = [i for i, d in enumerate(shape) if d != 1]
    if not varying:
        return None
    axis = len(xs) - len(shape) + varying[0]
    if len(varying) > 1 or shape[varying[0]] != xs[axis]:
        raise Unsupported(f"scale/zero point of shape {shape} is not per tensor or per channel of {xs}")
    return axis


def _qonnx_int(ctx: Ctx, node: onnx.NodeProto) -> IntType:
    a = ctx.attrs(node)
    mode = str(a.get("rounding_mode", "ROUND")).upper()
    if mode != "ROUND":
        raise Unsupported(f"rounding_mode {mode} (only ROUND, half to even)")
    bits = _scalar(ctx.need_const(ctx.inp(node, 3), "bitwidth"), "bitwidth")
    if bits != int(bits) or not 2 <= bits <= 16:
        raise Unsupported(f"bit width {bits:g} (must be an integer in 2..16)")
    return IntType(int(bits), bool(a.get("signed", 1)), bool(a.get("narrow", 0)))


@_op("Quant", domains=("", *QONNX_DOMAINS))
def _qonnx_quant(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """QONNX Quant -> QuantizeLinear (to `<out>__q`) -> DequantizeLinear."""
    x, xs = _x(ctx, node)
    itype = _qonnx_int(ctx, node)
    scale = ctx.need_const(ctx.inp(node, 1), "scale").astype(np.float64)
    zp = ctx.need_const(ctx.inp(node, 2), "zero point").astype(np.float64)
    if np.any(zp != np.round(zp)):
        raise Unsupported("the zero point is not integer-valued")
    try:
        shape = tuple(np.broadcast_shapes(scale.shape, zp.shape))
    except ValueError as e:
        raise Unsupported("scale and zero point shapes do not broadcast") from e
    axis = _qonnx_axis(shape, xs)
    scales = np.broadcast_to(scale, shape).reshape(-1)
    zps = np.broadcast_to(zp, shape).reshape(-1).astype(np.int64)
    if axis is None:
        scales, zps = scales[:1], zps[:1]
    qt = _qtype(itype, scales, zps, axis)
    out = node.output[0]
    mid = ctx.fresh(f"{out}__q")
    ctx.add_node(name, "QuantizeLinear", [x], [mid], {}, [xs])
    ctx.set_qtype(mid, qt)
    ctx.add_node(f"{name}__dq", "DequantizeLinear", [mid], [out], {}, [xs])

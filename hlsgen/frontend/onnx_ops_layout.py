"""Layout ONNX translators: Reshape, Flatten, Squeeze, Unsqueeze, Transpose; and computed shapes.

Reshape, Flatten, Squeeze and Unsqueeze all become an IR Reshape that must keep dim 0 as the batch.
A Reshape whose target shape is computed in the graph (Shape -> Gather -> Concat, as exporters write
`x.view(n, -1)`) gets it from `Ctx.shape_value`, which evaluates that subgraph on the static shapes
with the `SHAPE_FOLDS` below (else from ONNX shape inference). Translators are registered by op type
in onnx_ops.TRANSLATORS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from hlsgen.frontend.onnx_ops_common import Ctx, Unsupported, axes_of, operand


# ---- the Reshape family and Transpose -------------------------------------------------------------
def _emit_reshape(ctx: Ctx, node: onnx.NodeProto, name: str, x: str, xs: tuple[int, ...],
                  out: Sequence[int]) -> None:
    out = tuple(int(d) for d in out)
    if not out or out[0] != xs[0]:
        raise Unsupported(f"{xs} -> {out} does not keep dim 0 as the batch")
    if math.prod(out) != math.prod(xs):
        raise Unsupported(f"{xs} -> {out} changes the element count")
    ctx.add_node(name, "Reshape", [x], node.output[:1], {"shape": out[1:]}, [out])


def flatten(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    axis = int(ctx.attrs(node).get("axis", 1))
    axis = axis + len(xs) if axis < 0 else axis
    if axis == 0 and xs[0] == 1:  # [1, prod]: at batch 1 the same as axis 1 (OnnxMLTools' Keras Flatten)
        axis = 1
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


def reshape(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    shape_input = ctx.inp(node, 1)
    target = None if shape_input is None else ctx.shape_value(shape_input)
    if target is not None:
        out = _reshape_target(xs, target, bool(ctx.attrs(node).get("allowzero", 0)))
    else:
        inferred = ctx.inferred_shape(node.output[0])
        if inferred is None or any(d is None for d in inferred):
            raise Unsupported("the target shape is computed at run time and could not be inferred")
        out = [int(d) for d in inferred if d is not None]
    if ctx.is_static(x):  # a quantized weight reshaped before use (constants were folded at load)
        _static_reshape(ctx, node, name, x, xs, tuple(out))
        return
    _emit_reshape(ctx, node, name, x, xs, out)


def _static_reshape(ctx: Ctx, node: onnx.NodeProto, name: str, x: str, xs: tuple[int, ...],
                    out: tuple[int, ...]) -> None:
    """Reshape of a Quant/Dequantize of a constant: per-tensor, or per channel of a kept leading axis."""
    def axis_map(ax: int | None) -> int | None:
        if ax is None or (ax == 0 and out[:1] == xs[:1]):
            return ax
        raise Unsupported(f"reshape {xs} -> {out} of a weight quantized along axis {ax}")

    ctx.alias(node.output[0], ctx.derived_static(x, f"{name}__value", lambda a: a.reshape(out), axis_map, 1.0))


def squeeze(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """Without axes, every size-1 dimension except the batch (dim 0) is removed."""
    x, xs = operand(ctx, node)
    axes = axes_of(ctx, node, len(xs), input_since=13)
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


def unsqueeze(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    n_out = _unsqueeze_rank(ctx, node, len(xs))
    axes = axes_of(ctx, node, n_out, input_since=13)
    if not axes:
        raise Unsupported("axes are missing")
    if 0 in axes:
        raise Unsupported("Unsqueeze at axis 0 moves the batch dimension")
    rest = iter(xs)
    out = [1 if i in axes else next(rest) for i in range(n_out)]
    _emit_reshape(ctx, node, name, x, xs, out)


def transpose(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    perm = tuple(int(p) for p in ctx.attrs(node).get("perm", range(len(xs) - 1, -1, -1)))
    if sorted(perm) != list(range(len(xs))):
        raise Unsupported(f"perm {perm} is not a permutation of rank {len(xs)}")
    if ctx.is_static(x):  # a weight stored transposed (Brevitas: Quant(W) -> Transpose -> MatMul): folded
        out_name = ctx.derived_static(x, f"{name}__value", lambda a: np.transpose(a, perm),
                                      lambda ax: None if ax is None else perm.index(ax), 1.0)
        ctx.alias(node.output[0], out_name)
        return
    if perm[0] != 0:
        raise Unsupported(f"perm {perm} moves the batch dimension")
    out = tuple(xs[p] for p in perm)
    ctx.add_node(name, "Transpose", [x], node.output[:1], {"perm": perm}, [out])


def depth_to_space(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """DepthToSpace (DCR or CRD): a pure rearrangement, run on the host at the tail (ESPCN's
    sub-pixel output)."""
    x, xs = operand(ctx, node)
    a = ctx.attrs(node)
    block, mode = int(a.get("blocksize", 0)), str(a.get("mode", "DCR")).upper()
    if len(xs) != 4 or block < 1 or xs[1] % (block * block) or mode not in ("DCR", "CRD"):
        raise Unsupported(f"DepthToSpace blocksize {block} mode {mode} on {xs}")
    out = (xs[0], xs[1] // (block * block), xs[2] * block, xs[3] * block)
    ctx.add_node(name, "DepthToSpace", [x], node.output[:1], {"blocksize": block, "mode": mode}, [out])


# ---- computed shapes: constant folding of shape subgraphs ---------------------------------------
def _axes_arg(args: list[Any], a: dict[str, Any]) -> tuple[int, ...] | None:
    axes = a.get("axes") if len(args) < 2 or args[1] is None else args[1]
    return None if axes is None else tuple(int(v) for v in np.reshape(axes, -1))


def _unsqueeze_value(x: np.ndarray, axes: tuple[int, ...] | None) -> np.ndarray:
    for ax in sorted(a + x.ndim + len(axes or ()) if a < 0 else a for a in axes or ()):
        x = np.expand_dims(x, ax)
    return x


def _slice_value(args: list[Any], a: dict[str, Any]) -> np.ndarray:
    x = args[0]
    if len(args) > 1:  # opset >= 10: starts, ends, axes, steps inputs
        starts, ends = args[1], args[2]
        axes = args[3] if len(args) > 3 and args[3] is not None else range(len(starts))
        steps = args[4] if len(args) > 4 and args[4] is not None else [1] * len(starts)
    else:
        starts, ends = a["starts"], a["ends"]
        axes, steps = a.get("axes", range(len(starts))), [1] * len(starts)
    index = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps, strict=True):
        index[int(ax)] = slice(int(s), int(e), int(st))
    return np.asarray(x[tuple(index)])


# op type -> fn(argument values, attributes) -> value; Shape itself is read by Ctx.shape_value
SHAPE_FOLDS: dict[str, Any] = {
    "Shape": None,
    "Gather": lambda args, a: np.take(args[0], args[1], axis=a.get("axis", 0)),
    "Unsqueeze": lambda args, a: _unsqueeze_value(args[0], _axes_arg(args, a)),
    "Squeeze": lambda args, a: np.squeeze(args[0], axis=_axes_arg(args, a)),
    "Concat": lambda args, a: np.concatenate([np.reshape(v, -1) for v in args], axis=0),
    "Cast": lambda args, a: args[0],
    "Identity": lambda args, a: args[0],
    "Slice": _slice_value,
}

"""Elementwise ONNX translators: Add/Sub/Mul/Div, Relu/Sigmoid/Tanh, LeakyRelu, Clip, Softmax/LogSoftmax.

All keep the input shape except the binary ops, whose output is the numpy broadcast of both
operand shapes. Registered by op type in onnx_ops.TRANSLATORS.
"""

from __future__ import annotations

import numpy as np
import onnx

from hlsgen.frontend.onnx_ops_common import INF, Ctx, Unsupported, norm_axis, operand, scalar

# ---- elementwise ----------------------------------------------------------------------------------
UNARY_ATTRS = {"Elu": ("alpha",), "Selu": ("alpha", "gamma"), "HardSigmoid": ("alpha", "beta"),
               "Gelu": ("approximate",)}


def unary(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """Relu and the elementwise math functions (Sigmoid, Tanh, Elu, ..., hlsgen.golden.unary);
    their ONNX attributes keep their names, absent ones take the schema's ONNX defaults."""
    x, xs = operand(ctx, node)
    a = ctx.attrs(node)
    attrs = {k: a[k] for k in UNARY_ATTRS.get(node.op_type, ()) if k in a}
    ctx.add_node(name, node.op_type, [x], node.output[:1], attrs, [xs])


def leaky_relu(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    alpha = float(ctx.attrs(node).get("alpha", float(np.float32(0.01))))
    ctx.add_node(name, "LeakyRelu", [x], node.output[:1], {"alpha": alpha}, [xs])


def _clip_bound(ctx: Ctx, node: onnx.NodeProto, i: int, absent: float, what: str) -> float:
    name = ctx.inp(node, i)
    if name is None:
        return absent
    return scalar(ctx.need_const(name, f"Clip {what}"), f"Clip {what}")


def clip(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    if ctx.opset < 11:
        a = ctx.attrs(node)
        lo, hi = float(a.get("min", -INF)), float(a.get("max", INF))
    else:
        lo, hi = _clip_bound(ctx, node, 1, -INF, "min"), _clip_bound(ctx, node, 2, INF, "max")
    ctx.add_node(name, "Clip", [x], node.output[:1], {"min": lo, "max": hi}, [xs])


def binary(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    (a, sa), (b, sb) = operand(ctx, node, 0), operand(ctx, node, 1)
    try:
        out = tuple(np.broadcast_shapes(sa, sb))
    except ValueError as e:
        raise Unsupported(f"operand shapes {sa} and {sb} do not broadcast") from e
    ctx.add_node(name, node.op_type, [a, b], node.output[:1], {}, [out])


def softmax(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    axis = norm_axis(int(ctx.attrs(node).get("axis", 1 if ctx.opset < 13 else -1)), len(xs))
    if ctx.opset < 13 and any(d != 1 for d in xs[axis + 1:]):
        raise Unsupported(f"opset {ctx.opset} {node.op_type} flattens dims {axis}.. of {xs} into one")
    ctx.add_node(name, node.op_type, [x], node.output[:1], {"axis": axis}, [xs])


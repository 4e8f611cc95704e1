"""Channel-range ONNX translators: Concat, Slice and Split along the channel axis of activations.

Concat joins 2+ activations of the same shape but for their channels (axis 1 of NCHW, or -3; axis 1
of a flat [N, K] tensor) into an IR Concat. Slice (constant starts/ends, step 1) and Split (sizes as
input 1 from opset 13, the `split` attribute before, `num_outputs` from opset 18, or equal parts)
along the same axis become one IR Slice per output: channels [start, end) of the input. Anything
else (another axis, steps other than 1, computed bounds, a constant operand) is refused naming the
node. Concat and Slice of constant shape tensors (Shape -> Gather -> Concat before a Reshape) never
reach here: onnx_ops_layout.SHAPE_FOLDS evaluates them. Registered in onnx_ops.TRANSLATORS.
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from hlsgen.frontend.onnx_ops_common import Ctx, Unsupported, norm_axis, operand

CHANNEL_AXIS = 1


def channel_axis(axis: int, shape: tuple[int, ...], op: str) -> int:
    """`axis` normalised against `shape`; Unsupported unless it is the channel axis of an NCHW or
    [N, K] activation."""
    ax = norm_axis(axis, len(shape))
    if ax != CHANNEL_AXIS or len(shape) not in (2, 4):
        raise Unsupported(f"{op} along axis {axis} of shape {list(shape)}: only the channel axis (1 of NCHW "
                          "or of [N, K]) is supported")
    return ax


def _activation(ctx: Ctx, name: str, op: str) -> None:
    if ctx.is_static(name):
        raise Unsupported(f"{op} of the constant {name}: only activations are supported")


def concat(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    ins = [operand(ctx, node, i) for i in range(len(node.input))]
    if len(ins) < 2:
        raise Unsupported("a Concat of fewer than two inputs")
    for x, _ in ins:
        _activation(ctx, x, "Concat")
    xs = ins[0][1]
    axis = channel_axis(int(ctx.attrs(node).get("axis", CHANNEL_AXIS)), xs, "Concat")
    for x, s in ins[1:]:
        if len(s) != len(xs) or s[:axis] + s[axis + 1:] != xs[:axis] + xs[axis + 1:]:
            raise Unsupported(f"input {x} of shape {list(s)} does not match {list(xs)} but for the channels")
    out = (*xs[:axis], sum(s[axis] for _, s in ins), *xs[axis + 1:])
    ctx.add_node(name, "Concat", [x for x, _ in ins], node.output[:1], {"axis": axis}, [out])


def _emit_slice(ctx: Ctx, name: str, x: str, xs: tuple[int, ...], out: str, start: int, end: int) -> None:
    if not 0 <= start < end <= xs[CHANNEL_AXIS]:
        raise Unsupported(f"channels [{start}, {end}) of {xs[CHANNEL_AXIS]}: an empty or out-of-range slice")
    shape = (*xs[:CHANNEL_AXIS], end - start, *xs[CHANNEL_AXIS + 1:])
    ctx.add_node(name, "Slice", [x], [out], {"axis": CHANNEL_AXIS, "start": start, "end": end}, [shape])


def _slice_args(ctx: Ctx, node: onnx.NodeProto) -> tuple[list[int], list[int], list[int], list[int]]:
    """starts, ends, axes, steps of a Slice (inputs from opset 10, attributes before)."""
    if ctx.opset < 10:
        a = ctx.attrs(node)
        starts, ends = [int(v) for v in a["starts"]], [int(v) for v in a["ends"]]
        axes, steps = [int(v) for v in a.get("axes", range(len(starts)))], [1] * len(starts)
    else:
        starts = [int(v) for v in ctx.need_const(ctx.inp(node, 1), "starts").reshape(-1)]
        ends = [int(v) for v in ctx.need_const(ctx.inp(node, 2), "ends").reshape(-1)]
        axes_in, steps_in = ctx.inp(node, 3), ctx.inp(node, 4)
        axes = list(range(len(starts))) if axes_in is None else [int(v) for v in ctx.need_const(axes_in, "axes")]
        steps = [1] * len(starts) if steps_in is None else [int(v) for v in ctx.need_const(steps_in, "steps")]
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise Unsupported(f"starts, ends, axes and steps of different lengths ({starts}, {ends}, {axes}, {steps})")
    return starts, ends, axes, steps


def slice_(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """A Slice whose only non-trivial axis is the channels, step 1."""
    x, xs = operand(ctx, node)
    _activation(ctx, x, "Slice")
    channel_axis(CHANNEL_AXIS, xs, "Slice")
    start, end = 0, xs[CHANNEL_AXIS]
    for s, e, ax, st in zip(*_slice_args(ctx, node), strict=True):
        if st != 1:
            raise Unsupported(f"Slice with step {st}: only step 1 is supported")
        ax = norm_axis(ax, len(xs))
        lo, hi, _ = slice(s, e, 1).indices(xs[ax])
        if ax == CHANNEL_AXIS:
            start, end = lo, hi
        elif (lo, hi) != (0, xs[ax]):
            raise Unsupported(f"Slice along axis {ax} of shape {list(xs)}: only the channel axis (1) is supported")
    _emit_slice(ctx, name, x, xs, node.output[0], start, end)


def _split_sizes(ctx: Ctx, node: onnx.NodeProto, channels: int) -> list[int]:
    """The sizes of a Split's parts: given (input 1 or the `split` attribute), or `num_outputs` (opset
    18: ceil(C/n) each, the last smaller), or equal parts, one per output."""
    a = ctx.attrs(node)
    given = ctx.inp(node, 1) if ctx.opset >= 13 else None
    if given is not None:
        return [int(v) for v in ctx.need_const(given, "split").reshape(-1)]
    if "split" in a:
        return [int(v) for v in a["split"]]
    n = int(a.get("num_outputs", len(node.output)))
    part = math.ceil(channels / n)
    sizes = [min(part, channels - i * part) for i in range(n)]
    if min(sizes) <= 0:
        raise Unsupported(f"{channels} channels do not split into {n} parts")
    return sizes


def split(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    _activation(ctx, x, "Split")
    channel_axis(int(ctx.attrs(node).get("axis", 0)), xs, "Split")
    sizes = _split_sizes(ctx, node, xs[CHANNEL_AXIS])
    if len(sizes) != len(node.output) or sum(sizes) != xs[CHANNEL_AXIS] or min(sizes) <= 0:
        raise Unsupported(f"split sizes {sizes} for {len(node.output)} outputs of {xs[CHANNEL_AXIS]} channels")
    bounds = np.cumsum([0, *sizes])
    for i, out in enumerate(node.output):
        if out:
            part = name if i == 0 else ctx.fresh(f"{name}_{i}")
            _emit_slice(ctx, part, x, xs, out, int(bounds[i]), int(bounds[i + 1]))

"""Pass fuse_epilogue: a layer absorbs the residual Add and activation that follow it.

Before:  x ─Conv─► c ─Add(skip)─► s ─Relu─► y        x ─Gemm─► g ─Clip(0, 6)─► y
         x ─Conv─► c ─Q(c)→DQ─► Add(skip) ─Q(y)→DQ─►   (the model quantizes c: c carries a qtype)
After:   x, skip ─Conv{act=relu}(x, W, b, skip)─► y  x ─Gemm{act=clip, clip_min=0, clip_max=6}─► y
         x, skip ─Conv{mid=qtype of c, post_*}(x, W, b, skip)─► y       (two-step, passes/two_step.py)
Requires: fold_bn (so a BatchNorm between Conv and Add is already inside the Conv, or in its step 2).
Math:    Where the tensor between layer and op is not quantized by the model (float models we
         calibrate): y = act(conv(x) + b + skip), one requant with two multipliers sharing a shift
         (the skip keeps its own scale) and a clamp: ReLU raises the lower clamp to the output zero
         point, Clip/ReLU6 moves both clamps, LeakyReLU uses a second multiplier for v < 0.
         Where the model quantizes it (QDQ/QONNX), the layer reproduces that quantizer as step 1 and
         the add/activation forms step 2: t = Q_c(act(conv(x) + b)), y = Q_y(post_act(t + skip))
         (note `two_step`; numerics.md §8). `quant.fuse_across_qdq: true` is the opt-in
         approximation that fuses as if c were float, dropping its rounding and clamp (note
         `fused_rounding`). Residuals fuse into a Conv only. When both Add inputs are fusable Convs,
         the one whose own input is made later (the deeper branch) takes the epilogue and the
         other is the skip, which keeps skip FIFOs short.
Refuses when: the layer output has other readers (it must stay visible), a single-step layer
         already has an activation, a two-step layer's step 2 already has one or the op would need a
         third rounding, a skip would have to join step 1, LeakyReLU after a residual add or after a
         step 2 with a bias (stays a standalone requant), `Add(c, c)`. An Add whose two inputs have
         different shapes is an error naming both nodes.
"""

from __future__ import annotations

import math

from hlsgen.errors import HlsgenError
from hlsgen.ir import Edit, Graph, Node, Note, Op
from hlsgen.ir.ops import FLOAT_LAYER_OPS, FUSABLE_ACTIVATIONS
from hlsgen.passes import two_step
from hlsgen.passes.context import PassContext
from hlsgen.passes.rewrite import dropped_rounding, rewrite_all


def fuse_epilogue(graph: Graph, ctx: PassContext) -> Graph:
    across = ctx.config.quant.fuse_across_qdq
    return rewrite_all(graph, lambda g, n: _fuse_residual(g, n, across) or _fuse_activation(g, n, across))


def _fusion_kind(graph: Graph, layer: Node, tensor: str, across_qdq: bool) -> str | None:
    """How an op reading `tensor` (made by `layer`) joins the layer: "single" (the classic one-rounding
    epilogue), "start" (the model quantizes `tensor`: it becomes step 1 of a two-step epilogue),
    "post" (joins the existing step 2), or None (it cannot fuse without losing a rounding)."""
    if graph.single_consumer(tensor) is None:
        return None
    if two_step.has_mid(layer):
        if two_step.quantized(graph, tensor) or layer.attr("post_act") != "none":
            return None  # a third rounding, or an activation before this op
        return "post"
    if two_step.quantized(graph, tensor) and not across_qdq:
        return "start" if len(layer.inputs) == 3 else None  # a skip would have to join step 1
    return "single" if layer.attr("act") == "none" else None


def _fuse_residual(graph: Graph, node: Node, across_qdq: bool) -> Edit | None:
    if node.op != Op.ADD or any(graph.is_const(i) for i in node.inputs):
        return None
    if node.inputs[0] == node.inputs[1]:  # c + c: the layer cannot be its own skip (it stays an Add)
        return None
    candidates = [(pos, c, kind) for pos in (0, 1)
                  if (c := graph.producer(node.inputs[pos])) is not None and c.op == Op.CONV and len(c.inputs) == 3
                  and (kind := _fusion_kind(graph, c, node.inputs[pos], across_qdq)) is not None]
    if not candidates:
        return None
    pos, conv, kind = max(candidates, key=lambda pck: _input_position(graph, pck[1]))
    skip = node.inputs[1 - pos]
    main_shape, skip_shape = graph.tensor(node.inputs[pos]).shape, graph.tensor(skip).shape
    if main_shape != skip_shape:
        other = graph.producer(skip)
        raise HlsgenError(f"nodes {conv.name} and {other.name if other else skip} meet at {node.name} with "
                          f"different shapes {list(main_shape)} and {list(skip_shape)}")
    attrs = two_step.start(graph, conv, node.inputs[pos]) if kind == "start" else conv.attrs
    fused = Node(conv.name, Op.CONV, conv.inputs + (skip,), node.outputs, attrs)
    return Edit(remove=(conv.name, node.name), add=(fused,), notes=_notes(graph, node.inputs[pos], conv, kind))


def _notes(graph: Graph, tensor: str, layer: Node, kind: str) -> tuple[Note, ...]:
    if kind == "start":
        return two_step.kept_rounding_note(graph, tensor, layer.name)
    return dropped_rounding(graph, tensor, layer.name) if kind == "single" else ()


def _input_position(graph: Graph, conv: Node) -> tuple[int, int]:
    """Main branch = the conv whose input is made latest (the deeper branch), so the other, short
    branch (identity or 1x1 shortcut) is the skip and its FIFO stays small."""
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    producer = graph.producer(conv.inputs[0])
    return (order[producer.name] if producer else -1, order[conv.name])


def _fuse_activation(graph: Graph, node: Node, across_qdq: bool) -> Edit | None:
    if node.op not in FUSABLE_ACTIVATIONS:
        return None
    layer = graph.producer(node.inputs[0])
    if layer is None or layer.op not in FLOAT_LAYER_OPS:
        return None
    kind = _fusion_kind(graph, layer, node.inputs[0], across_qdq)
    leaky = node.op == Op.LEAKY_RELU
    if kind is None or (leaky and kind == "single" and len(layer.inputs) > 3):
        return None
    if leaky and kind == "post" and not two_step.post_bias_free(layer):
        return None  # the sign test would have to see the bias and skip of step 2
    act = activation_attrs(node)
    if kind == "single":
        attrs = {**layer.attrs, **act}
    else:
        base = two_step.start(graph, layer, node.inputs[0]) if kind == "start" else dict(layer.attrs)
        attrs = {**base, **{f"post_{k}": v for k, v in act.items()}}
    fused = Node(layer.name, layer.op, layer.inputs, node.outputs, attrs)
    return Edit(remove=(layer.name, node.name), add=(fused,), notes=_notes(graph, node.inputs[0], layer, kind))


def activation_attrs(node: Node) -> dict[str, object]:
    """Epilogue attributes equivalent to a standalone Relu / Clip / LeakyRelu node."""
    if node.op == Op.RELU:
        return {"act": "relu", "clip_min": 0.0, "clip_max": math.inf}
    if node.op == Op.CLIP:
        return {"act": "clip", "clip_min": float(node.attr("min")),
                "clip_max": float(node.attr("max"))}
    return {"act": "leaky", "alpha": float(node.attr("alpha"))}

"""Pass fuse_epilogue: a layer absorbs the residual Add and activation that follow it.

Before:  x ─Conv─► c ─Add(skip)─► s ─Relu─► y        x ─Gemm─► g ─Clip(0, 6)─► y
After:   x, skip ─Conv{act=relu}(x, W, b, skip)─► y  x ─Gemm{act=clip, clip_min=0, clip_max=6}─► y
Requires: fold_bn (so a BatchNorm between Conv and Add is already inside the Conv).
Math:    y = act(conv(x) + b + skip). Quantized, this is one requant with two multipliers sharing a
         shift (the skip keeps its own scale) and a clamp: ReLU raises the lower clamp to the output
         zero point, Clip/ReLU6 moves both clamps, LeakyReLU uses a second multiplier for v < 0.
         `quant.fuse_across_qdq: false` keeps every rounding a QDQ model has: nothing fuses across
         a tensor with its own qtype (each layer then matches onnxruntime within 1 LSB).
         When both Add inputs are Conv outputs, the one whose own input is made later (the deeper
         branch) takes the epilogue and the other is the skip, which keeps skip FIFOs short.
Refuses when: the layer output has other readers (it must stay visible), the layer already has an
         activation, LeakyReLU after a residual add (stays a standalone requant). An Add whose two
         inputs have different shapes is an error naming both nodes.
"""

from __future__ import annotations

import math

from hlsgen.errors import HlsgenError
from hlsgen.ir import Edit, Graph, Node
from hlsgen.passes.context import PassContext
from hlsgen.passes.rewrite import dropped_rounding, rewrite_all

LAYERS = ("Conv", "Gemm")


def fuse_epilogue(graph: Graph, ctx: PassContext) -> Graph:
    across = ctx.config.quant.fuse_across_qdq
    graph = rewrite_all(graph, lambda g, n: _fuse_residual(g, n, across))
    return rewrite_all(graph, lambda g, n: _fuse_activation(g, n, across))


def _fusable_layer(graph: Graph, tensor: str, ops: tuple[str, ...], across_qdq: bool) -> Node | None:
    """The layer making `tensor` if it can take an epilogue: single reader, no activation yet, and
    (unless fusing across the model's quantization is allowed) no rounding of its own on `tensor`."""
    node = graph.producer(tensor)
    if node is None or node.op not in ops or node.attr("act") != "none":
        return None
    if not across_qdq and graph.tensor(tensor).qtype is not None:
        return None
    return node if graph.single_consumer(tensor) is not None else None


def _fuse_residual(graph: Graph, node: Node, across_qdq: bool) -> Edit | None:
    if node.op != "Add" or any(graph.is_const(i) for i in node.inputs):
        return None
    if node.inputs[0] == node.inputs[1]:  # c + c: the layer cannot be its own skip (it stays an Add)
        return None
    candidates = [(pos, c) for pos in (0, 1)
                  if (c := _fusable_layer(graph, node.inputs[pos], ("Conv",), across_qdq)) and len(c.inputs) == 3]
    if not candidates:
        return None
    pos, conv = max(candidates, key=lambda pc: _input_position(graph, pc[1]))
    skip = node.inputs[1 - pos]
    main_shape, skip_shape = graph.tensor(node.inputs[pos]).shape, graph.tensor(skip).shape
    if main_shape != skip_shape:
        other = graph.producer(skip)
        raise HlsgenError(f"nodes {conv.name} and {other.name if other else skip} meet at {node.name} with "
                          f"different shapes {list(main_shape)} and {list(skip_shape)}")
    fused = Node(conv.name, "Conv", conv.inputs + (skip,), node.outputs, conv.attrs)
    notes = dropped_rounding(graph, node.inputs[pos], conv.name)
    return Edit(remove=(conv.name, node.name), add=(fused,), notes=notes)


def _input_position(graph: Graph, conv: Node) -> tuple[int, int]:
    """Main branch = the conv whose input is made latest (the deeper branch), so the other, short
    branch (identity or 1x1 shortcut) is the skip and its FIFO stays small."""
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    producer = graph.producer(conv.inputs[0])
    return (order[producer.name] if producer else -1, order[conv.name])


def _fuse_activation(graph: Graph, node: Node, across_qdq: bool) -> Edit | None:
    if node.op not in ("Relu", "Clip", "LeakyRelu"):
        return None
    layer = _fusable_layer(graph, node.inputs[0], LAYERS, across_qdq)
    if layer is None or (node.op == "LeakyRelu" and len(layer.inputs) > 3):
        return None
    fused = Node(layer.name, layer.op, layer.inputs, node.outputs, {**layer.attrs, **activation_attrs(node)})
    notes = dropped_rounding(graph, node.inputs[0], layer.name)
    return Edit(remove=(layer.name, node.name), add=(fused,), notes=notes)


def activation_attrs(node: Node) -> dict[str, object]:
    """Epilogue attributes equivalent to a standalone Relu / Clip / LeakyRelu node."""
    if node.op == "Relu":
        return {"act": "relu", "clip_min": 0.0, "clip_max": math.inf}
    if node.op == "Clip":
        return {"act": "clip", "clip_min": float(node.attr("min", -math.inf)),
                "clip_max": float(node.attr("max", math.inf))}
    return {"act": "leaky", "alpha": float(node.attr("alpha", 0.01))}

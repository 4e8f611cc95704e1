"""Pass cleanup: remove layout no-ops and fold explicit Pad nodes into the window op after them.

Before:  x ─Pad(t,l,b,r, value 0)─► p ─Conv(pads P)─► y        x ─Reshape(same shape)─► y
After:   x ─Conv(pads P + (t,l,b,r))─► y                        x (consumers of y read x)
Requires: front-end output.
Math:    padding with real 0 then convolving equals convolving with that much more zero padding;
         the quantize pass pads with the input zero point, which is real 0. A Pad before a MaxPool
         folds when its value is -inf; before an AveragePool when value is 0 and the pool counts
         padded taps (count_include_pad=1), or the pool has no pads of its own.
Refuses when: the Pad output has other readers, or the value does not fit the window op.
"""

from __future__ import annotations

import math

from hlsgen.ir import Edit, Graph, Node, Op
from hlsgen.passes.context import PassContext
from hlsgen.passes.rewrite import rewrite_all


def cleanup(graph: Graph, ctx: PassContext) -> Graph:
    graph = rewrite_all(graph, _drop_noop_layout)
    return rewrite_all(graph, _fold_pad)


def _drop_noop_layout(graph: Graph, node: Node) -> Edit | None:
    if node.op == Op.TRANSPOSE:
        noop = tuple(node.attr("perm")) == tuple(range(len(node.attr("perm"))))
    elif node.op == Op.RESHAPE:
        noop = graph.tensor(node.inputs[0]).shape == graph.tensor(node.outputs[0]).shape
    else:
        return None
    if not noop or node.outputs[0] in graph.outputs:
        return None
    return Edit(remove=(node.name,), rename_uses={node.outputs[0]: node.inputs[0]})


def _fold_pad(graph: Graph, node: Node) -> Edit | None:
    if node.op != Op.PAD:
        return None
    user = graph.single_consumer(node.outputs[0])
    if user is None or not _pad_fits(node, user):
        return None
    pads = tuple(int(a) + int(b) for a, b in zip(user.attr("pads"), node.attr("pads"), strict=True))
    merged = user.with_attrs(pads=pads)
    if user.op == Op.AVGPOOL:  # the folded zeros were real values: they count
        merged = merged.with_attrs(count_include_pad=1)
    merged = Node(merged.name, merged.op, (node.inputs[0],) + user.inputs[1:], merged.outputs, merged.attrs)
    return Edit(remove=(node.name, user.name), add=(merged,))


def _pad_fits(pad: Node, user: Node) -> bool:
    value = float(pad.attr("value"))
    if user.op == Op.CONV:
        return value == 0.0
    if user.op == Op.MAXPOOL:
        return value == -math.inf
    if user.op == Op.AVGPOOL:
        no_own_pads = not any(user.attr("pads"))
        return value == 0.0 and (no_own_pads or bool(user.attr("count_include_pad")))
    return False

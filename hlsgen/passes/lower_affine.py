"""Pass lower_affine: an Affine with no layer to fold into becomes a layer of its own.

Before:  x[N,C,H,W] ─Affine(a, b)─► y            x[N,C] ─Affine(a, b)─► y
After:   x ─Conv(1x1, group=C, W=a, bias=b)─► y   x ─Gemm(W=diag(a), bias=b)─► y
Requires: fold_bn (whatever could fold has folded).
Math:    a depthwise 1x1 convolution is exactly a per-channel affine; with per-channel symmetric
         weight quantization each single weight a[c] is represented exactly (±qmax codes), so the
         only rounding is the layer's requant. Dense inputs use a diagonal Gemm (C² weights, rare:
         e.g. a BatchNorm1d in front of an MLP).
Refuses when: the Affine preprocesses the input on the host (check_supported.host_head); an Affine
         of another rank stays and check_supported reports it.
"""

from __future__ import annotations

import numpy as np

from hlsgen.ir import Edit, Graph, Node, Note, Op, Tensor
from hlsgen.passes.check_supported import host_head
from hlsgen.passes.context import PassContext
from hlsgen.passes.rewrite import rewrite_all

EPILOGUE_NONE = {"act": "none", "clip_min": -np.inf, "clip_max": np.inf, "alpha": 0.0}


def lower_affine(graph: Graph, ctx: PassContext) -> Graph:
    head = host_head(graph)
    return rewrite_all(graph, lambda g, n: None if n.name in head else _lower(g, n))


def _lower(graph: Graph, node: Node) -> Edit | None:
    if node.op != Op.AFFINE:
        return None
    rank = len(graph.tensor(node.inputs[0]).shape)
    a, b = graph.tensor(node.inputs[1]).real_value(), graph.tensor(node.inputs[2]).real_value()
    c = a.size
    bias = Tensor(f"{node.name}.bias", (c,), None, b)
    if rank == 4:
        weight = Tensor(f"{node.name}.weight", (c, 1, 1, 1), None, a.reshape(c, 1, 1, 1))
        attrs = {"strides": (1, 1), "pads": (0, 0, 0, 0), "dilations": (1, 1), "group": c, **EPILOGUE_NONE}
        op = Op.CONV
    elif rank == 2:
        weight = Tensor(f"{node.name}.weight", (c, c), None, np.diag(a))
        attrs, op = dict(EPILOGUE_NONE), Op.GEMM
    else:
        return None
    layer = Node(node.name, op, (node.inputs[0], weight.name, bias.name), node.outputs, attrs)
    note = Note("lowered", node.name, f"per-channel affine (BatchNorm/scaling) became a {op} layer")
    return Edit(remove=(node.name,), add=(layer,), tensors=(weight, bias), notes=(note,))

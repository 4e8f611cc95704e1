"""Pass scalings_to_affine: constant Mul/Div/Add/Sub that scale or shift channels become Affine.

Before:  x ─Sub(mean)─► t ─Div(std)─► y          (input normalisation, or a bias Add after a Conv)
After:   x ─Affine(a=1, b=-mean)─► t ─Affine(a=1/std, b=0)─► y
Requires: fuse_matmul_add (so a Gemm's bias Add is already inside the Gemm).
Math:    Mul c: a=c, b=0;  Div c: a=1/c, b=0;  Add c: a=1, b=c;  Sub c: a=1, b=-c;  c - x: a=-1, b=c.
         c must be constant along every axis except the channel axis 1 (a scalar is fine).
Refuses when: both operands are activations (a residual or elementwise Add stays an Add), the
         constant varies along another axis, or it divides by zero / divides a constant by x.
"""

from __future__ import annotations

import numpy as np

from hlsgen.ir import Edit, Graph, Node, Op
from hlsgen.ir.ops import CONSTANT_SCALINGS
from hlsgen.passes.affine import affine_node, per_channel_vector
from hlsgen.passes.context import PassContext
from hlsgen.passes.rewrite import const_value, rewrite_all


def scalings_to_affine(graph: Graph, ctx: PassContext) -> Graph:
    return rewrite_all(graph, _to_affine)


def _to_affine(graph: Graph, node: Node) -> Edit | None:
    if node.op not in CONSTANT_SCALINGS:
        return None
    c0, c1 = const_value(graph, node.inputs[0]), const_value(graph, node.inputs[1])
    if (c0 is None) == (c1 is None):
        return None
    const_first = c0 is not None
    x = node.inputs[1] if const_first else node.inputs[0]
    c = per_channel_vector(c0 if const_first else c1, graph.tensor(x).shape)  # type: ignore[arg-type]
    if c is None:
        return None
    ab = _coefficients(node.op, c, const_first)
    if ab is None:
        return None
    affine, consts = affine_node(node.name, x, node.outputs[0], *ab)
    return Edit(remove=(node.name,), add=(affine,), tensors=consts)


def _coefficients(op: Op, c: np.ndarray, const_first: bool) -> tuple[np.ndarray, np.ndarray] | None:
    ones, zeros = np.ones_like(c), np.zeros_like(c)
    if op == Op.MUL:
        return c, zeros
    if op == Op.ADD:
        return ones, c
    if op == Op.SUB:
        return (-ones, c) if const_first else (ones, -c)
    if const_first or np.any(c == 0):  # c / x is not a scaling; x / 0 is not a number
        return None
    return 1.0 / c, zeros

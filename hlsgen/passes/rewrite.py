"""The one rewrite mechanism: a rule looks at a node and returns an Edit, or None to decline.

`rewrite_all` applies a rule until no node matches. Rules stay small: match a pattern anchored at one
node, check conditions, and describe the replacement; graph surgery lives in `Graph.apply`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hlsgen.ir import Edit, Graph, Node, Note

Rule = Callable[[Graph, Node], Edit | None]

_MAX_REWRITES = 100_000


def rewrite_all(graph: Graph, rule: Rule) -> Graph:
    """Apply `rule` at the first matching node, repeatedly, until nothing matches."""
    for _ in range(_MAX_REWRITES):
        for node in graph.nodes:
            edit = rule(graph, node)
            if edit is not None:
                graph = graph.apply(edit)
                break
        else:
            return graph
    raise RuntimeError(f"rewrite {rule.__name__} did not converge")


def const_value(graph: Graph, name: str) -> np.ndarray | None:
    """Real value of a constant input, or None when it is not a constant."""
    return graph.tensor(name).real_value() if graph.is_const(name) else None


def dropped_rounding(graph: Graph, tensor: str, layer: str, gain: float = 1.0) -> tuple[Note, ...]:
    """A note when a single-rounding fusion makes `tensor` internal although the model quantizes it
    (only with the opt-in approximation quant.fuse_across_qdq: true): that rounding and its clamp
    disappear, so the layer's results differ from the model's. `gain` bounds how much a change of
    that tensor moves the layer output (|a| of a folded BN; 1 for an add or an activation)."""
    t = graph.tensor(tensor)
    if t.qtype is None:
        return ()
    return (Note("fused_rounding", layer, "approximation (quant.fuse_across_qdq: true): the model's rounding "
                 f"and clamp of {tensor} are dropped",
                 {"tensor": tensor, "aliases": list(t.aliases), "scale": float(np.max(np.abs(t.qtype.scale))),
                  "gain": float(gain)}),)

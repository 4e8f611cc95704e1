"""Pass fuse_matmul_add: MatMul (+ Add of a bias) becomes Gemm; a Gemm absorbs a following bias Add.

Before:  x ─MatMul(W[K,N])─► m ─Add(b)─► y            x ─Gemm(w, b0)─► g ─Add(b)─► y
After:   x ─Gemm(w = Wᵀ, b)─► y                       x ─Gemm(w, b0 + b)─► y
Requires: cleanup. A MatMul without a bias Add also becomes a Gemm with a zero bias.
Math:    y[m, n] = Σ_k x[m, k]·W[k, n] + b[n]; the bias must be constant along M (rows), i.e. of
         shape (N,) or (1, N), so it is one value per output feature.
         Where the model quantizes the MatMul output m (MatMul → Q(m) → DQ → Add(b) → Q(y)), the
         Gemm gets a two-step epilogue (passes/two_step.py): t = Q_m(x·W), y = Q_y(t + b), so
         m's rounding and clamp stay (note `two_step`); `quant.fuse_across_qdq: true` drops them
         instead (opt-in approximation, note `fused_rounding`).
Refuses when: the bias varies along M (error naming MatMul and Add), or the MatMul output has other
         readers (then only MatMul → Gemm is done and the Add stays), or the Gemm already has a
         two-step epilogue.
"""

from __future__ import annotations

import numpy as np

from hlsgen.errors import HlsgenError
from hlsgen.ir import Edit, Graph, Node, Op, QType, Tensor
from hlsgen.passes import two_step
from hlsgen.passes.context import PassContext
from hlsgen.passes.rewrite import const_value, dropped_rounding, rewrite_all


def fuse_matmul_add(graph: Graph, ctx: PassContext) -> Graph:
    graph = rewrite_all(graph, _matmul_to_gemm)
    across = ctx.config.quant.fuse_across_qdq
    return rewrite_all(graph, lambda g, n: _absorb_bias_add(g, n, across))


def _matmul_to_gemm(graph: Graph, node: Node) -> Edit | None:
    if node.op != Op.MATMUL:
        return None
    w = graph.tensor(node.inputs[1])
    weight = Tensor(f"{node.name}.weight", (w.shape[1], w.shape[0]), _transposed_qtype(w),
                    None if w.data is None else np.ascontiguousarray(w.data.T), w.integer, (w.name,))
    bias = Tensor(f"{node.name}.bias", (w.shape[1],), None, np.zeros(w.shape[1]))
    gemm = Node(node.name, Op.GEMM, (node.inputs[0], weight.name, bias.name), node.outputs,
                {"act": "none", "clip_min": -np.inf, "clip_max": np.inf, "alpha": 0.0})
    return Edit(remove=(node.name,), add=(gemm,), tensors=(weight, bias))


def _transposed_qtype(w: Tensor) -> QType | None:
    if w.qtype is None or w.qtype.axis is None:
        return w.qtype
    return QType(w.qtype.int, w.qtype.scale, w.qtype.zero_point, axis=1 - w.qtype.axis)


def _absorb_bias_add(graph: Graph, node: Node, across_qdq: bool) -> Edit | None:
    if node.op != Op.ADD:
        return None
    for pos in (0, 1):
        gemm, other = graph.producer(node.inputs[pos]), node.inputs[1 - pos]
        if gemm is None or gemm.op != Op.GEMM or gemm.attr("act") != "none":
            continue
        b = const_value(graph, other)
        if b is None or graph.single_consumer(gemm.outputs[0]) is None:
            continue
        n_out = graph.tensor(gemm.outputs[0]).shape[-1]
        if b.ndim == 2 and b.shape[0] != 1 or b.size not in (1, n_out) or b.ndim > 2:
            raise HlsgenError(f"nodes {gemm.name} and {node.name}: bias of shape {b.shape} varies along "
                              f"M; only a bias of shape ({n_out},) or (1, {n_out}) fuses into Gemm")
        full_b = np.broadcast_to(b.reshape(-1), (n_out,))
        if two_step.has_mid(gemm):
            return None
        if two_step.quantized(graph, node.inputs[pos]) and not across_qdq:
            fused = Node(gemm.name, Op.GEMM, gemm.inputs, node.outputs,
                         two_step.start(graph, gemm, node.inputs[pos], None, full_b))
            notes = two_step.kept_rounding_note(graph, node.inputs[pos], gemm.name)
            return Edit(remove=(gemm.name, node.name), add=(fused,), notes=notes)
        old = graph.tensor(gemm.inputs[2])
        bias = Tensor(f"{gemm.name}.bias_fused", old.shape, None, old.real_value() + full_b)
        fused = Node(gemm.name, Op.GEMM, (gemm.inputs[0], gemm.inputs[1], bias.name), node.outputs, gemm.attrs)
        notes = dropped_rounding(graph, node.inputs[pos], gemm.name)
        return Edit(remove=(gemm.name, node.name), add=(fused,), tensors=(bias,), notes=notes)
    return None

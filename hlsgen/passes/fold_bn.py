"""Pass fold_bn: BatchNormalization becomes an Affine, and Affines fold into the layer before them.

Before:  x ─Conv(W, b)─► c ─BatchNormalization(γ, β, μ, var, ε)─► y
After:   x ─Conv(W' = s·W, b' = s·(b − μ) + β)─► y           (s = γ / √(max(var, floor) + ε))
         With integer (QDQ) weights the codes stay: the per-channel weight scale becomes s·scale, so
         the layer's requant multiplier and bias absorb the BN instead of re-quantizing weights.
         A BN with no Conv/Gemm before it stays as an Affine (lower_affine makes it a layer).
Requires: scalings_to_affine (Affines from constant Mul/Add are folded the same way).
Math:    float64 throughout, before weight quantization. Channels whose variance is below
         `bn.var_floor` are raised to it and reported (node, channel, variance); gamma = 0 gives a
         zero channel; negative gamma flips the channel's weights (or its scale sign).
         Across a tensor the model quantizes (conv → Q(t) → DQ → BN → Q(y)) nothing is folded into
         the weights: the BN becomes step 2 of a two-step epilogue (passes/two_step.py), so the
         layer still rounds to t first: y = Q_y(a·Q_t(conv) + b) (note `two_step`). With
         `quant.fuse_across_qdq: true` (opt-in approximation) it folds as if t were float and that
         rounding and clamp are dropped (note `fused_rounding`). Two affines with a quantizer
         between them stay separate.
Refuses when: any BN parameter is NaN/Inf, a variance is negative, epsilon is negative or
         not finite, or variance + epsilon is 0 (error naming node and channel); with
         `bn.floor_is_error`, any floored channel is an error. Does not fold when the
         layer output has other readers, the layer has a residual input, an activation before an
         unquantized BN, or the fold would need a third rounding.
"""

from __future__ import annotations

import numpy as np

from hlsgen.errors import HlsgenError
from hlsgen.ir import Edit, Graph, Node, Note, Op, QType, Tensor
from hlsgen.ir.ops import FLOAT_LAYER_OPS
from hlsgen.passes import two_step
from hlsgen.passes.affine import affine_node
from hlsgen.passes.context import PassContext
from hlsgen.passes.rewrite import dropped_rounding, rewrite_all


def fold_bn(graph: Graph, ctx: PassContext) -> Graph:
    floor, strict = ctx.config.bn.var_floor, ctx.config.bn.floor_is_error
    graph = rewrite_all(graph, lambda g, n: _bn_to_affine(g, n, floor, strict))
    across = ctx.config.quant.fuse_across_qdq
    return rewrite_all(graph, lambda g, n: _fold_affine(g, n, across))


def bn_coefficients(gamma: np.ndarray, beta: np.ndarray, mean: np.ndarray, var: np.ndarray,
                    eps: float, floor: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, floored_mask) with y = a·x + b the BN in float64, variances floored at `floor`."""
    floored = var < floor
    a = gamma / np.sqrt(np.maximum(var, floor) + eps)
    return a, beta - a * mean, floored


def _bn_to_affine(graph: Graph, node: Node, floor: float, strict: bool) -> Edit | None:
    if node.op != Op.BATCHNORM:
        return None
    gamma, beta, mean, var = (graph.tensor(i).real_value().reshape(-1) for i in node.inputs[1:5])
    eps = float(node.attr("epsilon"))
    _check_params(node, gamma, beta, mean, var)
    _check_epsilon(node, eps, var, floor)
    a, b, floored = bn_coefficients(gamma, beta, mean, var, eps, floor)
    notes = tuple(Note("bn_floor", node.name, f"channel {c}: variance {var[c]:.3g} raised to {floor:g}",
                       {"channel": int(c), "variance": float(var[c]), "floor": floor})
                  for c in np.flatnonzero(floored))
    if notes and strict:
        chans = ", ".join(f"{int(c)} (var {var[c]:.3g})" for c in np.flatnonzero(floored))
        raise HlsgenError(f"node {node.name}: variance below bn.var_floor={floor:g} in channel(s) {chans}")
    affine, consts = affine_node(node.name, node.inputs[0], node.outputs[0], a, b)
    return Edit(remove=(node.name,), add=(affine,), tensors=consts, notes=notes)


def _check_params(node: Node, *params: np.ndarray) -> None:
    for label, p in zip(("scale", "B", "mean", "var"), params, strict=True):
        bad = np.flatnonzero(~np.isfinite(p))
        if bad.size:
            raise HlsgenError(f"node {node.name}: BatchNormalization {label} is {p[bad[0]]} in channel "
                              f"{int(bad[0])}")
    negative = np.flatnonzero(params[3] < 0)
    if negative.size:
        c = int(negative[0])
        raise HlsgenError(f"node {node.name}: BatchNormalization variance is negative ({params[3][c]:.3g}) "
                          f"in channel {c}")


def _check_epsilon(node: Node, eps: float, var: np.ndarray, floor: float) -> None:
    if not np.isfinite(eps) or eps < 0:
        raise HlsgenError(f"node {node.name}: BatchNormalization epsilon is {eps:g}; it must be finite and >= 0")
    zero = np.flatnonzero(np.maximum(var, floor) + eps <= 0)
    if zero.size:
        c = int(zero[0])
        raise HlsgenError(f"node {node.name}: BatchNormalization variance + epsilon is 0 in channel {c} "
                          f"(variance {var[c]:g}, epsilon {eps:g}, bn.var_floor {floor:g}); "
                          "set bn.var_floor > 0 or fix the model")


def _fold_affine(graph: Graph, node: Node, across_qdq: bool) -> Edit | None:
    if node.op != Op.AFFINE:
        return None
    t = node.inputs[0]
    prev = graph.producer(t)
    if prev is None or graph.single_consumer(t) is None:
        return None
    a, b = graph.tensor(node.inputs[1]).real_value(), graph.tensor(node.inputs[2]).real_value()
    crosses = two_step.quantized(graph, t) and not across_qdq
    gain = float(np.max(np.abs(a)))
    if prev.op == Op.AFFINE:
        if crosses:
            return None  # the model rounds between the two affines: they stay two layers
        pa, pb = graph.tensor(prev.inputs[1]).real_value(), graph.tensor(prev.inputs[2]).real_value()
        merged, consts = affine_node(prev.name, prev.inputs[0], node.outputs[0], pa * a, pb * a + b)
        notes = dropped_rounding(graph, t, prev.name, gain)
        return Edit(remove=(prev.name, node.name), add=(merged,), tensors=consts, notes=notes)
    if prev.op not in FLOAT_LAYER_OPS or len(prev.inputs) > 3:
        return None
    if crosses or two_step.has_mid(prev):
        return _fold_into_step2(graph, node, prev, a, b, crosses)
    if prev.attr("act") != "none":
        return None
    weight = _scaled_weight(graph.tensor(prev.inputs[1]), a, f"{prev.name}.weight_folded")
    old_b = graph.tensor(prev.inputs[2]).real_value()
    bias = Tensor(f"{prev.name}.bias_folded", old_b.shape, None, old_b * a + b)
    fused = Node(prev.name, prev.op, (prev.inputs[0], weight.name, bias.name), node.outputs, prev.attrs)
    notes = dropped_rounding(graph, t, prev.name, gain)
    return Edit(remove=(prev.name, node.name), add=(fused,), tensors=(weight, bias), notes=notes)


def _fold_into_step2(graph: Graph, node: Node, prev: Node, a: np.ndarray, b: np.ndarray,
                     crosses: bool) -> Edit | None:
    """The model quantizes the layer output before the affine: the affine becomes step 2 of a
    two-step epilogue (or joins a step 2 that has no activation yet)."""
    if crosses:
        if two_step.has_mid(prev):
            return None  # a third rounding: the affine stays a layer of its own
        attrs = two_step.start(graph, prev, node.inputs[0], a, b)
        notes = two_step.kept_rounding_note(graph, node.inputs[0], prev.name)
    elif prev.attr("post_act") == "none":
        attrs, notes = two_step.post_affine(prev, a, b), ()
    else:
        return None
    fused = Node(prev.name, prev.op, prev.inputs, node.outputs, attrs)
    return Edit(remove=(prev.name, node.name), add=(fused,), notes=notes)


def _scaled_weight(w: Tensor, a: np.ndarray, name: str) -> Tensor:
    """Output channel c (axis 0) times a[c]: float weights are scaled; integer codes keep their
    values and the per-channel scale takes a[c] (a zero a[c] zeroes the codes, keeping the scale)."""
    shape = (-1,) + (1,) * (len(w.shape) - 1)
    if not w.integer:
        return Tensor(name, w.shape, None, w.real_value() * a.reshape(shape), False, w.aliases)
    assert w.qtype is not None and w.data is not None
    if w.qtype.axis not in (None, 0):
        raise HlsgenError(f"weight {w.name}: quantized along axis {w.qtype.axis}, not per output channel")
    scale = np.broadcast_to(w.qtype.scale, (w.shape[0],))
    codes = np.where(a.reshape(shape) == 0, w.qtype.broadcast(len(w.shape))[1], w.data)
    qtype = QType(w.qtype.int, np.where(a == 0, scale, scale * a),
                  np.broadcast_to(w.qtype.zero_point, (w.shape[0],)), axis=0)
    return Tensor(name, w.shape, qtype, codes.astype(np.int64), True, w.aliases)

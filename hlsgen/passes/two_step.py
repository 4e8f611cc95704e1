"""The two-step epilogue of a fused layer, on the float graph (shared by the fusing passes).

A fusion that crosses a tensor `t` the source model quantizes (Q(t)→DQ between the layer and the
op it absorbs) keeps that rounding: the layer becomes

    t = Q_t(act(layer(x)))                        step 1: the model's own intermediate quantizer
    y = post_act(post_a · t + post_b [+ skip])    step 2: BatchNorm / bias / residual / activation

Attributes of the float Conv/Gemm node (absent `mid` = the single-rounding form):
    mid         QType of t (the model's quantizer),  mid_tensor  the source tensor name
    post_a      per-channel (or one) real scale of t (BatchNorm a; 1 otherwise)
    post_b      per-channel (or one) real additive term (BatchNorm b, MatMul bias; 0 otherwise)
    post_act, post_clip_min, post_clip_max, post_alpha   the activation after step 2
The skip input (4th input) of a two-step layer belongs to step 2. `act`/`clip_*`/`alpha` stay the
activation of step 1. Step 2 is at most one affine, one skip and one activation, in that order; a
third quantizer ends the fusion (the op stays a layer of its own), so nothing the model rounds is lost.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hlsgen.ir import Graph, Node, Note

POST_NONE: dict[str, Any] = {"post_act": "none", "post_clip_min": -math.inf, "post_clip_max": math.inf,
                             "post_alpha": 0.0}


def has_mid(node: Node) -> bool:
    return node.attr("mid") is not None


def quantized(graph: Graph, tensor: str) -> bool:
    return graph.tensor(tensor).qtype is not None


def start(graph: Graph, layer: Node, tensor: str, a: np.ndarray | None = None,
          b: np.ndarray | None = None) -> dict[str, Any]:
    """Attributes that make `layer` (output `tensor`, quantized by the model) a two-step layer
    whose step 2 starts with y = a·t + b."""
    return {**layer.attrs, "mid": graph.tensor(tensor).qtype, "mid_tensor": tensor,
            "post_a": _tup(np.ones(1) if a is None else a), "post_b": _tup(np.zeros(1) if b is None else b),
            **POST_NONE}


def post_affine(layer: Node, a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    """Step 2 followed by y' = a·y + b (no skip or activation in step 2 yet)."""
    pa, pb = np.asarray(layer.attr("post_a")), np.asarray(layer.attr("post_b"))
    return {**layer.attrs, "post_a": _tup(pa * a), "post_b": _tup(pb * a + b)}


def post_bias_free(layer: Node) -> bool:
    return not np.any(np.asarray(layer.attr("post_b"))) and len(layer.inputs) == 3


def kept_rounding_note(graph: Graph, tensor: str, layer: str) -> tuple[Note, ...]:
    """Report that the fused layer reproduces the model's rounding (and clamp) of `tensor`."""
    t = graph.tensor(tensor)
    assert t.qtype is not None
    return (Note("two_step", layer, f"reproduces the model's Q({tensor}) {t.qtype!r} as the first step of "
                 "its epilogue", {"tensor": tensor, "aliases": list(t.aliases)}),)


def _tup(v: np.ndarray) -> tuple[float, ...]:
    return tuple(float(x) for x in np.asarray(v, dtype=np.float64).reshape(-1))

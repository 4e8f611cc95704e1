"""Golden model vs onnxruntime per layer, for the tests: the comparison is hlsgen.compare's (what
`hlsgen compare` runs); this module only adds what the tests still grade fused layers by.

Bound: 1 LSB per layer, except where a fusion removed a rounding the model had (a BatchNorm folded
across a Q/DQ pair, a residual add or activation fused across one): there onnxruntime's extra
rounding of the intermediate tensor (scale s1) moves its result by up to gain·s1/2, so the bound
is 1 + ceil(gain·s1 / (2·s_out)). Those layers carry a 'fused_rounding' note. The fused-away
quantizer also clamped: where onnxruntime saturated that intermediate tensor, the fused layer
(which does not) is not comparable, and those outputs are counted in `excluded` instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import onnx

from hlsgen import Compilation
from hlsgen.compare import (
    COMPARED_OPS,
    agreement_row,
    compared_layers,
    end_to_end_differences,
    fed_differences,
    ort_integers,
)
from hlsgen.ir import Graph, Node

__all__ = ["COMPARED_OPS", "LayerAgreement", "bound", "layer_agreement", "ort_integers"]


@dataclass(frozen=True)
class LayerAgreement:
    name: str
    op: str
    max_fed: int  # max |golden - ort| with the layer fed onnxruntime's inputs
    mismatch_fed: float  # fraction of outputs that differ at all
    max_end_to_end: int  # max |golden - ort| running the whole golden model
    bound: int
    excluded: int  # outputs left out: a fused-away intermediate saturated in onnxruntime


def layer_agreement(c: Compilation, model: onnx.ModelProto, x: np.ndarray) -> list[LayerAgreement]:
    ort = ort_integers(model, x)
    g = c.graph
    fed, e2e = fed_differences(g, ort), end_to_end_differences(c, x, ort)
    rows = []
    for n in compared_layers(g):
        valid = ~_saturated_intermediates(g, n, ort, fed[n.name].shape)
        r = agreement_row(n, fed[n.name][valid], e2e[n.name][valid])
        rows.append(LayerAgreement(r.name, r.op, r.max_fed, r.mismatch_fed, r.max_end_to_end, bound(g, n),
                                   int(np.sum(~valid))))
    return rows


def bound(g: Graph, n: Node) -> int:
    s_out = float(g.tensor(n.outputs[0]).qtype.scale)  # type: ignore[union-attr]
    extra = [math.ceil(note.data["gain"] * note.data["scale"] / (2 * s_out))
             for note in g.notes if note.kind == "fused_rounding" and note.node == n.name]
    return 1 + sum(extra)


def _saturated_intermediates(g: Graph, n: Node, ort: Mapping[str, np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    """Outputs where an intermediate tensor the fusion removed sat at its type's limit in onnxruntime."""
    mask = np.zeros(shape, dtype=bool)
    for note in g.notes:
        if note.kind == "fused_rounding" and note.node == n.name:
            codes = ort[next(a for a in note.data["aliases"] if a in ort)]
            info = np.iinfo(codes.dtype)
            mask |= (codes == info.min) | (codes == info.max)
    return mask


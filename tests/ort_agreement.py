"""Golden model vs onnxruntime (graph optimizations off) on QDQ models, layer by layer.

For every integer node of the compiled graph, its inputs are taken from onnxruntime's own integer
tensors (the QuantizeLinear outputs that the node's tensors stand for, via Tensor.aliases) and its
output is compared with onnxruntime's integer output. End to end, the golden model runs alone.

Bound: 1 LSB per layer, except where a fusion removed a rounding the model had (a BatchNorm folded
across a Q/DQ pair, a residual add or activation fused across one): there onnxruntime's extra
rounding of the intermediate tensor (scale s1) moves its result by up to gain·s1/2, so the bound
is 1 + ceil(gain·s1 / (2·s_out)). Those layers carry a 'fused_rounding' note. The fused-away
quantizer also clamped: where onnxruntime saturated that intermediate tensor, the fused layer
(which does not) is not comparable, and those outputs are counted in `excluded` instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import onnx
from model_zoo import run_ort

from hlsgen import Compilation, intermediates
from hlsgen.golden import KERNELS
from hlsgen.ir import Graph, Node

COMPARED_OPS = ("QConv", "QGemm", "QAdd", "QAvgPool", "QMaxPool", "QRequant")


@dataclass(frozen=True)
class LayerAgreement:
    name: str
    op: str
    max_fed: int  # max |golden - ort| with the layer fed onnxruntime's inputs
    mismatch_fed: float  # fraction of outputs that differ at all
    max_end_to_end: int  # max |golden - ort| running the whole golden model
    bound: int
    excluded: int  # outputs left out: a fused-away intermediate saturated in onnxruntime


def ort_integers(model: onnx.ModelProto, x: np.ndarray) -> dict[str, np.ndarray]:
    """Every integer tensor onnxruntime computes, for a batch (run image by image)."""
    runs = [run_ort(model, xi[None], all_intermediates=True) for xi in x]
    return {k: np.concatenate([r[k] for r in runs])
            for k, v in runs[0].items() if np.issubdtype(v.dtype, np.integer)}


def layer_agreement(c: Compilation, model: onnx.ModelProto, x: np.ndarray) -> list[LayerAgreement]:
    ort = ort_integers(model, x)
    ours = intermediates(c, x)
    g = c.graph
    rows = []
    for n in g.nodes:
        if n.op not in COMPARED_OPS:
            continue
        want = ort[_ort_name(g, n.outputs[0], ort)].astype(np.int64)
        fed = KERNELS[n.op](n, g, [_fed_input(g, i, ort) for i in n.inputs])
        valid = ~_saturated_intermediates(g, n, ort, want.shape)
        diff = np.abs(fed - want)[valid]
        e2e = int(np.max(np.abs(ours[n.outputs[0]] - want)[valid]))
        rows.append(LayerAgreement(n.name, n.op, int(diff.max()), float(np.mean(diff > 0)), e2e, bound(g, n),
                                   int(np.sum(~valid))))
    return rows


def bound(g: Graph, n: Node) -> int:
    s_out = float(g.tensor(n.outputs[0]).qtype.scale)  # type: ignore[union-attr]
    extra = [math.ceil(note.data["gain"] * note.data["scale"] / (2 * s_out))
             for note in g.notes if note.kind == "fused_rounding" and note.node == n.name]
    return 1 + sum(extra)


def _saturated_intermediates(g: Graph, n: Node, ort: dict[str, np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    """Outputs where an intermediate tensor the fusion removed sat at its type's limit in onnxruntime."""
    mask = np.zeros(shape, dtype=bool)
    for note in g.notes:
        if note.kind == "fused_rounding" and note.node == n.name:
            codes = ort[next(a for a in note.data["aliases"] if a in ort)]
            info = np.iinfo(codes.dtype)
            mask |= (codes == info.min) | (codes == info.max)
    return mask


def _ort_name(g: Graph, tensor: str, ort: dict[str, np.ndarray]) -> str:
    names = [a for a in g.tensor(tensor).aliases if a in ort]
    if not names:
        raise KeyError(f"no onnxruntime integer tensor stands for {tensor} (aliases {g.tensor(tensor).aliases})")
    return names[0]


def _fed_input(g: Graph, name: str, ort: dict[str, np.ndarray]) -> np.ndarray:
    t = g.tensor(name)
    if t.is_const:
        assert t.data is not None
        return t.data.astype(np.int64)
    return ort[_ort_name(g, name, ort)].astype(np.int64)

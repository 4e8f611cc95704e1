"""Golden model vs onnxruntime per rounding point, for the tests (the comparison is hlsgen.compare's,
what `hlsgen compare` runs; this module adds the step-wise check of two-step layers).

Every quantizer of the source model is a rounding point, and each is checked fed onnxruntime's own
integer inputs for that point; no output is excluded and the bound is 1 LSB everywhere:
  single-step layer   the layer fed ORT's layer inputs, against ORT's output tensor;
  two-step layer      (numerics.md §8: the model quantizes t between the layer and its fused ops)
                      step 1 fed ORT's layer inputs against ORT's t, and step 2 fed ORT's t (and
                      skip) against ORT's output.
`max_fed_fused` is the fused layer fed its layer inputs only: there a step-1 near-tie disagreement
(ORT's float32 vs our exact integers) is amplified by step 2's gain s_t/s_y, so it can exceed 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import onnx

from hlsgen import Compilation, numerics
from hlsgen.compare import (
    COMPARED_OPS,
    compared_layers,
    end_to_end_differences,
    fed_differences,
    ort_integers,
    ort_name,
)
from hlsgen.golden import KERNELS
from hlsgen.golden.int_ops import channel_param
from hlsgen.ir import Graph, Node

__all__ = ["COMPARED_OPS", "LayerAgreement", "layer_agreement", "ort_integers", "step_differences"]


@dataclass(frozen=True)
class LayerAgreement:
    name: str
    op: str
    steps: int  # source roundings this layer reproduces (2 for a two-step epilogue)
    max_fed: int  # max |golden - ort| over its rounding points, each fed onnxruntime's inputs
    mismatch_fed: float  # share of those outputs that differ at all
    max_fed_fused: int  # the fused layer fed its layer inputs only
    max_end_to_end: int  # max |golden - ort| running the whole golden model
    outputs: int  # outputs compared: all of them


def layer_agreement(c: Compilation, model: onnx.ModelProto, x: np.ndarray) -> list[LayerAgreement]:
    return agreement_from(c, ort_integers(model, x), x)


def agreement_from(c: Compilation, ort: Mapping[str, np.ndarray], x: np.ndarray) -> list[LayerAgreement]:
    g = c.graph
    fused, e2e = fed_differences(g, ort), end_to_end_differences(c, x, ort)
    rows = []
    for n in compared_layers(g):
        diffs = step_differences(g, n, ort) if n.attr("mid_mult") is not None else [fused[n.name]]
        off = np.concatenate([(d > 0).ravel() for d in diffs])
        rows.append(LayerAgreement(n.name, n.op, len(diffs), max(int(d.max()) for d in diffs), float(off.mean()),
                                   int(fused[n.name].max()), int(e2e[n.name].max()), int(off.size)))
    return rows


def step_differences(g: Graph, n: Node, ort: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """|golden - ort| of step 1 (fed the layer inputs, against ORT's t) and of step 2 (fed ORT's t)."""
    fed = [_fed(g, i, ort) for i in n.inputs]
    t_ort = ort[_mid_source(g, n, ort)].astype(np.int64)
    step1 = {k: v for k, v in n.attrs.items() if not k.startswith(("mid_", "post_", "skip_"))}
    step1.update(mult=n.attrs["mid_mult"], mult_neg=n.attrs["mid_mult_neg"], shift=n.attrs["mid_shift"],
                 zp=n.attrs["mid_zp"], lo=n.attrs["mid_lo"], hi=n.attrs["mid_hi"])
    t = KERNELS[n.op](Node(n.name, n.op, n.inputs[:3], n.outputs, step1), g, fed[:3])
    nd = t_ort.ndim
    last = numerics.RequantStep(channel_param(n, "mult", nd, 1), channel_param(n, "shift", nd, 1),
                                int(n.attrs["zp"]), int(n.attrs["lo"]), int(n.attrs["hi"]),
                                channel_param(n, "mult_neg", nd, 1))
    skip = None
    if len(fed) > 3:
        skip = (fed[3], channel_param(n, "skip_zp", nd, 1, 0), channel_param(n, "skip_mult", nd, 1))
    y = numerics.fused_epilogue(t_ort - int(n.attrs["mid_zp"]), last, None, skip,
                                channel_param(n, "post_bias", nd, 1), n.attr("rounding", "half_even"))
    want = ort[ort_name(g, n.outputs[0], ort)].astype(np.int64)
    return [np.abs(t - t_ort), np.abs(y - want)]


def _fed(g: Graph, name: str, ort: Mapping[str, np.ndarray]) -> np.ndarray:
    t = g.tensor(name)
    if t.data is not None:
        return np.asarray(t.data, dtype=np.int64)
    return ort[ort_name(g, name, ort)].astype(np.int64)


def _mid_source(g: Graph, n: Node, ort: Mapping[str, np.ndarray]) -> str:
    """onnxruntime's name of a two-step layer's intermediate tensor (from the layer's `two_step` note)."""
    for note in g.notes:
        if note.kind == "two_step" and note.node == n.name:
            names = [a for a in [note.data["tensor"], *note.data["aliases"]] if a in ort]
            if names:
                return names[0]
    raise KeyError(f"no onnxruntime tensor stands for the intermediate of {n.name}")

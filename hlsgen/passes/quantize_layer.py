"""Integer lowering of one Conv or Gemm with its fused epilogue (used by the quantize pass).

Math (see docs/numerics.md):
    weights  w_q per output channel, symmetric narrow range (or the model's own codes)
    bias     b_q = round(b / (s_x·s_w[c])), then bias[c] = b_q − zp_x·Σ w_q[c]   (zero point folded)
    acc      = bias[c] + Σ x_q·w_q          (x padded with zp_x, which is real 0)
    requant  v = acc·M[c] [+ (skip − zp_s)·Mb[c]],  M/2^S ≈ s_x·s_w[c]/s_y,  Mb/2^S ≈ s_s/s_y
             y = clamp(zp_y + round_shift(v, S[c]), lo, hi)
    clamps   lo/hi from the output type, then raised/lowered by ReLU/Clip bounds in codes
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlsgen.errors import HlsgenError
from hlsgen.ir import Graph, Node, QType, Tensor
from hlsgen.numerics import (
    accumulator_bits,
    quantize_bias,
    round_real,
    shared_shift_multipliers,
    signed_bits_for,
    weight_qtype_and_codes,
)


@dataclass(frozen=True)
class LayerSettings:
    weight_bits: int
    multiplier_bits: int
    bias_bits: int
    max_acc_bits: int
    rounding: str


def clamp_codes(out: QType, clip_min: float, clip_max: float) -> tuple[int, int]:
    """Output clamp in codes: the type's range narrowed by an activation's real bounds."""
    scale, zp = float(out.scale), int(out.zero_point)
    lo, hi = out.int.lo, out.int.hi
    if math.isfinite(clip_min):
        lo = max(lo, zp + int(round_real(np.float64(clip_min / scale))))
    if math.isfinite(clip_max):
        hi = min(hi, zp + int(round_real(np.float64(clip_max / scale))))
    if lo > hi:
        raise HlsgenError(f"activation bounds [{clip_min}, {clip_max}] leave no code in {out!r}")
    return lo, hi


def weight_codes(w: Tensor, bits: int, node: Node) -> tuple[np.ndarray, np.ndarray]:
    """(codes, per-output-channel scale) of a weight, keeping codes the model already has."""
    if not w.integer:
        qtype, codes = weight_qtype_and_codes(w.real_value(), bits, axis=0)
        return codes, qtype.scale
    assert w.qtype is not None and w.data is not None
    if w.qtype.axis not in (None, 0) or np.any(w.qtype.zero_point != 0):
        raise HlsgenError(f"node {node.name}: weight {w.name} must be symmetric (zero point 0) and "
                          "quantized per output channel or per tensor")
    return w.data.astype(np.int64), np.broadcast_to(w.qtype.scale, (w.shape[0],)).astype(np.float64)


def layer_attrs(graph: Graph, node: Node, codes: np.ndarray, s_w: np.ndarray,
                st: LayerSettings) -> tuple[dict[str, Any], np.ndarray]:
    """Requant attributes and the folded int bias of a Conv/Gemm node."""
    qx, qy = _qtype(graph, node.inputs[0]), _qtype(graph, node.outputs[0])
    s_x, zp_x = float(qx.scale), int(qx.zero_point)
    acc_scale = s_x * s_w
    try:
        b_q = quantize_bias(graph.tensor(node.inputs[2]).real_value(), acc_scale, st.bias_bits)
    except ValueError as e:
        raise HlsgenError(f"node {node.name}: {e}") from None
    bias = b_q - zp_x * codes.reshape(codes.shape[0], -1).sum(axis=1)
    ratios = [acc_scale / float(qy.scale)]
    extra: dict[str, Any] = {}
    if len(node.inputs) > 3:
        qs = _qtype(graph, node.inputs[3])
        ratios.append(np.full(codes.shape[0], float(qs.scale) / float(qy.scale)))
        extra["skip_zp"] = int(qs.zero_point)
    if node.attr("act") == "leaky":
        ratios.append(ratios[0] * float(node.attr("alpha")))
    mults, shift = multipliers(node, ratios, st.multiplier_bits)
    lo, hi = clamp_codes(qy, node.attr("clip_min", -math.inf), node.attr("clip_max", math.inf))
    acc_bits = accumulator_bits(codes, qx.int, bias)
    mult_bits = signed_bits_for(max(int(np.max(np.abs(m), initial=0)) for m in mults))
    _check_widths(node, acc_bits, mult_bits, st)
    attrs = {"mult": _ints(mults[0]), "shift": _ints(shift), "zp": int(qy.zero_point), "lo": lo, "hi": hi,
             "rounding": st.rounding, "mult_neg": _ints(mults[-1]) if node.attr("act") == "leaky" else None,
             "acc_bits": acc_bits, "mult_bits": mult_bits, "act": node.attr("act"), **extra}
    if len(node.inputs) > 3:
        attrs["skip_mult"] = _ints(mults[1])
    return attrs, bias


def multipliers(node: Node, ratios: list[np.ndarray], bits: int) -> tuple[list[np.ndarray], np.ndarray]:
    """numerics.shared_shift_multipliers, with a ratio that does not fit reported against the node."""
    try:
        return shared_shift_multipliers(ratios, bits)
    except ValueError as e:
        raise HlsgenError(f"node {node.name}: {e}") from None


def _check_widths(node: Node, acc_bits: int, mult_bits: int, st: LayerSettings) -> None:
    if acc_bits > st.max_acc_bits:
        raise HlsgenError(f"node {node.name}: accumulator needs {acc_bits} bits, more than "
                          f"quant.max_acc_bits={st.max_acc_bits}")
    if acc_bits + mult_bits > 63:
        raise HlsgenError(f"node {node.name}: accumulator ({acc_bits} bits) times multiplier "
                          f"({mult_bits} bits) does not fit the 64-bit requant product")


def _qtype(graph: Graph, tensor: str) -> QType:
    q = graph.tensor(tensor).qtype
    if q is None or q.per_channel:
        raise HlsgenError(f"tensor {tensor} needs a per-tensor activation quantization")
    return q


def _ints(a: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in np.asarray(a).reshape(-1))

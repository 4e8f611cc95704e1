"""Integer lowering of one Conv or Gemm with its fused epilogue (used by the quantize pass).

Math (see docs/numerics.md):
    weights  w_q per output channel, symmetric narrow range (or the model's own codes)
    bias     b_q = round(b / (s_x·s_w[c])), then bias[c] = b_q − zp_x·Σ w_q[c]   (zero point folded)
    acc      = bias[c] + Σ x_q·w_q          (x padded with zp_x, which is real 0)
    requant  v = acc·M[c] [+ (skip − zp_s)·Mb[c]],  M/2^S ≈ s_x·s_w[c]/s_y,  Mb/2^S ≈ s_s/s_y
             y = clamp(zp_y + round_shift(v, S[c]), lo, hi)
    two-step (the model quantizes t between the layer and its fused ops, passes/two_step.py):
             t = clamp(zp_t + round_shift(acc·M1[c], S1[c]), lo_t, hi_t)
             v = (t − zp_t)·M[c] [+ (skip − zp_s)·Mb[c]] [+ B2[c]],  then y as above
    clamps   lo/hi from the output type, then raised/lowered by ReLU/Clip bounds in codes
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlsgen.errors import HlsgenError
from hlsgen.ir import Graph, IntType, Node, QType, Tensor
from hlsgen.ir.epilogue import FLAT_KEYS, epilogue_of
from hlsgen.numerics import (
    accumulator_bits,
    quantize_bias,
    round_real,
    scaled_bias,
    shared_shift_multipliers,
    sign_bias,
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


def clamp_codes(node: str, out: QType, clip_min: float, clip_max: float) -> tuple[int, int]:
    """Output clamp in codes: the type's range narrowed by an activation's real bounds.

    The source computes q = clamp(round(clip(x, a, b) / s) + zp, L, H). Rounding is monotone, so
    round(clip(x, a, b) / s) = clamp(round(x / s), round(a / s), round(b / s)), and two clamps compose
    into one whose bounds are the inner bounds clamped to [L, H]. Bounds beyond the type's range thus
    give a constant code (all of [a, b] above the top code: every output is H), exactly as the source."""
    if clip_min > clip_max:
        raise HlsgenError(f"node {node}: activation bounds [{clip_min}, {clip_max}] are empty (min > max)")
    if out.per_channel and (clip_min not in (-math.inf, 0.0) or clip_max != math.inf or np.any(out.zero_point)):
        raise HlsgenError(f"node {node}: a per-channel output takes no clamp but at 0 (ReLU)")
    scale, zp = float(np.max(out.scale)), int(np.asarray(out.zero_point).reshape(-1)[0])  # bounds 0 / inf: any scale
    type_lo, type_hi = out.int.lo, out.int.hi
    lo, hi = type_lo, type_hi
    if math.isfinite(clip_min):
        lo = min(max(type_lo, zp + int(round_real(np.float64(clip_min / scale)))), type_hi)
    if math.isfinite(clip_max):
        hi = max(min(type_hi, zp + int(round_real(np.float64(clip_max / scale)))), type_lo)
    return lo, hi


def weight_codes(w: Tensor, bits: int, node: Node,
                 min_scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, IntType]:
    """(codes, per-output-channel scale, code type) of a weight, keeping the codes the model has; a
    float weight's scale is floored at `min_scale` (numerics.bias_scale_floor). A weight with zero
    points zw (asymmetric, per tensor or per output channel: onnxruntime quantizes a weight computed
    at load like an activation) becomes the exact symmetric codes w − zw at the same scale, since
    s·(w − zw) is its real value: Σ x·(w − zw) is the layer's sum with no correction term, in a type
    one bit wider where w − zw needs it (numerics.md §2)."""
    if not w.integer:
        qtype, codes = weight_qtype_and_codes(w.real_value(), bits, axis=0, min_scale=min_scale)
        return codes, qtype.scale, IntType(bits, True, narrow=True)
    assert w.qtype is not None and w.data is not None
    if w.qtype.axis not in (None, 0):
        raise HlsgenError(f"node {node.name}: weight {w.name} must be quantized per output channel or per tensor "
                          f"(it is quantized along axis {w.qtype.axis})")
    scale = np.broadcast_to(w.qtype.scale, (w.shape[0],)).astype(np.float64)
    zw = np.asarray(w.qtype.zero_point, dtype=np.int64).reshape(-1)
    if not np.any(zw):
        return w.data.astype(np.int64), scale, w.qtype.int
    codes = w.data.astype(np.int64) - zw.reshape((-1,) + (1,) * (w.data.ndim - 1))
    lo, hi = int(codes.min(initial=0)), int(codes.max(initial=0))
    bits = max(2, signed_bits_for(hi), signed_bits_for(-lo - 1))  # the narrowest signed type holding lo..hi
    return codes, scale, IntType(bits, True)


def layer_attrs(graph: Graph, node: Node, codes: np.ndarray, s_w: np.ndarray,
                st: LayerSettings) -> tuple[dict[str, Any], np.ndarray]:
    """The attributes (the epilogue, ir/epilogue.py, and its descriptions) and the folded int bias of a
    Conv/Gemm node; the steps are computed as flat attributes (FLAT_KEYS) and packed at the end."""
    qx, qy = _qtype(graph, node.inputs[0]), _out_qtype(graph, node.outputs[0])
    s_x, zp_x = float(qx.scale), int(qx.zero_point)
    acc_scale = s_x * s_w
    real_bias = graph.tensor(node.inputs[2]).real_value()
    try:
        b_q = sign_bias(real_bias, acc_scale, st.bias_bits) if qy.int.bipolar else \
            quantize_bias(real_bias, acc_scale, st.bias_bits)
    except ValueError as e:
        raise HlsgenError(f"node {node.name}: {e}") from None
    bias = b_q - zp_x * codes.reshape(codes.shape[0], -1).sum(axis=1)
    skip = _qtype(graph, node.inputs[3]) if len(node.inputs) > 3 else None
    if qy.int.bipolar:
        attrs, first = _sign_step(node, acc_scale), "mult"
    elif node.attr("mid") is None:
        attrs, first = _single_step(node, acc_scale, qy, skip, st.multiplier_bits), "mult"
        _bias_remainder(attrs, node, real_bias - b_q * acc_scale, qy)
    else:
        attrs, first = _two_step(node, acc_scale, qy, skip, st.multiplier_bits), "mid_mult"
    if skip is not None:
        attrs["skip_zp"] = int(skip.zero_point)
    acc_bits = accumulator_bits(codes, qx.int, bias)
    all_mults = [np.asarray(v) for k, v in attrs.items() if k.endswith(("mult", "mult_neg")) and v is not None]
    mult_bits = signed_bits_for(max(int(np.max(np.abs(m), initial=0)) for m in all_mults))
    first_bits = signed_bits_for(max(int(np.max(np.abs(attrs[k]), initial=0))
                                     for k in (first, f"{first}_neg") if attrs.get(k) is not None))
    _check_widths(node, acc_bits, first_bits, st)
    attrs.update(rounding=st.rounding, acc_bits=acc_bits, mult_bits=mult_bits, act=node.attr("act"),
                 reproduces=_reproduces(node, qy))
    flat = {k: attrs.pop(k) for k in FLAT_KEYS if k in attrs}
    return {**attrs, "epilogue": epilogue_of(flat)}, bias


def _single_step(node: Node, acc_scale: np.ndarray, qy: QType, skip: QType | None, bits: int) -> dict[str, Any]:
    """v = acc·M [+ (skip − zp_s)·Mb], M/2^S ≈ s_x·s_w[c]/s_y, one rounding (numerics.md §7–8)."""
    n = acc_scale.size
    ratios = [acc_scale / np.broadcast_to(np.asarray(qy.scale, np.float64), (n,))]
    if skip is not None:
        ratios.append(np.full(n, float(skip.scale) / float(qy.scale)))
    if node.attr("act") == "leaky":
        ratios.append(ratios[0] * float(node.attr("alpha")))
    mults, shift = multipliers(node, ratios, bits)
    lo, hi = clamp_codes(node.name, qy, node.attr("clip_min"), node.attr("clip_max"))
    attrs = {"mult": _ints(mults[0]), "shift": _ints(shift), "zp": int(np.asarray(qy.zero_point).reshape(-1)[0]),
             "lo": lo, "hi": hi,
             "mult_neg": _ints(mults[-1]) if node.attr("act") == "leaky" else None}
    if skip is not None:
        attrs["skip_mult"] = _ints(mults[1])
    return attrs


def _bias_remainder(attrs: dict[str, Any], node: Node, remainder: np.ndarray, qy: QType) -> None:
    """The part of a float bias the accumulator grid s_x·s_w cannot hold (a QONNX/Brevitas layer
    whose inputs and weights have coarse scales, e.g. 2-bit activations times bipolar weights with
    a folded BatchNorm: the acc grid is 1.0 while the output grid is too) is added after the
    multiplier, at 2^-S of an output step: B2 = round(r / s_y · 2^S). Model-given int32 biases (QDQ)
    leave no remainder. Not with LeakyReLU, whose sign test precedes B2."""
    if node.attr("act") == "leaky" or not np.any(remainder):
        return
    b2 = scaled_bias(remainder, float(qy.scale), np.asarray(attrs["shift"]))
    if np.any(b2):
        attrs["post_bias"] = _ints(b2)


def _sign_step(node: Node, acc_scale: np.ndarray) -> dict[str, Any]:
    """A bipolar output (QONNX BipolarQuant: +1 where the layer's real output v >= 0, else -1).
    With the bias rounded toward the threshold (numerics.sign_bias), v >= 0 exactly when acc >= 0
    (acc <= 0 on a channel whose scale is negative), and the ordinary requant
        y = clamp(1 + round_shift(acc · (±2), 0), -1, 1)
    maps acc >= 0 to 1 + 2·acc >= +1 and acc <= -1 to <= -1: the sign, with 0 -> +1."""
    if node.attr("mid") is not None or len(node.inputs) > 3 or node.attr("act") != "none":
        raise HlsgenError(f"node {node.name}: a bipolar output after a fused add or activation is not supported")
    n = acc_scale.size
    return {"mult": _ints(np.where(acc_scale > 0, 2, -2)), "shift": (0,) * n, "zp": 1, "lo": -1, "hi": 1,
            "mult_neg": None}


MID_MULT_BITS = 24


def _two_step(node: Node, acc_scale: np.ndarray, qy: QType, skip: QType | None, bits: int) -> dict[str, Any]:
    """Step 1 reproduces the model's quantizer of t, step 2 the ops after it (numerics.md §8):
    t = clamp(zp_t + round_shift(acc·M1, S1), lo_t, hi_t),   M1/2^S1 ≈ s_x·s_w[c]/s_t
    y = clamp(zp_y + round_shift((t − zp_t)·M + (skip − zp_s)·Mb + B2, S), lo, hi),
        M/2^S ≈ post_a[c]·s_t/s_y,  Mb/2^S ≈ s_s/s_y,  B2 = round(post_b[c]/s_y · 2^S)."""
    qt: QType = node.attr("mid")
    n, s_t, s_y = acc_scale.size, float(qt.scale), float(qy.scale)
    r1 = [acc_scale / s_t] + ([acc_scale / s_t * float(node.attr("alpha"))] if node.attr("act") == "leaky" else [])
    # step 1 rounds the model's intermediate tensor, whose step-2 gain magnifies a near-tie: its
    # multiplier keeps float32 precision (24 bits) so that t matches the model's float32 rounding
    m1, sh1 = multipliers(node, r1, max(bits, MID_MULT_BITS))
    lo_t, hi_t = clamp_codes(node.name, qt, node.attr("clip_min"), node.attr("clip_max"))
    post_a = np.broadcast_to(np.asarray(node.attr("post_a"), dtype=np.float64), (n,))
    r2 = [post_a * s_t / s_y] + ([np.full(n, float(skip.scale) / s_y)] if skip is not None else [])
    leaky = node.attr("post_act") == "leaky"
    if leaky:
        r2.append(r2[0] * float(node.attr("post_alpha")))
    m2, sh2 = multipliers(node, r2, bits)
    lo, hi = clamp_codes(node.name, qy, node.attr("post_clip_min"), node.attr("post_clip_max"))
    post_b = np.broadcast_to(np.asarray(node.attr("post_b"), dtype=np.float64), (n,))
    attrs = {"mid_mult": _ints(m1[0]), "mid_mult_neg": _ints(m1[1]) if len(m1) > 1 else None,
             "mid_shift": _ints(sh1), "mid_zp": int(qt.zero_point), "mid_lo": lo_t, "mid_hi": hi_t,
             "mult": _ints(m2[0]), "mult_neg": _ints(m2[-1]) if leaky else None, "shift": _ints(sh2),
             "zp": int(qy.zero_point), "lo": lo, "hi": hi, "post_act": node.attr("post_act")}
    if skip is not None:
        attrs["skip_mult"] = _ints(m2[1])
    if np.any(post_b != 0):
        if np.max(np.abs(post_b) / s_y * np.exp2(sh2.astype(np.float64))) >= 2.0 ** 61:
            raise HlsgenError(f"node {node.name}: the additive term of its second requant step needs more than "
                              "62 bits")
        attrs["post_bias"] = _ints(scaled_bias(post_b, s_y, sh2))
    _check_step2(node, attrs, qt, skip)
    return attrs


def _check_step2(node: Node, attrs: dict[str, Any], qt: QType, skip: QType | None) -> None:
    """|(t − zp_t)·M| + |(skip − zp_s)·Mb| + |B2| must fit the 64-bit sum of step 2."""
    zp_t = int(qt.zero_point)
    x = max(abs(attrs["mid_lo"] - zp_t), abs(attrs["mid_hi"] - zp_t))
    m = max(abs(v) for k in ("mult", "mult_neg") for v in (attrs.get(k) or (0,)))
    bound = x * m + max((abs(v) for v in attrs.get("post_bias", (0,))), default=0)
    if skip is not None:
        zp_s = int(skip.zero_point)
        bound += max(abs(skip.int.lo - zp_s), abs(skip.int.hi - zp_s)) * max(abs(v) for v in attrs["skip_mult"])
    if bound >= 1 << 62:
        raise HlsgenError(f"node {node.name}: the second requant step of its epilogue does not fit 63 bits")


def _reproduces(node: Node, qy: QType) -> tuple[str, ...]:
    """The quantizers of the source graph this layer's epilogue reproduces, in order."""
    out = f"Q({node.outputs[0]}) {qy!r}"
    return (f"Q({node.attr('mid_tensor')}) {node.attr('mid')!r}", out) if node.attr("mid") is not None else (out,)


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


def _out_qtype(graph: Graph, tensor: str) -> QType:
    """A layer's output type: per tensor, or per channel with zero points 0 (an exact accumulator
    output, passes/calibrate.exact_output_qtype)."""
    q = graph.tensor(tensor).qtype
    if q is not None and q.per_channel and q.axis == 1 and not np.any(q.zero_point):
        return q
    return _qtype(graph, tensor)


def _qtype(graph: Graph, tensor: str) -> QType:
    q = graph.tensor(tensor).qtype
    if q is None or q.per_channel:
        raise HlsgenError(f"tensor {tensor} needs a per-tensor activation quantization")
    return q


def _ints(a: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in np.asarray(a).reshape(-1))

"""Quantization ONNX translators: QuantizeLinear, DequantizeLinear (QDQ) and QONNX Quant.

Scale and zero point must be constants, per tensor or along one axis; they become the `QType` of the
integer tensor between a QuantizeLinear and a DequantizeLinear (`Ctx.set_qtype`). A QONNX Quant is
rewritten as that pair around a new `<out>__q` tensor. Registered in onnx_ops.TRANSLATORS (Quant
also under the QONNX domains).
"""

from __future__ import annotations

import numpy as np
import onnx

from hlsgen.frontend.onnx_ops_common import Ctx, Unsupported, norm_axis, operand, scalar
from hlsgen.ir.types import BIPOLAR, IntType, QType

_T = onnx.TensorProto
ZP_TYPES: dict[int, IntType] = {
    _T.INT8: IntType(8, True), _T.UINT8: IntType(8, False), _T.INT16: IntType(16, True),
    _T.UINT16: IntType(16, False), _T.INT4: IntType(4, True), _T.UINT4: IntType(4, False),
    _T.INT32: IntType(32, True),
}


def _qtype(itype: IntType, scale: np.ndarray, zp: np.ndarray, axis: int | None) -> QType:
    try:
        if axis is None:
            return QType(itype, scale.reshape(()), zp.reshape(()))
        return QType(itype, scale.reshape(-1), zp.reshape(-1), axis)
    except ValueError as e:
        raise Unsupported(str(e)) from e


def _positive_scale(ctx: Ctx, node: onnx.NodeProto) -> np.ndarray:
    """The constant scale input (1) of a quantizer, refused unless every entry is finite and > 0."""
    name = ctx.inp(node, 1)
    scale = ctx.need_const(name, "scale").astype(np.float64)
    bad = np.flatnonzero(~(np.isfinite(scale) & (scale > 0)))
    if bad.size:
        where = f" (entry {int(bad[0])})" if scale.size > 1 else ""
        raise Unsupported(f"scale '{name}' is {scale.reshape(-1)[bad[0]]:g}{where}; a scale must be finite and > 0")
    return scale


def _linear_qtype(ctx: Ctx, node: onnx.NodeProto, xs: tuple[int, ...], default_elem: int | None) -> QType:
    """QType of a QuantizeLinear/DequantizeLinear: constant scale and zero point, per tensor or axis."""
    a = ctx.attrs(node)
    if a.get("block_size", 0):
        raise Unsupported("blocked quantization (block_size)")
    scale = _positive_scale(ctx, node)
    zp_name = ctx.inp(node, 2)
    zp = np.zeros((), np.int64) if zp_name is None else ctx.need_const(zp_name, "zero point")
    elem = default_elem if zp_name is None else ctx.elem_type(zp_name)
    if elem not in ZP_TYPES:
        raise Unsupported(f"quantized type {onnx.helper.tensor_dtype_to_string(elem or 0)}")
    if scale.size == 1 and zp.size == 1:
        return _qtype(ZP_TYPES[elem], scale, zp, None)
    axis = norm_axis(int(a.get("axis", 1)), len(xs))
    if scale.ndim != 1 or scale.size != xs[axis] or zp.size not in (1, scale.size):
        raise Unsupported(f"scale of shape {scale.shape} does not fit axis {axis} of {xs}")
    return _qtype(ZP_TYPES[elem], scale, np.broadcast_to(zp.reshape(-1), scale.shape), axis)


def quantize_linear(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    default = int(ctx.attrs(node).get("output_dtype", 0)) or _T.UINT8
    zp_name = ctx.inp(node, 2)
    qt = _linear_qtype(ctx, node, xs, default)
    elem = default if zp_name is None else ctx.elem_type(zp_name)
    ctx.add_node(name, "QuantizeLinear", [x], node.output[:1], {}, [xs])
    ctx.set_qtype(node.output[0], qt, elem)


def dequantize_linear(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    x, xs = operand(ctx, node)
    qt = _linear_qtype(ctx, node, xs, ctx.elem_type(x))
    ctx.set_qtype(x, qt)
    ctx.add_node(name, "DequantizeLinear", [x], node.output[:1], {}, [xs])


def _qonnx_axis(shape: tuple[int, ...], xs: tuple[int, ...]) -> int | None:
    """Per-tensor (None) or the one axis of x along which the scale/zero point vary."""
    if len(shape) > len(xs):
        raise Unsupported(f"scale rank {len(shape)} exceeds input rank {len(xs)}")
    varying = [i for i, d in enumerate(shape) if d != 1]
    if not varying:
        return None
    axis = len(xs) - len(shape) + varying[0]
    if len(varying) > 1 or shape[varying[0]] != xs[axis]:
        raise Unsupported(f"scale/zero point of shape {shape} is not per tensor or per channel of {xs}")
    return axis


def _qonnx_int(ctx: Ctx, node: onnx.NodeProto, static: bool) -> IntType | None:
    """The integer type of a QONNX Quant; None for a 1-bit signed Quant, which qonnx executes as
    bipolar (x >= 0 -> +1, else -1). Constants (weights, biases) may have 1..32 bits, activations 2..16."""
    a = ctx.attrs(node)
    mode = str(a.get("rounding_mode", "ROUND")).upper()
    if mode != "ROUND":
        raise Unsupported(f"rounding_mode {mode} (only ROUND, half to even)")
    bits = scalar(ctx.need_const(ctx.inp(node, 3), "bitwidth"), "bitwidth")
    low, high = (1, 32) if static else (2, 16)
    if not np.isfinite(bits) or bits != int(bits) or not low <= bits <= high:
        raise Unsupported(f"bit width {bits:g} (must be an integer in {low}..{high} for "
                          f"{'a constant' if static else 'an activation'})")
    signed = bool(a.get("signed", 1))
    if bits == 1 and signed:
        return None
    if bits == 1:
        raise Unsupported("1-bit unsigned Quant")
    return IntType(int(bits), signed, bool(a.get("narrow", 0)))


def _qonnx_params(ctx: Ctx, node: onnx.NodeProto, xs: tuple[int, ...],
                  with_zp: bool) -> tuple[np.ndarray, np.ndarray, int | None]:
    """(scales, zero points, axis) of a Quant/BipolarQuant: per tensor or along one axis of x."""
    scale = _positive_scale(ctx, node)
    zp = ctx.need_const(ctx.inp(node, 2), "zero point").astype(np.float64) if with_zp else np.zeros(())
    if np.any(zp != np.round(zp)):
        raise Unsupported("the zero point is not integer-valued")
    try:
        shape = tuple(np.broadcast_shapes(scale.shape, zp.shape))
    except ValueError as e:
        raise Unsupported("scale and zero point shapes do not broadcast") from e
    axis = _qonnx_axis(shape, xs)
    scales = np.broadcast_to(scale, shape).reshape(-1)
    zps = np.broadcast_to(zp, shape).reshape(-1).astype(np.int64)
    return (scales[:1], zps[:1], None) if axis is None else (scales, zps, axis)


def qonnx_quant(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """QONNX Quant -> QuantizeLinear (to `<out>__q`) -> DequantizeLinear."""
    x, xs = operand(ctx, node)
    itype = _qonnx_int(ctx, node, ctx.is_static(x))
    scales, zps, axis = _qonnx_params(ctx, node, xs, with_zp=True)
    if itype is None:
        if np.any(zps != 0):
            raise Unsupported("1-bit (bipolar) Quant with a nonzero zero point")
        _bipolar_constant(ctx, node, name, x, xs, scales, axis)
        return
    qt = _qtype(itype, scales, zps, axis)
    out = node.output[0]
    mid = ctx.fresh(f"{out}__q")
    ctx.add_node(name, "QuantizeLinear", [x], [mid], {}, [xs])
    ctx.set_qtype(mid, qt)
    ctx.add_node(f"{name}__dq", "DequantizeLinear", [mid], [out], {}, [xs])


def bipolar_quant(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """QONNX BipolarQuant(x, scale) = (x >= 0 ? +1 : -1) * scale."""
    x, xs = operand(ctx, node)
    scales, _, axis = _qonnx_params(ctx, node, xs, with_zp=False)
    _bipolar_constant(ctx, node, name, x, xs, scales, axis)


def _bipolar_constant(ctx: Ctx, node: onnx.NodeProto, name: str, x: str, xs: tuple[int, ...],
                      scales: np.ndarray, axis: int | None) -> None:
    """Bipolar quantization (x >= 0 -> +1, else -1, as qonnx's execute_onnx defines it). Of a
    constant, the codes are computed now; of an activation, it is a Quantize/Dequantize pair with
    the BIPOLAR type (the layer before it gets a sign epilogue, docs/numerics.md)."""
    qt = _qtype(BIPOLAR, scales, np.zeros(scales.shape, np.int64), axis)
    value = ctx.const(x)
    if value is None:
        if axis is not None or float(scales[0]) <= 0:
            raise Unsupported("a bipolar activation needs one positive scale")
        mid = ctx.fresh(f"{node.output[0]}__q")
        ctx.add_node(name, "QuantizeLinear", [x], [mid], {}, [xs])
        ctx.set_qtype(mid, qt)
        ctx.add_node(f"{name}__dq", "DequantizeLinear", [mid], node.output[:1], {}, [xs])
        return
    codes = ctx.new_const(f"{node.output[0]}__codes", np.where(value >= 0, 1, -1).astype(np.int8))
    ctx.set_qtype(codes, qt, _T.INT8)
    ctx.add_node(name, "DequantizeLinear", [codes], node.output[:1], {}, [xs])


def qonnx_trunc(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """QONNX Trunc (v1: x, scale, zeropt, in_bitwidth, out_bitwidth; v2 adds out_scale before
    out_bitwidth and signed/narrow attributes), as qonnx's execute_onnx defines it: the input is
    taken as codes q = round(x/scale + zeropt) of in_bitwidth bits, then y = f(q / 2^k), f = FLOOR
    (default), CEIL or ROUND, clamped to out_bitwidth (v2). Output real: v1 (y − zeropt)·scale;
    v2 (y − zeropt/2^k)·out_scale with 2^k = out_scale/scale. Becomes a Quantize/Dequantize pair on the
    input, an IR Trunc, and a Quantize/Dequantize pair with the output's grid."""
    x, xs = operand(ctx, node)
    a = ctx.attrs(node)
    mode = str(a.get("rounding_mode", "FLOOR")).upper()
    if mode not in ("FLOOR", "CEIL", "ROUND"):
        raise Unsupported(f"rounding_mode {mode}")
    v2 = len(node.input) >= 6
    scale = scalar(ctx.need_const(ctx.inp(node, 1), "scale"), "scale")
    zp = scalar(ctx.need_const(ctx.inp(node, 2), "zero point"), "zero point")
    in_bits = scalar(ctx.need_const(ctx.inp(node, 3), "input bit width"), "input bit width")
    out_bits = scalar(ctx.need_const(ctx.inp(node, 5 if v2 else 4), "output bit width"), "output bit width")
    out_scale = scalar(ctx.need_const(ctx.inp(node, 4), "output scale"), "output scale") if v2 else scale
    k = int(round(np.log2(out_scale / scale))) if v2 else int(in_bits - out_bits)
    out_zp = zp / 2 ** k if v2 else zp
    if not (scale > 0 and out_scale > 0) or zp != int(zp) or out_zp != int(out_zp) or k < 0 or \
            not 2 <= int(out_bits) <= int(in_bits) <= 32 or in_bits != int(in_bits) or out_bits != int(out_bits):
        raise Unsupported(f"Trunc with scale {scale:g}, zero point {zp:g}, bit widths {in_bits:g} -> {out_bits:g}")
    signed, narrow = bool(a.get("signed", 1)), bool(a.get("narrow", 0))
    q_in = ctx.fresh(f"{node.output[0]}__in_q")
    ctx.add_node(f"{name}__in", "QuantizeLinear", [x], [q_in], {}, [xs])
    ctx.set_qtype(q_in, _qtype(IntType(int(in_bits), signed), np.array([scale]), np.array([int(zp)]), None))
    x_dq = ctx.fresh(f"{node.output[0]}__in")
    ctx.add_node(f"{name}__in_dq", "DequantizeLinear", [q_in], [x_dq], {}, [xs])
    t = ctx.fresh(f"{node.output[0]}__t")
    ctx.add_node(name, "Trunc", [x_dq], [t], {"in_scale": float(scale), "in_zp": int(zp), "shift": k,
                                                "trunc_mode": mode, "out_scale": float(out_scale),
                                                "out_zp": int(out_zp)}, [xs])
    q_out = ctx.fresh(f"{node.output[0]}__q")
    ctx.add_node(f"{name}__out", "QuantizeLinear", [t], [q_out], {}, [xs])
    # v2 clamps to out_bitwidth; v1 does not, and CEIL/ROUND can reach 2^(out-1): one more bit then
    out_type = IntType(int(out_bits), signed, narrow and signed) if v2 or mode == "FLOOR" else \
        IntType(int(out_bits) + 1, signed)
    ctx.set_qtype(q_out, _qtype(out_type, np.array([out_scale]), np.array([int(out_zp)]), None))
    ctx.add_node(f"{name}__out_dq", "DequantizeLinear", [q_out], node.output[:1], {}, [xs])

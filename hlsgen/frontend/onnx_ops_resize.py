"""ONNX Resize (opsets 10 to 19+) and Upsample (7, 9) in mode nearest as an IR Resize by integer factors.

The hardware repeats every pixel: output (i, j) is input (i // fh, j // fw). ONNX defines the
nearest source index of an output coordinate x through `coordinate_transformation_mode` (x_original,
in float) and `nearest_mode` (its rounding), clamped to [0, in - 1]; `source_index` computes that map
per axis in float64 from the spec's formulas, and a node is accepted only when the map equals the
plain repeat `x // f` on both spatial axes (e.g. asymmetric + floor at every factor, half_pixel +
round_prefer_floor at every factor, asymmetric + round_prefer_floor at factor 2 only). Resize-10 and
Upsample have no such attributes: onnxruntime maps them as asymmetric + floor (Upsample's spec:
input[floor(y / scale)]). Anything else is refused with the node's mode: another mode (linear,
cubic), a factor that is not an integer or is not 1 on N and C, scales or sizes that are not constant,
tf_crop_and_resize and tf_half_pixel_for_nearest, a keep_aspect_ratio_policy other than stretch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from hlsgen.frontend.onnx_ops_common import Ctx, Unsupported, operand

# the coordinate transformations `source_index` implements: every one of the spec but tf_crop_and_resize
# (it reads the roi) and tf_half_pixel_for_nearest (Resize-11 only; neither onnxruntime nor onnx.reference
# runs it, so nothing could check it)
MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric")
ROUNDINGS = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _original(x: np.ndarray, ctm: str, in_len: int, out_len: int, scale: float) -> np.ndarray:
    """x_original of output coordinates x (ONNX Resize, coordinate_transformation_mode), float64."""
    if ctm == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if ctm == "half_pixel_symmetric":  # opset 19
        adjustment = out_len / (scale * in_len)
        center = in_len / 2 * (1 - adjustment)
        return center + (x + 0.5) / scale - 0.5
    if ctm == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else np.zeros_like(x)
    if ctm == "align_corners":
        return x * (in_len - 1) / (out_len - 1) if out_len > 1 else np.zeros_like(x)
    if ctm == "asymmetric":
        return x / scale
    raise Unsupported(f"coordinate_transformation_mode {ctm} is not supported")


def _round(v: np.ndarray, nearest_mode: str) -> np.ndarray:
    if nearest_mode == "floor":
        return np.floor(v)
    if nearest_mode == "ceil":
        return np.ceil(v)
    frac = v - np.floor(v)
    tie_down = nearest_mode == "round_prefer_floor"
    if nearest_mode not in ("round_prefer_floor", "round_prefer_ceil"):
        raise Unsupported(f"nearest_mode {nearest_mode} is not supported")
    return np.where(frac == 0.5, np.floor(v) if tie_down else np.ceil(v), np.floor(v + 0.5))


def source_index(in_len: int, out_len: int, scale: float, ctm: str, nearest_mode: str) -> np.ndarray:
    """For every output coordinate of one axis, the input coordinate ONNX Resize (mode nearest) reads."""
    x = np.arange(out_len, dtype=np.float64)
    v = _round(_original(x, ctm, in_len, out_len, float(scale)), nearest_mode)
    return np.clip(v, 0, in_len - 1).astype(np.int64)


def is_repeat(in_len: int, out_len: int, scale: float, ctm: str, nearest_mode: str) -> bool:
    """Whether the axis' index map is the plain repeat x // f by an integer factor f = out / in."""
    if out_len % in_len:
        return False
    f = out_len // in_len
    return bool(np.array_equal(source_index(in_len, out_len, scale, ctm, nearest_mode), np.arange(out_len) // f))


def _scales_and_sizes(ctx: Ctx, node: onnx.NodeProto, xs: tuple[int, ...]) -> tuple[list[float], list[int]]:
    """Per axis of the input: the scale and the output size, from the constant scales or sizes input
    (Resize-11+: X, roi, scales, sizes; Resize-10 and Upsample-9: X, scales; Upsample-7: an attribute)."""
    a = ctx.attrs(node)
    if node.op_type == "Upsample" and "scales" in a:
        scales = [float(s) for s in a["scales"]]
        return scales, [int(np.floor(d * s)) for d, s in zip(xs, scales, strict=False)]
    scale_in = ctx.inp(node, 1 if node.op_type == "Upsample" or ctx.opset < 11 else 2)
    size_in = ctx.inp(node, 3) if node.op_type == "Resize" and ctx.opset >= 11 else None
    axes = [int(v) % len(xs) for v in a.get("axes", range(len(xs)))]
    if size_in is not None:
        sizes = _per_axis(_constant(ctx, size_in, "sizes"), axes, list(xs), int)
        return [o / d for o, d in zip(sizes, xs, strict=True)], sizes
    if scale_in is None:
        raise Unsupported("neither scales nor sizes is given")
    scales = _per_axis(_constant(ctx, scale_in, "scales"), axes, [1.0] * len(xs), float)
    return scales, [int(np.floor(d * s)) for d, s in zip(xs, scales, strict=True)]


def _constant(ctx: Ctx, name: str, what: str) -> np.ndarray:
    """A constant, or a value computed from static shapes (Shape -> Gather -> Concat, as exporters
    write the output size), else Unsupported."""
    value = ctx.shape_value(name)
    if value is None:
        raise Unsupported(f"{what} must be a constant")
    return value


def _per_axis(values: np.ndarray, axes: list[int], fill: list[Any], kind: type) -> list[Any]:
    out = list(fill)
    flat = values.reshape(-1)
    if flat.size != len(axes):
        raise Unsupported(f"{flat.size} scales or sizes for {len(axes)} axes")
    for ax, v in zip(axes, flat, strict=True):
        out[ax] = kind(v)
    return out


def _modes(ctx: Ctx, node: onnx.NodeProto) -> tuple[str, str, str]:
    """(mode, coordinate_transformation_mode, nearest_mode) of the node, with each opset's defaults."""
    a = ctx.attrs(node)
    mode = str(a.get("mode", "nearest"))
    if node.op_type == "Upsample" or ctx.opset < 11:
        return mode, "asymmetric", "floor"
    policy = str(a.get("keep_aspect_ratio_policy", "stretch"))
    if policy != "stretch":
        raise Unsupported(f"keep_aspect_ratio_policy {policy} is not supported")
    return mode, str(a.get("coordinate_transformation_mode", "half_pixel")), \
        str(a.get("nearest_mode", "round_prefer_floor"))


def resize(ctx: Ctx, node: onnx.NodeProto, name: str) -> None:
    """Resize or Upsample (nearest) by integer factors on H and W: an IR Resize{factors}."""
    x, xs = operand(ctx, node)
    mode, ctm, nearest = _modes(ctx, node)
    if mode != "nearest":
        raise Unsupported(f"mode {mode} is not supported (only nearest)")
    if len(xs) != 4:
        raise Unsupported(f"a {len(xs)}-D input (only NCHW)")
    scales, sizes = _scales_and_sizes(ctx, node, xs)
    if tuple(sizes[:2]) != tuple(xs[:2]):
        raise Unsupported(f"resizes N or C ({list(xs)} -> {sizes}); only H and W are supported")
    where = f"coordinate_transformation_mode {ctm}, nearest_mode {nearest}"
    if any(o < d or o % d for o, d in zip(sizes[2:], xs[2:], strict=True)):
        raise Unsupported(f"{list(xs)} -> {sizes}: only integer upsampling factors on H and W are supported")
    factors = tuple(o // d for o, d in zip(sizes[2:], xs[2:], strict=True))
    if not all(is_repeat(d, o, s, ctm, nearest) for d, o, s in zip(xs[2:], sizes[2:], scales[2:], strict=True)):
        raise Unsupported(f"{where} at factors {factors} does not read input pixel (i // f) for output pixel i "
                          "(only that nearest-neighbour repeat is supported)")
    ctx.add_node(name, "Resize", [x], node.output[:1], {"factors": factors}, [tuple(sizes)])

"""Golden kernels of the float ops of docs/ir.md, computed in float64.

Kernel signature: `kernel(node, graph, inputs) -> np.ndarray`. A constant input is read as reals
with `graph.tensor(name).real_value()` (dequantized if it is stored as integer codes); other
inputs are the executor's arrays. QuantizeLinear returns int64 codes, DequantizeLinear reads codes.
Reshape and Transpose move values without touching them and serve the integer graph as well.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hlsgen import numerics
from hlsgen.golden.unary import FUNCTIONS
from hlsgen.golden.window import conv2d, pad_hw, pads4, pair, reduce_windows, upsample
from hlsgen.ir.graph import Graph, Node
from hlsgen.ir.ops import SPECS, Op
from hlsgen.ir.types import QType


# ---- helpers --------------------------------------------------------------------------------------
def real_input(node: Node, graph: Graph, inputs: list[np.ndarray], i: int) -> np.ndarray:
    """Input i as float64 reals: a constant through real_value(), else the executor's array."""
    name = node.inputs[i]
    if graph.is_const(name):
        return graph.tensor(name).real_value()
    return np.asarray(inputs[i], dtype=np.float64)


def _bound(value: Any, default: float) -> float:
    return default if value is None else float(value)


def activation(y: np.ndarray, node: Node) -> np.ndarray:
    """The fused epilogue of Conv/Gemm: act ∈ none, relu, clip (clip_min/max), leaky (alpha)."""
    act = node.attr("act") or "none"
    if act == "none":
        return y
    if act == "relu":
        return np.maximum(y, 0.0)
    if act == "clip":
        lo = _bound(node.attr("clip_min"), -np.inf)
        hi = _bound(node.attr("clip_max"), np.inf)
        return np.clip(y, lo, hi)
    if act == "leaky":
        return np.where(y >= 0, y, float(node.attr("alpha")) * y)
    raise ValueError(f"{node.name}: unknown act {act!r}")


def _channel_vector(v: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = -1
    return np.asarray(v, dtype=np.float64).reshape(shape)


def _qtype(graph: Graph, name: str, node: Node) -> QType:
    qt = graph.tensor(name).qtype
    if qt is None:
        raise ValueError(f"{node.name} ({node.op}): tensor {name} has no qtype")
    return qt


# ---- compute ops ----------------------------------------------------------------------------------
def conv(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    x, w, b = (real_input(node, graph, inputs, i) for i in range(3))
    y = conv2d(x, w, pads=pads4(node.attr("pads")), pad_value=0.0, strides=pair(node.attr("strides"), 1),
               dilations=pair(node.attr("dilations"), 1), group=int(node.attr("group")),
               matmul=np.matmul)
    y = y + b.reshape(1, -1, 1, 1)
    skip = real_input(node, graph, inputs, 3) if len(inputs) > 3 else None
    if skip is not None and node.attr("mid") is None:
        y = y + skip
    return _step2(activation(y, node), node, skip)


def _step2(t: np.ndarray, node: Node, skip: np.ndarray | None) -> np.ndarray:
    """Step 2 of a two-step epilogue (passes/two_step.py) in float: post_act(post_a·t + post_b + skip).
    The intermediate quantizer itself is the quantize pass's business; here t stays real."""
    if node.attr("mid") is None:
        return t
    a = _channel_vector(np.asarray(node.attr("post_a")), t.ndim, 1)
    y = a * t + _channel_vector(np.asarray(node.attr("post_b")), t.ndim, 1)
    if skip is not None:
        y = y + skip
    post = {k[5:]: v for k, v in node.attrs.items() if k.startswith("post_")}
    return activation(y, Node(node.name, node.op, (), (), post))


def gemm(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    x, w, b = (real_input(node, graph, inputs, i) for i in range(3))
    if x.ndim != 2:
        raise ValueError(f"{node.name} (Gemm): input must be [N, K], got shape {x.shape}")
    return _step2(activation(x @ w.T + b, node), node, None)


def matmul(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    return np.matmul(real_input(node, graph, inputs, 0), real_input(node, graph, inputs, 1))


def add(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    return real_input(node, graph, inputs, 0) + real_input(node, graph, inputs, 1)


def sub(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    return real_input(node, graph, inputs, 0) - real_input(node, graph, inputs, 1)


def mul(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    return real_input(node, graph, inputs, 0) * real_input(node, graph, inputs, 1)


def div(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    return real_input(node, graph, inputs, 0) / real_input(node, graph, inputs, 1)


def affine(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    x, a, b = (real_input(node, graph, inputs, i) for i in range(3))
    axis = int(node.attr("axis"))
    return x * _channel_vector(a, x.ndim, axis) + _channel_vector(b, x.ndim, axis)


def batch_normalization(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    x, gamma, beta, mean, var = (real_input(node, graph, inputs, i) for i in range(5))
    eps = float(node.attr("epsilon"))
    scale = gamma / np.sqrt(var + eps)
    return (x - _channel_vector(mean, x.ndim, 1)) * _channel_vector(scale, x.ndim, 1) + _channel_vector(
        beta, x.ndim, 1)


# ---- activations ----------------------------------------------------------------------------------
def relu(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    return np.maximum(real_input(node, graph, inputs, 0), 0.0)


def clip(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    lo, hi = _bound(node.attr("min"), -np.inf), _bound(node.attr("max"), np.inf)
    return np.clip(real_input(node, graph, inputs, 0), lo, hi)


def leaky_relu(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    x = real_input(node, graph, inputs, 0)
    return np.where(x >= 0, x, float(node.attr("alpha")) * x)


def unary(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """Sigmoid, Tanh, Elu, ... (hlsgen.golden.unary.FUNCTIONS) with the node's attributes."""
    spec = SPECS[Op(node.op)]
    return FUNCTIONS[node.op](real_input(node, graph, inputs, 0), {k: node.attr(k) for k in spec.attrs})


def log_softmax(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """ONNX opset-13 meaning: along `axis` (default -1)."""
    x = real_input(node, graph, inputs, 0)
    axis = int(node.attr("axis"))
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def softmax(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    return np.exp(log_softmax(node, graph, inputs))


# ---- pools and shape ops --------------------------------------------------------------------------
def _window_attrs(node: Node) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int, int, int],
                                       tuple[int, int]]:
    kernel = pair(node.attr("kernel"), 1)
    return kernel, pair(node.attr("strides"), 1), pads4(node.attr("pads")), pair(node.attr("dilations"), 1)


def max_pool(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    kernel, strides, pads, dil = _window_attrs(node)
    x = pad_hw(real_input(node, graph, inputs, 0), pads, -np.inf)
    return reduce_windows(x, kernel, strides, dil, np.maximum)


def average_pool(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """Window mean; count_include_pad=0 (ONNX default) divides by the number of non-pad taps."""
    kernel, strides, pads, dil = _window_attrs(node)
    x = real_input(node, graph, inputs, 0)
    total = reduce_windows(pad_hw(x, pads, 0.0), kernel, strides, dil, np.add)
    if int(node.attr("count_include_pad")):
        return total / float(kernel[0] * kernel[1])
    ones = pad_hw(np.ones((1, 1) + x.shape[2:]), pads, 0.0)
    return total / reduce_windows(ones, kernel, strides, dil, np.add)


def global_average_pool(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    return np.mean(real_input(node, graph, inputs, 0), axis=(2, 3), keepdims=True)


def pad(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    value = float(node.attr("value") or 0.0)
    return pad_hw(real_input(node, graph, inputs, 0), pads4(node.attr("pads")), value)


def reshape(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """New shape without the batch dim (kept). Values and dtype unchanged (float or codes)."""
    x = np.asarray(inputs[0])
    return x.reshape((x.shape[0],) + tuple(int(d) for d in node.attr("shape")))


def identity(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """The input's value (its output carries another quantizer: passes/absorb_qdq.py)."""
    return np.asarray(inputs[0])


def transpose(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    perm = tuple(int(p) for p in node.attr("perm"))
    if perm[0] != 0:
        raise ValueError(f"{node.name} (Transpose): perm {perm} moves the batch dimension")
    return np.ascontiguousarray(np.transpose(inputs[0], perm))


def concat(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """The inputs' channels one after the other (axis 1)."""
    return np.concatenate([real_input(node, graph, inputs, i) for i in range(len(inputs))], axis=int(node.attr("axis")))


def slice_channels(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """Channels [start, end) of the input (axis 1)."""
    return channel_range(real_input(node, graph, inputs, 0), node)


def channel_range(x: np.ndarray, node: Node) -> np.ndarray:
    """x[:, start:end] along the node's axis (Slice and QSlice alike)."""
    index = [slice(None)] * x.ndim
    index[int(node.attr("axis"))] = slice(int(node.attr("start")), int(node.attr("end")))
    return np.ascontiguousarray(x[tuple(index)])


def resize(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """Nearest-neighbour upsampling by the integer `factors` (fh, fw) (the front-end accepted only
    Resize/Upsample nodes whose source-index map is this plain repeat)."""
    return upsample(real_input(node, graph, inputs, 0), node.attr("factors"))


def depth_to_space(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """ONNX DepthToSpace: DCR takes the depth as (block, block, C'), CRD as (C', block, block)."""
    x = np.asarray(inputs[0])
    n, c, h, w = x.shape
    b = int(node.attr("blocksize"))
    if node.attr("mode") == "CRD":
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return np.ascontiguousarray(y.reshape(n, c // (b * b), h * b, w * b))


# ---- quantization boundary ------------------------------------------------------------------------
def quantize_linear(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    qt = _qtype(graph, node.outputs[0], node)
    return numerics.quantize(real_input(node, graph, inputs, 0), qt, node.attr("rounding"))


def dequantize_linear(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    return numerics.dequantize(np.asarray(inputs[0]), _qtype(graph, node.inputs[0], node))


def trunc(node: Node, graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """QONNX Trunc (docs/ir.md): drop `shift` low bits of the input's codes, rounding as trunc_mode."""
    q = np.round(real_input(node, graph, inputs, 0) / float(node.attr("in_scale")) + int(node.attr("in_zp")))
    scaled = q / float(2 ** int(node.attr("shift")))
    mode = node.attr("trunc_mode")
    y = np.floor(scaled) if mode == "FLOOR" else np.ceil(scaled) if mode == "CEIL" else np.round(scaled)
    return (y - int(node.attr("out_zp"))) * float(node.attr("out_scale"))

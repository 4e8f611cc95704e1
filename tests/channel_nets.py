"""Small ONNX nets with channel concats, splits and slices, shared by the unit and sim tests of the
concat and slice layers (tests/unit/test_channels.py, tests/sim/test_channels_hw.py)."""

from __future__ import annotations

import numpy as np
import onnx
from model_zoo import GraphBuilder
from onnx_builders import init, model, node, vi

X_SHAPE = (1, 3, 6, 6)


def unet(seed: int = 3) -> onnx.ModelProto:
    """A U-Net-like skip: conv a -> (fork) -> conv -> conv b; concat(a, b) -> conv. The skip a is short,
    the branch b long (a 3x3 window and a 1x1 conv later), and their scales differ."""
    g = GraphBuilder(seed)
    a = g.op("Relu", [g.conv("x", 3, 4, 3)])
    b = g.op("Relu", [g.conv(a, 4, 6, 3)])
    b = g.conv(b, 6, 5, 1, gain=3.0)
    c = g.op("Concat", [a, b], axis=1)
    y = g.conv(c, 9, 4, 3)
    return g.model(X_SHAPE, y, [1, 4, 6, 6], "unet")


def split_slice(seed: int = 5, opset: int = 13) -> onnx.ModelProto:
    """conv c (8 channels) -> Split [3, 5] -> (s0, s1); Slice c[1:4) -> s2; concat(s1, s0, s2) (a
    three-input concat, channels reordered) -> conv."""
    g = GraphBuilder(seed)
    c = g.conv("x", 3, 8, 3)
    if opset >= 13:
        sizes = g.const("split", np.array([3, 5], np.int64))
        g.nodes.append(node("Split", [c, sizes], ["s0", "s1"], name="split", axis=1))
    else:
        g.nodes.append(node("Split", [c], ["s0", "s1"], name="split", axis=1, split=[3, 5]))
    bounds = [g.const(k, np.array(v, np.int64)) for k, v in (("starts", [1]), ("ends", [4]), ("axes", [1]))]
    g.nodes.append(node("Slice", [c, *bounds], ["s2"], name="slice"))
    cat = g.op("Concat", ["s1", "s0", "s2"], axis=1)
    y = g.conv(cat, 11, 4, 1)
    return g.model(X_SHAPE, y, [1, 4, 6, 6], "split_slice", opset=opset)


def spp(seed: int = 7) -> onnx.ModelProto:
    """A detector's spatial pyramid pooling: conv c -> (fork to three) max pools 3x3 and 5x5 (stride 1,
    same size); concat(c, pool3, pool5) -> conv. Three branches of three lengths into one join."""
    g = GraphBuilder(seed)
    c = g.op("Relu", [g.conv("x", 3, 4, 3)])
    p3 = g.op("MaxPool", [c], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    p5 = g.op("MaxPool", [c], kernel_shape=[5, 5], pads=[2, 2, 2, 2])
    cat = g.op("Concat", [c, p3, p5], axis=1)
    y = g.conv(cat, 12, 4, 1)
    return g.model(X_SHAPE, y, [1, 4, 6, 6], "spp")


def channels_only() -> onnx.ModelProto:
    """concat(x, x[:, 1:3]): a slice and a concat and nothing else, so they set the network's rate
    (one pixel a cycle: 36 cycles a frame of 6x6)."""
    nodes = [node("Slice", ["x", "starts", "ends", "axes"], ["s"], name="slice"),
             node("Concat", ["x", "s"], ["y"], name="concat", axis=1)]
    return model(nodes, [vi("x", list(X_SHAPE))], [vi("y", [1, 5, 6, 6])], bounds([1], [3], [1]))


def flat(seed: int = 4) -> onnx.ModelProto:
    """Along the feature axis of [1, N]: two Gemms of the flattened input, concatenated (axis -1), then
    a Gemm; the flat tensors stream as one pixel each."""
    rng = np.random.default_rng(seed)
    nodes = [node("Flatten", ["x"], ["f"]), node("Gemm", ["f", "w1", "b1"], ["a"], transB=1),
             node("Gemm", ["f", "w2", "b2"], ["b"], transB=1), node("Concat", ["a", "b"], ["c"], axis=-1),
             node("Gemm", ["c", "w3", "b3"], ["y"], transB=1)]
    k = int(np.prod(X_SHAPE[1:]))
    inits = [init("w1", rng.standard_normal((3, k)) * 0.1), init("b1", np.zeros(3)),
             init("w2", rng.standard_normal((5, k)) * 0.1), init("b2", np.zeros(5)),
             init("w3", rng.standard_normal((2, 8))), init("b3", np.zeros(2))]
    return model(nodes, [vi("x", list(X_SHAPE))], [vi("y", [1, 2])], inits)


def single(nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto], out_shape: list[int],
           opset: int = 13) -> onnx.ModelProto:
    """x [1, 4, 6, 6] -> nodes -> y (for the refusals)."""
    return model(nodes, [vi("x", [1, 4, 6, 6])], [vi("y", out_shape)], inits, opset=opset)


def bounds(starts: list[int], ends: list[int], axes: list[int], steps: list[int] | None = None
           ) -> list[onnx.TensorProto]:
    names = [("starts", starts), ("ends", ends), ("axes", axes)] + ([("steps", steps)] if steps else [])
    return [init(k, np.array(v), np.int64) for k, v in names]

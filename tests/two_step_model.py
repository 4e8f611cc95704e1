"""A QDQ network built by hand whose every fused layer is a two-step epilogue that saturates and
rounds on ties in its intermediate quantizer (for the C-sim and RTL tests, and their negative controls).

Power-of-two scales make the step-1 ratio s_x·s_w/s_t an exact power of two, so accumulators land on
rounding ties often; the intermediate scales are small, so step 1 clamps often. The network:
    x ─Q─► conv3x3 ─Q(t1)─► BatchNorm ─Q(y1)─►            (step 2: per-channel multiplier + bias B2)
    y1 ─► conv3x3 ─Q(t2)─► Add(y1) ─Q(y2, zp=-128)─►       (step 2: residual skip; clamps at 0)
    y2 ─► conv1x1 ─Q(t3)─► LeakyRelu(0.25) ─Q(y)─► y      (step 2: LeakyReLU)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

C, H, W = 4, 6, 6


class _Net:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def qdq(self, x: str, name: str, scale: float, zp: int) -> str:
        s, z = self.const(f"{name}_s", np.array(scale, np.float32)), self.const(f"{name}_zp", np.array(zp, np.int8))
        self.nodes.append(helper.make_node("QuantizeLinear", [x, s, z], [name], name=f"{name}_q"))
        self.nodes.append(helper.make_node("DequantizeLinear", [name, s, z], [f"{name}_dq"], name=f"{name}_dq"))
        return f"{name}_dq"

    def conv(self, x: str, name: str, k: int, w_scale: float) -> str:
        codes = self.rng.integers(-127, 128, (C, C, k, k)).astype(np.int8)
        w = self.const(f"{name}_w", codes)
        s = self.const(f"{name}_ws", np.full(C, w_scale, np.float32))
        z = self.const(f"{name}_wz", np.zeros(C, np.int8))
        self.nodes.append(helper.make_node("DequantizeLinear", [w, s, z], [f"{name}_wf"], name=f"{name}_wdq", axis=0))
        b = self.const(f"{name}_b", np.zeros(C, np.float32))
        self.nodes.append(helper.make_node("Conv", [x, f"{name}_wf", b], [name], name=name, kernel_shape=[k, k],
                                           pads=[k // 2] * 4))
        return name

    def op(self, op: str, inputs: list[str], name: str, **attrs: object) -> str:
        self.nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name


def two_step_model(seed: int = 0, residual: bool = True) -> onnx.ModelProto:
    """residual=False replaces the Add by a Relu (step 2 is then a plain requant with a clamp at 0)."""
    g = _Net(seed)
    x = g.qdq("x", "xq", 0.125, 0)
    t1 = g.qdq(g.conv(x, "conv1", 3, 1 / 16), "t1", 0.25, -3)
    gamma, beta = g.rng.uniform(-1.5, 1.5, C), g.rng.normal(0, 4, C)
    bn = [g.const(n, v.astype(np.float32)) for n, v in
          (("gamma", gamma), ("beta", beta), ("mean", g.rng.normal(0, 2, C)), ("var", g.rng.uniform(0.5, 2, C)))]
    y1 = g.qdq(g.op("BatchNormalization", [t1, *bn], "bn", epsilon=1e-5), "y1", 0.5, 5)
    t2 = g.qdq(g.conv(y1, "conv2", 3, 1 / 128), "t2", 0.25, -2)
    step2 = g.op("Add", [t2, y1], "add") if residual else g.op("Relu", [t2], "relu")
    y2 = g.qdq(step2, "y2", 0.5, -128)
    t3 = g.qdq(g.conv(y2, "conv3", 1, 1 / 64), "t3", 0.5, 1)
    g.qdq(g.op("LeakyRelu", [t3], "leaky", alpha=0.25), "yq", 0.25, -7)
    g.nodes[-1].output[0] = "y"
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, C, H, W]) for n in ("x", "y")]
    graph = helper.make_graph(g.nodes, "two_step", io[:1], io[1:], initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="hlsgen-tests")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def two_step_inputs(n: int, seed: int = 1) -> np.ndarray:
    """Inputs on the 1/8 grid of the input quantizer (so the host quantization is exact), wide enough
    that the intermediates saturate."""
    return (np.round(np.random.default_rng(seed).standard_normal((n, C, H, W)) * 10) / 8).astype(np.float32)

"""Small QONNX models shared by unit and simulation tests."""

from __future__ import annotations

import onnx
from onnx_builders import init, model, node, vi

QONNX = "qonnx.custom_op.general"
S = 2.0 ** -6  # the input grid of trunc_model


def trunc_model(mode: str, v2: bool) -> onnx.ModelProto:
    ins = ["xq", "s", "z", "b10", "os", "b6"] if v2 else ["xq", "s", "z", "b10", "b6"]
    nodes = [node("Quant", ["x", "s", "z", "b10"], ["xq"], name="q", domain=QONNX, signed=1, narrow=0,
                  rounding_mode="ROUND"),
             node("Trunc", ins, ["y"], name="trunc", domain=QONNX, rounding_mode=mode)]
    inits = [init("s", S), init("z", 0.0), init("b10", 10.0), init("b6", 6.0), init("os", S * 16)]
    return model(nodes, [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])], inits, opset=11, extra_domains=[QONNX])

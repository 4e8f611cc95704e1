"""Building an ONNX QDQ model from the integer graph: the helper hlsgen.interop.export_qdq's per-op emitters use.

Integer tensors keep their IR names (outputs of QuantizeLinear with the tensor's scale and zero point,
or of integer MaxPool/Reshape/Transpose); every other name is fresh (`hint.N`). Integer tensors live in
int8/uint8 containers, or int16/uint16 above 8 bits (which raises the opset to 21).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hlsgen.errors import HlsgenError
from hlsgen.ir import Graph, QType


class QdqBuilder:
    """Collects ONNX nodes and initializers for one integer graph."""

    def __init__(self, graph: Graph) -> None:
        self.g = graph
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[TensorProto] = []
        self.opset = 13
        self.outputs: list[str] = []
        self._count = 0

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}.{self._count}"

    def const(self, hint: str, value: np.ndarray) -> str:
        name = self.fresh(hint)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str, out: str | None = None, **attrs: Any) -> str:
        name = out or self.fresh(hint)
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=self.fresh(f"{hint}.{op_type}"), **attrs))
        return name

    def qtype(self, tensor: str) -> QType:
        qt = self.g.tensor(tensor).qtype
        if qt is None:
            raise HlsgenError(f"export-qdq: tensor {tensor} has no quantization")
        return qt

    def act(self, tensor: str) -> tuple[float, int]:
        """(scale, zero point) of a per-tensor quantized activation."""
        qt = self.qtype(tensor)
        if qt.per_channel:
            raise HlsgenError(f"export-qdq: activation {tensor} is quantized per channel")
        return float(qt.scale), int(qt.zero_point)

    def container(self, bits: int, signed: bool) -> np.dtype:
        if bits > 16:
            raise HlsgenError(f"export-qdq: {bits}-bit integers cannot be expressed in ONNX QDQ")
        if bits > 8:
            self.opset = 21
        return np.dtype(("int" if signed else "uint") + ("8" if bits <= 8 else "16"))

    def tensor_dtype(self, tensor: str) -> np.dtype:
        qt = self.qtype(tensor)
        return self.container(qt.int.bits, qt.int.signed)

    def codes(self, hint: str, values: np.ndarray) -> tuple[str, np.dtype]:
        """Integer constant (weights) in the narrowest signed container holding it, and that type."""
        top = int(np.max(np.abs(values), initial=0))
        dtype = self.container(8 if top <= 127 else 16 if top <= 32767 else 32, True)
        return self.const(hint, np.asarray(values).astype(dtype)), dtype

    def dq(self, x: str, scale: np.ndarray | float, zp: np.ndarray | int, zp_dtype: np.dtype, axis: int = 1) -> str:
        """DequantizeLinear with a per-tensor or per-axis scale and zero point."""
        s = np.asarray(scale, dtype=np.float32).reshape(-1)
        z = np.asarray(zp).reshape(-1)
        n = max(s.size, z.size)
        if n == 1:
            ins = [x, self.const(f"{x}.s", s.reshape(())), self.const(f"{x}.zp", z.reshape(()).astype(zp_dtype))]
            return self.op("DequantizeLinear", ins, f"{x}.dq")
        s, z = np.broadcast_to(s, (n,)), np.broadcast_to(z, (n,))
        ins = [x, self.const(f"{x}.s", s.copy()), self.const(f"{x}.zp", z.astype(zp_dtype))]
        return self.op("DequantizeLinear", ins, f"{x}.dq", axis=axis)

    def quantize(self, x: str, out: str, scale: float, zp: int, dtype: np.dtype) -> None:
        ins = [x, self.const(f"{out}.s", np.float32(scale)), self.const(f"{out}.zp", np.asarray(zp).astype(dtype))]
        self.op("QuantizeLinear", ins, out, out=out)

    def model(self) -> onnx.ModelProto:
        g = self.g
        x = g.tensor(g.inputs[0])
        inputs = [helper.make_tensor_value_info(x.name, TensorProto.FLOAT, ["N", *x.shape[1:]])]
        outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, ["N", *g.tensor(o).shape[1:]])
                   for o in self.outputs]
        graph = helper.make_graph(self.nodes, f"{g.name}_qdq", inputs, outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)], producer_name="hlsgen")
        m.ir_version = 8 if self.opset <= 18 else 10
        return m

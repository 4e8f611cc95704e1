"""Tiny helpers to build ONNX models in memory for the front-end tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT
Shape = Sequence[int | str | None]


def vi(name: str, shape: Shape | None, elem: int = FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, None if shape is None else list(shape))


def init(name: str, value: np.ndarray | float | int | Sequence[float], dtype: object = np.float32
         ) -> TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def node(op: str, inputs: Sequence[str], outputs: Sequence[str], name: str | None = None,
         domain: str | None = None, **attrs: object) -> onnx.NodeProto:
    n = helper.make_node(op, list(inputs), list(outputs), name=name, domain=domain, **attrs)
    return n


def model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
          outputs: Sequence[onnx.ValueInfoProto], inits: Sequence[TensorProto] = (), opset: int = 13,
          extra_domains: Sequence[str] = (), name: str = "test") -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits))
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in extra_domains]
    m = helper.make_model(graph, opset_imports=imports)
    m.ir_version = 8 if opset <= 18 else 10
    return m


def single(op: str, in_shape: Shape, out_shape: Shape | None = None, inits: Sequence[TensorProto] = (),
           extra_inputs: Sequence[str] = (), opset: int = 13, **attrs: object) -> onnx.ModelProto:
    """A one-node model: y = op(x, *extra_inputs)."""
    n = node(op, ["x", *extra_inputs], ["y"], name="n", **attrs)
    return model([n], [vi("x", in_shape)], [vi("y", out_shape)], inits, opset)


def run_ort(m: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return np.asarray(sess.run(None, {name: x})[0])

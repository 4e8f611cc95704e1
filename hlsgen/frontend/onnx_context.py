"""The translation state of the ONNX front-end and the context API the per-op translators use.

`OnnxContext` implements onnx_ops_common.Ctx: it resolves Identity/Dropout aliases, answers static
shapes (computed, constant, or from ONNX shape inference) and constant values, evaluates computed
Reshape targets (`shape_value`), makes fresh names, and records IR tensors and nodes, including
rebuilt Quantize/Dequantize chains over transformed constants (`derived_static`) and qtypes. The
driver, from_onnx._Translator, fills the state in and walks the graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import onnx
from onnx import helper

from hlsgen.config.limits import Limits, beyond, elements
from hlsgen.frontend.onnx_ops_common import Poisoned, Unsupported
from hlsgen.frontend.onnx_ops_layout import SHAPE_FOLDS
from hlsgen.ir.graph import Node, Tensor
from hlsgen.ir.ops import Op
from hlsgen.ir.types import QType

ArrayFn = Callable[[np.ndarray], np.ndarray]
AxisFn = Callable[[int | None], int | None]


class OnnxContext:
    """State of one translation; the per-op functions in onnx_ops use it as their context."""

    model: onnx.ModelProto
    source: str
    limits: Limits
    opset: int
    consts: dict[str, np.ndarray]  # initializers, Constant nodes and constants made by translators
    elem: dict[str, int]  # ONNX element types, where known
    inferred: dict[str, tuple[int | None, ...]]  # shapes from ONNX shape inference
    producers: dict[str, onnx.NodeProto]
    renames: dict[str, str]  # Identity/Dropout output -> its input
    derived: set[str]  # outputs of Quantize/Dequantize chains rebuilt by derived_static
    tensors: dict[str, Tensor]
    nodes: list[Node]
    used_names: set[str]  # fresh() names serve tensors and new nodes

    def resolve(self, name: str) -> str:
        while name in self.renames:
            name = self.renames[name]
        return name

    def inp(self, node: onnx.NodeProto, i: int) -> str | None:
        """Input i of `node` after Identity/Dropout removal; None if absent or empty."""
        if i >= len(node.input) or not node.input[i]:
            return None
        return self.resolve(node.input[i])

    def shape(self, name: str) -> tuple[int, ...]:
        if name in self.tensors:
            return self.tensors[name].shape
        if name in self.consts:
            return tuple(int(d) for d in self.consts[name].shape)
        inferred = self.inferred.get(name)
        if inferred is not None and all(d is not None for d in inferred) and name in self.producers:
            return tuple(int(d) for d in inferred if d is not None)
        raise Poisoned(name)

    def inferred_shape(self, name: str) -> tuple[int | None, ...] | None:
        return self.inferred.get(name)

    def const(self, name: str | None) -> np.ndarray | None:
        return None if name is None else self.consts.get(name)

    def shape_value(self, name: str) -> np.ndarray | None:
        """A constant, or a small integer tensor computed from static shapes and constants only
        (Shape -> Gather/Slice/Unsqueeze/Squeeze/Concat/Cast, as exporters write `x.view(n, -1)`)."""
        if name in self.consts:
            return self.consts[name]
        node = self.producers.get(name)
        if node is None or node.op_type not in SHAPE_FOLDS:
            return None
        if node.op_type == "Shape":
            source = self.inp(node, 0)
            if source is None or not (source in self.tensors or source in self.consts):
                return None
            a = self.attrs(node)
            return np.array(self.shape(source)[a.get("start", 0):a.get("end")], dtype=np.int64)
        args = [None if i is None else self.shape_value(i) for i in
                (self.inp(node, k) for k in range(len(node.input)))]
        if any(v is None and raw for v, raw in zip(args, node.input, strict=True)):
            return None
        try:
            return np.asarray(SHAPE_FOLDS[node.op_type](args, self.attrs(node)), dtype=np.int64)
        except (ValueError, IndexError, TypeError):
            return None

    def need_const(self, name: str | None, what: str) -> np.ndarray:
        value = self.const(name)
        if value is None:
            raise Unsupported(f"{what} must be a constant")
        return value

    def is_static(self, name: str) -> bool:
        """A constant, or a Quantize/Dequantize/(Bipolar)Quant of one (a later pass folds these)."""
        if name in self.consts:
            return True
        made = next((n for n in self.nodes if name in n.outputs), None) if name in self.derived else None
        if made is not None:  # a chain rebuilt by derived_static
            return made.op in ("QuantizeLinear", "DequantizeLinear") and self.is_static(made.inputs[0])
        node = self.producers.get(name)
        if node is None or node.op_type not in ("QuantizeLinear", "DequantizeLinear", "Quant", "BipolarQuant"):
            return False
        source = self.inp(node, 0)
        return source is not None and self.is_static(source)

    def elem_type(self, name: str) -> int | None:
        return self.elem.get(name)

    def attrs(self, node: onnx.NodeProto) -> dict[str, Any]:
        out = {}
        for a in node.attribute:
            try:
                value = helper.get_attribute_value(a)
            except Exception as e:  # an attribute of an unknown type (a damaged file)
                raise Unsupported(f"attribute {a.name!r} cannot be read ({type(e).__name__})") from None
            if value is None or a.type == onnx.AttributeProto.UNDEFINED:
                raise Unsupported(f"attribute {a.name!r} has no value (type {a.type})")
            out[a.name] = _plain(value)
        return out

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used_names:
            name, k = f"{base}_{k}", k + 1
        self.used_names.add(name)
        return name

    def new_const(self, base: str, value: np.ndarray) -> str:
        name = self.fresh(base)
        self.consts[name] = value
        return name

    def add_node(self, name: str, op: str, inputs: Sequence[str], outputs: Sequence[str],
                 attrs: dict[str, Any], shapes: Sequence[tuple[int, ...]]) -> None:
        for i in inputs:
            if i not in self.tensors:
                self._const_tensor(i)
        for o, s in zip(outputs, shapes, strict=True):
            if elements(s) > self.limits.tensor_elements:
                raise Unsupported(f"output {o!r} of shape {list(s)}: "
                                  f"{beyond(self.limits, 'tensor_elements', elements(s))}")
            self.tensors[o] = Tensor(o, tuple(int(d) for d in s))
            self.used_names.add(o)
        self.nodes.append(Node(name, Op(op), tuple(inputs), tuple(outputs), attrs))

    def _const_tensor(self, name: str) -> None:
        if name not in self.consts:
            raise Poisoned(name)
        self.tensors[name] = Tensor(name, tuple(self.consts[name].shape), data=self.consts[name])

    def derived_static(self, name: str, base: str, fn: ArrayFn, axis_map: AxisFn, factor: float) -> str:
        """A new tensor whose real value is factor · fn(value of static tensor `name`).

        A constant is transformed directly; a Quantize/Dequantize chain over a constant is rebuilt
        over the transformed constant, quantization axes mapped by `axis_map` and scales × factor.
        """
        if name not in self.tensors:
            self._const_tensor(name)
        t = self.tensors[name]
        made_by = next((n for n in self.nodes if name in n.outputs), None)
        if t.qtype is not None and factor <= 0:
            raise Unsupported(f"cannot fold the factor {factor:g} into the quantized tensor {name}")
        qtype = None if t.qtype is None else QType(
            t.qtype.int, t.qtype.scale * factor, t.qtype.zero_point, axis_map(t.qtype.axis))
        out = self.fresh(base)
        if made_by is None:
            if t.data is None:
                raise Poisoned(name)
            data = fn(t.data) if t.integer else factor * fn(np.asarray(t.data, np.float64))
            self.consts[out] = data
            self.tensors[out] = Tensor(out, tuple(data.shape), qtype, data, t.integer)
            return out
        source = self.derived_static(made_by.inputs[0], f"{base}__src", fn, axis_map, factor)
        shape = tuple(fn(np.zeros(t.shape)).shape)
        self.derived.add(out)
        self.tensors[out] = Tensor(out, shape, qtype, integer=t.integer)
        self.nodes.append(Node(out, made_by.op, (source,), (out,), made_by.attrs))
        return out

    def alias(self, name: str, existing: str) -> None:
        """The ONNX tensor `name` is the already translated tensor `existing` (no node)."""
        self.renames[name] = existing

    def set_qtype(self, name: str, qtype: QType, elem: int | None = None) -> None:
        """Give tensor `name` its qtype (integer codes); conflicting parameters are unsupported."""
        if name not in self.tensors:
            self._const_tensor(name)
        t = self.tensors[name]
        if t.qtype is not None and t.qtype != qtype:
            raise Unsupported(f"tensor {name} is quantized twice with different parameters")
        if t.data is not None and not np.issubdtype(t.data.dtype, np.integer):
            raise Unsupported(f"dequantized constant {name} is not an integer tensor")
        self.tensors[name] = replace(t, qtype=qtype, integer=True)
        if elem is not None:
            self.elem[name] = elem



def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    return value

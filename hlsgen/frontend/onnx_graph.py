"""Graph-level pieces of the ONNX front-end that are not per-op translators.

Constant values (initializers and Constant nodes, `tensor_to_numpy`), Identity and Dropout removal
(their outputs become aliases of their inputs), node naming, and the collection of per-node problems
(`Problems`): every unsupported node is recorded before one `UnsupportedModelError` is raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hlsgen.errors import HlsgenError, UnsupportedModelError
from hlsgen.frontend.onnx_context import OnnxContext
from hlsgen.frontend.onnx_ops_common import Poisoned, Unsupported

_FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16,
                onnx.TensorProto.BFLOAT16}


# ---- values ------------------------------------------------------------------------------------
def tensor_to_numpy(t: onnx.TensorProto) -> np.ndarray:
    """Floats become float64, integers int64 (int4 included); other types as numpy gives them."""
    try:
        arr = np.asarray(numpy_helper.to_array(t))
        kind = onnx.TensorProto.DataType.Name(t.data_type) if t.data_type in onnx.TensorProto.DataType.values() \
            else "UNDEFINED"
        if t.data_type in _FLOAT_TYPES or "FLOAT" in kind or arr.dtype.kind == "f":  # float8/float4 too
            return arr.astype(np.float64)
        if arr.dtype.kind in "iu":
            return arr.astype(np.int64)
    except Exception as e:  # an undefined data type, damaged data
        raise Unsupported(f"tensor {t.name!r} of type {t.data_type}: cannot read its data "
                          f"({type(e).__name__}: {str(e).strip()[:160]})") from None
    return arr  # bool, string, complex: refused where they are used


def constant_node_value(node: onnx.NodeProto) -> tuple[np.ndarray, int]:
    """The value and ONNX element type of a Constant node."""
    for a in node.attribute:
        if a.name == "value":
            return tensor_to_numpy(a.t), a.t.data_type
        if a.name in ("value_float", "value_floats"):
            return np.asarray(helper.get_attribute_value(a), np.float64), onnx.TensorProto.FLOAT
        if a.name in ("value_int", "value_ints"):
            return np.asarray(helper.get_attribute_value(a), np.int64), onnx.TensorProto.INT64
    raise Unsupported("Constant without a numeric dense value")


def add_constant(ctx: OnnxContext, node: onnx.NodeProto) -> None:
    """Record the value of a Constant node as a constant tensor."""
    value, elem = constant_node_value(node)
    ctx.consts[node.output[0]] = value
    ctx.elem[node.output[0]] = elem


# ---- Identity and Dropout -----------------------------------------------------------------------
def passthrough(ctx: OnnxContext, node: onnx.NodeProto) -> None:
    """Remove an Identity or (inference-mode) Dropout: its output becomes an alias of its input."""
    if node.op_type == "Dropout":
        mode = ctx.inp(node, 2)
        if mode is not None and bool(np.any(ctx.need_const(mode, "training_mode"))):
            raise Unsupported("Dropout in training mode")
        if len(node.output) > 1 and node.output[1] and _is_used(ctx.model.graph, node.output[1]):
            raise Unsupported("the Dropout mask output is used")
    source = ctx.inp(node, 0)
    assert source is not None
    ctx.shape(source)  # an unknown source is reported upstream
    ctx.alias(node.output[0], source)


def _is_used(g: onnx.GraphProto, tensor: str) -> bool:
    return any(tensor in n.input for n in g.node) or any(o.name == tensor for o in g.output)


# ---- names and problems -------------------------------------------------------------------------
def node_names(nodes: Sequence[onnx.NodeProto]) -> list[str]:
    """Node names, `<op>_<index>` for unnamed ones, made unique with an `_<index>` suffix."""
    names: list[str] = []
    seen: set[str] = set()
    for i, n in enumerate(nodes):
        name = n.name or f"{n.op_type}_{i}"
        if name in seen:
            name = f"{name}_{i}"
        seen.add(name)
        names.append(name)
    return names


class Problems:
    """Per-node failures of one translation, collected so that all of them are reported at once."""

    def __init__(self) -> None:
        self.unsupported: list[tuple[str, str, str]] = []  # (node name, op type, reason)
        self.undefined: list[str] = []  # tensors no translated node produced

    def guard(self, name: str, op_type: str, fn: Callable[[], None]) -> None:
        """Run fn(), recording an Unsupported or Poisoned it raises against node `name`."""
        try:
            fn()
        except Unsupported as e:
            self.unsupported.append((name, op_type, str(e)))
        except Poisoned as e:  # usually an input comes from a node already reported
            self.undefined.append(str(e))

    def raise_if_any(self, source: str) -> None:
        """One UnsupportedModelError listing every unsupported node, else an undefined tensor error."""
        if self.unsupported:
            raise UnsupportedModelError(source, self.unsupported)
        if self.undefined:
            raise HlsgenError(f"{source}: tensor '{self.undefined[0]}' is used but never produced")

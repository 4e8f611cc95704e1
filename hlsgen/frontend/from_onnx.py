"""ONNX front-end: an ONNX model (float, QDQ or QONNX) to the IR of docs/ir.md.

Translation only, no optimisation. Static shapes come from the single graph input (a symbolic batch
dimension becomes 1) and are propagated node by node by the translators in `onnx_ops`. A Reshape
whose target shape is computed in the graph (Shape -> Gather -> Concat, as exporters write
`x.view(n, -1)`) gets it by evaluating that subgraph on the static shapes, else from ONNX shape
inference; the subgraph itself is not translated.
Identity and Dropout disappear (their names become aliases), Constant nodes and initializers become
constant tensors, and only nodes that contribute to a graph output are translated. Every node that
cannot be mapped is collected before one `UnsupportedModelError` is raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hlsgen.errors import HlsgenError, UnsupportedModelError
from hlsgen.frontend.onnx_ops import TRANSLATORS, Poisoned, Unsupported, unsupported_reason
from hlsgen.ir.graph import Edit, Graph, Node, Tensor
from hlsgen.ir.types import QType

ArrayFn = Callable[[np.ndarray], np.ndarray]
AxisFn = Callable[[int | None], int | None]
MIN_OPSET, MAX_OPSET = 9, 21
_FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16,
                onnx.TensorProto.BFLOAT16}
_QUANT_OPS = {"QuantizeLinear", "DequantizeLinear"}


def load_onnx(path: str | Path) -> Graph:
    """Read an .onnx file and translate it; HlsgenError for a missing or unreadable file."""
    p = Path(path)
    if not p.exists():
        raise HlsgenError(f"{p}: no such file")
    if p.is_dir():
        raise HlsgenError(f"{p}: is a directory, not an ONNX file")
    try:
        model = onnx.load(str(p))
    except Exception as e:  # protobuf decode errors, missing external data, ...
        raise HlsgenError(f"{p}: not an ONNX model ({type(e).__name__})") from e
    if model.ir_version == 0 or not model.HasField("graph"):
        raise HlsgenError(f"{p}: not an ONNX model (no graph)")
    return from_onnx_model(model, str(p))


def from_onnx_model(model: onnx.ModelProto, source_name: str = "model") -> Graph:
    """Translate an in-memory model; `source_name` names it in errors and in Graph.meta."""
    return _Translator(model, source_name).run()


# ---- values ------------------------------------------------------------------------------------
def tensor_to_numpy(t: onnx.TensorProto) -> np.ndarray:
    """Floats become float64, integers int64 (int4 included); other types as numpy gives them."""
    arr = np.asarray(numpy_helper.to_array(t))
    if t.data_type in _FLOAT_TYPES:
        return arr.astype(np.float64)
    if t.data_type != onnx.TensorProto.BOOL and t.data_type != onnx.TensorProto.STRING:
        return arr.astype(np.int64)
    return arr


def _constant_node_value(node: onnx.NodeProto) -> tuple[np.ndarray, int]:
    """The value and ONNX element type of a Constant node."""
    for a in node.attribute:
        if a.name == "value":
            return tensor_to_numpy(a.t), a.t.data_type
        if a.name in ("value_float", "value_floats"):
            return np.asarray(helper.get_attribute_value(a), np.float64), onnx.TensorProto.FLOAT
        if a.name in ("value_int", "value_ints"):
            return np.asarray(helper.get_attribute_value(a), np.int64), onnx.TensorProto.INT64
    raise Unsupported("Constant without a numeric dense value")


def _static_shape(vi: onnx.ValueInfoProto) -> tuple[int | None, ...] | None:
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)


def _default_opset(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    raise HlsgenError("model imports no default ONNX opset")


def _infer(model: onnx.ModelProto, input_name: str) -> onnx.ModelProto:
    """Copy with the graph input's unknown batch dimension set to 1, shapes inferred (best effort)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in m.graph.input:
        dims = vi.type.tensor_type.shape.dim
        if vi.name == input_name and len(dims) > 0 and not dims[0].HasField("dim_value"):
            dims[0].dim_value = 1
    try:
        return onnx.shape_inference.infer_shapes(m, strict_mode=False, data_prop=True)
    except Exception:  # inference is a fallback source of shapes only
        return m


# ---- the translation ----------------------------------------------------------------------------
class _Translator:
    """State of one translation; the per-op functions in onnx_ops use it as their context."""

    def __init__(self, model: onnx.ModelProto, source: str):
        self.model, self.source = model, source
        self.opset = _default_opset(model)
        if not MIN_OPSET <= self.opset <= MAX_OPSET:
            raise HlsgenError(f"{source}: ONNX opset {self.opset} not supported ({MIN_OPSET}..{MAX_OPSET})")
        g = model.graph
        self.consts: dict[str, np.ndarray] = {t.name: tensor_to_numpy(t) for t in g.initializer}
        self.elem: dict[str, int] = {t.name: t.data_type for t in g.initializer}
        self.input_name = self._graph_input()
        self.inferred: dict[str, tuple[int | None, ...]] = {}
        self._read_inferred(_infer(model, self.input_name))
        self.producers = {o: n for n in g.node for o in n.output if o}
        self.renames: dict[str, str] = {}
        self.tensors: dict[str, Tensor] = {}
        self.nodes: list[Node] = []
        self.problems: list[tuple[str, str, str]] = []
        self.undefined: list[str] = []  # tensors no translated node produced
        self.node_names = _node_names(g.node)
        self.used_names = ({vi.name for vi in g.input} | set(self.consts) | set(self.producers)
                           | set(self.node_names))  # fresh() names serve tensors and new nodes

    def _graph_input(self) -> str:
        g = self.model.graph
        real = [vi.name for vi in g.input if vi.name not in self.consts]
        if len(real) != 1:
            raise HlsgenError(f"{self.source}: the graph must have exactly one input, found {len(real)}"
                              + (f" ({', '.join(real)})" if real else ""))
        if not g.output:
            raise HlsgenError(f"{self.source}: the graph has no outputs")
        return real[0]

    def _read_inferred(self, m: onnx.ModelProto) -> None:
        for vi in [*m.graph.value_info, *m.graph.input, *m.graph.output]:
            shape = _static_shape(vi)
            if shape is not None and vi.name not in self.consts:
                self.inferred[vi.name] = shape
            if vi.type.tensor_type.elem_type and vi.name not in self.elem:
                self.elem[vi.name] = vi.type.tensor_type.elem_type

    # ---- driver ----
    def run(self) -> Graph:
        self._add_input_tensor()
        live = self._live_nodes()
        for i, node in enumerate(self.model.graph.node):
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                self._guard(node, i, lambda n=node: self._constant(n))
            elif i in live:
                self._guard(node, i, lambda n=node, i=i: self._translate(n, self.node_names[i]))
        if self.problems:
            raise UnsupportedModelError(self.source, self.problems)
        if self.undefined:
            raise HlsgenError(f"{self.source}: tensor '{self.undefined[0]}' is used but never produced")
        return self._graph()

    def _guard(self, node: onnx.NodeProto, index: int, fn: Any) -> None:
        try:
            fn()
        except Unsupported as e:
            self.problems.append((self.node_names[index], node.op_type, str(e)))
        except Poisoned as e:  # usually an input comes from a node already reported
            self.undefined.append(str(e))

    def _constant(self, node: onnx.NodeProto) -> None:
        value, elem = _constant_node_value(node)
        self.consts[node.output[0]] = value
        self.elem[node.output[0]] = elem

    def _translate(self, node: onnx.NodeProto, name: str) -> None:
        if node.op_type in ("Identity", "Dropout") and node.domain in ("", "ai.onnx"):
            self._passthrough(node)
            return
        fn = TRANSLATORS.get((node.domain if node.domain != "ai.onnx" else "", node.op_type))
        if fn is None:
            raise Unsupported(unsupported_reason(node.domain, node.op_type))
        fn(self, node, name)

    def _passthrough(self, node: onnx.NodeProto) -> None:
        if node.op_type == "Dropout":
            mode = self.inp(node, 2)
            if mode is not None and bool(np.any(self.need_const(mode, "training_mode"))):
                raise Unsupported("Dropout in training mode")
            if len(node.output) > 1 and node.output[1] and self._is_used(node.output[1]):
                raise Unsupported("the Dropout mask output is used")
        source = self.inp(node, 0)
        assert source is not None
        self.shape(source)  # an unknown source is reported upstream
        self.renames[node.output[0]] = source

    def _is_used(self, tensor: str) -> bool:
        g = self.model.graph
        return any(tensor in n.input for n in g.node) or any(o.name == tensor for o in g.output)

    def _live_nodes(self) -> set[int]:
        """Indices of nodes a graph output depends on. A Reshape's shape input does not count: it is
        a constant, or evaluated from static shapes (`shape_value`), or taken from shape inference."""
        need = {o.name for o in self.model.graph.output}
        live: set[int] = set()
        for i in reversed(range(len(self.model.graph.node))):
            node = self.model.graph.node[i]
            if not any(o in need for o in node.output if o):
                continue
            live.add(i)
            ins = list(node.input[:1]) if node.op_type == "Reshape" else list(node.input)
            need.update(t for t in ins if t)
        return live

    # ---- graph assembly ----
    def _add_input_tensor(self) -> None:
        vi = next(v for v in self.model.graph.input if v.name == self.input_name)
        shape = _static_shape(vi)
        if shape is None or len(shape) == 0:
            raise HlsgenError(f"{self.source}: graph input '{vi.name}' has no static shape")
        dims = [1 if i == 0 and d is None else d for i, d in enumerate(shape)]
        bad = [i for i, d in enumerate(dims) if d is None or d <= 0]
        if bad:
            raise HlsgenError(f"{self.source}: graph input '{vi.name}' has an unknown dimension {bad[0]}")
        self.tensors[vi.name] = Tensor(vi.name, tuple(int(d or 0) for d in dims))

    def _graph(self) -> Graph:
        outputs = tuple(self.resolve(o.name) for o in self.model.graph.output)
        for o in outputs:
            if o not in self.tensors and o not in self.consts:
                raise HlsgenError(f"{self.source}: graph output '{o}' is not computed by any node")
            if o not in self.tensors:
                self._const_tensor(o)
        aliases: dict[str, list[str]] = {}
        for old in self.renames:
            aliases.setdefault(self.resolve(old), []).append(old)
        for target, names in aliases.items():
            if target in self.tensors:
                t = self.tensors[target]
                self.tensors[target] = replace(t, aliases=t.aliases + tuple(names))
        g = Graph(self.model.graph.name or Path(self.source).stem, tuple(self.nodes), self.tensors,
                  (self.input_name,), outputs, meta=self._meta())
        return g.apply(Edit())

    def _meta(self) -> dict[str, Any]:
        ops = {n.op for n in self.nodes}
        quant = any(n.op_type == "Quant" for n in self.model.graph.node)
        fmt = "qonnx" if quant else "onnx-qdq" if ops & _QUANT_OPS else "onnx-float"
        return {"format": fmt, "opset": self.opset, "source": Path(self.source).name}

    # ---- the context API used by onnx_ops ----
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
        if node is None or node.op_type not in _SHAPE_FOLDS:
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
            return np.asarray(_SHAPE_FOLDS[node.op_type](args, self.attrs(node)), dtype=np.int64)
        except (ValueError, IndexError, TypeError):
            return None

    def need_const(self, name: str | None, what: str) -> np.ndarray:
        value = self.const(name)
        if value is None:
            raise Unsupported(f"{what} must be a constant")
        return value

    def is_static(self, name: str) -> bool:
        """A constant, or a Quantize/Dequantize/Quant of one (a later pass folds these)."""
        if name in self.consts:
            return True
        node = self.producers.get(name)
        if node is None or node.op_type not in ("QuantizeLinear", "DequantizeLinear", "Quant"):
            return False
        source = self.inp(node, 0)
        return source is not None and self.is_static(source)

    def elem_type(self, name: str) -> int | None:
        return self.elem.get(name)

    def attrs(self, node: onnx.NodeProto) -> dict[str, Any]:
        return {a.name: _plain(helper.get_attribute_value(a)) for a in node.attribute}

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
            self.tensors[o] = Tensor(o, tuple(int(d) for d in s))
            self.used_names.add(o)
        self.nodes.append(Node(name, op, tuple(inputs), tuple(outputs), attrs))

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
        self.tensors[out] = Tensor(out, shape, qtype, integer=t.integer)
        self.nodes.append(Node(out, made_by.op, (source,), (out,), made_by.attrs))
        return out

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


def _axes_arg(args: list[Any], a: dict[str, Any]) -> tuple[int, ...] | None:
    axes = a.get("axes") if len(args) < 2 or args[1] is None else args[1]
    return None if axes is None else tuple(int(v) for v in np.reshape(axes, -1))


def _unsqueeze(x: np.ndarray, axes: tuple[int, ...] | None) -> np.ndarray:
    for ax in sorted(a + x.ndim + len(axes or ()) if a < 0 else a for a in axes or ()):
        x = np.expand_dims(x, ax)
    return x


def _slice(args: list[Any], a: dict[str, Any]) -> np.ndarray:
    x = args[0]
    if len(args) > 1:  # opset >= 10: starts, ends, axes, steps inputs
        starts, ends = args[1], args[2]
        axes = args[3] if len(args) > 3 and args[3] is not None else range(len(starts))
        steps = args[4] if len(args) > 4 and args[4] is not None else [1] * len(starts)
    else:
        starts, ends = a["starts"], a["ends"]
        axes, steps = a.get("axes", range(len(starts))), [1] * len(starts)
    index = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps, strict=True):
        index[int(ax)] = slice(int(s), int(e), int(st))
    return np.asarray(x[tuple(index)])


_SHAPE_FOLDS: dict[str, Any] = {
    "Shape": None,
    "Gather": lambda args, a: np.take(args[0], args[1], axis=a.get("axis", 0)),
    "Unsqueeze": lambda args, a: _unsqueeze(args[0], _axes_arg(args, a)),
    "Squeeze": lambda args, a: np.squeeze(args[0], axis=_axes_arg(args, a)),
    "Concat": lambda args, a: np.concatenate([np.reshape(v, -1) for v in args], axis=0),
    "Cast": lambda args, a: args[0],
    "Identity": lambda args, a: args[0],
    "Slice": _slice,
}


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    return value


def _node_names(nodes: Sequence[onnx.NodeProto]) -> list[str]:
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

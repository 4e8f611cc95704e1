"""ONNX front-end: an ONNX model (float, QDQ or QONNX) to the IR of docs/ir.md.

Translation only, no optimisation. Static shapes come from the single graph input (a symbolic batch
dimension becomes 1) and are propagated node by node by the translators in `onnx_ops`. A Reshape
whose target shape is computed in the graph (Shape -> Gather -> Concat, as exporters write
`x.view(n, -1)`) gets it by evaluating that subgraph on the static shapes, else from ONNX shape
inference; the subgraph itself is not translated.
Identity and Dropout disappear (their names become aliases), Constant nodes and initializers become
constant tensors, and only nodes that contribute to a graph output are translated. Every node that
cannot be mapped is collected before one `UnsupportedModelError` is raised.

This module holds the entry points, loading, opset check, shape inference, the driver and the
final graph assembly; the translation state and context API are in onnx_context, constants,
Identity/Dropout and problem collection in onnx_graph, the op dispatch table in onnx_ops.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import onnx

from hlsgen.config.limits import DEFAULT_LIMITS, Limits, beyond, elements
from hlsgen.errors import HlsgenError
from hlsgen.frontend.onnx_context import OnnxContext
from hlsgen.frontend.onnx_graph import Problems, add_constant, node_names, passthrough, tensor_to_numpy
from hlsgen.frontend.onnx_guard import check_tensors, load_checked
from hlsgen.frontend.onnx_ops import find_translator, unsupported_reason
from hlsgen.frontend.onnx_ops_common import Unsupported
from hlsgen.frontend.onnx_rewrite import (
    OLDEST_OPSET,
    conv1d_to_2d,
    default_opset,
    fold_constants,
    unsqueeze_bn,
    upgrade_opset,
)
from hlsgen.ir.graph import Edit, Graph, Tensor

__all__ = ["MAX_OPSET", "MIN_OPSET", "from_onnx_model", "load_onnx", "model_name", "tensor_to_numpy"]

MIN_OPSET, MAX_OPSET = 9, 22  # what the translators implement; older files are upgraded (onnx_rewrite)
_QUANT_OPS = {"QuantizeLinear", "DequantizeLinear"}
_QONNX_OPS = {"Quant", "BipolarQuant", "Trunc"}  # the QONNX quantizers (qonnx.custom_op.general)
# graph names that exporters write whatever the model is (PyTorch's TorchScript and dynamo exporters,
# tf2onnx, tflite2onnx); onnxmltools writes a random uuid (32 hex digits)
EXPORTER_GRAPH_NAMES = frozenset({"", "main_graph", "torch_jit", "torch-jit-export", "tf2onnx", "pre-alpha"})
_UUID_NAME = re.compile(r"[0-9a-f]{32}")


def model_name(graph_name: str, source: str) -> str:
    """The model's name in reports and generated headers: the graph's own name, or the file's stem
    when the graph name is an exporter's default that names no model."""
    if graph_name.strip() in EXPORTER_GRAPH_NAMES or _UUID_NAME.fullmatch(graph_name):
        return Path(source).stem
    return graph_name


def load_onnx(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> Graph:
    """Read an .onnx file and translate it; HlsgenError for a missing or unreadable file, and for
    tensors beyond `limits` or inconsistent with their dims (checked before they are read)."""
    p = Path(path)
    if not p.exists():
        raise HlsgenError(f"{p}: no such file")
    if p.is_dir():
        raise HlsgenError(f"{p}: is a directory, not an ONNX file")
    if not p.is_file():
        raise HlsgenError(f"{p}: not a regular file (a device or pipe is not read)")
    return from_onnx_model(load_checked(p, limits), str(p), limits)


def from_onnx_model(model: onnx.ModelProto, source_name: str = "model", limits: Limits = DEFAULT_LIMITS) -> Graph:
    """Translate an in-memory model; `source_name` names it in errors and in Graph.meta."""
    check_tensors(model, source_name, limits)
    model = upgrade_opset(model, source_name, MIN_OPSET, MAX_OPSET)
    model = fold_constants(model, source_name, limits)
    return _Translator(conv1d_to_2d(unsqueeze_bn(model)), source_name, limits).run()


# ---- model checks and shape inference -----------------------------------------------------------
def _static_shape(vi: onnx.ValueInfoProto) -> tuple[int | None, ...] | None:
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)


def _infer(model: onnx.ModelProto, input_name: str) -> onnx.ModelProto:
    """Copy with the graph input's batch dimension set to 1, shapes inferred (best effort)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in m.graph.input:
        dims = vi.type.tensor_type.shape.dim
        if vi.name == input_name and len(dims) > 1:
            dims[0].dim_value = 1
    try:
        return onnx.shape_inference.infer_shapes(m, strict_mode=False, data_prop=True)
    except Exception:  # inference is a fallback source of shapes only
        return m


# ---- the translation ----------------------------------------------------------------------------
class _Translator(OnnxContext):
    """One translation: fills the OnnxContext state in, walks the graph, assembles the IR Graph."""

    def __init__(self, model: onnx.ModelProto, source: str, limits: Limits):
        self.model, self.source, self.limits = model, source, limits
        self.opset = default_opset(model)
        if not MIN_OPSET <= self.opset <= MAX_OPSET:
            raise HlsgenError(f"{source}: ONNX opset {self.opset} not supported ({OLDEST_OPSET}..{MAX_OPSET})")
        g = model.graph
        try:
            self.consts = {t.name: tensor_to_numpy(t) for t in g.initializer}
        except Unsupported as e:
            raise HlsgenError(f"{source}: initializer {e}") from None
        self.elem = {t.name: t.data_type for t in g.initializer}
        self.input_name = self._graph_input()
        self.inferred = {}
        self._read_inferred(_infer(model, self.input_name))
        self.producers = {o: n for n in g.node for o in n.output if o}
        self.renames, self.tensors, self.nodes = {}, {}, []
        self.derived = set()
        self.problems = Problems()
        self.node_names = node_names(g.node)
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
                self.problems.guard(self.node_names[i], node.op_type, partial(add_constant, self, node))
            elif i in live:
                self.problems.guard(self.node_names[i], node.op_type,
                                    partial(self._translate, node, self.node_names[i]))
        self.problems.raise_if_any(self.source)
        return self._graph()

    def _translate(self, node: onnx.NodeProto, name: str) -> None:
        if node.op_type in ("Identity", "Dropout") and node.domain in ("", "ai.onnx"):
            passthrough(self, node)
            return
        fn = find_translator(node.domain, node.op_type)
        if fn is None:
            raise Unsupported(unsupported_reason(node.domain, node.op_type))
        fn(self, node, name)

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
        # the first dimension is the batch: unknown, or fixed by a tracing export (PyTorch 0.3 traced
        # with the whole data set declares [789444, 16]); hlsgen compiles one sample at a time
        dims = [1 if i == 0 and len(shape) > 1 else d for i, d in enumerate(shape)]
        bad = [i for i, d in enumerate(dims) if d is None or d <= 0]
        if bad:
            raise HlsgenError(f"{self.source}: graph input '{vi.name}' has an unknown dimension {bad[0]}")
        count = elements(d or 0 for d in dims)
        if count > self.limits.tensor_elements:
            raise HlsgenError(f"{self.source}: graph input '{vi.name}' of shape {dims}: "
                              f"{beyond(self.limits, 'tensor_elements', count)}")
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
        g = Graph(model_name(self.model.graph.name, self.source), tuple(self.nodes), self.tensors,
                  (self.input_name,), outputs, meta=self._meta())
        return g.apply(Edit())

    def _meta(self) -> dict[str, Any]:
        ops = {n.op for n in self.nodes}
        quant = any(n.op_type in _QONNX_OPS for n in self.model.graph.node)
        fmt = "qonnx" if quant else "onnx-qdq" if ops & _QUANT_OPS else "onnx-float"
        file_ops = Counter(n.op_type for n in self.model.graph.node)
        return {"format": fmt, "opset": self.opset, "source": Path(self.source).name,
                "file_ops": dict(sorted(file_ops.items()))}

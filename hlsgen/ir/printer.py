"""Canonical text form of a graph: deterministic, diff-friendly, one line per node.

Constants are summarised by shape, type and a content hash so that two dumps are equal exactly when
the graphs are. Written per pass to OUT/graph/NN_pass.txt.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import numpy as np

from hlsgen.ir.epilogue import Epilogue, Skip, Step
from hlsgen.ir.graph import Graph, Tensor
from hlsgen.support.identifiers import shown

RECORDS = (Epilogue, Step, Skip)  # the epilogue (ir/epilogue.py); other values print as their repr
UNPRINTED_META = ("calibration", "file_ops")  # a YAML model's synthetic set; the ONNX file's op counts (inspect)


def format_graph(graph: Graph) -> str:
    lines = [f"graph {shown(graph.name)}"]
    lines += [f"  meta {k} = {_value(v)}" for k, v in sorted(graph.meta.items()) if k not in UNPRINTED_META]
    lines += [f"input  {_tensor_sig(graph.tensor(t))}" for t in graph.inputs]
    lines += [f"output {_tensor_sig(graph.tensor(t))}" for t in graph.outputs]
    for n in graph.nodes:
        outs = ", ".join(_tensor_sig(graph.tensor(o)) for o in n.outputs)
        ins = ", ".join(("@" if graph.is_const(i) else "%") + shown(i) for i in n.inputs)
        attrs = ", ".join(f"{k}={_value(v)}" for k, v in n.attrs.items())
        lines.append(f"{shown(n.name)}: {outs} = {n.op}({ins})" + (f" {{{attrs}}}" if attrs else ""))
    for t in sorted((t for t in graph.tensors.values() if t.is_const), key=lambda t: t.name):
        lines.append(f"const {_tensor_sig(t)} {_digest(t)}")
    for note in graph.notes:
        lines.append(f"note [{note.kind}] {shown(note.node)}: {shown(note.message)}")
    return "\n".join(lines) + "\n"


def _tensor_sig(t: Tensor) -> str:
    shape = "x".join(str(d) for d in t.shape)
    kind = "int" if t.integer else "real"
    q = f" {t.qtype!r}" if t.qtype is not None else ""
    return f"{shown(t.name)}[{shape}] {kind}{q}"


def _digest(t: Tensor) -> str:
    assert t.data is not None
    arr = np.ascontiguousarray(t.data, dtype=np.int64 if t.integer else np.float64)
    return "sha1:" + hashlib.sha1(arr.tobytes()).hexdigest()[:12]


def _value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.9g}"
    if isinstance(v, tuple | list):
        if len(v) > 8:  # long per-channel lists: the first few, the length, and a digest of all
            digest = hashlib.sha1(repr(tuple(v)).encode()).hexdigest()[:8]
            return f"[{', '.join(_value(x) for x in v[:4])}, ... ({len(v)}, sha1:{digest})]"
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in sorted(v.items())) + "}"
    if isinstance(v, str):
        return shown(v)  # attribute text can carry source names (e.g. `reproduces`)
    if isinstance(v, RECORDS):  # a record attribute: its fields, in order
        fields = ", ".join(f"{f.name}={_value(getattr(v, f.name))}" for f in dataclasses.fields(v)
                           if getattr(v, f.name) is not None)
        return f"{type(v).__name__}({fields})"
    return str(v)

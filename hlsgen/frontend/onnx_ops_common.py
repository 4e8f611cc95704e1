"""What the per-op translators of the ONNX front-end share (see onnx_ops.py for the dispatch table).

Each translator reads one ONNX node through a `Ctx` (the translation state, implemented by
onnx_context.OnnxContext), computes its output shapes, and emits IR nodes with `ctx.add_node`. It
raises `Unsupported(reason)` for anything the IR cannot express; the driver collects those for every
node before reporting. This module holds those two exceptions, the `Ctx` protocol, the translator
signature, shared constants and the small input/attribute helpers every op family uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
import onnx

from hlsgen.ir.types import QType

INF = math.inf
EPILOGUE: dict[str, Any] = {"act": "none", "clip_min": -INF, "clip_max": INF, "alpha": 0.0}
QONNX_DOMAINS = ("qonnx.custom_op.general", "finn.custom_op.general", "onnx.brevitas")


class Unsupported(Exception):
    """The node cannot be mapped to the IR; the message is the reason."""


class Poisoned(Exception):
    """An input's shape is unknown because its producer was reported unsupported."""


class Ctx(Protocol):
    opset: int

    def inp(self, node: onnx.NodeProto, i: int) -> str | None: ...
    def shape(self, name: str) -> tuple[int, ...]: ...
    def inferred_shape(self, name: str) -> tuple[int | None, ...] | None: ...
    def const(self, name: str | None) -> np.ndarray | None: ...
    def shape_value(self, name: str) -> np.ndarray | None: ...
    def need_const(self, name: str | None, what: str) -> np.ndarray: ...
    def is_static(self, name: str) -> bool: ...
    def elem_type(self, name: str) -> int | None: ...
    def attrs(self, node: onnx.NodeProto) -> dict[str, Any]: ...
    def fresh(self, base: str) -> str: ...
    def new_const(self, base: str, value: np.ndarray) -> str: ...
    def derived_static(self, name: str, base: str, fn: Callable[[np.ndarray], np.ndarray],
                       axis_map: Callable[[int | None], int | None], factor: float) -> str: ...
    def add_node(self, name: str, op: str, inputs: Sequence[str], outputs: Sequence[str],
                 attrs: dict[str, Any], shapes: Sequence[tuple[int, ...]]) -> None: ...
    def set_qtype(self, name: str, qtype: QType, elem: int | None = None) -> None: ...
    def alias(self, name: str, existing: str) -> None: ...


Translator = Callable[[Ctx, onnx.NodeProto, str], None]


# ---- small helpers ------------------------------------------------------------------------------
def operand(ctx: Ctx, node: onnx.NodeProto, i: int = 0) -> tuple[str, tuple[int, ...]]:
    """Input i of `node` and its static shape; Unsupported if the input is absent."""
    name = ctx.inp(node, i)
    if name is None:
        raise Unsupported(f"input {i} is missing")
    return name, ctx.shape(name)


def single_output(node: onnx.NodeProto, what: str) -> str:
    if any(o for o in node.output[1:]):
        raise Unsupported(f"the {what} output is not supported")
    return node.output[0]


def norm_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def axes_of(ctx: Ctx, node: onnx.NodeProto, rank: int, input_since: int) -> list[int] | None:
    """The `axes` of Squeeze, Unsqueeze or a Reduce op (an attribute before opset `input_since`, input 1
    from it on), normalised against `rank` and sorted; None if absent."""
    if ctx.opset < input_since:
        raw = ctx.attrs(node).get("axes")
    else:
        name = ctx.inp(node, 1)
        raw = None if name is None else ctx.need_const(name, "axes").reshape(-1)
    if raw is None:
        return None
    axes = sorted(norm_axis(int(v), rank) for v in raw)
    if len(set(axes)) != len(axes):
        raise Unsupported(f"repeated axes {axes}")
    return axes


def scalar(value: np.ndarray, what: str) -> float:
    if value.size != 1:
        raise Unsupported(f"{what} must be a scalar")
    return float(value.reshape(()))


def ints(values: Any, n: int, what: str) -> tuple[int, ...]:
    out = tuple(int(v) for v in values)
    if len(out) != n:
        raise Unsupported(f"{what} must have {n} values, got {len(out)}")
    return out

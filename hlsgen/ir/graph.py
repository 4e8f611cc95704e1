"""The graph IR: frozen Tensor, Node and Graph, edited only through `Graph.apply(Edit)`.

Tensors are referenced by name. A Graph holds its nodes in topological order; every edit returns a
new Graph, re-sorted stably (original order wherever dependencies allow), so passes never mutate.
Diagnostics a pass wants to report (floored BN channels, host-side ops, ...) ride along in
`Graph.notes` so that passes stay pure functions.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from hlsgen.ir.ops import Op, default_attr
from hlsgen.ir.types import QType


@dataclass(frozen=True, eq=False)
class Tensor:
    """A named value. Constants carry `data`; `integer` means data/values are codes of `qtype.int`."""

    name: str
    shape: tuple[int, ...]
    qtype: QType | None = None
    data: np.ndarray | None = None
    integer: bool = False
    aliases: tuple[str, ...] = ()  # source-model tensor names this tensor stands for

    @property
    def is_const(self) -> bool:
        return self.data is not None

    def real_value(self) -> np.ndarray:
        """The constant as real numbers (float64): dequantized when stored as integers."""
        if self.data is None:
            raise ValueError(f"tensor {self.name} is not a constant")
        if not self.integer:
            return np.asarray(self.data, dtype=np.float64)
        assert self.qtype is not None
        scale, zp = self.qtype.broadcast(self.data.ndim)
        return scale * (self.data.astype(np.int64) - zp)


_SCHEMA: Any = object()  # "use the op schema's default"


def _freeze(attrs: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(sorted((attrs or {}).items())))


@dataclass(frozen=True, eq=False)
class Node:
    """One operator application. `op` is an Op (a name of one is converted; an unknown one is a
    bug of the front-end that built the node, which refuses unknown source ops before)."""

    name: str
    op: Op
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", Op(self.op))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "attrs", _freeze(self.attrs))

    def attr(self, key: str, default: Any = _SCHEMA) -> Any:
        """The attribute's value; when absent, `default` if given, else the op schema's default
        (hlsgen/ir/ops.py, the one place defaults live)."""
        if key in self.attrs:
            return self.attrs[key]
        return default_attr(self.op, key) if default is _SCHEMA else default

    def with_attrs(self, **changes: Any) -> Node:
        return replace(self, attrs={**self.attrs, **changes})


@dataclass(frozen=True)
class Note:
    """A diagnostic for the report: `kind` groups them (e.g. 'bn_floor', 'host_op', 'warning')."""

    kind: str
    node: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Edit:
    """What a rewrite changes. Added nodes take the place of the first removed one."""

    remove: tuple[str, ...] = ()
    add: tuple[Node, ...] = ()
    tensors: tuple[Tensor, ...] = ()  # added or replaced, by name
    drop_tensors: tuple[str, ...] = ()
    rename_uses: Mapping[str, str] = field(default_factory=dict)  # consumers of key read value instead
    notes: tuple[Note, ...] = ()


@dataclass(frozen=True)
class Graph:
    name: str
    nodes: tuple[Node, ...]
    tensors: Mapping[str, Tensor]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    notes: tuple[Note, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)  # e.g. source format, opset

    # ---- queries -------------------------------------------------------------------------
    def tensor(self, name: str) -> Tensor:
        return self.tensors[name]

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def producer(self, tensor: str) -> Node | None:
        for n in self.nodes:
            if tensor in n.outputs:
                return n
        return None

    def consumers(self, tensor: str) -> list[Node]:
        return [n for n in self.nodes if tensor in n.inputs]

    def is_const(self, tensor: str) -> bool:
        return tensor in self.tensors and self.tensors[tensor].is_const

    def single_consumer(self, tensor: str) -> Node | None:
        """The one node reading `tensor`, or None if it has several readers or is a graph output."""
        users = self.consumers(tensor)
        if len(users) != 1 or tensor in self.outputs:
            return None
        return users[0]

    # ---- editing -------------------------------------------------------------------------
    def apply(self, edit: Edit) -> Graph:
        removed = set(edit.remove)
        nodes: list[Node] = []
        placed = False
        for n in self.nodes:
            if n.name in removed:
                if not placed:
                    nodes.extend(edit.add)
                    placed = True
                continue
            nodes.append(n)
        if not placed:
            nodes.extend(edit.add)
        ren = dict(edit.rename_uses)
        if ren:
            nodes = [replace(n, inputs=tuple(ren.get(i, i) for i in n.inputs)) for n in nodes]
        outputs = tuple(ren.get(o, o) for o in self.outputs)
        tensors = {k: v for k, v in self.tensors.items() if k not in set(edit.drop_tensors)}
        tensors.update({t.name: t for t in edit.tensors})
        g = replace(self, nodes=_toposort(nodes), tensors=tensors, outputs=outputs,
                    notes=self.notes + edit.notes)
        return g.prune()

    def with_tensor(self, tensor: Tensor) -> Graph:
        return replace(self, tensors={**self.tensors, tensor.name: tensor})

    def prune(self) -> Graph:
        """Drop nodes whose outputs nobody needs and tensors nothing refers to."""
        live = set(self.outputs)
        kept: list[Node] = []
        for n in reversed(self.nodes):
            if any(o in live for o in n.outputs):
                kept.append(n)
                live.update(i for i in n.inputs if i)
        kept.reverse()
        used = live | set(self.inputs) | {o for n in kept for o in n.outputs}
        tensors = {k: v for k, v in self.tensors.items() if k in used}
        return replace(self, nodes=tuple(kept), tensors=tensors)


def _toposort(nodes: list[Node]) -> tuple[Node, ...]:
    """Stable topological order: each node as early as its inputs allow, ties by given order."""
    made_by = {o: i for i, n in enumerate(nodes) for o in n.outputs}
    waiting = [len({made_by[t] for t in n.inputs if t in made_by}) for n in nodes]
    users: dict[int, set[int]] = {}
    for i, n in enumerate(nodes):
        for j in {made_by[t] for t in n.inputs if t in made_by}:
            users.setdefault(j, set()).add(i)
    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order: list[Node] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(nodes[i])
        for u in users.get(i, ()):
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, u)
    if len(order) < len(nodes):
        stuck = sorted({n.name for n in nodes} - {n.name for n in order})
        raise ValueError(f"graph has a cycle through: {', '.join(stuck)}")
    return tuple(order)

"""Structural checks run after every pass. A failure here is a bug in hlsgen, not bad input."""

from __future__ import annotations

from hlsgen.ir.epilogue import Epilogue
from hlsgen.ir.graph import Graph
from hlsgen.ir.ops import MVU_OPS, node_problems

CHANNEL_OPS = dict.fromkeys(MVU_OPS, 0)


class VerifyError(AssertionError):
    pass


def verify(graph: Graph, stage: str = "") -> Graph:
    """Raise VerifyError on a malformed graph; returns the graph so it chains in pipelines."""
    where = f" after {stage}" if stage else ""
    problems = _structure(graph) + _schema(graph) + _requant_attrs(graph)
    if problems:
        raise VerifyError(f"IR invalid{where}: " + "; ".join(problems))
    return graph


def _structure(graph: Graph) -> list[str]:
    problems: list[str] = []
    names: set[str] = set()
    produced: set[str] = set(graph.inputs)
    for name in graph.inputs:
        if name not in graph.tensors:
            problems.append(f"input {name} has no tensor")
    for n in graph.nodes:
        if n.name in names:
            problems.append(f"duplicate node name {n.name}")
        names.add(n.name)
        for i in n.inputs:
            if i not in graph.tensors:
                problems.append(f"{n.name} reads unknown tensor {i}")
            elif i not in produced and not graph.tensors[i].is_const:
                problems.append(f"{n.name} reads {i} before it is produced")
        for o in n.outputs:
            if o in produced:
                problems.append(f"tensor {o} produced twice")
            if o not in graph.tensors:
                problems.append(f"{n.name} writes unknown tensor {o}")
            produced.add(o)
    for o in graph.outputs:
        if o not in produced:
            problems.append(f"output {o} is never produced")
    for t in graph.tensors.values():
        if any((not isinstance(d, int)) or d < 1 for d in t.shape):
            problems.append(f"tensor {t.name} has a non-static shape {t.shape}")
        if t.integer and t.qtype is None:
            problems.append(f"integer tensor {t.name} has no qtype")
    return problems


def _schema(graph: Graph) -> list[str]:
    """Every node against the op schema (hlsgen/ir/ops.py): known op, arity, attribute names and
    enumerated values (rounding, act, ...)."""
    return [f"{n.name} ({n.op}): {p}" for n in graph.nodes for p in node_problems(n.op, len(n.inputs), n.attrs)]


def _requant_attrs(graph: Graph) -> list[str]:
    problems: list[str] = []
    for n in graph.nodes:
        if n.op not in CHANNEL_OPS:
            continue
        epilogue = n.attrs.get("epilogue")
        if not isinstance(epilogue, Epilogue):
            continue  # the schema reports it
        channels = graph.tensor(n.inputs[1]).shape[0]
        problems += [f"{n.name}: {p}" for p in epilogue.problems(channels)]
        if len(epilogue.out.mult) != channels or len(epilogue.out.shift) != channels:
            problems.append(f"{n.name}: its output step has {len(epilogue.out.mult)} multipliers and "
                            f"{len(epilogue.out.shift)} shifts for {channels} channels")
    return problems

"""The support report of `hlsgen inspect`: what the model holds and what each part becomes."""

from __future__ import annotations

from collections import Counter

from hlsgen.ir import Graph, Op
from hlsgen.passes.check_supported import host_head, host_tail
from hlsgen.support.identifiers import shown


def describe(source: Graph, fused: Graph) -> str:
    ops = source.meta.get("file_ops") or Counter(n.op for n in source.nodes)  # as the file names them
    tail, head = host_tail(fused), host_head(fused)
    lines = [f"model {shown(source.name)} ({source.meta.get('format')}, opset {source.meta.get('opset', '-')}): "
             f"input {source.inputs[0]} {list(source.tensor(source.inputs[0]).shape)}",
             "source ops: " + ", ".join(f"{op}×{k}" for op, k in sorted(ops.items())), ""]
    if head:
        lines.append("host-side head (float, before the input quantizer): "
                     + ", ".join(f"{shown(name)} ({fused.node(name).op})" for name in head))
    lines.append("hardware layers after folding and fusion:")
    for n in fused.nodes:
        if n.name in tail or n.name in head:
            continue
        epi = [p for p in ("residual add" if len(n.inputs) > 3 and n.op == Op.CONV else "",
                           n.attr("act") if n.attr("act") not in (None, "none") else "") if p]
        shape = "×".join(map(str, fused.tensor(n.outputs[0]).shape))
        lines.append(f"  {shown(n.name):<24} {n.op:<18} -> {shape:<14} {' + '.join(epi)}")
    lines.append("host-side tail (float): " + (", ".join(f"{shown(n.name)} ({n.op})" for n in fused.nodes
                                                         if n.name in tail) or "none"))
    for note in fused.notes:
        lines.append(f"note [{note.kind}] {shown(note.node)}: {shown(note.message)}")
    return "\n".join(lines)

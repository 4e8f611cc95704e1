"""Pass absorb_qdq: turn the quantization written in the model into tensor annotations.

Before:  x ─QuantizeLinear─► q ─DequantizeLinear─► y ─► consumers
         W(int8 const) ─DequantizeLinear─► Wf ─► Conv
After:   x{qtype} ─► consumers            (y's consumers read x; x carries q's qtype)
         W{qtype, integer} ─► Conv        (the integer codes stay as they were exported)
Requires: front-end output (QONNX Quant is already a Quantize/Dequantize pair).
Math:    DQ(Q(x)) is the fake-quantized x; the quantize pass later makes x really integer with the
         same qtype, so the annotation carries exactly the model's quantization.
         A Q of a float constant is evaluated now: codes = numerics.quantize(value, qtype).
         A quantizer whose zero point is its type's lowest code clamps at real 0: that is how
         onnxruntime's QDQ export absorbs a Relu. Only with the opt-in approximation
         `quant.fuse_across_qdq: true`, where such a tensor is made by a Conv, Gemm, MatMul or
         BatchNormalization an explicit Relu is restored (it fuses back into the layer), so fusions
         that drop this intermediate rounding (residual add, BN fold) keep at least the clamp. By
         default fusions keep the quantizer itself (two-step epilogue), clamp included.
         A tensor read by quantizers with different parameters (nn2fpga's QONNX ResNet-8 quantizes a
         block output once for the skip and once for the next conv) keeps its own value: each
         distinct quantizer reads it through an Identity whose output carries that quantizer, so
         each branch is rounded once from the exact value (calibrate.py gives the tensor its exact
         integer type, quantize.py makes each Identity a requant: a fork with per-branch requant).
Refuses when: a Dequantize reads a non-constant tensor not made by a Quantize (integer model input).
"""

from __future__ import annotations

from dataclasses import replace

from hlsgen.errors import HlsgenError
from hlsgen.ir import Edit, Graph, Node, Note, Op, QType, Tensor
from hlsgen.ir.ops import QDQ_OPS
from hlsgen.numerics import quantize
from hlsgen.passes.context import PassContext
from hlsgen.passes.rewrite import rewrite_all


def absorb_qdq(graph: Graph, ctx: PassContext) -> Graph:
    graph = rewrite_all(graph, _fold_const_quantize)
    graph = rewrite_all(graph, _fold_const_dequantize)
    graph = _fork_quantizers(graph)
    graph = rewrite_all(graph, _absorb_pair)
    if ctx.config.quant.fuse_across_qdq:
        graph = rewrite_all(graph, _restore_absorbed_relu)
    leftover = [n for n in graph.nodes if n.op in QDQ_OPS]
    if leftover:
        n = leftover[0]
        raise HlsgenError(
            f"node {n.name} ({n.op}): quantization that is not a Quantize→Dequantize pair on an "
            "activation is not supported (integer model inputs/outputs must be float with QDQ)"
        )
    return graph


def _fold_const_quantize(graph: Graph, node: Node) -> Edit | None:
    if node.op != Op.QUANTIZE_LINEAR or not graph.is_const(node.inputs[0]):
        return None
    out = graph.tensor(node.outputs[0])
    assert out.qtype is not None
    codes = quantize(graph.tensor(node.inputs[0]).real_value(), out.qtype)
    const = replace(out, data=codes, integer=True)
    return Edit(remove=(node.name,), tensors=(const,))


def _fold_const_dequantize(graph: Graph, node: Node) -> Edit | None:
    if node.op != Op.DEQUANTIZE_LINEAR or not graph.is_const(node.inputs[0]):
        return None
    src = graph.tensor(node.inputs[0])
    if not src.integer or src.qtype is None:
        raise HlsgenError(f"node {node.name}: DequantizeLinear of a constant without a qtype")
    alias = replace(src, aliases=src.aliases + (node.outputs[0],))
    return Edit(remove=(node.name,), tensors=(alias,), rename_uses={node.outputs[0]: src.name})


FORK_REQUANT = "fork_requant"  # the Note kind of a tensor whose quantizers differ


def _fork_quantizers(graph: Graph) -> Graph:
    """Each distinct quantizer of a tensor that has several reads it through its own Identity."""
    for name in [t for n in graph.nodes for t in n.outputs] + list(graph.inputs):
        readers = [c for c in graph.consumers(name)
                   if c.op == Op.QUANTIZE_LINEAR and graph.tensor(c.outputs[0]).qtype is not None]
        qtypes: list[QType] = []
        for q in readers:
            qtype = graph.tensor(q.outputs[0]).qtype
            if qtype is not None and qtype not in qtypes:
                qtypes.append(qtype)
        if len(qtypes) > 1:
            graph = graph.apply(_forked(graph, name, readers, qtypes))
    return graph


def _forked(graph: Graph, name: str, readers: list[Node], qtypes: list[QType]) -> Edit:
    x = graph.tensor(name)
    branches = [Tensor(f"{name}.as{i}", x.shape) for i in range(len(qtypes))]
    forks: list[Node] = [Node(f"{name}.fork{i}", Op.IDENTITY, (name,), (t.name,)) for i, t in enumerate(branches)]
    moved = [replace(q, inputs=(branches[_branch(graph, q, qtypes)].name, *q.inputs[1:])) for q in readers]
    note = Note(FORK_REQUANT, name, f"tensor {name} has {len(qtypes)} quantizers ("
                + ", ".join(repr(q) for q in qtypes) + "): one requant per branch from its exact value",
                {"tensor": name})
    return Edit(remove=tuple(q.name for q in readers), add=(*forks, *moved), tensors=tuple(branches), notes=(note,))


def _branch(graph: Graph, q: Node, qtypes: list[QType]) -> int:
    qtype = graph.tensor(q.outputs[0]).qtype
    assert qtype is not None
    return qtypes.index(qtype)


def _absorb_pair(graph: Graph, node: Node) -> Edit | None:
    if node.op != Op.DEQUANTIZE_LINEAR:
        return None
    q_node = graph.producer(node.inputs[0])
    if q_node is None or q_node.op != Op.QUANTIZE_LINEAR:
        return None
    x = graph.tensor(q_node.inputs[0])
    qtype = graph.tensor(q_node.outputs[0]).qtype
    if x.qtype is not None and x.qtype != qtype:
        raise HlsgenError(f"tensor {x.name} is quantized twice with different parameters "
                          f"({x.qtype!r} and {qtype!r}, at {q_node.name})")
    if qtype is not None and qtype.per_channel:
        raise HlsgenError(f"node {q_node.name}: per-channel activation quantization is not supported")
    annotated = Tensor(x.name, x.shape, qtype, x.data, False,
                       x.aliases + (q_node.outputs[0], node.outputs[0]))
    others = [c for c in graph.consumers(q_node.outputs[0]) if c.name != node.name]
    remove = (node.name,) if others else (node.name, q_node.name)
    return Edit(remove=remove, tensors=(annotated,), rename_uses={node.outputs[0]: x.name})


# Ops whose output rounding a later pass may fuse away (into an epilogue or a BN fold). An Add keeps
# its output rounding (a residual epilogue or a standalone add writes that tensor), so it needs none.
FUSABLE_PRODUCERS = (Op.CONV, Op.GEMM, Op.MATMUL, Op.BATCHNORM)


def _restore_absorbed_relu(graph: Graph, node: Node) -> Edit | None:
    if node.op not in FUSABLE_PRODUCERS or node.attr("relu_restored"):
        return None
    out = graph.tensor(node.outputs[0])
    q = out.qtype
    if q is None or int(q.zero_point) != q.int.lo:
        return None
    pre = Tensor(f"{out.name}.pre_relu", out.shape)
    moved = Node(node.name, node.op, node.inputs, (pre.name,), {**node.attrs, "relu_restored": True})
    relu = Node(f"{node.name}.relu", Op.RELU, (pre.name,), (out.name,))
    note = Note("relu_restored", node.name, f"quantizer of {out.name} clamps at 0 (zero point {q.int.lo}): "
                "explicit Relu restored")
    return Edit(remove=(node.name,), add=(moved, relu), tensors=(pre,), notes=(note,))

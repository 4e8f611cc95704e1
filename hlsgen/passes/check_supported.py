"""Pass check_supported: after the float rewrites, every node must be one the hardware (or the
host-side tail) can run. All offenders are reported together, before any calibration or
quantization work starts.

Before/After: the graph is unchanged.
Requires: fuse_epilogue (so Relu/Add that fused away are not judged alone).
Refuses when: an op has no integer lowering (e.g. an Add of a tensor with a constant that is not a
         per-channel scaling, a Mul of two activations), a Softmax/LogSoftmax is not at the tail,
         an Add broadcasts, an AveragePool excludes padding from its count, a weight is not constant.
"""

from __future__ import annotations

from hlsgen.errors import UnsupportedModelError
from hlsgen.ir import Graph, Node
from hlsgen.ir.ops import HOST_BOUNDARY_OPS, UNARY_OPS, Op
from hlsgen.passes.context import PassContext

HARDWARE_OPS = (Op.CONV, Op.GEMM, Op.ADD, Op.MAXPOOL, Op.RESIZE, Op.AVGPOOL, Op.GLOBAL_AVGPOOL, Op.RELU, Op.CLIP,
                Op.LEAKY_RELU, Op.RESHAPE, Op.TRANSPOSE, Op.TRUNC, Op.IDENTITY, Op.CONCAT, Op.SLICE,
                *UNARY_OPS)
HOST_TAIL_OPS = (Op.SOFTMAX, Op.LOG_SOFTMAX, Op.DEPTH_TO_SPACE)
LAYOUT_OPS = (Op.RESHAPE, Op.TRANSPOSE)


def host_tail_nodes(graph: Graph) -> set[str]:
    """Names of the integer graph's nodes after DequantizeOutput: float ops the host runs."""
    after = {n.outputs[0] for n in graph.nodes if n.op == Op.DEQUANTIZE_OUTPUT}
    names: set[str] = set()
    for n in graph.nodes:
        if any(i in after for i in n.inputs):
            names.add(n.name)
            after.update(n.outputs)
    return names


def hardware_nodes(graph: Graph) -> list[Node]:
    """The nodes the hardware computes, in order: all but the quantize/dequantize boundary and the
    float head and tail the host computes (layout ops included: they become stream orders)."""
    quant_in = next(n for n in graph.nodes if n.op == Op.QUANTIZE_INPUT)
    host = host_tail_nodes(graph) | {n.name for n in graph.nodes[:graph.nodes.index(quant_in)]}  # + float head
    return [n for n in graph.nodes if n.op not in HOST_BOUNDARY_OPS and n.name not in host]


def host_tail(graph: Graph) -> set[str]:
    """Names of the nodes that run on the host after the hardware: every host-only op (Softmax,
    LogSoftmax, DepthToSpace) and all that depends on one; and an elementwise function (Sigmoid,
    Tanh, ...) whose readers are all on the host (or none: a graph output) and whose output the
    model does not quantize — float work after the last quantized tensor. An elementwise function
    anywhere else becomes a lookup table in hardware (QLut)."""
    tail: set[str] = set()
    tainted: set[str] = set()
    for n in graph.nodes:
        if n.op in HOST_TAIL_OPS or any(i in tainted for i in n.inputs):
            tail.add(n.name)
            tainted.update(n.outputs)
    for n in reversed(graph.nodes):
        out = n.outputs[0]
        if n.name not in tail and n.op in UNARY_OPS and graph.tensor(out).qtype is None \
                and all(c.name in tail for c in graph.consumers(out)):
            tail.add(n.name)
    return tail


HEAD_OPS = (Op.RESHAPE, Op.TRANSPOSE, Op.AFFINE)


def host_head(graph: Graph) -> tuple[str, ...]:
    """Names of the nodes that preprocess the float input on the host, before the model's own input
    quantizer: the chain from the graph input through Reshape/Transpose/Affine nodes (each the only
    reader of its input) that ends at an Affine whose output the model quantizes per tensor, e.g.
    Brevitas' x·2 − 1 before a 2-bit or bipolar quantizer, or (x + 1)/2 of bipolar features. The
    host computes that affine in float64 and quantizes its result (QuantizeInput)."""
    t = graph.inputs[0]
    if graph.tensor(t).qtype is not None:
        return ()
    chain: list[Node] = []
    while (n := graph.single_consumer(t)) is not None and n.op in HEAD_OPS:
        chain.append(n)
        t = n.outputs[0]
        q = graph.tensor(t).qtype
        if q is not None:
            return tuple(m.name for m in chain) if n.op == Op.AFFINE and q.axis is None else ()
    return ()


def check_supported(graph: Graph, ctx: PassContext) -> Graph:
    tail, head = host_tail(graph), host_head(graph)
    problems = []
    for n in graph.nodes:
        if n.name in head:
            continue
        why = _tail_problem(n) if n.name in tail else _hardware_problem(graph, n)
        if why:
            problems.append((n.name, n.op, why))
    if problems:
        raise UnsupportedModelError(str(graph.meta.get("source", graph.name)), problems)
    return graph


def _tail_problem(n: Node) -> str | None:
    if n.op in HOST_TAIL_OPS or n.op in LAYOUT_OPS or n.op in UNARY_OPS:
        return None
    return "follows a host-side op (Softmax/LogSoftmax/DepthToSpace run on the host only at the end of the network)"


def _hardware_problem(graph: Graph, n: Node) -> str | None:
    if n.op not in HARDWARE_OPS:
        return f"no integer hardware mapping for {n.op} here" + (
            " (only a constant per-channel scaling or a bias is supported)" if n.op in (Op.MUL, Op.DIV, Op.SUB, Op.ADD)
            else "")
    if n.op in (Op.CONV, Op.GEMM) and not all(graph.is_const(i) for i in n.inputs[1:3]):
        return "weights and bias must be constants"
    if n.op == Op.GEMM and len(graph.tensor(n.inputs[0]).shape) != 2:
        return "Gemm input must be 2-D [N, K]"
    if n.op == Op.ADD:
        if any(graph.is_const(i) for i in n.inputs):
            return "Add of a constant that is not a per-channel bias"
        shapes = [graph.tensor(i).shape for i in n.inputs]
        if shapes[0] != shapes[1]:
            return f"Add with broadcasting ({list(shapes[0])} + {list(shapes[1])}) is not supported"
    if n.op == Op.AVGPOOL and any(n.attr("pads")) and not n.attr("count_include_pad"):
        return "AveragePool with padding excluded from the count (count_include_pad=0) is not supported"
    return None

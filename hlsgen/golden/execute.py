"""The golden-model executor: runs a Graph's nodes in order with numpy kernels.

`KERNELS` maps every op of docs/ir.md to its kernel `kernel(node, graph, inputs) -> np.ndarray`.
Inputs are passed in node order (empty optional names skipped): computed values as produced,
constants as their data — int64 codes for `integer=True` constants, float64 reals otherwise
(float kernels re-read constants through `Tensor.real_value()`). Feeds are cast the same way:
int64 for integer graph inputs, float64 otherwise. The batch size is whatever the feeds carry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from hlsgen.golden import float_ops as F
from hlsgen.golden import int_ops as Q
from hlsgen.ir.graph import Graph, Node, Tensor
from hlsgen.ir.ops import UNARY_OPS, Op

Kernel = Callable[[Node, Graph, list[np.ndarray]], np.ndarray]

KERNELS: dict[Op, Kernel] = {
    # float ops
    Op.CONV: F.conv,
    Op.GEMM: F.gemm,
    Op.MATMUL: F.matmul,
    Op.ADD: F.add,
    Op.SUB: F.sub,
    Op.MUL: F.mul,
    Op.DIV: F.div,
    Op.AFFINE: F.affine,
    Op.BATCHNORM: F.batch_normalization,
    Op.RELU: F.relu,
    Op.CLIP: F.clip,
    Op.LEAKY_RELU: F.leaky_relu,
    Op.MAXPOOL: F.max_pool,
    Op.AVGPOOL: F.average_pool,
    Op.GLOBAL_AVGPOOL: F.global_average_pool,
    Op.PAD: F.pad,
    Op.RESHAPE: F.reshape,
    Op.TRANSPOSE: F.transpose,
    Op.DEPTH_TO_SPACE: F.depth_to_space,
    Op.CONCAT: F.concat,
    Op.SLICE: F.slice_channels,
    Op.RESIZE: F.resize,
    Op.TRUNC: F.trunc,
    Op.IDENTITY: F.identity,
    Op.QUANTIZE_LINEAR: F.quantize_linear,
    Op.DEQUANTIZE_LINEAR: F.dequantize_linear,
    Op.SOFTMAX: F.softmax,
    Op.LOG_SOFTMAX: F.log_softmax,
    **{op: F.unary for op in UNARY_OPS},
    # integer ops
    Op.QLUT: Q.qlut,
    Op.QUANTIZE_INPUT: Q.quantize_input,
    Op.QCONV: Q.qconv,
    Op.QGEMM: Q.qgemm,
    Op.QADD: Q.qadd,
    Op.QMAXPOOL: Q.qmaxpool,
    Op.QAVGPOOL: Q.qavgpool,
    Op.QRESIZE: Q.qresize,
    Op.QREQUANT: Q.qrequant,
    Op.QCONCAT: Q.qconcat,
    Op.QSLICE: Q.qslice,
    Op.DEQUANTIZE_OUTPUT: Q.dequantize_output,
}


def _as_value(t: Tensor, x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.int64 if t.integer else np.float64)


def _bind_feeds(graph: Graph, feeds: Mapping[str, np.ndarray] | np.ndarray) -> dict[str, np.ndarray]:
    if not isinstance(feeds, Mapping):
        if len(graph.inputs) != 1:
            raise ValueError(f"graph {graph.name} has inputs {list(graph.inputs)}: feed a dict")
        feeds = {graph.inputs[0]: feeds}
    unknown = set(feeds) - set(graph.inputs)
    missing = [name for name in graph.inputs if name not in feeds]
    if unknown or missing:
        raise ValueError(f"feeds do not match the graph inputs: missing {missing}, unknown {sorted(unknown)}")
    values = {}
    for name in graph.inputs:
        t = graph.tensor(name)
        x = _as_value(t, feeds[name])
        if x.ndim != len(t.shape) or tuple(x.shape[1:]) != tuple(t.shape[1:]):
            raise ValueError(f"feed {name}: shape {x.shape} does not match [N, *{list(t.shape[1:])}]")
        values[name] = x
    return values


def _last_uses(graph: Graph) -> dict[int, list[str]]:
    """For each node index, the tensors whose last reader it is."""
    last: dict[str, int] = {}
    for i, n in enumerate(graph.nodes):
        for name in n.inputs:
            last[name] = i
    by_node: dict[int, list[str]] = {}
    for name, i in last.items():
        by_node.setdefault(i, []).append(name)
    return by_node


def _node_inputs(node: Node, graph: Graph, values: dict[str, np.ndarray]) -> list[np.ndarray]:
    args = []
    for name in node.inputs:
        if not name:
            continue
        if name in values:
            args.append(values[name])
        elif graph.is_const(name):
            t = graph.tensor(name)
            assert t.data is not None
            args.append(_as_value(t, t.data))
        else:
            raise ValueError(f"{node.name} ({node.op}): input {name} has no value yet")
    return args


def run_graph(
    graph: Graph, feeds: Mapping[str, np.ndarray] | np.ndarray, keep: bool | set[str] = False
) -> dict[str, np.ndarray]:
    """Execute the graph; return its outputs, plus every node output (keep=True) or the named ones."""
    values = _bind_feeds(graph, feeds)
    wanted = set(graph.outputs) | (set(keep) if isinstance(keep, set) else set())
    release = {} if keep is True else _last_uses(graph)
    for i, node in enumerate(graph.nodes):
        kernel = KERNELS.get(node.op)
        if kernel is None:
            raise KeyError(f"no golden kernel for op '{node.op}' (node {node.name})")
        result = kernel(node, graph, _node_inputs(node, graph, values))
        values[node.outputs[0]] = result
        for name in release.get(i, ()):
            if name not in wanted and name not in graph.inputs:
                values.pop(name, None)
    missing = sorted(n for n in wanted if n not in values)
    if missing:
        raise KeyError(f"requested tensors never computed: {missing}")
    out = {name: values[name] for name in graph.outputs}
    if keep is True:
        out.update({o: values[o] for n in graph.nodes for o in n.outputs if o not in out})
    elif isinstance(keep, set):
        out.update({name: values[name] for name in sorted(keep) if name not in out})
    return out

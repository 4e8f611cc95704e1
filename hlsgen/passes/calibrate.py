"""Pass calibrate: give every activation that lacks a quantization one, from calibration data.

Before:  float graph; some activation tensors carry a qtype (from QDQ/QONNX), others none.
After:   every tensor the hardware will hold as integers has a per-tensor qtype.
Requires: check_supported. Runs the float golden model on the calibration batch.
Math:    range [lo, hi] = min/max over the batch (or the (100-p)/p percentiles), widened to hold 0;
         asymmetric scale = (hi - lo)/(qmax - qmin), zp = round(qmin - lo/scale) (numerics.
         activation_qtype). MaxPool/Resize/Slice/Reshape/Transpose outputs inherit their input's qtype
         (the op is exact on codes), so only tensors a requant writes are measured; a Concat's output
         is measured like a layer's (the quantize pass requantizes the inputs that differ from it).
         A tensor without a qtype whose only reader is a chain of such ops ending in a per-tensor
         quantized tensor (tf2onnx NHWC input -> Transpose -> QuantizeLinear; a flat input -> Reshape -> Q; a 1-D conv's
         2-D output -> Reshape -> Q) takes that quantizer: quantizing before or after a monotone,
         value-preserving op gives the same codes, so a fully quantized model never needs
         calibration data.
         A graph input with no quantizer takes `quant.input` when the config gives one.
         A Conv/Gemm at the end of the hardware (its output a graph output or read only on the
         host) whose output the model does not quantize, in a model that quantizes its input and
         weight, takes its exact accumulator type (`exact_output_qtype`): its codes are the sum
         Σ x·w + b itself at the scale s_x·s_w[c], dequantized on the host. No calibration is asked.
         A tensor read only by the Identity forks of absorb_qdq (quantized differently on each
         branch) takes its exact integer type (`_exact_forks`), so that each branch's requant
         rounds the model's value once: a layer's accumulator as above; a sum of quantized terms
         (an Add, or a two-step layer's t + skip) on the grid g = the finest term scale when every
         other term's scale is an integer multiple of it, y = Σ (q − zp)·(s/g); a Relu, MaxPool,
         Reshape or Transpose of such a tensor, its input's type.
Progress: the float model runs in chunks of CHUNK inputs (the same ranges whatever the display);
         from PROGRESS_MIN inputs on they are shown by hlsgen.support.progress (count, elapsed, time left).
Refuses when: a tensor needs calibration and no data was given (error listing the tensors; when
         the input is among them, it also offers `quant.input`); a tensor quantized differently on
         several branches has no exact integer value (error naming it, its producer and quantizers).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace

import numpy as np

from hlsgen.errors import HlsgenError
from hlsgen.ir import Edit, Graph, IntType, Node, Note, Op, QType
from hlsgen.ir.ops import FLOAT_LAYER_OPS, LAYOUT_OPS
from hlsgen.numerics import accumulator_bits, activation_qtype, signed_bits_for
from hlsgen.passes.check_supported import host_head, host_tail
from hlsgen.passes.context import PassContext
from hlsgen.passes.quantize_layer import weight_codes
from hlsgen.support import progress

PASSTHROUGH_OPS = (Op.MAXPOOL, Op.RESIZE, Op.SLICE, *LAYOUT_OPS)
PROGRESS_MIN = 256  # calibration inputs from which the run is chunked and its progress shown
CHUNK = 64


def hardware_tensors(graph: Graph) -> list[str]:
    """Activations the hardware holds as integers: its input (the graph input, or the output of the
    host-side preprocessing) and every hardware node output."""
    tail, head = host_tail(graph), host_head(graph)
    names = [graph.node(head[-1]).outputs[0]] if head else list(graph.inputs)
    for n in graph.nodes:
        if n.name not in tail and n.name not in head:
            names.extend(n.outputs)
    return names


def calibrate(graph: Graph, ctx: PassContext) -> Graph:
    graph = _exact_forks(_exact_outputs(_quantizer_behind_layout(_configured_input(graph, ctx))))
    inherited = {n.outputs[0]: n.inputs[0] for n in graph.nodes if n.op in PASSTHROUGH_OPS}
    needed = [t for t in hardware_tensors(graph) if graph.tensor(t).qtype is None and t not in inherited]
    if needed:
        if ctx.calibration is None:
            offer = (" or the input quantizer in the config (quant.input: {scale, zero_point} or {min, max})"
                     if set(needed) & set(graph.inputs) else "")
            raise HlsgenError(f"tensors {', '.join(needed[:6])}{' ...' if len(needed) > 6 else ''} have no "
                              f"quantization in the model: give calibration data (--calib DATA.npy){offer}")
        graph = _measure(graph, needed, ctx)
    for out, src in inherited.items():  # in topological order, so chains resolve
        if graph.tensor(out).qtype is None:
            graph = graph.with_tensor(replace(graph.tensor(out), qtype=graph.tensor(src).qtype))
    return graph


def _configured_input(graph: Graph, ctx: PassContext) -> Graph:
    spec = ctx.config.quant.input
    for name in graph.inputs:
        if spec is None or graph.tensor(name).qtype is not None:
            continue
        itype = IntType(spec.bits, spec.signed)
        qtype = (QType(itype, spec.scale, spec.zero_point) if spec.scale is not None
                 else activation_qtype(float(spec.min or 0.0), float(spec.max or 0.0), itype))
        graph = graph.with_tensor(replace(graph.tensor(name), qtype=qtype))
    return graph


def _quantizer_behind_layout(graph: Graph) -> Graph:
    for name in hardware_tensors(graph):
        t, qtype = name, None
        while qtype is None and (reader := graph.single_consumer(t)) is not None and reader.op in PASSTHROUGH_OPS:
            t = reader.outputs[0]
            qtype = graph.tensor(t).qtype
        if graph.tensor(name).qtype is None and qtype is not None and qtype.axis is None:
            graph = graph.with_tensor(replace(graph.tensor(name), qtype=qtype))
    return graph


def _exact_outputs(graph: Graph) -> Graph:
    tail = host_tail(graph)
    for n in graph.nodes:
        out = graph.tensor(n.outputs[0])
        last = out.name in graph.outputs or all(c.name in tail for c in graph.consumers(out.name))
        if n.op in FLOAT_LAYER_OPS and n.name not in tail and out.qtype is None and last:
            qtype = exact_output_qtype(graph, n)
            if qtype is not None:
                note = Note(EXACT_OUTPUT, n.name, f"the model does not quantize {out.name}: the hardware outputs "
                            f"its exact {qtype.int.bits}-bit sum, dequantized on the host", {"tensor": out.name})
                graph = graph.apply(Edit(tensors=(replace(out, qtype=qtype),), notes=(note,)))
    return graph


EXACT_OUTPUT = "exact_output"  # the Note kind of a layer whose output is its exact accumulator


def exact_output_qtype(graph: Graph, n: Node) -> QType | None:
    """The accumulator of a Conv/Gemm as its output type: scale s_x·s_w[c] (per channel when the
    weight is), zero point 0, signed, as wide as the sum of the codes can get. None when that is not
    exact: an unquantized input or weight, a fused skip or second step, a bias off the accumulator
    grid, or a LeakyReLU/Clip (whose bound or slope is not on the grid)."""
    x, w, b = (graph.tensor(i) for i in n.inputs[:3])
    if x.qtype is None or x.qtype.per_channel or not w.integer or w.qtype is None or len(n.inputs) > 3 \
            or n.attr("mid") is not None or n.attr("act") not in ("none", "relu") or w.qtype.axis not in (None, 0):
        return None
    s_w = np.broadcast_to(np.asarray(w.qtype.scale, np.float64), (w.shape[0],))
    acc_scale = float(x.qtype.scale) * s_w
    bias = b.real_value() / acc_scale
    if not np.array_equal(bias, np.round(bias)):
        return None
    codes, _, _ = weight_codes(w, w.qtype.int.bits, n)  # the layer's codes (w − zw for an asymmetric weight)
    bits = accumulator_bits(codes, x.qtype.int, np.round(bias).astype(np.int64)
                            - int(x.qtype.zero_point) * codes.reshape(codes.shape[0], -1).sum(axis=1))
    if np.all(acc_scale == acc_scale[0]):
        return QType(IntType(bits, True), float(acc_scale[0]), 0)
    return QType(IntType(bits, True), acc_scale, np.zeros(acc_scale.size, np.int64), axis=1)


def _exact_forks(graph: Graph) -> Graph:
    forked = dict.fromkeys(n.inputs[0] for n in graph.nodes if n.op == Op.IDENTITY)
    for name in forked:
        if graph.tensor(name).qtype is not None:
            continue
        exact = _with_exact_value(graph, name)
        if exact is None:
            producer = graph.producer(name)
            made = f"its producer {producer.name} ({producer.op})" if producer else "it is a graph input and"
            quantizers = ", ".join(repr(graph.tensor(c.outputs[0]).qtype) for c in graph.consumers(name))
            raise HlsgenError(f"tensor {name} is quantized twice with different parameters ({quantizers}): "
                              f"{made} has no exact integer value both branches can be requantized from "
                              "(an accumulator with its bias on the grid, or a sum of terms whose scales are "
                              "integer multiples of the finest)")
        graph = exact
    return graph


EXACT_PASSTHROUGH = (Op.RELU, Op.MAXPOOL, *LAYOUT_OPS)  # exact on codes: the output keeps the input's type


def _with_exact_value(graph: Graph, name: str) -> Graph | None:
    """`graph` with tensor `name` (and, through a pass-through op, its source) typed exactly, or None."""
    n = graph.producer(name)
    qtype: QType | None = None
    if n is not None and n.op in EXACT_PASSTHROUGH:
        src = n.inputs[0]
        if graph.tensor(src).qtype is None:
            upstream = _with_exact_value(graph, src)
            if upstream is None:
                return None
            graph = upstream
        q = graph.tensor(src).qtype
        qtype = q if q is not None and not q.per_channel else None
    elif n is not None and n.op in FLOAT_LAYER_OPS:
        qtype = exact_output_qtype(graph, n) if n.attr("mid") is None else _exact_second_step(graph, n)
    elif n is not None and n.op == Op.ADD:
        qtype = exact_sum_qtype([graph.tensor(i).qtype for i in n.inputs], relu=False)
    return None if qtype is None else graph.with_tensor(replace(graph.tensor(name), qtype=qtype))


def _exact_second_step(graph: Graph, n: Node) -> QType | None:
    """A two-step layer's y = post_act(t [+ skip]) with no BatchNorm or bias in step 2."""
    if np.any(np.asarray(n.attr("post_a")) != 1) or np.any(np.asarray(n.attr("post_b"))) \
            or n.attr("post_act") not in ("none", "relu"):
        return None
    terms = [n.attr("mid")] + [graph.tensor(i).qtype for i in n.inputs[3:]]
    return exact_sum_qtype(terms, relu=n.attr("post_act") == "relu")


def exact_sum_qtype(terms: list[QType | None], relu: bool) -> QType | None:
    """Σ s_i·(q_i − zp_i) as integer codes on the grid g = min s_i, when every s_i/g is an integer
    (to float64 precision); signed, as wide as the worst sum (≥ 0 after a Relu). None otherwise."""
    if any(q is None or q.per_channel for q in terms):
        return None
    typed = [q for q in terms if q is not None]
    grid = min(float(q.scale) for q in typed)
    ratios = [float(q.scale) / grid for q in typed]
    if any(abs(r - round(r)) > 1e-9 * r for r in ratios):
        return None
    lo = sum(round(r) * (q.int.lo - int(q.zero_point)) for r, q in zip(ratios, typed, strict=True))
    hi = sum(round(r) * (q.int.hi - int(q.zero_point)) for r, q in zip(ratios, typed, strict=True))
    lo = max(lo, 0) if relu else lo
    return QType(IntType(signed_bits_for(max(abs(lo), abs(hi))), True), grid, 0)


def _measure(graph: Graph, needed: list[str], ctx: PassContext) -> Graph:
    assert ctx.calibration is not None
    values = _activations(graph, needed, ctx.calibration)
    q = ctx.config.quant
    for name in needed:
        seen = ctx.calibration if name in graph.inputs else values[name]
        lo, hi = _range(seen, q.calibration, q.percentile)
        itype = IntType(_act_bits(ctx, graph, name), q.act_signed)
        qtype: QType = activation_qtype(lo, hi, itype, q.act_symmetric)
        graph = graph.with_tensor(replace(graph.tensor(name), qtype=qtype))
    return graph


def _activations(graph: Graph, needed: list[str], data: np.ndarray) -> dict[str, np.ndarray]:
    """The float model's `needed` tensors over the calibration batch, always run in chunks of CHUNK
    inputs: BLAS may sum a product in another order for another batch size (OpenBLAS's small-matrix
    kernels), so one fixed chunking makes the ranges independent of whether progress is shown; the
    intermediate tensors of one chunk at a time also bound the memory. From PROGRESS_MIN inputs on,
    the chunks are shown by hlsgen.support.progress."""
    from hlsgen.golden import run_graph

    n = len(data)
    parts: dict[str, list[np.ndarray]] = {}
    what = f"{n:,} inputs, {len(needed)} tensor(s) to measure"
    with progress.task("calibrate", what, total=n) if n >= PROGRESS_MIN else nullcontext() as task:
        for start in range(0, n, CHUNK):
            chunk = data[start:start + CHUNK]
            for name, v in run_graph(graph, chunk, keep=set(needed)).items():
                parts.setdefault(name, []).append(v)
            if task is not None:
                task.advance(n=len(chunk))
    return {name: np.concatenate(vs) for name, vs in parts.items()}


def _range(v: np.ndarray, method: str, percentile: float) -> tuple[float, float]:
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(v)):
        raise HlsgenError("calibration produced non-finite activations (check the model and data)")
    if method == "percentile":
        return float(np.percentile(v, 100.0 - percentile)), float(np.percentile(v, percentile))
    return float(v.min()), float(v.max())


def _act_bits(ctx: PassContext, graph: Graph, tensor: str) -> int:
    producer = graph.producer(tensor)
    override = ctx.config.layers.get(producer.name) if producer is not None else None
    if override is not None and override.act_bits is not None:
        return int(override.act_bits)
    return int(ctx.config.quant.act_bits)

"""The compiled integer graph as a standard ONNX QDQ model (`hlsgen export-qdq`).

Every integer tensor of the compiled graph becomes the output of a QuantizeLinear named like it, with
its scale and zero point; every layer reads its integer inputs through DequantizeLinear and computes in
float, with the hardware's *effective* scales, so that onnxruntime reproduces the integer program up
to float32 rounding (at most 1 LSB per layer, at rounding ties):

    QConv/QGemm  DQ(x, s_x, zp_x) -> Conv/Gemm(DQ(w, M/2^S·s_y/s_x per channel, axis 0),
                 DQ(int32 bias, M/2^S·s_y per channel)) [-> PRelu(M_neg/M)] [-> Add(DQ(skip, Mb/2^S·s_y))]
                 [-> Clip(lo, hi)] -> Q(s_y, zp_y)
    QAdd         DQ(a, Ma/2^S·s_y, zp_a) + DQ(b, Mb/2^S·s_y, zp_b) -> Clip -> Q
    QAvgPool     DQ(x, n·M/2^S·s_y, zp_x) -> AveragePool(count_include_pad) -> Clip -> Q
    QRequant     DQ(x, M/2^S·s_y, zp_x) -> Clip -> Q;   QMaxPool, Reshape, Transpose on the codes
    QConcat      Concat(axis 1) of the codes (every input has the output's qtype);  QSlice: Slice of the codes
    QResize      Resize(x, scales 1, 1, fh, fw; nearest, asymmetric, floor) on the codes
    QLut         Gather(table of output codes, Cast(x, int64) − x_lo) -> DQ(s_y, zp_y) -> Q(s_y, zp_y)  (exact)

(M, S: the layer's multiplier and shift; a channel with M < 0 has its weight codes and bias negated.)
The input is QuantizeLinear'd like QuantizeInput (clipped to a narrow type's range); the outputs are
the DequantizeLinear of the hardware outputs (the host-side float tail, e.g. Softmax, is left out).
Integer tensors are int8/uint8, or int16/uint16 (opset 21) above 8 bits; a narrower type is its
container plus the Clip of its range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import onnx

from hlsgen.errors import HlsgenError
from hlsgen.interop.qdq_builder import QdqBuilder
from hlsgen.ir import Graph, Node, Op
from hlsgen.ir.epilogue import Epilogue, Step, step_of
from hlsgen.ir.ops import CONSTANT_SCALINGS
from hlsgen.passes.calibrate import EXACT_OUTPUT
from hlsgen.passes.check_supported import host_tail_nodes

INFO_ATTRS = {"acc_bits", "mult_bits", "act", "post_act", "reproduces", "rounding"}  # descriptive only
KNOWN_ATTRS: dict[Op, set[str]] = {
    Op.QUANTIZE_INPUT: set(), Op.DEQUANTIZE_OUTPUT: set(), Op.RESHAPE: {"shape"}, Op.TRANSPOSE: {"perm"},
    Op.AFFINE: {"axis"}, Op.ADD: set(), Op.SUB: set(), Op.MUL: set(), Op.DIV: set(),  # host-side, before the input Q
    Op.QCONV: {"strides", "pads", "dilations", "group", "pad_value", "epilogue"},
    Op.QGEMM: {"epilogue"},
    Op.QADD: {"a_zp", "b_zp", "a_mult", "b_mult", "shift", "mult_neg", "zp", "lo", "hi"},
    Op.QAVGPOOL: {"kernel", "strides", "pads", "count_include_pad", "x_zp", "mult", "shift", "mult_neg", "zp", "lo",
                 "hi"},
    Op.QMAXPOOL: {"kernel", "strides", "pads", "dilations", "pad_value"},
    Op.QREQUANT: {"x_zp", "axis", "mult", "shift", "mult_neg", "zp", "lo", "hi"},
    Op.QLUT: {"table", "x_lo"},
    Op.QCONCAT: {"axis"},
    Op.QSLICE: {"axis", "start", "end"},
    Op.QRESIZE: {"factors"},
}


def export_qdq(graph: Graph) -> onnx.ModelProto:
    """The integer graph as an ONNX QDQ model onnxruntime can run (opset 13, or 21 above 8 bits)."""
    b = QdqBuilder(graph)
    tail = host_tail_nodes(graph)
    for n in graph.nodes:
        if n.name in tail:
            continue
        _check_attrs(n)
        EMITTERS[n.op](b, n)
    return b.model()


ONNX_SUFFIXES = (".onnx",)


def write_qdq(graph: Graph, path: str | Path, inputs: Iterable[Path] = ()) -> tuple[Path, onnx.ModelProto]:
    """Export and write atomically, never over one of `inputs` (the model, config, calibration data) or
    a file hlsgen did not write (hlsgen.support.outfile); returns the path and the model."""
    from hlsgen.support.outfile import write_owned_file

    p = Path(path)
    model = export_qdq(graph)
    write_owned_file(p, lambda f: f.write(model.SerializeToString()), inputs, ONNX_SUFFIXES)
    return p, model


def _check_attrs(n: Node) -> None:
    if n.op not in KNOWN_ATTRS:
        raise HlsgenError(f"export-qdq: {n.name}: op {n.op} cannot be exported yet")
    unknown = sorted(k for k, v in n.attrs.items() if v is not None and k not in KNOWN_ATTRS[n.op] | INFO_ATTRS)
    if unknown:
        raise HlsgenError(f"export-qdq: {n.name} ({n.op}): attribute(s) {', '.join(unknown)} cannot be exported yet")


# ---- per-op emitters --------------------------------------------------------------------------------

def _ints(n: Node, key: str) -> np.ndarray | None:
    v = n.attr(key)
    return None if v is None else np.asarray(v, dtype=np.int64).reshape(-1)


def _ratio(n: Node, key: str = "mult", shift_key: str = "shift") -> np.ndarray:
    """An integer attribute over 2^shift, per channel (or one value), as float64."""
    mult, shift = _ints(n, key), _ints(n, shift_key)
    if mult is None or shift is None:
        raise HlsgenError(f"export-qdq: {n.name} ({n.op}): missing {key}/{shift_key}")
    return _over(mult, shift)


def _over(values: object, shift: object) -> np.ndarray:
    """Integers over 2^shift, per channel (or one value), as float64."""
    return np.asarray(values, np.float64).reshape(-1) / np.exp2(np.asarray(shift, np.float64).reshape(-1))


def _step(n: Node) -> Step:
    """A requant node's output step: a QConv/QGemm's epilogue, the flat attributes of the others."""
    e = n.attr("epilogue", None)
    return e.out if isinstance(e, Epilogue) else step_of(n.attrs)


def _positive(n: Node, ratio: np.ndarray, what: str) -> np.ndarray:
    if np.any(ratio < 0):
        raise HlsgenError(f"export-qdq: {n.name} ({n.op}): negative {what} multiplier cannot be exported")
    return ratio


def _per_axis(values: np.ndarray, ndim: int, axis: int = 1) -> np.ndarray:
    """A 1-D per-channel array shaped to broadcast along `axis` of a rank-`ndim` tensor."""
    v = np.asarray(values, dtype=np.float32).reshape(-1)
    return v if v.size == 1 else v.reshape([-1] + [1] * (ndim - 1 - axis))


def _leaky(b: QdqBuilder, n: Node, x: str, step: Step, ndim: int, axis: int = 1, prefix: str = "") -> str:
    """PRelu(M_neg/M) where the step has a LeakyReLU multiplier (`prefix`: "mid_" for step 1)."""
    if not step.mult or step.mult_neg is None:
        return x
    mult, mult_neg = np.asarray(step.mult, np.int64), np.asarray(step.mult_neg, np.int64)
    slope = np.where(mult != 0, mult_neg / np.where(mult != 0, mult, 1), 0.0)
    return b.op("PRelu", [x, b.const(f"{n.name}.{prefix}slope", _per_axis(slope, ndim, axis))], f"{n.name}.leaky")


def _clip_q(b: QdqBuilder, x: str, out: str, scale: float, zp: int, bounds: tuple[int, int], dtype: np.dtype) -> None:
    """[Clip to the codes lo..hi] then QuantizeLinear(scale, zp) into `out`."""
    lo, hi = bounds
    info = np.iinfo(dtype)
    if lo > info.min or hi < info.max:
        limits = [b.const(f"{out}.{k}", np.float32((v - zp) * scale)) for k, v in (("lo", lo), ("hi", hi))]
        x = b.op("Clip", [x, *limits], f"{out}.clip")
    b.quantize(x, out, scale, zp, dtype)


def _finish(b: QdqBuilder, n: Node, x: str, ndim: int, axis: int = 1, leaky: bool = True) -> None:
    """[PRelu(M_neg/M)] [+ DQ(skip)] [+ B2] [Clip(lo, hi)], then QuantizeLinear into the node's output."""
    out = n.outputs[0]
    if _exact(b, out):  # the model leaves this output float: the layer's float result, as is
        b.op("Identity", [x], f"{out}.exact", out=out)
        return
    s_y, _ = b.act(out)
    step = _step(n)
    e = n.attr("epilogue", None)
    if leaky:
        x = _leaky(b, n, x, step, ndim, axis)
    if isinstance(e, Epilogue) and e.skip is not None and len(n.inputs) > 3:  # + (skip − zp_s)·Mb/2^S, in s_y
        scale = _positive(n, _over(e.skip.mult, step.shift), "skip") * s_y
        skip_f = b.dq(n.inputs[3], scale, np.asarray([e.skip.zp]), b.tensor_dtype(n.inputs[3]))
        x = b.op("Add", [x, skip_f], f"{out}.skip")
    if isinstance(e, Epilogue) and e.post_bias is not None:  # + B2/2^S, in units of s_y
        x = b.op("Add", [x, b.const(f"{out}.b2", _per_axis(_over(e.post_bias, step.shift) * s_y, ndim))], f"{out}.b2")
    _clip_q(b, x, out, s_y, step.zp, (step.lo, step.hi), b.tensor_dtype(out))


def _epilogue(b: QdqBuilder, n: Node, y: str, ndim: int) -> None:
    """QConv/QGemm after the float Conv/Gemm `y` (= acc·M/2^S·s_y, or acc·M1/2^S1 for two steps)."""
    e: Epilogue = n.attr("epilogue")
    mid = e.mid
    if mid is None:
        _finish(b, n, y, ndim)
        return
    zp_t, bounds = mid.zp, (mid.lo, mid.hi)
    lo, hi = min(bounds[0], zp_t), max(bounds[1], zp_t)
    fits8 = (lo >= -128 and hi <= 127) or (lo >= 0 and hi <= 255)
    dtype = b.container(8 if fits8 else 16, lo < 0)
    t = _mid_tensor(b.g, n)
    _clip_q(b, _leaky(b, n, y, mid, ndim, prefix="mid_"), t, 1.0, zp_t, bounds, dtype)  # step 1: t in its codes
    s_y, _ = b.act(n.outputs[0])
    ratio = _over(e.out.mult, e.out.shift)
    x = b.op("Mul", [b.dq(t, 1.0, zp_t, dtype), b.const(f"{t}.m", _per_axis(ratio * s_y, ndim))], f"{t}.m")
    _finish(b, n, x, ndim)  # step 2


def _mid_tensor(g: Graph, n: Node) -> str:
    """Name of a two-step layer's intermediate t: the source tensor it reproduces (its `two_step` note)."""
    names = [note.data["tensor"] for note in g.notes if note.kind == "two_step" and note.node == n.name]
    return names[0] if names and names[0] not in g.tensors else f"{n.name}.t"


def _weights(b: QdqBuilder, n: Node) -> tuple[str, str]:
    """DQ'd weights (per output channel, effective scale) and int32 bias of a QConv/QGemm."""
    x, w_name, bias_name = n.inputs[:3]
    s_x, zp_x = b.act(x)
    e: Epilogue = n.attr("epilogue")
    first = e.steps[0]  # what the accumulator is scaled by: step 1 of a two-step layer
    out_scale = np.asarray(b.qtype(n.outputs[0]).scale, np.float64) if _exact(b, n.outputs[0]) else None
    s_out = 1.0 if e.mid is not None else out_scale if out_scale is not None else b.act(n.outputs[0])[0]
    w = np.asarray(b.g.tensor(w_name).data, dtype=np.int64)
    bias = np.asarray(b.g.tensor(bias_name).data, dtype=np.int64).reshape(-1)
    ratio = np.broadcast_to(_over(first.mult, first.shift), (w.shape[0],))
    sign = np.where(ratio < 0, -1, 1)
    bias = (bias + zp_x * w.reshape(w.shape[0], -1).sum(axis=1)) * sign  # acc = bias + Σ (x − zp_x)·w
    if np.any(np.abs(bias) > np.iinfo(np.int32).max):
        raise HlsgenError(f"export-qdq: {n.name} ({n.op}): bias does not fit int32")
    w = w * sign.reshape([-1] + [1] * (w.ndim - 1))
    w_scale = np.abs(ratio) * s_out / s_x
    codes, dtype = b.codes(f"{w_name}.codes", w)
    wq = b.dq(codes, w_scale, 0, dtype, axis=0)
    bq = b.dq(b.const(f"{bias_name}.codes", bias.astype(np.int32)), w_scale * s_x, 0, np.dtype(np.int32), axis=0)
    return wq, bq


def _in(b: QdqBuilder, tensor: str) -> str:
    s, zp = b.act(tensor)
    return b.dq(tensor, s, zp, b.tensor_dtype(tensor))


def qconv(b: QdqBuilder, n: Node) -> None:
    x = n.inputs[0]
    s_x, zp_x = b.act(x)
    pads = [int(p) for p in n.attr("pads") or (0, 0, 0, 0)]
    pad_value = n.attr("pad_value")
    codes = x
    if any(pads) and pad_value is not None and int(pad_value) != zp_x:  # pad the codes themselves
        onnx_pads = np.array([0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]], np.int64)
        fill = np.asarray(int(pad_value)).astype(b.tensor_dtype(x))
        codes = b.op("Pad", [x, b.const(f"{x}.pads", onnx_pads), b.const(f"{x}.fill", fill)], f"{x}.pad")
        pads = [0, 0, 0, 0]
    w, bias = _weights(b, n)
    y = b.op("Conv", [b.dq(codes, s_x, zp_x, b.tensor_dtype(x)), w, bias], n.name,
             kernel_shape=list(b.g.tensor(n.inputs[1]).shape[2:]), pads=pads, group=int(n.attr("group")),
             strides=list(n.attr("strides") or (1, 1)), dilations=list(n.attr("dilations") or (1, 1)))
    _epilogue(b, n, y, 4)


def qgemm(b: QdqBuilder, n: Node) -> None:
    w, bias = _weights(b, n)
    _epilogue(b, n, b.op("Gemm", [_in(b, n.inputs[0]), w, bias], n.name, transB=1), 2)


def qadd(b: QdqBuilder, n: Node) -> None:
    s_y, _ = b.act(n.outputs[0])
    terms = []
    for t, key in zip(n.inputs[:2], ("a", "b"), strict=True):
        scale = _positive(n, _ratio(n, f"{key}_mult"), key) * s_y
        terms.append(b.dq(t, scale, _ints(n, f"{key}_zp"), b.tensor_dtype(t)))  # type: ignore[arg-type]
    _finish(b, n, b.op("Add", terms, n.name), len(b.g.tensor(n.outputs[0]).shape), leaky=False)


def qavgpool(b: QdqBuilder, n: Node) -> None:
    x = n.inputs[0]
    kernel = [int(k) for k in n.attr("kernel")]
    s_y, _ = b.act(n.outputs[0])
    scale = _positive(n, _ratio(n), "") * s_y * kernel[0] * kernel[1]
    xf = b.dq(x, scale, _ints(n, "x_zp"), b.tensor_dtype(x))  # type: ignore[arg-type]
    y = b.op("AveragePool", [xf], n.name, kernel_shape=kernel, strides=list(n.attr("strides") or (1, 1)),
             pads=list(n.attr("pads") or (0, 0, 0, 0)), count_include_pad=1)
    _finish(b, n, y, 4)


def qmaxpool(b: QdqBuilder, n: Node) -> None:
    b.op("MaxPool", [n.inputs[0]], n.name, out=n.outputs[0], kernel_shape=list(n.attr("kernel")),
         strides=list(n.attr("strides") or (1, 1)), pads=list(n.attr("pads") or (0, 0, 0, 0)),
         dilations=list(n.attr("dilations") or (1, 1)))


def qresize(b: QdqBuilder, n: Node) -> None:
    """Nearest-neighbour repeat on the codes: asymmetric + floor reads input pixel i // f."""
    fh, fw = (float(f) for f in n.attr("factors"))
    scales = b.const(f"{n.name}.scales", np.array([1.0, 1.0, fh, fw], np.float32))
    b.op("Resize", [n.inputs[0], "", scales], n.name, out=n.outputs[0], mode="nearest",
         coordinate_transformation_mode="asymmetric", nearest_mode="floor")


def qrequant(b: QdqBuilder, n: Node) -> None:
    x = n.inputs[0]
    ndim = len(b.g.tensor(x).shape)
    axis = int(n.attr("axis")) % max(ndim, 1)
    s_y, _ = b.act(n.outputs[0])
    zp = _ints(n, "x_zp")
    xf = b.dq(x, _positive(n, _ratio(n), "") * s_y, 0 if zp is None else zp, b.tensor_dtype(x), axis=axis)
    _finish(b, n, xf, ndim, axis)


def qlut(b: QdqBuilder, n: Node) -> None:
    """y = table[x − x_lo] on the codes: the input codes as int64 indices (less x_lo) into a constant
    table of the output codes (in the output's container), then DQ -> Q into the node's output with its
    scale and zero point. Exact: a code times its float32 scale divides back to that code."""
    x, out = n.inputs[0], n.outputs[0]
    table, x_lo = _ints(n, "table"), n.attr("x_lo")
    if table is None or x_lo is None:
        raise HlsgenError(f"export-qdq: {n.name} ({n.op}): missing table/x_lo")
    x_lo, qx, dtype = int(x_lo), b.qtype(x).int, b.tensor_dtype(out)
    if x_lo > qx.lo or x_lo + table.size - 1 < qx.hi:
        raise HlsgenError(f"export-qdq: {n.name} ({n.op}): the table covers codes {x_lo}..{x_lo + table.size - 1}, "
                          f"not the input's {qx.lo}..{qx.hi}")
    info = np.iinfo(dtype)
    if int(table.min()) < info.min or int(table.max()) > info.max:
        raise HlsgenError(f"export-qdq: {n.name} ({n.op}): a table entry does not fit {dtype}")
    index = b.op("Cast", [x], f"{n.name}.index", to=onnx.TensorProto.INT64)
    if x_lo:
        index = b.op("Sub", [index, b.const(f"{n.name}.x_lo", np.int64(x_lo))], f"{n.name}.index")
    codes = b.op("Gather", [b.const(f"{n.name}.table", table.astype(dtype)), index], n.name, axis=0)
    s_y, zp_y = b.act(out)
    b.quantize(b.dq(codes, s_y, zp_y, dtype), out, s_y, zp_y, dtype)


def quantize_input(b: QdqBuilder, n: Node) -> None:
    x, out = n.inputs[0], n.outputs[0]
    if b.qtype(out).int.bipolar:  # the sign, 0 -> +1
        one, minus = b.const(f"{out}.one", np.float32(1)), b.const(f"{out}.minus", np.float32(-1))
        ge = b.op("GreaterOrEqual", [x, b.const(f"{out}.zero", np.float32(0))], f"{out}.ge")
        b.quantize(b.op("Where", [ge, one, minus], f"{out}.sign"), out, 1.0, 0, np.dtype(np.int8))
        return
    s, zp = b.act(out)
    qt = b.qtype(out).int
    _clip_q(b, x, out, s, zp, (qt.lo, qt.hi), b.tensor_dtype(out))  # a narrow type: its range, not the container's


def affine(b: QdqBuilder, n: Node) -> None:
    """Host-side y = a·x + b along `axis` (before the input quantizer)."""
    x, a, c = n.inputs
    nd, axis = len(b.g.tensor(x).shape), int(n.attr("axis"))
    scaled = b.op("Mul", [x, b.const(f"{a}.f", _per_axis(b.g.tensor(a).real_value(), nd, axis))], n.name)
    b.op("Add", [scaled, b.const(f"{c}.f", _per_axis(b.g.tensor(c).real_value(), nd, axis))], n.name,
         out=n.outputs[0])


def elementwise(b: QdqBuilder, n: Node) -> None:
    """Host-side float Add/Sub/Mul/Div (before the input quantizer), constants as float32."""
    g = b.g
    ins = [b.const(f"{i}.f", np.asarray(g.tensor(i).real_value(), np.float32)) if g.is_const(i) else i
           for i in n.inputs]
    b.op(n.op, ins, n.name, out=n.outputs[0])


def _exact(b: QdqBuilder, tensor: str) -> bool:
    """A layer output the model leaves float, held as its exact sum (passes/calibrate.EXACT_OUTPUT)."""
    return any(note.kind == EXACT_OUTPUT and note.data.get("tensor") == tensor for note in b.g.notes)


def dequantize_output(b: QdqBuilder, n: Node) -> None:
    if _exact(b, n.inputs[0]):  # already float (the layer's float result)
        b.outputs.append(b.op("Identity", [n.inputs[0]], n.name, out=n.outputs[0]))
        return
    s, zp = b.act(n.inputs[0])
    b.outputs.append(b.op("DequantizeLinear", [n.inputs[0], b.const(f"{n.inputs[0]}.s", np.float32(s)),
                           b.const(f"{n.inputs[0]}.zp", np.asarray(zp).astype(b.tensor_dtype(n.inputs[0])))],
                          n.name, out=n.outputs[0]))


def reshape(b: QdqBuilder, n: Node) -> None:
    shape = b.const(f"{n.name}.shape", np.array([0, *n.attr("shape")], np.int64))
    b.op("Reshape", [n.inputs[0], shape], n.name, out=n.outputs[0])


def transpose(b: QdqBuilder, n: Node) -> None:
    b.op("Transpose", [n.inputs[0]], n.name, out=n.outputs[0], perm=list(n.attr("perm")))


def qconcat(b: QdqBuilder, n: Node) -> None:
    b.op("Concat", list(n.inputs), n.name, out=n.outputs[0], axis=int(n.attr("axis")))


def qslice(b: QdqBuilder, n: Node) -> None:
    bounds = [b.const(f"{n.name}.{k}", np.array([int(n.attr(k))], np.int64)) for k in ("start", "end", "axis")]
    b.op("Slice", [n.inputs[0], *bounds], n.name, out=n.outputs[0])


EMITTERS: dict[Op, Callable[[QdqBuilder, Node], None]] = {
    Op.QUANTIZE_INPUT: quantize_input, Op.DEQUANTIZE_OUTPUT: dequantize_output, Op.RESHAPE: reshape,
    Op.TRANSPOSE: transpose, Op.QCONV: qconv, Op.QGEMM: qgemm, Op.QADD: qadd, Op.QAVGPOOL: qavgpool,
    Op.QMAXPOOL: qmaxpool, Op.QRESIZE: qresize, Op.QREQUANT: qrequant, Op.QLUT: qlut, Op.AFFINE: affine,
    Op.QCONCAT: qconcat, Op.QSLICE: qslice,
    **{op: elementwise for op in CONSTANT_SCALINGS},
}

"""Tiny helpers to build ONNX models in memory for the front-end tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT
Shape = Sequence[int | str | None]


def vi(name: str, shape: Shape | None, elem: int = FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, None if shape is None else list(shape))


def init(name: str, value: np.ndarray | float | int | Sequence[float], dtype: object = np.float32
         ) -> TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def node(op: str, inputs: Sequence[str], outputs: Sequence[str], name: str | None = None,
         domain: str | None = None, **attrs: object) -> onnx.NodeProto:
    n = helper.make_node(op, list(inputs), list(outputs), name=name, domain=domain, **attrs)
    return n


def model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
          outputs: Sequence[onnx.ValueInfoProto], inits: Sequence[TensorProto] = (), opset: int = 13,
          extra_domains: Sequence[str] = (), name: str = "test") -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits))
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in extra_domains]
    m = helper.make_model(graph, opset_imports=imports)
    m.ir_version = 8 if opset <= 18 else 10
    return m


def single(op: str, in_shape: Shape, out_shape: Shape | None = None, inits: Sequence[TensorProto] = (),
           extra_inputs: Sequence[str] = (), opset: int = 13, **attrs: object) -> onnx.ModelProto:
    """A one-node model: y = op(x, *extra_inputs)."""
    n = node(op, ["x", *extra_inputs], ["y"], name="n", **attrs)
    return model([n], [vi("x", in_shape)], [vi("y", out_shape)], inits, opset)


def run_ort(m: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return np.asarray(sess.run(None, {name: x})[0])


# ---- a tiny float reference evaluator of front-end IR graphs (for translation tests only) ----------
def _windows(x: np.ndarray, kernel, strides, pads, dilations, fill: float) -> np.ndarray:
    """[N, C, OH, OW, KH, KW] patches of the padded NCHW input."""
    t, left, b, r = pads
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (left, r)), constant_values=fill)
    kh, kw = kernel
    (sh, sw), (dh, dw) = strides, dilations
    oh = (xp.shape[2] - ((kh - 1) * dh + 1)) // sh + 1
    ow = (xp.shape[3] - ((kw - 1) * dw + 1)) // sw + 1
    out = np.empty((*x.shape[:2], oh, ow, kh, kw))
    for i in range(kh):
        for j in range(kw):
            out[..., i, j] = xp[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh, j * dw: j * dw + sw * (ow - 1) + 1: sw]
    return out


def _conv(x, w, b, a):
    g = a["group"]
    pw = _windows(x, w.shape[2:], a["strides"], a["pads"], a["dilations"], 0.0)
    cin, cout = w.shape[1], w.shape[0]
    outs = [np.einsum("nchwij,ocij->nohw", pw[:, k * cin:(k + 1) * cin], w[k * cout // g:(k + 1) * cout // g])
            for k in range(g)]
    return np.concatenate(outs, axis=1) + b.reshape(1, -1, 1, 1)


def _avgpool(x, a):
    pw = _windows(x, a["kernel"], a["strides"], a["pads"], (1, 1), 0.0)
    if a["count_include_pad"]:
        return pw.mean(axis=(4, 5))
    ones = _windows(np.ones_like(x), a["kernel"], a["strides"], a["pads"], (1, 1), 0.0)
    return pw.sum(axis=(4, 5)) / ones.sum(axis=(4, 5))


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _bn(x, gamma, beta, mean, var, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * gamma.reshape(shape) + beta.reshape(shape)


_EVAL = {
    "Conv": lambda v, a: _conv(*v, a),
    "Gemm": lambda v, a: v[0] @ v[1].T + v[2],
    "MatMul": lambda v, a: v[0] @ v[1],
    "Add": lambda v, a: v[0] + v[1], "Sub": lambda v, a: v[0] - v[1],
    "Mul": lambda v, a: v[0] * v[1], "Div": lambda v, a: v[0] / v[1],
    "BatchNormalization": lambda v, a: _bn(*v, a["epsilon"]),
    "Relu": lambda v, a: np.maximum(v[0], 0.0),
    "Clip": lambda v, a: np.clip(v[0], a["min"], a["max"]),
    "LeakyRelu": lambda v, a: np.where(v[0] >= 0, v[0], a["alpha"] * v[0]),
    "Sigmoid": lambda v, a: 1 / (1 + np.exp(-v[0])), "Tanh": lambda v, a: np.tanh(v[0]),
    "Softmax": lambda v, a: _softmax(v[0], a["axis"]),
    "LogSoftmax": lambda v, a: np.log(_softmax(v[0], a["axis"])),
    "MaxPool": lambda v, a: _windows(v[0], a["kernel"], a["strides"], a["pads"], a["dilations"],
                                     -np.inf).max(axis=(4, 5)),
    "AveragePool": lambda v, a: _avgpool(v[0], a),
    "GlobalAveragePool": lambda v, a: v[0].mean(axis=(2, 3), keepdims=True),
    "Pad": lambda v, a: np.pad(v[0], ((0, 0), (0, 0), (a["pads"][0], a["pads"][2]), (a["pads"][1], a["pads"][3])),
                               constant_values=a["value"]),
    "Reshape": lambda v, a: v[0].reshape((v[0].shape[0], *a["shape"])),
    "Transpose": lambda v, a: v[0].transpose(a["perm"]),
}


def eval_ir(graph, x: np.ndarray) -> dict[str, np.ndarray]:
    """Every tensor of a front-end IR graph for input x (float64; Q/DQ via hlsgen.numerics)."""
    from hlsgen import numerics

    vals: dict[str, np.ndarray] = {graph.inputs[0]: np.asarray(x, np.float64)}
    for t in graph.tensors.values():
        if t.is_const:
            vals[t.name] = t.data if t.integer else np.asarray(t.data, np.float64)
    for n in graph.nodes:
        args = [vals[i] for i in n.inputs]
        if n.op == "QuantizeLinear":
            out = numerics.quantize(args[0], graph.tensor(n.outputs[0]).qtype)
        elif n.op == "DequantizeLinear":
            out = numerics.dequantize(args[0], graph.tensor(n.inputs[0]).qtype)
        else:
            out = _EVAL[n.op](args, dict(n.attrs))
        vals[n.outputs[0]] = np.asarray(out)
    return vals

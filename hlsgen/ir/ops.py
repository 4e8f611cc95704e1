"""The one schema of IR operators: every op, its arity and every attribute with its default.

`Op` names each operator (a `str` enum: `Op.CONV == "Conv"`, so dumps and reports print the ONNX-style
name); `Node.op` is an Op. `SPECS[op]` gives the number of inputs it takes and its attributes: a
default, or REQUIRED.
`verify` (run after every pass) refuses a node whose op, arity, attribute names or enumerated
attribute values are not in this table, so a misspelt attribute or a new rounding mode cannot be
silently ignored by a kernel that falls back to a default. `Node.attr(name)` without an explicit
default returns the schema's default, so defaults live here once (not at every call site).
docs/ir.md lists the same table for readers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any

from hlsgen.ir.epilogue import Epilogue
from hlsgen.ir.types import Rounding


class Op(str, Enum):
    # float graph (front-end and float passes)
    CONV = "Conv"
    GEMM = "Gemm"
    MATMUL = "MatMul"
    ADD = "Add"
    SUB = "Sub"
    MUL = "Mul"
    DIV = "Div"
    AFFINE = "Affine"
    BATCHNORM = "BatchNormalization"
    RELU = "Relu"
    CLIP = "Clip"
    LEAKY_RELU = "LeakyRelu"
    MAXPOOL = "MaxPool"
    AVGPOOL = "AveragePool"
    GLOBAL_AVGPOOL = "GlobalAveragePool"
    PAD = "Pad"
    RESHAPE = "Reshape"
    TRANSPOSE = "Transpose"
    QUANTIZE_LINEAR = "QuantizeLinear"
    DEQUANTIZE_LINEAR = "DequantizeLinear"
    SOFTMAX = "Softmax"
    LOG_SOFTMAX = "LogSoftmax"
    SIGMOID = "Sigmoid"
    TANH = "Tanh"
    ELU = "Elu"
    SELU = "Selu"
    HARD_SIGMOID = "HardSigmoid"
    HARD_SWISH = "HardSwish"
    SOFTPLUS = "Softplus"
    SOFTSIGN = "Softsign"
    ERF = "Erf"
    EXP = "Exp"
    GELU = "Gelu"
    DEPTH_TO_SPACE = "DepthToSpace"
    TRUNC = "Trunc"
    IDENTITY = "Identity"  # the same value under another quantizer: one branch of a multiply-quantized tensor
    CONCAT = "Concat"
    SLICE = "Slice"
    RESIZE = "Resize"  # nearest-neighbour upsampling by integer factors (ONNX Resize, Upsample)
    # integer graph (after quantize)
    QUANTIZE_INPUT = "QuantizeInput"
    QCONV = "QConv"
    QGEMM = "QGemm"
    QADD = "QAdd"
    QMAXPOOL = "QMaxPool"
    QAVGPOOL = "QAvgPool"
    QREQUANT = "QRequant"
    QLUT = "QLut"
    QCONCAT = "QConcat"
    QSLICE = "QSlice"
    QRESIZE = "QResize"
    DEQUANTIZE_OUTPUT = "DequantizeOutput"

    def __str__(self) -> str:
        return self.value


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
ROUNDINGS = tuple(r.value for r in Rounding)  # numerics.ROUNDINGS re-exports this tuple
ACTIVATIONS = ("none", "relu", "clip", "leaky")
TYPED: Mapping[str, type] = MappingProxyType({"epilogue": Epilogue})  # attributes that are records
CHOICES: Mapping[str, tuple[Any, ...]] = MappingProxyType({
    "rounding": ROUNDINGS, "act": ACTIVATIONS, "post_act": ACTIVATIONS, "mode": ("DCR", "CRD"),
    "approximate": ("none", "tanh"), "trunc_mode": ("FLOOR", "CEIL", "ROUND"),
})


@dataclass(frozen=True)
class OpSpec:
    inputs: tuple[int, int]  # fewest and most inputs
    attrs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def _spec(arity: int | tuple[int, int], **attrs: Any) -> OpSpec:
    fewest, most = (arity, arity) if isinstance(arity, int) else arity
    return OpSpec((fewest, most), MappingProxyType(dict(attrs)))


_WINDOW: dict[str, Any] = {"strides": (1, 1), "pads": (0, 0, 0, 0), "dilations": (1, 1)}
_EPILOGUE: dict[str, Any] = {"act": "none", "clip_min": -math.inf, "clip_max": math.inf, "alpha": 0.01,
             # the model's own quantizer between the layer and the ops fused after it (two-step)
             "mid": None, "mid_tensor": None, "post_a": (1.0,), "post_b": (0.0,), "post_act": "none",
             "post_clip_min": -math.inf, "post_clip_max": math.inf, "post_alpha": 0.01}
_SHIFT_CLAMP: dict[str, Any] = {"shift": REQUIRED, "zp": REQUIRED, "lo": REQUIRED, "hi": REQUIRED,
                                "rounding": "half_even", "mult_neg": None}
_REQUANT: dict[str, Any] = {"mult": REQUIRED, **_SHIFT_CLAMP}
# QConv/QGemm: the requant chain is one typed attribute (ir/epilogue.py); act, post_act and reproduces describe it
_LAYER_INT: dict[str, Any] = {"epilogue": REQUIRED, "acc_bits": REQUIRED, "mult_bits": REQUIRED, "act": "none",
                              "post_act": "none", "reproduces": ()}

MAX_CONCAT_INPUTS = 64  # inputs of one Concat (its hardware layer joins them all in one cycle a pixel)

SPECS: Mapping[Op, OpSpec] = MappingProxyType({
    Op.CONV: _spec((3, 4), **_WINDOW, group=1, **_EPILOGUE),
    Op.GEMM: _spec((3, 4), **_EPILOGUE),
    Op.MATMUL: _spec(2),
    Op.ADD: _spec(2),
    Op.SUB: _spec(2),
    Op.MUL: _spec(2),
    Op.DIV: _spec(2),
    Op.AFFINE: _spec(3, axis=1),
    Op.BATCHNORM: _spec(5, epsilon=1e-5, relu_restored=False),
    Op.RELU: _spec(1),
    Op.CLIP: _spec(1, min=-math.inf, max=math.inf),
    Op.LEAKY_RELU: _spec(1, alpha=0.01),
    Op.MAXPOOL: _spec(1, kernel=REQUIRED, **_WINDOW),
    Op.AVGPOOL: _spec(1, kernel=REQUIRED, strides=(1, 1), pads=(0, 0, 0, 0), count_include_pad=0),
    Op.GLOBAL_AVGPOOL: _spec(1),
    Op.PAD: _spec(1, pads=REQUIRED, value=0.0),
    Op.RESHAPE: _spec(1, shape=REQUIRED),
    Op.TRANSPOSE: _spec(1, perm=REQUIRED),
    Op.QUANTIZE_LINEAR: _spec(1, rounding="half_even"),
    Op.DEQUANTIZE_LINEAR: _spec(1),
    Op.SOFTMAX: _spec(1, axis=-1),
    Op.LOG_SOFTMAX: _spec(1, axis=-1),
    Op.SIGMOID: _spec(1),
    Op.TANH: _spec(1),
    Op.ELU: _spec(1, alpha=1.0),
    Op.SELU: _spec(1, alpha=1.6732632423543772, gamma=1.0507009873554805),
    Op.HARD_SIGMOID: _spec(1, alpha=0.2, beta=0.5),
    Op.HARD_SWISH: _spec(1),
    Op.SOFTPLUS: _spec(1),
    Op.SOFTSIGN: _spec(1),
    Op.ERF: _spec(1),
    Op.EXP: _spec(1),
    Op.GELU: _spec(1, approximate="none"),
    Op.DEPTH_TO_SPACE: _spec(1, blocksize=REQUIRED, mode="DCR"),
    # QONNX Trunc: y = (f(round(x/in_scale + in_zp) / 2^shift) - out_zp) * out_scale, f = floor/ceil/round
    Op.TRUNC: _spec(1, in_scale=REQUIRED, in_zp=0, shift=REQUIRED, trunc_mode="FLOOR", out_scale=REQUIRED, out_zp=0),
    Op.IDENTITY: _spec(1),
    # along the channel axis (1) only: the inputs' channels one after the other; channels [start, end)
    Op.CONCAT: _spec((2, MAX_CONCAT_INPUTS), axis=1),
    Op.SLICE: _spec(1, axis=1, start=REQUIRED, end=REQUIRED),
    # y[n, c, i, j] = x[n, c, i // fh, j // fw] with factors (fh, fw): exact on codes (QResize alike)
    Op.RESIZE: _spec(1, factors=REQUIRED),
    Op.QUANTIZE_INPUT: _spec(1, rounding="half_even"),
    Op.QCONV: _spec((3, 4), **_WINDOW, group=1, pad_value=REQUIRED, **_LAYER_INT),
    Op.QGEMM: _spec(3, **_LAYER_INT),
    Op.QADD: _spec(2, **_SHIFT_CLAMP, a_mult=REQUIRED, a_zp=REQUIRED, b_mult=REQUIRED, b_zp=REQUIRED),
    Op.QMAXPOOL: _spec(1, kernel=REQUIRED, **_WINDOW, pad_value=REQUIRED),
    Op.QAVGPOOL: _spec(1, kernel=REQUIRED, strides=(1, 1), pads=(0, 0, 0, 0), count_include_pad=0,
                       x_zp=REQUIRED, **_REQUANT),
    Op.QREQUANT: _spec(1, axis=1, x_zp=REQUIRED, **_REQUANT),
    Op.QLUT: _spec(1, table=REQUIRED, x_lo=REQUIRED),  # y = table[x - x_lo]
    Op.QCONCAT: _spec((2, MAX_CONCAT_INPUTS), axis=1),  # on codes: every input has the output's qtype
    Op.QSLICE: _spec(1, axis=1, start=REQUIRED, end=REQUIRED),  # on codes: the output keeps the input's qtype
    Op.QRESIZE: _spec(1, factors=REQUIRED),
    Op.DEQUANTIZE_OUTPUT: _spec(1),
})

# ---- named op groups: every pass, kernel table and report reads these, never a set of its own ------------
# elementwise functions of one input: a lookup table in hardware (QLut), or host-side at the tail
UNARY_OPS = (Op.SIGMOID, Op.TANH, Op.ELU, Op.SELU, Op.HARD_SIGMOID, Op.HARD_SWISH, Op.SOFTPLUS, Op.SOFTSIGN,
             Op.ERF, Op.EXP, Op.GELU)
LAYOUT_OPS = (Op.RESHAPE, Op.TRANSPOSE)  # move elements, compute nothing: exact on codes
QDQ_OPS = (Op.QUANTIZE_LINEAR, Op.DEQUANTIZE_LINEAR)  # the source model's quantizers (absorbed by passes)
FLOAT_LAYER_OPS = (Op.CONV, Op.GEMM)  # float layers with weights: they take fused epilogues
FUSABLE_ACTIVATIONS = (Op.RELU, Op.CLIP, Op.LEAKY_RELU)  # fused into the layer before them
CONSTANT_SCALINGS = (Op.MUL, Op.DIV, Op.ADD, Op.SUB)  # by a constant: Affine, folded into a layer
HOST_BOUNDARY_OPS = (Op.QUANTIZE_INPUT, Op.DEQUANTIZE_OUTPUT)  # float <-> codes at the edges of the design
MVU_OPS = (Op.QCONV, Op.QGEMM)  # integer matrix-vector layers: weights, an accumulator, a requant epilogue
CHANNEL_OPS = (Op.QCONCAT, Op.QSLICE)  # move whole channel ranges of a pixel: exact on codes
INTEGER_LAYER_OPS = (*MVU_OPS, Op.QADD, Op.QAVGPOOL, Op.QMAXPOOL, Op.QREQUANT, Op.QLUT, Op.QRESIZE,
                     *CHANNEL_OPS)  # one hardware layer each
HARDWARE_OPS = (*INTEGER_LAYER_OPS, *LAYOUT_OPS)  # what the dataflow builds (layout ops as stream orders)
REQUANT_OPS = (*MVU_OPS, Op.QAVGPOOL, Op.QADD, Op.QREQUANT)  # end in a requant step (shift, zp, lo, hi)
ELEMENTWISE_INT_OPS = (Op.QADD, Op.QREQUANT, Op.QLUT)  # keep their input's stream layout
# read pixels in raster order, channels innermost
RASTER_INPUT_OPS = (Op.QCONV, Op.QMAXPOOL, Op.QAVGPOOL, Op.QRESIZE, *CHANNEL_OPS)


def spec_of(op: str) -> OpSpec | None:
    try:
        return SPECS[Op(op)]
    except ValueError:
        return None


def default_attr(op: str, name: str) -> Any:
    """The schema default of attribute `name` of `op` (None when the op or attribute is unknown or
    the attribute is required)."""
    spec = spec_of(op)
    value = spec.attrs.get(name) if spec is not None else None
    return None if value is REQUIRED else value


def node_problems(op: str, n_inputs: int, attrs: Mapping[str, Any]) -> list[str]:
    """What is wrong with a node against the schema (empty when nothing)."""
    spec = spec_of(op)
    if spec is None:
        return [f"unknown op {op!r}"]
    lo, hi = spec.inputs
    problems = [f"{n_inputs} inputs (takes {lo}..{hi})"] if not lo <= n_inputs <= hi else []
    unknown = sorted(set(attrs) - set(spec.attrs))
    if unknown:
        problems.append(f"unknown attributes {unknown}")
    missing = sorted(k for k, v in spec.attrs.items() if v is REQUIRED and k not in attrs)
    if missing:
        problems.append(f"missing attributes {missing}")
    for key, kind in TYPED.items():
        if key in attrs and not isinstance(attrs[key], kind):
            problems.append(f"{key} is a {type(attrs[key]).__name__}, not an {kind.__name__}")
    for key, allowed in CHOICES.items():
        if key in attrs and attrs[key] not in allowed:
            problems.append(f"{key}={attrs[key]!r} is not one of {allowed}")
    return problems

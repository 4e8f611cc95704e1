"""Per-op translators of the ONNX front-end: the one dispatch table (see from_onnx.py and docs/ir.md).

`TRANSLATORS` maps an ONNX op type of the default domain to its translator; the translators live in
one module per op family (onnx_ops_nn, onnx_ops_elementwise, onnx_ops_layout, onnx_ops_channels,
onnx_ops_quant, onnx_ops_resize) and share onnx_ops_common. Only the QONNX Quant op is also accepted in
the QONNX/FINN/Brevitas domains.
Constant, Identity and Dropout are not here: the driver handles them (onnx_graph).
"""

from __future__ import annotations

from hlsgen.frontend import onnx_ops_channels as channels
from hlsgen.frontend import onnx_ops_elementwise as ew
from hlsgen.frontend import onnx_ops_layout as layout
from hlsgen.frontend import onnx_ops_nn as nn
from hlsgen.frontend import onnx_ops_quant as quant
from hlsgen.frontend import onnx_ops_resize as resize
from hlsgen.frontend.onnx_ops_common import (
    EPILOGUE,
    INF,
    QONNX_DOMAINS,
    Ctx,
    Poisoned,
    Translator,
    Unsupported,
)
from hlsgen.frontend.onnx_ops_nn import window
from hlsgen.frontend.onnx_ops_quant import ZP_TYPES

__all__ = ["EPILOGUE", "INF", "QONNX_DOMAINS", "TRANSLATORS", "ZP_TYPES", "Ctx", "Poisoned", "Translator",
           "Unsupported", "find_translator", "unsupported_reason", "window"]

TRANSLATORS: dict[str, Translator] = {
    "Add": ew.binary,
    "Sub": ew.binary,
    "Mul": ew.binary,
    "Div": ew.binary,
    "Relu": ew.unary,
    "Sigmoid": ew.unary,
    "Tanh": ew.unary,
    "Elu": ew.unary,
    "Selu": ew.unary,
    "HardSigmoid": ew.unary,
    "HardSwish": ew.unary,
    "Softplus": ew.unary,
    "Softsign": ew.unary,
    "Erf": ew.unary,
    "Exp": ew.unary,
    "Gelu": ew.unary,
    "LeakyRelu": ew.leaky_relu,
    "Clip": ew.clip,
    "Softmax": ew.softmax,
    "LogSoftmax": ew.softmax,
    "BatchNormalization": nn.batchnorm,
    "Conv": nn.conv,
    "MaxPool": nn.maxpool,
    "AveragePool": nn.avgpool,
    "GlobalAveragePool": nn.global_avgpool,
    "GlobalMaxPool": nn.global_maxpool,
    "ReduceMean": nn.reduce_mean,
    "ReduceMax": nn.reduce_max,
    "MatMul": nn.matmul,
    "Gemm": nn.gemm,
    "Pad": nn.pad,
    "Flatten": layout.flatten,
    "Reshape": layout.reshape,
    "Squeeze": layout.squeeze,
    "Unsqueeze": layout.unsqueeze,
    "Transpose": layout.transpose,
    "DepthToSpace": layout.depth_to_space,
    "Concat": channels.concat,
    "Slice": channels.slice_,
    "Split": channels.split,
    "Resize": resize.resize,
    "Upsample": resize.resize,
    "QuantizeLinear": quant.quantize_linear,
    "DequantizeLinear": quant.dequantize_linear,
    "Quant": quant.qonnx_quant,
    "BipolarQuant": quant.bipolar_quant,
    "Trunc": quant.qonnx_trunc,
}
_QONNX_OPS = ("Quant", "BipolarQuant", "Trunc")  # the ops of TRANSLATORS also accepted under QONNX_DOMAINS


def find_translator(domain: str, op_type: str) -> Translator | None:
    """The translator of `op_type` in `domain` ("" or "ai.onnx" is the default domain), else None."""
    if domain in ("", "ai.onnx") or (domain in QONNX_DOMAINS and op_type in _QONNX_OPS):
        return TRANSLATORS.get(op_type)
    return None


def unsupported_reason(domain: str, op: str) -> str:
    if domain in QONNX_DOMAINS:
        return f"QONNX op {op} is not supported (only Quant, BipolarQuant and Trunc)"
    if domain not in ("", "ai.onnx"):
        return f"custom op {domain}.{op} is not supported"
    return f"op {op} is not supported"

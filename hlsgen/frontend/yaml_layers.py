"""One builder per YAML layer op: layer mapping -> float IR nodes, as an ONNX front-end emits them.

Each builder turns a checked `Layer` into a chain of `Step`s: the main node (named after the layer),
then optional BatchNormalization (`<layer>.bn`) and activation (`<layer>.relu`, ...) nodes. The
chain's last output tensor is named after the layer, intermediate ones `<layer>.<tag>`; parameter
constants are `<layer>.weight`, `<layer>.bias`, `<layer>.bn.gamma`, ... Conv/Gemm always get a bias
and act='none'; fusing is left to the passes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlsgen.config.limits import DEFAULT_LIMITS, Limits, beyond, elements
from hlsgen.config.schema import Where, get_bool, get_enum, get_float, get_int
from hlsgen.frontend.yaml_geometry import out_size, padding, pair
from hlsgen.frontend.yaml_weights import BN_INITS, LayerWeights, he_normal, zeros
from hlsgen.ir.graph import Node, Tensor
from hlsgen.ir.ops import Op

ACTIVATIONS = ("none", "relu", "relu6", "leaky_relu")
BN_SUFFIXES = ("bn.gamma", "bn.beta", "bn.mean", "bn.var")


@dataclass
class Layer:
    index: int
    name: str
    op: str
    spec: Mapping[str, Any]
    inputs: list[str]  # tensor names
    where: Where
    weights: LayerWeights | None = None


@dataclass
class Step:
    op: str
    attrs: dict[str, Any]
    shape: tuple[int, ...]
    consts: tuple[str, ...] = ()
    suffix: str = ""  # node name suffix; "" for the layer's main node
    tag: str = ""  # intermediate output tensor tag (default: suffix)


@dataclass
class Builder:
    nodes: list[Node] = field(default_factory=list)
    tensors: dict[str, Tensor] = field(default_factory=dict)
    limits: Limits = DEFAULT_LIMITS

    def shape(self, tensor: str) -> tuple[int, ...]:
        return self.tensors[tensor].shape

    def const(self, name: str, data: np.ndarray) -> str:
        self.tensors[name] = Tensor(name, tuple(data.shape), data=data)
        return name

    def chain(self, layer: Layer, steps: list[Step]) -> str:
        """Emit `steps` in order, each reading the previous output; returns the layer's output."""
        data = list(layer.inputs)
        for i, s in enumerate(steps):
            node = f"{layer.name}.{s.suffix}" if s.suffix else layer.name
            out = layer.name if i == len(steps) - 1 else f"{layer.name}.{s.tag or s.suffix or s.op.lower()}"
            if elements(s.shape) > self.limits.tensor_elements:
                raise layer.where.error(f"output {list(s.shape[1:])}: "
                                        f"{beyond(self.limits, 'tensor_elements', elements(s.shape))}")
            self.nodes.append(Node(node, Op(s.op), (*data, *s.consts), (out,), s.attrs))
            self.tensors[out] = Tensor(out, s.shape)
            data = [out]
        return data[0]


def _rank_error(layer: Layer, shape: tuple[int, ...], want: str, hint: str = "") -> Exception:
    got = list(shape[1:])
    return layer.where.error(f"{layer.op} needs {want} input, got shape {got} from "
                             f"'{layer.inputs[0]}'{hint}")


def _chw(b: Builder, layer: Layer) -> tuple[int, int, int]:
    shape = b.shape(layer.inputs[0])
    if len(shape) != 4:
        raise _rank_error(layer, shape, "a [C, H, W]")
    return shape[1], shape[2], shape[3]


# ---- epilogues ---------------------------------------------------------------------------------
def activation_steps(layer: Layer, shape: tuple[int, ...], act: str | None = None) -> list[Step]:
    """The activation named by `act` (or the layer's `activation:` key) as a step list."""
    w, spec = layer.where, layer.spec
    act = act or get_enum(spec, "activation", w, ACTIVATIONS, "none")
    if "alpha" in spec and act != "leaky_relu":
        raise w.error("alpha only applies to activation: leaky_relu")
    suffix = "" if act == layer.op else act
    if act == "relu":
        return [Step("Relu", {}, shape, suffix=suffix)]
    if act == "relu6":
        return [Step("Clip", {"min": 0.0, "max": 6.0}, shape, suffix=suffix)]
    if act == "leaky_relu":
        alpha = get_float(spec, "alpha", w, 0.01, "a number >= 0", lambda a: a >= 0)
        return [Step("LeakyRelu", {"alpha": alpha}, shape, suffix=suffix)]
    return []


def batchnorm_steps(b: Builder, layer: Layer, shape: tuple[int, ...], standalone: bool = False) -> list[Step]:
    spec, w = layer.spec, layer.where
    if not standalone and not get_bool(spec, "batchnorm", w, False):
        return []
    assert layer.weights is not None
    eps_key = "epsilon" if standalone else "bn_epsilon"
    eps = get_float(spec, eps_key, w, 1e-5, "a number > 0", lambda e: e > 0)
    consts = []
    for suffix in BN_SUFFIXES:
        role = suffix[3:] if standalone else suffix
        arr = layer.weights.get(role, (shape[1],), BN_INITS[suffix[3:]], "channels")
        if role.endswith("var") and np.any(arr < 0):
            raise w.error(f"{layer.name}.{role} has negative entries (a variance cannot be)")
        consts.append(b.const(f"{layer.name}.{role}", arr))
    return [Step("BatchNormalization", {"epsilon": eps}, shape, tuple(consts),
                 suffix="" if standalone else "bn")]


def _param_tail(b: Builder, layer: Layer, shape: tuple[int, ...]) -> list[Step]:
    return batchnorm_steps(b, layer, shape) + activation_steps(layer, shape)


def _weight_and_bias(b: Builder, layer: Layer, wshape: tuple[int, ...], fan_in: int,
                     axes: str) -> tuple[str, str]:
    assert layer.weights is not None
    w = layer.weights.get("weight", wshape, he_normal(fan_in), axes)
    if get_bool(layer.spec, "bias", layer.where, True):
        bias = layer.weights.get("bias", (wshape[0],), zeros, "outputs")
    else:
        bias = np.zeros(wshape[0], dtype=w.dtype)
    return b.const(f"{layer.name}.weight", w), b.const(f"{layer.name}.bias", bias)


# ---- builders ----------------------------------------------------------------------------------
def build_dense(b: Builder, layer: Layer) -> str:
    shape = b.shape(layer.inputs[0])
    if len(shape) != 2:
        raise _rank_error(layer, shape, "a flat [K]", "; add {op: flatten} before it")
    units = get_int(layer.spec, "units", layer.where, lo=1)
    w, bias = _weight_and_bias(b, layer, (units, shape[1]), shape[1], "units, inputs")
    out = (1, units)
    main = Step("Gemm", {"act": "none"}, out, (w, bias), tag="gemm")
    return b.chain(layer, [main, *_param_tail(b, layer, out)])


def build_conv(b: Builder, layer: Layer) -> str:
    spec, where = layer.spec, layer.where
    c, h, wd = _chw(b, layer)
    filters = get_int(spec, "filters", where, lo=1)
    groups = get_int(spec, "groups", where, 1, lo=1)
    if c % groups or filters % groups:
        raise where.error(f"groups={groups} must divide the input channels ({c}) and filters ({filters})")
    k, s, d = pair(spec, "kernel", where), pair(spec, "stride", where, 1), pair(spec, "dilation", where, 1)
    pads = padding(spec, where, (h, wd), k, s, d)
    oh, ow = out_size(where, (h, wd), k, s, d, pads)
    w, bias = _weight_and_bias(b, layer, (filters, c // groups, *k), (c // groups) * k[0] * k[1],
                               "filters, in_channels/groups, kh, kw")
    attrs = {"strides": s, "pads": pads, "dilations": d, "group": groups, "act": "none"}
    out = (1, filters, oh, ow)
    return b.chain(layer, [Step("Conv", attrs, out, (w, bias), tag="conv"), *_param_tail(b, layer, out)])


def build_pool(b: Builder, layer: Layer) -> str:
    spec, where = layer.spec, layer.where
    c, h, wd = _chw(b, layer)
    k = pair(spec, "kernel", where)
    s = pair(spec, "stride", where, k)
    pads = padding(spec, where, (h, wd), k, s, (1, 1))
    if max(pads[0], pads[2]) >= k[0] or max(pads[1], pads[3]) >= k[1]:
        raise where.error(f"padding {list(pads)} must be smaller than the kernel {list(k)}")
    oh, ow = out_size(where, (h, wd), k, s, (1, 1), pads)
    attrs: dict[str, Any] = {"kernel": k, "strides": s, "pads": pads}
    if layer.op == "maxpool":
        op, attrs["dilations"] = "MaxPool", (1, 1)
    else:
        op, attrs["count_include_pad"] = "AveragePool", int(get_bool(spec, "count_include_pad", where, False))
    return b.chain(layer, [Step(op, attrs, (1, c, oh, ow))])


def build_global_avgpool(b: Builder, layer: Layer) -> str:
    c, _, _ = _chw(b, layer)
    return b.chain(layer, [Step("GlobalAveragePool", {}, (1, c, 1, 1))])


def build_flatten(b: Builder, layer: Layer) -> str:
    k = int(np.prod(b.shape(layer.inputs[0])[1:]))
    return b.chain(layer, [Step("Reshape", {"shape": (k,)}, (1, k))])


def build_add(b: Builder, layer: Layer) -> str:
    shapes = [b.shape(t) for t in layer.inputs]
    if shapes[0] != shapes[1]:
        raise layer.where.error(f"add needs inputs of one shape, got {list(shapes[0][1:])} from "
                                f"'{layer.inputs[0]}' and {list(shapes[1][1:])} from '{layer.inputs[1]}'")
    return b.chain(layer, [Step("Add", {}, shapes[0]), *activation_steps(layer, shapes[0])])


def build_batchnorm(b: Builder, layer: Layer) -> str:
    shape = b.shape(layer.inputs[0])
    return b.chain(layer, batchnorm_steps(b, layer, shape, standalone=True))


def build_activation(b: Builder, layer: Layer) -> str:
    return b.chain(layer, activation_steps(layer, b.shape(layer.inputs[0]), layer.op))


def build_host_tail(b: Builder, layer: Layer) -> str:
    shape = b.shape(layer.inputs[0])
    op = {"softmax": "Softmax", "log_softmax": "LogSoftmax", "sigmoid": "Sigmoid", "tanh": "Tanh"}[layer.op]
    attrs = {}
    if op in ("Softmax", "LogSoftmax"):
        rank = len(shape)
        axis = get_int(layer.spec, "axis", layer.where, -1, -(rank - 1), rank - 1)
        if axis == 0:
            raise layer.where.error("axis 0 is the batch dimension; use 1 or higher (or -1)")
        attrs["axis"] = axis % rank
    return b.chain(layer, [Step(op, attrs, shape)])


ACT_KEYS = ("activation", "alpha")
PARAM_KEYS = ("weights", "bias", "batchnorm", "bn_epsilon")
POOL_KEYS = ("kernel", "stride", "padding")
# op -> (builder, extra keys, number of inputs)
OPS: dict[str, tuple[Callable[[Builder, Layer], str], tuple[str, ...], int]] = {
    "dense": (build_dense, ("units", *ACT_KEYS, *PARAM_KEYS), 1),
    "conv": (build_conv, ("filters", *POOL_KEYS, "dilation", "groups", *ACT_KEYS, *PARAM_KEYS), 1),
    "maxpool": (build_pool, POOL_KEYS, 1),
    "avgpool": (build_pool, (*POOL_KEYS, "count_include_pad"), 1),
    "global_avgpool": (build_global_avgpool, (), 1),
    "flatten": (build_flatten, (), 1),
    "add": (build_add, ACT_KEYS, 2),
    "batchnorm": (build_batchnorm, ("weights", "epsilon"), 1),
    "relu": (build_activation, (), 1),
    "relu6": (build_activation, (), 1),
    "leaky_relu": (build_activation, ("alpha",), 1),
    "softmax": (build_host_tail, ("axis",), 1),
    "log_softmax": (build_host_tail, ("axis",), 1),
    "sigmoid": (build_host_tail, (), 1),
    "tanh": (build_host_tail, (), 1),
}


def weight_suffixes(layer_op: str, spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The parameter suffixes a layer reads (for checking a `weights:` mapping)."""
    if layer_op == "batchnorm":
        return tuple(s[3:] for s in BN_SUFFIXES)
    names = ("weight", "bias") if spec.get("bias", True) is not False else ("weight",)
    return names + (BN_SUFFIXES if spec.get("batchnorm") is True else ())

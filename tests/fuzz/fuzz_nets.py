"""Random tiny networks for the golden == C-sim == RTL fuzzer (hypothesis strategies + realisation).

A network is drawn as a plain, printable spec (`Net`: input shape, a chain of layers, quantization
and folding choices); `realize(net)` turns it into an ONNX model, a compile config and calibration
data, deterministically (weights come from `net.seed`). Two flavours:

  float  a float ONNX model calibrated by hlsgen: random weight/activation bits (2..8, per layer
         overrides), signed/unsigned, symmetric/asymmetric (symmetric makes every ReLU a clamp inside
         the type range: lo = zp), minmax or percentile calibration, calibration data scaled below
         the test frames (so the frames saturate), Clip bounds that are not 0/6 (clip_min > 0 is a
         clamp inside the range).
  qonnx  the same layers with QONNX `Quant` nodes on the input, every weight and every layer output,
         all with power-of-two scales: every requant multiplier is a power of two, so rounding ties
         are frequent (half_even and half_up differ), inputs sit on half-steps of the input grid (host
         quantization ties), and scales one step too fine or zero points off-centre make ReLU, Clip
         and the quantizers clamp inside the type range. Residual adds keep the model's
         quantizer on the conv output (two-step epilogue).

Layer kinds: conv (square or not, stride 1..2, asymmetric pads, dilation 1..2, groups 1 / divisor /
depthwise; act none, relu, relu6, clip, leaky), res (conv + Add of the skip, branches of different
scales), maxpool (padded, strided), avgpool, and a head of GlobalAveragePool/Flatten + Gemm.
Folds (PE/SIMD) are random, including ones that divide nothing.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

QONNX = "qonnx.custom_op.general"
Shape = tuple[int, int, int]


@dataclass(frozen=True)
class Net:
    flavor: str  # "float" | "qonnx"
    shape: Shape  # C, H, W
    layers: tuple[dict[str, Any], ...]
    head: dict[str, Any]  # {"gap": bool, "units": [n, ...]} or {} (no dense head)
    quant: dict[str, Any]  # config quant section
    overrides: dict[str, dict[str, int]]  # config layers section (float flavour)
    qpoints: dict[str, dict[str, Any]] = field(default_factory=dict)  # qonnx: per quant point {bits, signed, ...}
    folds: dict[str, dict[str, int]] = field(default_factory=dict)  # hw.layers
    seed: int = 0
    calib_scale: float = 1.0

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True, default=list)


# ---- strategies ------------------------------------------------------------------------------------------------

def _out(size: int, k: int, s: int, d: int, p0: int, p1: int) -> int:
    return (size + p0 + p1 - d * (k - 1) - 1) // s + 1


@st.composite
def conv_layer(draw: st.DrawFn, c: int, h: int, w: int) -> tuple[dict[str, Any], Shape]:
    divisors = [g for g in range(1, c + 1) if c % g == 0]
    group = draw(st.sampled_from(divisors))
    per_group = 1 if group == c and draw(st.booleans()) else draw(st.integers(1, max(1, 6 // group)))
    cout = group * per_group
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    if draw(st.booleans()):
        kw = kh
    stride = draw(st.integers(1, 2))
    dil = draw(st.integers(1, 2)) if max(kh, kw) > 1 else 1
    pads = [draw(st.integers(0, max(0, k - 1))) for k in (kh, kw, kh, kw)]
    oh, ow = _out(h, kh, stride, dil, pads[0], pads[2]), _out(w, kw, stride, dil, pads[1], pads[3])
    if oh < 1 or ow < 1:  # too small for this window: a 1x1 conv instead
        kh = kw = dil = stride = 1
        pads = [0, 0, 0, 0]
        oh, ow = h, w
    act = draw(st.sampled_from(["none", "relu", "relu", "relu6", "clip", "leaky"]))
    spec: dict[str, Any] = {"kind": "conv", "cout": cout, "kernel": [kh, kw], "stride": stride, "dilation": dil,
                            "pads": pads, "group": group, "act": act, "gain": draw(st.sampled_from([0.5, 1.0, 2.0]))}
    if act == "clip":
        spec["clip"] = draw(st.sampled_from([[0.0, 1.0], [0.25, 2.0], [-0.5, 0.5], [-1.0, 6.0], [0.0, 0.5]]))
    if act == "leaky":
        spec["alpha"] = draw(st.sampled_from([0.1, 0.25]))
    return spec, (cout, oh, ow)


@st.composite
def layer(draw: st.DrawFn, c: int, h: int, w: int) -> tuple[dict[str, Any], Shape]:
    kinds = ["conv", "conv", "res"] + (["maxpool", "avgpool"] if min(h, w) >= 2 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "conv":
        return draw(conv_layer(c, h, w))
    if kind == "res":
        k = draw(st.sampled_from([1, 3]))
        spec = {"kind": "res", "kernel": k, "act": draw(st.sampled_from(["none", "relu", "leaky"])), "alpha": 0.1,
                "post": draw(st.sampled_from(["none", "relu"])), "skip_first": draw(st.booleans()),
                "gain": draw(st.sampled_from([0.3, 1.0, 3.0]))}
        return spec, (c, h, w)
    k = draw(st.integers(2, min(3, h, w)))
    stride = draw(st.integers(1, k))
    # a padded average pool needs count_include_pad in hardware: keep it unpadded
    pads = [draw(st.integers(0, k - 1)) for _ in range(4)] if kind == "maxpool" else [0, 0, 0, 0]
    oh, ow = _out(h, k, stride, 1, pads[0], pads[2]), _out(w, k, stride, 1, pads[1], pads[3])
    return {"kind": kind, "kernel": k, "stride": stride, "pads": pads}, (c, oh, ow)


def _bits(draw: st.DrawFn, low: int = 2) -> int:
    return draw(st.sampled_from([low, 3, 4, 5, 6, 7, 8, 8, 8]))


@st.composite
def nets(draw: st.DrawFn, flavor: str | None = None, max_layers: int = 4) -> Net:
    flavor = flavor or draw(st.sampled_from(["float", "qonnx"]))
    c, h, w = draw(st.integers(1, 6)), draw(st.integers(4, 8)), draw(st.integers(4, 8))
    shape = (c, h, w)
    layers = []
    for _ in range(draw(st.integers(1, max_layers))):
        spec, (c, h, w) = draw(layer(c, h, w))
        layers.append(spec)
    head: dict[str, Any] = {}
    if draw(st.booleans()):
        head = {"gap": draw(st.booleans()), "units": draw(st.lists(st.integers(1, 10), min_size=1, max_size=2)),
                "act": draw(st.sampled_from(["none", "relu"]))}
    names = node_names(layers, head)
    quant: dict[str, Any] = {"rounding": draw(st.sampled_from(["half_even", "half_up"]))}
    overrides: dict[str, dict[str, int]] = {}
    qpoints: dict[str, dict[str, Any]] = {}
    if flavor == "float":
        quant |= {"weight_bits": _bits(draw), "act_bits": _bits(draw, 3), "act_signed": draw(st.booleans()),
                  "act_symmetric": draw(st.booleans()),
                  "multiplier_bits": draw(st.sampled_from([8, 12, 16, 16]))}
        if draw(st.booleans()):
            quant |= {"calibration": "percentile", "percentile": draw(st.sampled_from([90.0, 99.0, 99.9]))}
        for name in names:
            if draw(st.integers(0, 3)) == 0:
                overrides[name] = {"weight_bits": _bits(draw), "act_bits": _bits(draw, 3)}
    else:
        for point in quant_points(layers, head):
            bits = _bits(draw)
            signed = draw(st.booleans())
            qmax = 2 ** (bits - 1) - 1 if signed else 2**bits - 1
            zps = [0, 0, 1, -1, qmax // 2] if signed else [0, 0, 1, qmax // 2]
            zp = draw(st.sampled_from(zps))
            qpoints[point] = {"bits": bits, "signed": signed, "zp": zp, "offset": draw(st.sampled_from([-1, 0, 0, 1]))}
        for name in names:
            qpoints["w:" + name] = {"bits": _bits(draw), "per_channel": draw(st.booleans())}
    folds: dict[str, dict[str, int]] = {}
    for name in names:
        if draw(st.booleans()):  # clipped to the layer's channel counts by realize()
            folds[name] = {"pe": draw(st.integers(1, 8)), "simd": draw(st.integers(1, 8))}
    return Net(flavor, shape, tuple(layers), head, quant, overrides, qpoints, folds,
               seed=draw(st.integers(0, 2**16)), calib_scale=draw(st.sampled_from([0.5, 1.0, 1.0, 2.0])))


# ---- naming: what the realisation calls each layer ----------------------------------------------------------------

def quant_points(layers: tuple[dict[str, Any], ...] | list[dict[str, Any]], head: dict[str, Any]) -> list[str]:
    """Tensors that get a QONNX Quant (qonnx flavour): the input, every conv/add/avgpool/gemm output."""
    points = ["in"]
    for i, spec in enumerate(layers):
        if spec["kind"] == "conv":
            points.append(f"L{i}")
        elif spec["kind"] == "res":
            points += [f"L{i}.conv", f"L{i}"]
        elif spec["kind"] == "avgpool":
            points.append(f"L{i}")
    if head:
        if head["gap"]:
            points.append("gap")
        points += [f"fc{j}" for j in range(len(head["units"]))]
    return points


def node_names(layers: tuple[dict[str, Any], ...] | list[dict[str, Any]], head: dict[str, Any]) -> list[str]:
    """The conv/gemm node names (the names of the fused layers: per-layer overrides and folds)."""
    names = [f"L{i}_conv" for i, spec in enumerate(layers) if spec["kind"] in ("conv", "res")]
    return names + ([f"fc{j}" for j in range(len(head["units"]))] if head else [])


# ---- realisation -----------------------------------------------------------------------------------------------

class _Builder:
    def __init__(self, net: Net, scales: dict[str, float] | None) -> None:
        self.net = net
        self.rng = np.random.default_rng(net.seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.scales = scales  # None: the float model (qonnx flavour: for measuring ranges)
        self.points: dict[str, str] = {}  # quant point -> tensor name (before its Quant)
        self.n = 0

    def name(self, p: str) -> str:
        self.n += 1
        return f"{p}_{self.n}"

    def const(self, p: str, v: np.ndarray) -> str:
        n = self.name(p)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(v), n))
        return n

    def op(self, op: str, ins: list[str], node: str | None = None, domain: str | None = None, **attrs: Any) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], name=node or out + "_n", domain=domain, **attrs))
        return out

    def quant(self, x: str, point: str) -> str:
        """The activation quantizer of a quant point (identity in the float flavour)."""
        self.points[point] = x
        if self.net.flavor != "qonnx" or self.scales is None:
            return x
        q = self.net.qpoints[point]
        return self._quant(x, self.scales[point], float(q["zp"]), q["bits"], q["signed"], False, "q_" + point)

    def _quant(self, x: str, scale: float | np.ndarray, zp: float, bits: int, signed: bool, narrow: bool,
               node: str) -> str:
        ins = [x, self.const("s", np.asarray(scale, np.float32)), self.const("z", np.asarray(zp, np.float32)),
               self.const("b", np.asarray(float(bits), np.float32))]
        return self.op("Quant", ins, node=node.replace(".", "_"), domain=QONNX, signed=int(signed),
                       narrow=int(narrow), rounding_mode="ROUND")

    def weight(self, w: np.ndarray, node: str) -> str:
        if self.net.flavor != "qonnx" or self.scales is None:
            return self.const("w", w.astype(np.float32))
        q = self.net.qpoints["w:" + node]
        qmax = 2 ** (q["bits"] - 1) - 1
        axes = tuple(range(1, w.ndim))
        peak = np.abs(w).max(axis=axes, keepdims=True) if q["per_channel"] else np.abs(w).max()
        scale = 2.0 ** np.ceil(np.log2(np.maximum(peak, 1e-6) / qmax))
        scale = np.asarray(scale, np.float32)
        return self._quant(self.const("w", w.astype(np.float32)), scale, 0.0, q["bits"], True, True,
                           "qw_" + node)

    def bias(self, b: np.ndarray, node: str, x_point: str, wname: str) -> str:
        return self.const("b", b.astype(np.float32))

    def conv(self, x: str, point: str, cin: int, cout: int, kernel: list[int], stride: int, dil: int,
             pads: list[int], group: int, gain: float, node: str) -> str:
        fan_in = cin // group * kernel[0] * kernel[1]
        w = self.rng.normal(0, gain * math.sqrt(2.0 / fan_in), (cout, cin // group, *kernel))
        b = self.rng.normal(0, 0.1, cout)
        ins = [x, self.weight(w, node), self.bias(b, node, point, "")]
        return self.op("Conv", ins, node=node, kernel_shape=kernel, strides=[stride] * 2, dilations=[dil] * 2,
                       pads=pads, group=group)

    def act(self, x: str, spec: dict[str, Any]) -> str:
        act = spec.get("act", "none")
        if act == "relu":
            return self.op("Relu", [x])
        if act == "relu6" or act == "clip":
            lo, hi = spec.get("clip", [0.0, 6.0])
            return self.op("Clip", [x, self.const("lo", np.array(lo, np.float32)),
                                    self.const("hi", np.array(hi, np.float32))])
        if act == "leaky":
            return self.op("LeakyRelu", [x], alpha=spec["alpha"])
        return x


def build_onnx(net: Net, scales: dict[str, float] | None = None) -> tuple[onnx.ModelProto, dict[str, str],
                                                                         dict[str, tuple[int, int]]]:
    """The model, its quant points -> tensor, and the channel counts {layer: (out, in per group)}; a
    dense layer's input count is that of one pixel of its input stream (a Flatten of H x W x C
    streams H*W pixels of C channels)."""
    b = _Builder(net, scales)
    c, h, w = net.shape
    x = b.quant("x", "in")
    chans: dict[str, tuple[int, int]] = {}
    for i, spec in enumerate(net.layers):
        kind = spec["kind"]
        if kind == "conv":
            node = f"L{i}_conv"
            chans[node] = (spec["cout"], c // spec["group"])
            y = b.conv(x, f"L{i}", c, spec["cout"], spec["kernel"], spec["stride"], spec["dilation"],
                       spec["pads"], spec["group"], spec["gain"], node)
            x = b.quant(b.act(y, spec), f"L{i}")
            c = spec["cout"]
        elif kind == "res":
            node = f"L{i}_conv"
            k = spec["kernel"]
            chans[node] = (c, c)
            y = b.conv(x, f"L{i}.conv", c, c, [k, k], 1, 1, [k // 2] * 4, 1, spec["gain"], node)
            y = b.quant(b.act(y, spec), f"L{i}.conv")
            s = b.op("Add", [x, y] if spec["skip_first"] else [y, x], node=f"L{i}_add")
            x = b.quant(b.act(s, {"act": spec["post"]}), f"L{i}")
        elif kind == "maxpool":
            x = b.op("MaxPool", [x], kernel_shape=[spec["kernel"]] * 2, strides=[spec["stride"]] * 2,
                     pads=spec["pads"])
        elif kind == "avgpool":
            x = b.op("AveragePool", [x], node=f"L{i}_pool", kernel_shape=[spec["kernel"]] * 2,
                     strides=[spec["stride"]] * 2)
            x = b.quant(x, f"L{i}")
    y_shape: list[int | str]
    if net.head:
        if net.head["gap"]:
            x = b.quant(b.op("GlobalAveragePool", [x], node="gap"), "gap")
        x = b.op("Flatten", [x], axis=1)
        n = None
        for j, units in enumerate(net.head["units"]):
            n = _flat_size(net) if j == 0 else net.head["units"][j - 1]
            chans[f"fc{j}"] = (units, c if j == 0 else n)  # SIMD spans one pixel's channels (hw.layers checks)
            wt = b.rng.normal(0, math.sqrt(2.0 / n), (units, n))
            bias = b.rng.normal(0, 0.1, units)
            x = b.op("Gemm", [x, b.weight(wt, f"fc{j}"), b.bias(bias, f"fc{j}", "", "")], node=f"fc{j}", transB=1)
            if j < len(net.head["units"]) - 1 or net.head["act"] == "relu":
                x = b.op("Relu", [x])
            x = b.quant(x, f"fc{j}")
        y_shape = [1, net.head["units"][-1]]
    else:
        y_shape = [1, *_shape_after(net)]
    if not b.nodes:  # nothing but the input quantizer: cannot happen (>= 1 layer)
        raise AssertionError("empty net")
    if b.nodes[-1].output[0] != x:
        x = b.op("Identity", [x])
    b.nodes[-1].output[0] = "y"
    for point, t in list(b.points.items()):
        if t == x:
            b.points[point] = "y"
    batch: int | str = 1 if scales is not None or net.flavor == "float" else "N"  # "N": the ranging model
    y_shape[0] = batch
    graph = helper.make_graph(b.nodes, "fuzz",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, *net.shape])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], b.inits)
    imports = [helper.make_opsetid("", 13)]
    if net.flavor == "qonnx" and scales is not None:
        imports.append(helper.make_opsetid(QONNX, 1))
    model = helper.make_model(graph, opset_imports=imports, producer_name="hlsgen-fuzz")
    model.ir_version = 8
    return model, b.points, chans


def _shape_after(net: Net) -> Shape:
    c, h, w = net.shape
    for spec in net.layers:
        if spec["kind"] == "conv":
            kh, kw = spec["kernel"]
            p = spec["pads"]
            c = spec["cout"]
            h, w = (_out(h, kh, spec["stride"], spec["dilation"], p[0], p[2]),
                    _out(w, kw, spec["stride"], spec["dilation"], p[1], p[3]))
            if h < 1 or w < 1:
                raise AssertionError(spec)
        elif spec["kind"] in ("maxpool", "avgpool"):
            k, s, p = spec["kernel"], spec["stride"], spec["pads"]
            h, w = _out(h, k, s, 1, p[0], p[2]), _out(w, k, s, 1, p[1], p[3])
    return c, h, w


def _flat_size(net: Net) -> int:
    c, h, w = _shape_after(net)
    return c if net.head["gap"] else c * h * w


def calibration(net: Net, n: int = 16) -> np.ndarray:
    rng = np.random.default_rng(net.seed + 1)
    return (rng.standard_normal((n, *net.shape)) * net.calib_scale).astype(np.float32)


def _pow2_scales(net: Net, ranges: dict[str, float]) -> dict[str, float]:
    scales = {}
    for point, peak in ranges.items():
        q = net.qpoints[point]
        qmax = 2 ** (q["bits"] - 1) - 1 if q["signed"] else 2 ** q["bits"] - 1
        room = max(1, qmax - abs(q["zp"]) if q["signed"] else qmax - q["zp"])
        scales[point] = float(2.0 ** (math.ceil(math.log2(max(peak, 1e-3) / room)) + q["offset"]))
    return scales


def realize(net: Net) -> tuple[onnx.ModelProto, dict[str, Any], np.ndarray]:
    """ONNX model, config dict and calibration data of a spec."""
    calib = calibration(net)
    model, points, chans = build_onnx(net)
    if net.flavor == "qonnx":
        from model_zoo import run_ort

        values = run_ort(model, calib, all_intermediates=True) | {"x": calib}
        ranges = {p: float(np.abs(values[t]).max()) for p, t in points.items()}
        scales = _pow2_scales(net, ranges)
        model, _, chans = build_onnx(net, scales)
        # inputs on half-steps of the input grid: the host quantizer meets exact ties
        s_in = scales["in"]
        calib = ((np.floor(calib / s_in) + 0.5) * s_in).astype(np.float32)
    folds = {}
    for name, fold in net.folds.items():
        cout, cin = chans[name]
        f = {"pe": min(fold["pe"], cout)}
        if "simd" in fold:
            f["simd"] = min(fold["simd"], cin)
        folds[name] = f
    config = {"quant": dict(net.quant), "layers": dict(net.overrides), "hw": {"layers": folds, "frames": 3}}
    return model, config, calib


def write_net(folder: Path, net: Net) -> tuple[Path, Path, dict[str, Any]]:
    """model.onnx, calib.npy and spec.json in folder; returns (model, calib, config)."""
    folder.mkdir(parents=True, exist_ok=True)
    model, config, calib = realize(net)
    onnx.save(model, folder / "model.onnx")
    np.save(folder / "calib.npy", calib)
    (folder / "spec.json").write_text(net.to_json() + "\n")
    return folder / "model.onnx", folder / "calib.npy", config

"""YAML network description -> float IR Graph (schema: docs/yaml-models.md).

Reads the file with a safe YAML loader, checks every key (one-line `HlsgenError`s naming the file,
the layer by index and name, and the key), and emits the same float ops an ONNX front-end would:
Conv/Gemm with a bias and act='none', then separate BatchNormalization and activation nodes, pools,
Reshape for flatten, Add, and host-tail Softmax & co. Layers read the previous layer's output unless
`inputs:` names others. `calibration_data(graph)` draws the synthetic calibration set the file asks
for, used when no calibration file is given.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hlsgen.config.compile import parse_quant
from hlsgen.config.limits import DEFAULT_LIMITS, Limits, beyond, elements
from hlsgen.config.schema import (
    Where,
    as_mapping,
    check_int,
    check_keys,
    get_enum,
    get_float,
    get_int,
    get_str,
    read_yaml_mapping,
    suggest,
)
from hlsgen.errors import HlsgenError
from hlsgen.frontend.yaml_layers import OPS, Builder, Layer, weight_suffixes
from hlsgen.frontend.yaml_weights import RANDOM, Weights
from hlsgen.ir.graph import Graph, Tensor

TOP_KEYS = ("name", "description", "input", "seed", "weights", "calibration", "quant", "layers")
LAYER_KEYS = ("name", "op", "inputs")
CALIB_KEYS = {"normal": ("mean", "std"), "uniform": ("low", "high")}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def load_yaml_model(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> Graph:
    """Translate the YAML model file at `path` into a float IR graph (batch 1); `limits` bound the
    file, its tensors and its calibration set before anything is allocated."""
    source = str(path)
    data = read_yaml_mapping(path, "model", limits)
    top = Where(source)
    check_keys(data, TOP_KEYS, top)
    name = _ident(get_str(data, "name", top, _default_name(Path(path))), "name", top)
    if "description" in data:
        get_str(data, "description", top)
    x_name, x_shape = _parse_input(data, top)
    if elements(x_shape) > limits.tensor_elements:
        raise top.error(f"input.shape {list(x_shape)}: {beyond(limits, 'tensor_elements', elements(x_shape))}")
    calibration = _parse_calibration(data.get("calibration"), top.child("calibration"))
    _check_samples(calibration["samples"], x_shape, limits, top.error)
    default_npz = get_str(data, "weights", top, None)
    if default_npz is not None and not default_npz.endswith(".npz") and default_npz != RANDOM:
        raise top.error(f"weights must name an .npz file or be {RANDOM!r}, got {default_npz!r}")
    weights = Weights(Path(path).parent, get_int(data, "seed", top, 0, lo=0), default_npz, limits)
    quant_raw = as_mapping(data.get("quant"), top.child("quant"))
    quant = parse_quant(quant_raw, top.child("quant"))
    b = Builder(limits=limits)
    b.tensors[x_name] = Tensor(x_name, (1, *x_shape))
    out = _build_layers(b, data, top, x_name, weights)
    meta = {
        "format": "yaml",
        "source": source,
        "calibration": calibration,
        "quant": {k: getattr(quant, k) for k in quant_raw},
        "seed": weights.seed,
    }
    return Graph(name, tuple(b.nodes), b.tensors, (x_name,), (out,), tuple(weights.unused_notes()), meta)


def _default_name(path: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", path.stem)
    return name if _IDENT.match(name) else f"model_{name}"


def _ident(value: str, what: str, where: Where) -> str:
    if not _IDENT.match(value):
        raise where.error(f"{what} {value!r} must be identifier-like (letters, digits, _; "
                          "not starting with a digit)")
    return value


def _parse_input(data: dict[str, Any], top: Where) -> tuple[str, tuple[int, ...]]:
    if "input" not in data:
        raise top.error("missing key 'input' (e.g. input: {name: x, shape: [3, 32, 32]})")
    where = top.child("input")
    m = as_mapping(data["input"], where)
    check_keys(m, ("name", "shape"), where)
    name = _ident(get_str(m, "name", where, "input"), "input name", where)
    shape = m.get("shape")
    if not isinstance(shape, list) or len(shape) not in (1, 3):
        raise where.error(f"input.shape must be [features] or [channels, height, width] (no batch), "
                          f"got {shape!r}")
    return name, tuple(check_int(v, "input.shape entries", where, 1) for v in shape)


def _parse_calibration(section: Any, where: Where) -> dict[str, Any]:
    m = as_mapping(section, where)
    dist = get_enum(m, "distribution", where, tuple(CALIB_KEYS), "normal")
    check_keys(m, ("samples", "distribution", "seed", *CALIB_KEYS[dist]), where)
    out: dict[str, Any] = {
        "samples": get_int(m, "samples", where, 64, lo=1),
        "distribution": dist,
        "seed": get_int(m, "seed", where, 0, lo=0),
    }
    if dist == "normal":
        out["mean"] = get_float(m, "mean", where, 0.0)
        out["std"] = get_float(m, "std", where, 1.0, "a number > 0", lambda s: s > 0)
    else:
        out["low"] = get_float(m, "low", where, -1.0)
        out["high"] = get_float(m, "high", where, 1.0)
        if out["high"] <= out["low"]:
            raise where.error("calibration.high must be greater than calibration.low")
    return out


def _check_samples(samples: int, x_shape: tuple[int, ...], limits: Limits, error: Callable[[str], Exception]) -> None:
    if samples > limits.samples:
        raise error(f"calibration.samples: {beyond(limits, 'samples', samples)}")
    count = samples * elements(x_shape)
    if count > limits.calibration_elements:
        raise error(f"calibration.samples {samples:,} of input {list(x_shape)}: "
                    f"{beyond(limits, 'calibration_elements', count)}")


def calibration_data(graph: Graph, limits: Limits = DEFAULT_LIMITS) -> np.ndarray:
    """The synthetic calibration set of a YAML model: float32 [samples, *input shape without batch]."""
    c = graph.meta["calibration"]
    x_shape = graph.tensor(graph.inputs[0]).shape[1:]
    _check_samples(c["samples"], x_shape, limits, lambda m: HlsgenError(f"{graph.meta['source']}: {m}"))
    rng = np.random.default_rng(c["seed"])
    shape = (c["samples"], *x_shape)
    if c["distribution"] == "normal":
        x = rng.normal(c["mean"], c["std"], shape)
    else:
        x = rng.uniform(c["low"], c["high"], shape)
    return x.astype(np.float32)


# ---- layers ------------------------------------------------------------------------------------
def _build_layers(b: Builder, data: dict[str, Any], top: Where, x_name: str, weights: Weights) -> str:
    raw = data.get("layers")
    if not isinstance(raw, list) or not raw:
        raise top.error("layers must be a non-empty list of layer mappings")
    outputs: dict[str, int] = {}  # layer output -> index
    used: set[str] = set()
    prev = x_name
    for i, spec in enumerate(raw):
        layer = _parse_layer(i, spec, top, prev, x_name, outputs, weights)
        used.update(layer.inputs)
        prev = OPS[layer.op][0](b, layer)
        outputs[prev] = i
    for out, i in outputs.items():
        if out not in used and out != prev:
            raise top.error(f"layers[{i}] ({out}): output is never used; only the last layer's output "
                            "leaves the model (check the inputs: of later layers)")
    return prev


def _parse_layer(i: int, spec: Any, top: Where, prev: str, x_name: str, outputs: dict[str, int],
                 weights: Weights) -> Layer:
    if not isinstance(spec, dict):
        raise top.error(f"layers[{i}]: a layer must be a mapping such as {{op: dense, units: 10}}, "
                        f"got {spec!r}")
    given = spec.get("name")
    where = Where(top.source, "", f"layers[{i}] ({given})" if isinstance(given, str) else f"layers[{i}]")
    op = get_str(spec, "op", where)
    if op not in OPS:
        raise where.error(f"unknown op {op!r}{suggest(op, OPS)}; ops: {', '.join(OPS)}")
    name = get_str(spec, "name", where, f"{op}_{i}")
    where = Where(top.source, "", f"layers[{i}] ({name})")
    _ident(name, "layer name", where)
    if name in outputs or name == x_name:
        raise where.error(f"layer name {name!r} is already used")
    _, extra, n_inputs = OPS[op]
    check_keys(spec, (*LAYER_KEYS, *extra), where)
    inputs = _parse_inputs(spec, where, prev, x_name, outputs, n_inputs)
    lw = None
    if "weights" in extra:
        lw = weights.for_layer(spec.get("weights"), name, where, weight_suffixes(op, spec))
    return Layer(i, name, op, spec, inputs, where, lw)


def _parse_inputs(spec: dict[str, Any], where: Where, prev: str, x_name: str,
                  outputs: dict[str, int], n_inputs: int) -> list[str]:
    value = spec.get("inputs", [prev] if n_inputs == 1 else None)
    if value is None:
        raise where.error(f"missing key 'inputs' (this op takes {n_inputs} inputs, e.g. inputs: [a, b])")
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or len(names) != n_inputs or not all(isinstance(n, str) for n in names):
        raise where.error(f"inputs must list {n_inputs} layer name(s), got {value!r}")
    known = [x_name, *outputs]
    for n in names:
        if n not in known:
            raise where.error(f"inputs names {n!r}, which is neither the model input nor an earlier "
                              f"layer{suggest(n, known)}")
    return names

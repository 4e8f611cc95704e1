"""The Python API the CLI is built on: load a model, compile it, run the golden model.

    from hlsgen import compile_model, run_golden
    c = compile_model("model.onnx", config="cfg.yaml", calib="calib.npy")
    y = run_golden(c, x)                       # float outputs, host tail applied
    codes = run_golden(c, x, integer=True)     # raw integer outputs of the hardware
    every = intermediates(c, x)                # every integer tensor, by name
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hlsgen.config.compile import Config, config_limits, load_config
from hlsgen.config.limits import DEFAULT_LIMITS, Limits, beyond, elements
from hlsgen.data import as_batch, load_array
from hlsgen.errors import HlsgenError
from hlsgen.golden import run_graph
from hlsgen.ir import Graph, Op, verify
from hlsgen.ir.ops import LAYOUT_OPS
from hlsgen.passes import FLOAT_PASSES, QUANT_PASSES, Pass, PassContext
from hlsgen.passes.check_supported import hardware_nodes

SAMPLE_SIZE = 16


@dataclass(frozen=True)
class Compilation:
    """Everything one compile produced: the graph after every pass and what was measured."""

    source: Graph  # front-end output (float, possibly with Quantize/Dequantize)
    float_graph: Graph  # after the float rewrites (folded, fused)
    graph: Graph  # the integer graph: the golden model's program
    stages: tuple[tuple[str, Graph], ...]
    config: Config
    calibration: np.ndarray | None
    sample: np.ndarray  # inputs the error figures were measured on
    sample_is_synthetic: bool


def load_model(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> Graph:
    """A model file as a float IR graph, by extension: .onnx, or .yaml/.yml (hlsgen's own format).
    `limits` (a config's limits: section) bounds what the file may make hlsgen allocate."""
    p = Path(path)
    if p.suffix.lower() in (".yaml", ".yml"):
        from hlsgen.frontend.from_yaml import load_yaml_model

        return load_yaml_model(p, limits)
    if p.suffix.lower() == ".onnx":
        from hlsgen.frontend.from_onnx import load_onnx

        return load_onnx(p, limits)
    raise HlsgenError(f"{p}: unknown model format (expected .onnx, .yaml or .yml)")


def load_compile_config(config: Config | str | Path | None, source: Graph) -> Config:
    if isinstance(config, Config):
        return config
    base = {"quant": source.meta["quant"]} if source.meta.get("quant") else None
    cfg = load_config(config, base)
    cfg.check_layer_names([n.name for n in source.nodes])
    return cfg


def run_passes(graph: Graph, passes: list[Pass], ctx: PassContext,
               stages: list[tuple[str, Graph]]) -> Graph:
    """Run `passes` in order; an HlsgenError a pass raises is prefixed with the model's file name."""
    label = str(graph.meta.get("source") or "")
    try:
        for p in passes:
            graph = verify(p(graph, ctx), p.__name__)
            stages.append((p.__name__, graph))
    except HlsgenError as e:
        if label and e.args and isinstance(e.args[0], str) and label not in e.args[0]:
            e.args = (f"{label}: {e.args[0]}", *e.args[1:])
        raise
    return graph


_BOUND_OPS = {"Clip", "Min", "Max", "Where"}  # an infinite bound is meaningful there


def check_finite_constants(graph: Graph) -> None:
    """Refuse a NaN or Inf in a float constant a node computes with (weights, biases, BN, scales),
    naming the node and the tensor, before any pass does arithmetic with it."""
    for n in graph.nodes:
        if n.op in _BOUND_OPS:
            continue
        for name in n.inputs:
            t = graph.tensor(name)
            if t.data is None or t.integer or not np.issubdtype(np.asarray(t.data).dtype, np.floating):
                continue
            bad = ~np.isfinite(np.asarray(t.data))
            if bad.any():
                first = tuple(int(i) for i in np.argwhere(bad)[0])
                raise HlsgenError(f"{graph.meta.get('source', graph.name)}: node {n.name} ({n.op}): constant "
                                  f"'{name}' holds NaN or Inf ({int(bad.sum())} of {bad.size} values; "
                                  f"first at index {list(first)})")


def float_stage(model: str | Path | Graph, config: Config | str | Path | None = None
                ) -> tuple[Graph, Graph, Config, list[tuple[str, Graph]]]:
    """Load and run the float rewrites only (what `hlsgen inspect` shows); no data needed."""
    source = model if isinstance(model, Graph) else load_model(model, config_limits(config))
    cfg = load_compile_config(config, source)
    stages: list[tuple[str, Graph]] = [("source", verify(source, "front-end"))]
    check_finite_constants(source)
    fused = run_passes(source, FLOAT_PASSES, PassContext(cfg), stages)
    return source, fused, cfg, stages


def compile_model(model: str | Path | Graph, config: Config | str | Path | None = None,
                  calib: str | Path | np.ndarray | None = None) -> Compilation:
    source, fused, cfg, stages = float_stage(model, config)
    calibration = _calibration(calib, source, cfg.limits)
    quantized = run_passes(fused, QUANT_PASSES, PassContext(cfg, calibration), stages)
    if cfg.hw.layers:
        cfg.check_hw_layer_names(n.name for n in hardware_nodes(quantized) if n.op not in LAYOUT_OPS)
    sample, synthetic = _sample(calibration, source, cfg.limits)
    return Compilation(source, fused, quantized, tuple(stages), cfg, calibration, sample, synthetic)


def _calibration(calib: str | Path | np.ndarray | None, source: Graph, limits: Limits) -> np.ndarray | None:
    if calib is None:
        if source.meta.get("format") == "yaml":
            from hlsgen.frontend.from_yaml import calibration_data

            return calibration_data(source, limits)
        return None
    if isinstance(calib, np.ndarray):
        return as_batch(calib, source, "calibration data", limits)
    return load_array(calib, source, "calibration data", limits)


def _sample(calibration: np.ndarray | None, source: Graph, limits: Limits) -> tuple[np.ndarray, bool]:
    if calibration is not None:
        return calibration[:SAMPLE_SIZE], False
    shape = source.tensor(source.inputs[0]).shape
    count = SAMPLE_SIZE * elements(shape[1:])
    if count > limits.calibration_elements:
        raise HlsgenError(f"{source.meta.get('source', source.name)}: a synthetic sample of {SAMPLE_SIZE} inputs "
                          f"'{source.inputs[0]}' {list(shape)}: {beyond(limits, 'calibration_elements', count)}")
    rng = np.random.default_rng(0)
    return rng.standard_normal((SAMPLE_SIZE, *shape[1:])).astype(np.float32), True


def run_golden(c: Compilation, x: np.ndarray, integer: bool = False) -> list[np.ndarray]:
    """Golden model outputs for a batch: float (dequantized, host tail applied) or the raw
    integer codes the hardware produces (integer=True)."""
    batch = as_batch(x, c.graph)
    names = hardware_outputs(c.graph) if integer else list(c.graph.outputs)
    values = run_graph(c.graph, batch, keep=set(names))
    return [values[n] for n in names]


def hardware_outputs(graph: Graph) -> list[str]:
    """The integer tensors the hardware hands to the host (inputs of DequantizeOutput)."""
    return [n.inputs[0] for n in graph.nodes if n.op == Op.DEQUANTIZE_OUTPUT]


def intermediates(c: Compilation, x: np.ndarray) -> dict[str, np.ndarray]:
    """Every tensor of the integer graph for a batch, by name."""
    return run_graph(c.graph, as_batch(x, c.graph), keep=True)


def float_reference(c: Compilation, x: np.ndarray, graph: Graph | None = None) -> list[np.ndarray]:
    """Outputs of the original (source) graph in float64 — or of another float stage."""
    g = graph if graph is not None else c.source
    values = run_graph(g, as_batch(x, g))
    return [values[n] for n in g.outputs]

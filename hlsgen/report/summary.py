"""The compile report: per-layer facts and measured error figures, as JSON and Markdown."""

from __future__ import annotations

from typing import Any

import numpy as np

from hlsgen.config.hw import HwConfig
from hlsgen.data import as_batch
from hlsgen.devices.parts import family_of
from hlsgen.golden import run_graph
from hlsgen.hw.fold import rate_text
from hlsgen.hw.layers import capped_defaults
from hlsgen.hw.layers.mvu import node_macs
from hlsgen.hw.model import Dataflow, Kind
from hlsgen.hw.params import ConvertParams
from hlsgen.hw.resources import layer_resources
from hlsgen.ir import Graph, Node, Op
from hlsgen.ir.epilogue import two_step
from hlsgen.ir.ops import HOST_BOUNDARY_OPS, MVU_OPS, QDQ_OPS, REQUANT_OPS
from hlsgen.passes.check_supported import host_tail_nodes
from hlsgen.pipeline import Compilation, float_reference, intermediates, run_golden
from hlsgen.support.identifiers import shown


def build_report(c: Compilation, df: Dataflow | None = None) -> dict[str, Any]:
    g = c.graph
    tail = [n for n in g.nodes if n.name in host_tail_nodes(g)]
    layers = [layer_row(g, n) for n in g.nodes if n.op not in HOST_BOUNDARY_OPS and n not in tail]
    return {
        "model": {"name": g.name, "source": g.meta.get("source"), "format": g.meta.get("format"),
                  "input": {"name": g.inputs[0], "shape": list(c.source.tensor(g.inputs[0]).shape)},
                  "outputs": list(c.source.outputs)},
        "config": c.config.to_dict(),
        "layers": layers,
        "totals": {"layers": len(layers), "macs": sum(r["macs"] for r in layers),
                   "weight_bits": sum(r["weight_count"] * (r["weight_bits"] or 0) for r in layers)},
        "host_tail": [{"name": n.name, "op": n.op} for n in tail],
        "bn_floored": [dict(note.data, node=note.node) for note in g.notes if note.kind == "bn_floor"],
        "notes": [{"kind": n.kind, "node": n.node, "message": n.message} for n in g.notes
                  if n.kind != "bn_floor"],
        "errors": measured_errors(c),
        "hardware": hardware_summary(df, layers, c.config.hw) if df is not None else None,
        "profile": profile(c, layers),
    }


def hardware_summary(df: Dataflow, rows: list[dict[str, Any]], hw: HwConfig) -> dict[str, Any]:
    """Cycle model (see hlsgen/hw/dataflow.py), folding and resource estimates (hlsgen/hw/fold.py,
    resources.py); also adds pe/simd/cycles/resources to the layer rows."""
    by_node = {lay.node: lay for lay in df.layers if lay.kind != Kind.CONVERT}
    for row in rows:
        lay = by_node.get(row["name"])
        if lay is not None:
            est = layer_resources(lay, df.streams[lay.inputs[0]], df.streams[lay.output], family_of(hw.part))
            row.update(pe=lay.pe, simd=lay.simd, cycles=lay.cycles, resources=est.as_dict(),
                       mac_bound_cycles=-(-lay.macs // (lay.pe * lay.simd)) if lay.macs else None)
    multipliers = sum(lay.pe * lay.simd for lay in df.layers if lay.macs)
    macs = sum(lay.macs for lay in df.layers)
    f = df.folding
    return {"top": df.top, "part": hw.part, "clock_ns": hw.hls.clock_ns, "cycles_per_frame": df.cycles_per_frame,
            "frames_per_second": round(1e9 / (hw.hls.clock_ns * df.cycles_per_frame), 1),
            "bottleneck": df.bottleneck,
            "multipliers": multipliers, "mac_bound_cycles": -(-macs // multipliers) if multipliers else 0,
            "input_beats_per_frame": df.input.beats,
            "ports": ports_summary(df, hw),
            "converters": [{"name": lay.name, "from": lay.inputs[0], "to": lay.output,
                            "step": str(p.step.kind), "cycles": lay.cycles,
                            "resources": layer_resources(lay, df.streams[lay.inputs[0]], df.streams[lay.output],
                                                         family_of(hw.part)).as_dict()}
                           for lay in df.layers if isinstance(p := lay.params, ConvertParams)],
            "capped": [{"node": lay.node, "key": key, "asked": asked, "used": used} for lay in df.layers
                       for key, asked, used in capped_defaults(lay, hw)],
            "folding": None if f is None else {"goal": f.goal, "fits": f.fits, "optimal": f.optimal,
                                               "budget": f.budget.as_dict(), "estimate": f.total.as_dict(),
                                               "tradeoffs": [{"target_fps": t.fps, "cycles_per_frame": t.cycles,
                                                              **t.total.as_dict()} for t in f.tradeoffs]},
            "fifo_depths": {f"{s}->{lay}": d for (s, lay), d in sorted(df.fifo_depth.items())},
            "fifos": fifo_widths(df),
            "dataflow": {"input": df.input.name, "outputs": [s.name for s in df.outputs],
                         "layers": [{"name": lay.name, "node": lay.node, "kind": lay.kind, "inputs": list(lay.inputs),
                                     "output": lay.output, "pe": lay.pe, "simd": lay.simd, "cycles": lay.cycles}
                                    for lay in df.layers]}}


def fifo_widths(df: Dataflow) -> list[dict[str, Any]]:
    """Each stream edge's FIFO: depth in beats, beat and pixel widths, its bits, and the bits the same
    FIFO would hold at one pixel a beat (ceil(depth / beats a pixel) pixels): what folding saves."""
    rows = []
    for (name, reader), depth in sorted(df.fifo_depth.items()):
        s = df.streams[name]
        pixels = -(-depth // s.folds)
        rows.append({"stream": name, "reader": reader, "depth_beats": depth, "beats_per_pixel": s.folds,
                     "beat_bits": s.beat_bits, "pixel_bits": s.channels * s.bits, "bits": depth * s.beat_bits,
                     "bits_at_one_pixel_a_beat": pixels * s.channels * s.bits})
    return rows


def ports_summary(df: Dataflow, hw: HwConfig) -> dict[str, Any]:
    """The ports at hw.io_bits (docs/streams.md): beats per frame and TDATA of each, and whether one
    is the bottleneck (its converter the slowest layer, or its beats above every layer's cycles)."""
    ports = [("in", df.input)] + [(f"out_{k}" if len(df.outputs) > 1 else "out", s) for k, s in enumerate(df.outputs)]
    slowest = max(lay.cycles for lay in df.layers)
    at_port = {lay.name for lay in df.layers if lay.kind == Kind.CONVERT and
               (lay.inputs[0] == df.input.name or lay.output in {s.name for s in df.outputs})}
    bound = df.bottleneck in at_port and next(lay for lay in df.layers if lay.name == df.bottleneck).cycles == slowest
    return {"io_bits": hw.io_bits, "bottleneck": bool(bound or df.input.beats > slowest),
            "ports": [{"port": p, "stream": s.name, "beats_per_frame": s.beats, "tdata_bits": s.beat_bits,
                       "codes_per_beat": s.fold * s.pack} for p, s in ports]}


def layer_row(g: Graph, n: Node) -> dict[str, Any]:
    x, y = g.tensor(n.inputs[0]), g.tensor(n.outputs[0])
    w = g.tensor(n.inputs[1]) if n.op in MVU_OPS else None
    row: dict[str, Any] = {
        "name": n.name, "op": n.op, "epilogue": _epilogue(n),
        "inputs": [list(g.tensor(i).shape) for i in n.inputs if not g.is_const(i)],
        "output": list(y.shape), "macs": node_macs(g, n),
        "weight_bits": w.qtype.int.bits if w is not None and w.qtype else None,
        "weight_count": int(np.prod(w.shape)) if w is not None else 0,
        "act_in": _qdesc(x), "act_out": _qdesc(y), "acc_bits": n.attr("acc_bits"),
        "reproduces": list(n.attr("reproduces") or ()),  # the source quantizers its epilogue reproduces
    }
    if w is not None and w.qtype is not None:
        s = np.abs(w.qtype.scale)
        row["weight_scale"] = {"min": float(s.min()), "max": float(s.max())}
    return row


def _qdesc(t: Any) -> dict[str, Any] | None:
    q = t.qtype
    if q is None or q.per_channel:
        return None
    return {"type": str(q.int), "scale": float(q.scale), "zero_point": int(q.zero_point)}


def _epilogue(n: Node) -> str:
    parts = ["two-step (model's intermediate quantizer)"] if two_step(n) else []
    if n.op == Op.QCONV and len(n.inputs) > 3:
        parts.append("residual add")
    act = n.attr("act")
    if act and act != "none":
        parts.append(str(act))
    if n.op in REQUANT_OPS:
        parts.append("requant")
    return " + ".join(parts)


def measured_errors(c: Compilation) -> dict[str, Any]:
    """Fold error (float source vs folded/fused float graph) and end-to-end golden error."""
    ref = float_reference(c, c.sample)
    out: dict[str, Any] = {"sample": f"{len(c.sample)} "
                           + ("synthetic N(0,1) inputs" if c.sample_is_synthetic else "calibration inputs")}
    if any(n.op in QDQ_OPS for n in c.source.nodes):
        out["fold_relative"] = None
        out["fold_note"] = "quantized source: BatchNorm absorbed into requant, no float fold to measure"
    else:
        fused = float_reference(c, c.sample, c.float_graph)
        out["fold_relative"] = max(_relative(a, b) for a, b in zip(ref, fused, strict=True))
    golden = run_golden(c, c.sample)
    out["golden_vs_float_relative"] = [_relative(r, q) for r, q in zip(ref, golden, strict=True)]
    out["argmax_agreement"] = [float(np.mean(np.argmax(r.reshape(len(r), -1), 1) ==
                                             np.argmax(q.reshape(len(q), -1), 1)))
                               for r, q in zip(ref, golden, strict=True)]
    return out


def _relative(ref: np.ndarray, other: np.ndarray) -> float:
    scale = float(np.max(np.abs(ref)))
    return float(np.max(np.abs(ref - other)) / scale) if scale > 0 else float(np.max(np.abs(other)))


# ---- profile: quantization histograms and per-layer error (report.html) ----------------------------
HIST_BINS = 48
PROFILE_SAMPLES = 64  # calibration inputs the activation histograms are drawn from


def profile(c: Compilation, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per hardware layer, counts per bin (never raw samples): the weights in LSB of their channel's scale
    against the integer range, the activations the quantizer sees against the chosen range, and the
    golden model's dequantized output against the float model's (max and mean |error| in output LSB).
    The float model is the folded float graph for a float source; for a quantized source (QDQ, QONNX)
    the source itself, at the tensors the layer stands for (before its quantizer; after its dequantizer)."""
    quantized = c.graph.meta.get("format") in QUANTIZED_FORMATS
    ref = c.source if quantized else _calibrated_graph(c)
    data = c.calibration[:PROFILE_SAMPLES] if c.calibration is not None else c.sample
    names = {row["name"]: c.graph.node(row["name"]).outputs[0] for row in rows}
    pairs = {node: _reference_tensors(c.graph, ref, t, quantized) for node, t in names.items()}
    wanted = {name for pair in pairs.values() for name in pair if name is not None}
    floats = run_graph(ref, as_batch(data, ref), keep=wanted)
    n = len(c.sample)  # the error sample is the first n of `data` (api._sample): no second run
    prefix = len(data) >= n and np.array_equal(np.asarray(data[:n]), np.asarray(c.sample))
    on_sample = ({k: v[:n] for k, v in floats.items()} if prefix
                 else run_graph(ref, as_batch(c.sample, ref), keep=wanted))
    golden = intermediates(c, c.sample)
    layers = {}
    for node, tensor in names.items():
        q, (seen, compared) = c.graph.tensor(tensor).qtype, pairs[node]
        layers[node] = {"tensor": tensor, "weights": _weight_hist(c.graph, ref, node),
                        "activation": _act_hist(floats.get(seen or ""), q),
                        "error": _layer_error(on_sample.get(compared or ""), golden.get(tensor), q)}
    src = "calibration inputs" if c.calibration is not None else (
        "synthetic N(0,1) inputs" if c.sample_is_synthetic else "sample inputs")
    g_in = c.graph.inputs[0]
    return {"samples": f"{len(data)} {src}", "error_samples": len(c.sample),
            "reference": "the source model (its own quantizers)" if quantized else "the folded float graph",
            "input": {"tensor": g_in, "activation": _act_hist(data, c.graph.tensor(g_in).qtype)},
            "layers": layers}


QUANTIZED_FORMATS = ("onnx-qdq", "qonnx")
_QUANTIZERS = ("QuantizeLinear", "Quant", "BipolarQuant", "Trunc")


def _reference_tensors(g: Graph, ref: Graph, tensor: str, quantized: bool) -> tuple[str | None, str | None]:
    """The float tensors of `ref` a layer output stands for: what its quantizer sees, and the float
    value to compare the dequantized golden output with."""
    if not quantized:
        return (tensor, tensor) if tensor in ref.tensors else (None, None)
    seen = dequantized = None
    for alias in g.tensor(tensor).aliases:
        p = ref.producer(alias) if alias in ref.tensors else None
        if p is not None and p.op in _QUANTIZERS and seen is None:
            seen = p.inputs[0]
        if p is not None and not ref.tensor(alias).integer and dequantized is None:
            dequantized = alias  # a DequantizeLinear output, or a QONNX Quant's (real-valued) output
    compared = dequantized
    return seen, compared or seen


def _calibrated_graph(c: Compilation) -> Graph:
    """The float graph with every hardware tensor's quantization: the stage after `calibrate`."""
    return next((g for name, g in c.stages if name == "calibrate"), c.float_graph)


def _hist(v: np.ndarray, lo: float, hi: float) -> list[int]:
    counts, _ = np.histogram(v, bins=HIST_BINS, range=(lo, hi))
    return [int(k) for k in counts]


def _weight_hist(g: Graph, fg: Graph, node: str) -> dict[str, Any] | None:
    n = g.node(node)
    fn = next((m for m in fg.nodes if m.name == node), None)
    if n.op not in MVU_OPS or fn is None or len(fn.inputs) < 2 or fn.inputs[1] not in fg.tensors:
        return None
    w, wf = g.tensor(n.inputs[1]), fg.tensor(fn.inputs[1])
    q = w.qtype
    if q is None or w.data is None:
        return None
    if wf.integer or wf.data is None or np.shape(wf.data) != np.shape(w.data):
        return _code_hist(np.asarray(w.data), q)
    scale = np.abs(np.asarray(q.scale, dtype=np.float64))
    if q.axis is not None:
        shape = [1] * np.ndim(wf.data)
        shape[q.axis] = -1
        scale = scale.reshape(shape)
    lsb = np.asarray(wf.data, dtype=np.float64) / scale  # the float weights in LSB of their channel
    qlo, qhi = q.int.lo, q.int.hi
    lo, hi = min(float(lsb.min()), qlo) - 0.5, max(float(lsb.max()), qhi) + 0.5
    clipped = float(np.mean((lsb < qlo - 0.5) | (lsb > qhi + 0.5)))
    return {"unit": "LSB", "lo": lo, "hi": hi, "counts": _hist(lsb, lo, hi), "range": [qlo, qhi],
            "clipped": clipped, "type": str(q.int), "per_channel": q.axis is not None,
            "scale_min": float(scale.min()), "scale_max": float(scale.max())}


def _code_hist(codes: np.ndarray, q: Any) -> dict[str, Any]:
    """The model's own integer weights (a quantized source): codes against the integer range."""
    qlo, qhi = q.int.lo, q.int.hi
    return {"unit": "code", "lo": qlo - 0.5, "hi": qhi + 0.5, "counts": _hist(codes, qlo - 0.5, qhi + 0.5),
            "range": [qlo, qhi], "clipped": 0.0, "type": str(q.int), "per_channel": q.axis is not None,
            "scale_min": float(np.min(np.abs(q.scale))), "scale_max": float(np.max(np.abs(q.scale)))}


def _act_hist(v: np.ndarray | None, q: Any) -> dict[str, Any] | None:
    if v is None or q is None or q.per_channel or not np.issubdtype(np.asarray(v).dtype, np.floating):
        return None
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    s, zp = float(q.scale), int(q.zero_point)
    rlo, rhi = s * (q.int.lo - zp), s * (q.int.hi - zp)
    lo, hi = min(float(v.min()), rlo), max(float(v.max()), rhi)
    if hi <= lo:
        hi = lo + s
    # a sign quantizer (bipolar) maps every value to ±1: nothing is clipped, there is no range to leave
    below, above = (None, None) if q.int.bipolar else (float(np.mean(v < rlo - s / 2)), float(np.mean(v > rhi + s / 2)))
    return {"unit": "value", "lo": lo, "hi": hi, "counts": _hist(v, lo, hi), "range": [rlo, rhi],
            "clipped": None if below is None or above is None else below + above, "clipped_below": below,
            "clipped_above": above, "type": str(q.int), "scale": s, "zero_point": zp,
            "data_min": float(v.min()), "data_max": float(v.max())}


def _layer_error(ref: np.ndarray | None, codes: np.ndarray | None, q: Any) -> dict[str, Any] | None:
    """|golden (dequantized) - float graph| of one layer output, in LSB of its scale: over all values,
    and apart for the values whose reference lies inside the quantizer's range (rounding error, at
    most 0.5 LSB there plus what earlier layers carried in) and those beyond it by more than half an
    LSB (saturation: the range chosen by calibration, or the model's own quantizer, clips them)."""
    if ref is None or codes is None or q is None or q.per_channel or np.shape(ref) != np.shape(codes):
        return None
    s, zp = float(q.scale), int(q.zero_point)
    real = np.asarray(ref, np.float64).reshape(-1)
    err = np.abs((np.asarray(codes, dtype=np.float64).reshape(-1) - zp) * s - real) / s
    saturated = (real < s * (q.int.lo - zp - 0.5)) | (real > s * (q.int.hi - zp + 0.5))
    rounding, clipped = err[~saturated], err[saturated]
    peak = float(np.max(np.abs(real))) if real.size else 0.0
    return {"max_lsb": float(err.max(initial=0.0)), "mean_lsb": float(err.mean()) if err.size else 0.0,
            "relative": float(err.max(initial=0.0) * s / peak) if peak > 0 else None,
            "rounding_max_lsb": float(rounding.max(initial=0.0)),
            "rounding_mean_lsb": float(rounding.mean()) if rounding.size else 0.0,
            "saturated_fraction": float(saturated.mean()) if real.size else 0.0,
            "saturation_max_lsb": float(clipped.max(initial=0.0))}


# ---- Markdown ------------------------------------------------------------------------------------
def render_markdown(r: dict[str, Any]) -> str:
    m, e = r["model"], r["errors"]
    lines = [f"# hlsgen report: {_md(m['name'])}", "",
             f"Source `{_md(m['source'])}` ({m['format']}), input `{_md(m['input']['name'])}` {m['input']['shape']}.",
             f"{r['totals']['layers']} hardware layers, {r['totals']['macs']:,} MACs per image, "
             f"{r['totals']['weight_bits'] // 8:,} bytes of weights.", "",
             "| layer | op | epilogue | in | out | MACs | w bits | act in → out | acc bits |",
             "|---|---|---|---|---|---:|---:|---|---:|"]
    for row in r["layers"]:
        lines.append(f"| {_md(row['name'])} | {row['op']} | {row['epilogue']} | {_shapes(row['inputs'])} | "
                     f"{_shapes([row['output']])} | {row['macs']:,} | {row['weight_bits'] or ''} | "
                     f"{_act(row['act_in'])} → {_act(row['act_out'])} | {row['acc_bits'] or ''} |")
    lines += _roundings(r)
    lines += ["", "## Host side", "",
              "Input quantization (float → codes) and output dequantization run on the host."]
    lines += [f"- tail op `{_md(t['name'])}` ({t['op']}) runs on the host in float" for t in r["host_tail"]]
    lines += ["", "## BatchNorm variance floor", ""]
    lines += [f"- `{_md(f['node'])}` channel {f['channel']}: variance {f['variance']:.3g} raised to {f['floor']:g}"
              for f in r["bn_floored"]] or ["No channel was floored."]
    lines += ["", "## Measured error", "", f"On {e['sample']}:",
              "- fold error (float model vs folded/fused float graph, max relative): "
              f"{_num(e['fold_relative'])}"
              + (f" — {e['fold_note']}" if e.get("fold_note") else ""),
              f"- golden (integer, dequantized) vs float model, max relative per output: "
              f"{', '.join(_num(v) for v in e['golden_vs_float_relative'])}",
              f"- argmax agreement per output: {', '.join(f'{v:.0%}' for v in e['argmax_agreement'])}"]
    if r.get("hardware"):
        lines += _hardware_md(r)
    if r["notes"]:
        lines += ["", "## Notes", ""] + [f"- [{n['kind']}] `{_md(n['node'])}`: {_md(n['message'])}" for n in r["notes"]]
    return "\n".join(lines) + "\n"


def _hardware_md(r: dict[str, Any]) -> list[str]:
    hw = r["hardware"]
    f = hw.get("folding") or {}
    lines = ["", "## Hardware (cycle model and resource estimate)", "",
             f"Steady state {hw['cycles_per_frame']:,} cycles per frame (slowest layer `{_md(hw['bottleneck'])}`), "
             f"{hw['frames_per_second']:,} frames/s at an assumed {1e3 / hw['clock_ns']:g} MHz (`hlsgen pnr` "
             "measures a clock on ECP5; report.html then uses it); "
             f"{hw['multipliers']} multipliers would need {hw['mac_bound_cycles']:,} cycles at 100% use."]
    ports = hw.get("ports")
    if ports:
        desc = ", ".join(f"`{p['port']}` {p['beats_per_frame']:,} beats of {p['tdata_bits']} bits"
                         for p in ports["ports"])
        bound = "; **a port is the bottleneck**: a wider hw.io_bits would raise the frame rate"
        conv = f" {len(hw['converters'])} width converter(s) (docs/streams.md)." if hw.get("converters") else ""
        lines += ["", f"Ports (hw.io_bits {ports['io_bits']}): {desc}{bound if ports['bottleneck'] else ''}.{conv}"]
    if f:
        est, bud = f["estimate"], f["budget"]
        fit = "fits" if f["fits"] else "does NOT fit"
        lines += ["", f"Folded for `{_md(hw['part'])}` ({f['goal'].replace('_', ' ')}): the estimate {fit} the budget "
                  f"— DSP {est['dsp']:,.0f} / {bud['dsp']:,.0f}, LUT {est['lut']:,.0f} / {bud['lut']:,.0f}, "
                  f"BRAM36 {est['bram36']:,.1f} / {bud['bram36']:,.0f}"
                  + ("; provably the fastest design of the model." if f["optimal"] else ".")
                  + " Estimates come from the resource model (docs/hardware.md); `hlsgen synth` measures."]
    if f.get("tradeoffs"):
        lines += _tradeoff_md(f["tradeoffs"], hw["clock_ns"])
    if hw.get("capped"):
        lines += ["", capped_line(hw["capped"])]
    lines += ["", "| layer | PE | SIMD | cycles | MAC bound | DSP | LUT | FF | BRAM36 |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in r["layers"]:
        if "cycles" in row:
            e = row["resources"]
            lines.append(f"| {_md(row['name'])} | {row['pe']} | {row['simd']} | {row['cycles']:,} | "
                         f"{row['mac_bound_cycles'] or ''} | {e['dsp']:.0f} | {e['lut']:,.0f} | {e['ff']:,.0f} | "
                         f"{e['bram36']:g} |")
    return lines


def _tradeoff_md(rows: list[dict[str, Any]], clock_ns: float) -> list[str]:
    """The folding search's Pareto front: cycles against DSP/LUT/BRAM, with the setting that asks for each."""
    out = ["", "Trade-off: the cheapest design for each rate, from this design's down to the slowest folding "
           "(none of them is beaten in cycles and every resource by another); set `hw.target_fps` to choose one.", "",
           "| hw.target_fps | cycles/frame | frames/s | DSP | LUT | BRAM36 |", "|---:|---:|---:|---:|---:|---:|"]
    for t in rows:
        fps = 1e9 / (clock_ns * t["cycles_per_frame"])
        out.append(f"| {rate_text(t['target_fps'])} | {t['cycles_per_frame']:,} | {fps:,.0f} "
                   f"| {t['dsp']:,.0f} | {t['lut']:,.0f} | {t['bram36']:,.1f} |")
    return out


def capped_line(capped: list[dict[str, Any]]) -> str:
    """One sentence: the `hw.pe`/`hw.simd` defaults that layers capped at their channel counts."""
    keys = sorted({c["key"] for c in capped})
    asked = ", ".join(f"hw.{k} {next(c['asked'] for c in capped if c['key'] == k)}" for k in keys)
    shown = ", ".join(f"{c['node']} {c['key']} {c['used']}" for c in capped[:4])
    more = f" and {len(capped) - 4} more" if len(capped) > 4 else ""
    return (f"{asked} is more than the channels of {len({c['node'] for c in capped})} layer(s), which use all "
            f"their channels instead: {shown}{more}")


def _roundings(r: dict[str, Any]) -> list[str]:
    """Per Conv/Gemm layer, the source model's quantizers its epilogue reproduces, in order (two for a
    two-step epilogue, docs/numerics.md §8), and any rounding the opt-in approximation dropped."""
    rows = [row for row in r["layers"] if row.get("reproduces")]
    if not rows or r["model"]["format"] in ("onnx-float", "yaml"):  # a float source has no quantizers
        return []
    lines = ["", "## Roundings per layer", "",
             "The source model's quantizers each fused layer reproduces, in order (two: a two-step epilogue).", "",
             "| layer | reproduces |", "|---|---|"]
    lines += [f"| {_md(row['name'])} | {', '.join(_md(q) for q in row['reproduces'])} |" for row in rows]
    dropped = [n for n in r["notes"] if n["kind"] == "fused_rounding"]
    lines += [""] + [f"- approximation at `{_md(n['node'])}`: {_md(n['message'])}" for n in dropped] if dropped else []
    return lines


def _md(text: str) -> str:
    """A name or message inside a Markdown table or code span: one line, no `|` or backtick."""
    return shown(text).replace("|", "\\|").replace("`", "'")


def _shapes(shapes: list[list[int]]) -> str:
    return ", ".join("×".join(map(str, s)) for s in shapes)


def _act(q: dict[str, Any] | None) -> str:
    return f"{q['type']} s={q['scale']:.4g} zp={q['zero_point']}" if q else "-"


def _num(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3g}"

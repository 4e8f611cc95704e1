"""OUT/report.html: the compile report as one self-contained page (no script, no network, inline SVG).

Written by `hlsgen compile` (hlsgen.report.output, inside the folder that is swapped in atomically) and
rewritten by `refresh(OUT)` when later results land in OUT: OUT/csim/result.json, OUT/rtlsim/*/result.json,
OUT/synth/utilization.json, OUT/pnr/result.json (its Fmax then sets the frame rate and latency shown),
OUT/compare.json (`hlsgen compare ... --json OUT/compare.json`). Everything
it shows is read from report.json and those files, so `python -m hlsgen.report.html OUT` rebuilds it.

Sections: the dataflow graph (drawn here as SVG), per-layer cost bars, quantization histograms,
per-layer error, simulation and synthesis results, the tables of report.md, links to the files.
Same inputs, same bytes: the only dates are the csim/rtlsim run dates of their result files.
Every string from the model or a result file goes through `html.escape` (docs/trust.md).
"""

from __future__ import annotations

import datetime
import html
import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hlsgen.errors import HlsgenError
from hlsgen.ir.ops import LAYOUT_OPS  # exact on codes: no quantization or error of their own
from hlsgen.report import plots
from hlsgen.report.summary import render_markdown
from hlsgen.support.identifiers import shown
from hlsgen.support.outdir import is_hlsgen_output, write_file_atomically

NAME = "report.html"
FILES_PER_FOLDER = 25

CSS = """body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1180px;
padding:0 20px 40px;color:#1d1d1f}h1{font-size:24px;margin:18px 0 4px}h2{font-size:19px;margin:28px 0 8px;
border-bottom:1px solid #ddd;padding-bottom:3px}h3{font-size:15px;margin:18px 0 6px}nav a{margin-right:12px}
table{border-collapse:collapse;margin:8px 0;font-size:12.5px}td,th{border:1px solid #d5d5d5;padding:3px 7px;
text-align:left;vertical-align:top}th{background:#f3f3f3}td.n,th.n{text-align:right}code{font-size:12px;
background:#f4f4f4;padding:0 3px}.plot{overflow-x:auto;margin:8px 0}.plot svg{max-width:100%;height:auto}
.pass{color:#17702a;font-weight:600}.fail{color:#b00020;font-weight:600}.muted{color:#666}
.files li{margin:1px 0}.files ul{columns:3;font-size:12.5px}"""


# ---- entry points ----------------------------------------------------------------------------------------
def write_html(out: Path, report: dict[str, Any]) -> Path:
    """Write OUT/report.html for `report` (what report.json holds), atomically."""
    text = render(out, report).encode()
    path = Path(out) / NAME
    write_file_atomically(path, lambda f: f.write(text))
    return path


def refresh(out_dir: str | Path) -> Path | None:
    """Rewrite OUT/report.html from OUT/report.json and the results in OUT; None when OUT is not a folder
    `hlsgen compile` wrote (nothing is written then)."""
    out = Path(out_dir)
    if not is_hlsgen_output(out) or not (out / "report.json").is_file():
        return None
    return write_html(out, json.loads((out / "report.json").read_text()))


def refresh_or_warn(out_dir: str | Path) -> None:
    """`refresh` for the commands that add results to OUT (csim, rtlsim, synth): a failure to rewrite the
    report is a warning on stderr, never the command's failure."""
    try:
        refresh(out_dir)
    except (HlsgenError, OSError, ValueError, KeyError, TypeError) as e:
        print(f"hlsgen: warning: {Path(out_dir) / NAME} not refreshed: {e}", file=sys.stderr)


def render(out: Path, r: dict[str, Any]) -> str:
    results = Results.read(Path(out))
    sections = [_summary(r, results), _dataflow(r), _costs(r, results), _quantization(r), _errors(r, results),
                _runs(results), _tables(r, results), _files(Path(out))]
    title = f"hlsgen report: {_e(shown(r['model']['name']))}"
    nav = " ".join(f'<a href="#{k}">{v}</a>' for k, v in NAV)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{title}</h1>\n<nav>{nav}</nav>\n"
            + "\n".join(sections) + "\n</body>\n</html>\n")


NAV = (("dataflow", "dataflow"), ("costs", "cost per layer"), ("quantization", "quantization"),
       ("error", "error"), ("runs", "simulation &amp; synthesis"), ("tables", "tables"), ("files", "files"))


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


class Results:
    """What later commands wrote into OUT (each None when absent or unreadable)."""

    def __init__(self, csim: dict[str, Any] | None, rtlsim: dict[str, tuple[dict[str, Any], str]],
                 synth: dict[str, Any] | None, synth_md: str | None, compare: dict[str, Any] | None,
                 pnr: dict[str, Any] | None = None, pnr_md: str | None = None) -> None:
        self.csim, self.rtlsim, self.synth, self.synth_md, self.compare = csim, rtlsim, synth, synth_md, compare
        self.pnr, self.pnr_md = pnr, pnr_md

    @property
    def fmax_mhz(self) -> float | None:
        """The clock nextpnr measured (OUT/pnr/result.json), if `hlsgen pnr` ran."""
        f = self.pnr.get("fmax_mhz") if isinstance(self.pnr, dict) else None
        return float(f) if isinstance(f, int | float) and f > 0 else None

    @classmethod
    def read(cls, out: Path) -> Results:
        rtlsim = {}
        for f in sorted(out.glob("rtlsim/*/result.json")):
            data = _json(f)
            if isinstance(data, dict) and data:
                rtlsim[f.parent.name] = (data, _mtime(f))
        md, pnr_md = out / "synth" / "utilization.md", out / "pnr" / "pnr.md"
        return cls(_json(out / "csim" / "result.json"), rtlsim, _json(out / "synth" / "utilization.json"),
                   md.read_text(errors="replace") if md.is_file() else None, _json(out / "compare.json"),
                   _json(out / "pnr" / "result.json"), pnr_md.read_text(errors="replace") if pnr_md.is_file() else None)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text()) if path.is_file() else None
    except (OSError, ValueError):
        return None


def _mtime(path: Path) -> str:
    t = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M UTC")


# ---- summary ---------------------------------------------------------------------------------------------
def _summary(r: dict[str, Any], res: Results) -> str:
    m, t, hw = r["model"], r["totals"], r.get("hardware")
    lines = [f"Source <code>{_e(shown(str(m['source'])))}</code> ({_e(m['format'])}), input "
             f"<code>{_e(shown(m['input']['name']))}</code> {_e(m['input']['shape'])}; {t['layers']} hardware layers, "
             f"{t['macs']:,} MACs per image, {t['weight_bits'] // 8:,} bytes of weights."]
    if hw:
        flow = (hw.get("dataflow") or {}).get("layers", [])
        slowest = next((lay["node"] for lay in flow if lay["name"] == hw["bottleneck"]), hw["bottleneck"])
        lines.append(f"{hw['cycles_per_frame']:,} cycles per frame ({_rate(hw, res)}) on "
                     f"<code>{_e(hw['part'])}</code>; slowest layer <code>{_e(shown(slowest))}</code>.")
    return "<p>" + "<br>\n".join(lines) + "</p>"


def _rate(hw: dict[str, Any], res: Results) -> str:
    """Frames/s and the latency of a frame at the clock nextpnr measured, else at the assumed one."""
    cycles = hw["cycles_per_frame"]
    fmax = res.fmax_mhz
    if fmax is not None and isinstance(res.pnr, dict):
        return (f"{fmax * 1e6 / cycles:,.1f} frames/s, {cycles / fmax:,.2f} µs a frame at {fmax:.1f} MHz, "
                f"the Fmax nextpnr measured on {_e(res.pnr.get('part', ''))}")
    mhz = 1e3 / hw["clock_ns"]
    return (f"{hw['frames_per_second']:,} frames/s, {cycles / mhz:,.2f} µs a frame at an assumed {mhz:g} MHz; "
            "<code>hlsgen pnr OUT</code> measures one")


# ---- dataflow graph (hand-drawn SVG) ---------------------------------------------------------------------
BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN, LANE = 270, 58, 34, 40, 16, 90


def _dataflow(r: dict[str, Any]) -> str:
    nodes, edges = _graph(r)
    body = _draw(nodes, edges)
    note = ("Layers run concurrently; the slowest one (red) sets the frame period. Edge labels: FIFO depth "
            "in beats. Dashed boxes run on the host.")
    return f'<h2 id="dataflow">Dataflow</h2>\n<p class="muted">{note}</p>\n<div class="plot">{body}</div>'


def _graph(r: dict[str, Any]) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
    """Boxes (id, lines, depth, kind) and edges (from, to, label) of the hardware dataflow."""
    rows = {row["name"]: row for row in r["layers"]}
    hw = r.get("hardware") or {}
    flow = hw.get("dataflow")
    if flow is None:  # no hardware model: the layers in order
        flow = {"input": "in", "outputs": ["out"], "layers": [
            {"name": row["name"], "node": row["name"], "kind": row["op"], "inputs": [prev], "output": row["name"],
             "pe": None, "simd": None, "cycles": None}
            for prev, row in zip(["in"] + [x["name"] for x in r["layers"]], r["layers"], strict=False)]}
        flow["outputs"] = [r["layers"][-1]["name"]] if r["layers"] else ["in"]
    producer = {flow["input"]: "host_in"}
    depth = {"host_in": 0}
    nodes = [{"id": "host_in", "lines": ["host: quantize input", "float → integer codes"], "kind": "host", "depth": 0}]
    edges: list[tuple[str, str, str]] = []
    fifo = hw.get("fifo_depths", {})
    for lay in flow["layers"]:
        row = rows.get(lay["node"], {})
        d = 1 + max((depth.get(producer.get(s, "host_in"), 0) for s in lay["inputs"]), default=0)
        depth[lay["name"]] = d
        nodes.append({"id": lay["name"], "depth": d, "lines": _box_lines(lay, row),
                      "kind": "bottleneck" if lay["name"] == hw.get("bottleneck") else "layer"})
        for s in lay["inputs"]:
            f = fifo.get(f"{s}->{lay['name']}")
            edges.append((producer.get(s, "host_in"), lay["name"], f"FIFO {f}" if f is not None else ""))
        producer[lay["output"]] = lay["name"]
    last = 1 + max(depth.values())
    tail = ", ".join(f"{shown(t['name'])} ({t['op']})" for t in r["host_tail"]) or "none"
    nodes.append({"id": "host_out", "depth": last, "kind": "host",
                  "lines": ["host: dequantize output", f"tail ops (float): {tail}"]})
    edges += [(producer.get(s, "host_in"), "host_out", "") for s in flow["outputs"]]
    return nodes, edges


def _box_lines(lay: dict[str, Any], row: dict[str, Any]) -> list[str]:
    op = row.get("op", lay["kind"])
    epi = row.get("epilogue") or ""
    fold = f"PE {lay['pe']} × SIMD {lay['simd']}" if lay.get("pe") else ""
    cycles = f"{lay['cycles']:,} cycles/frame" if lay.get("cycles") is not None else ""
    return [shown(lay["node"]), f"{op}" + (f" · {epi}" if epi else ""), " · ".join(x for x in (fold, cycles) if x)]


def _draw(nodes: list[dict[str, Any]], edges: list[tuple[str, str, str]]) -> str:
    by_depth: dict[int, list[dict[str, Any]]] = {}
    for n in nodes:
        by_depth.setdefault(n["depth"], []).append(n)
    width = MARGIN * 2 + max(len(v) for v in by_depth.values()) * (BOX_W + GAP_X) + LANE
    height = MARGIN * 2 + (max(by_depth) + 1) * (BOX_H + GAP_Y) - GAP_Y
    pos = {}
    for d, row in by_depth.items():
        for i, n in enumerate(row):
            pos[n["id"]] = (MARGIN + i * (BOX_W + GAP_X), MARGIN + d * (BOX_H + GAP_Y))
    lane_x = width - LANE + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Verdana, sans-serif" font-size="11">',
             '<defs><marker id="df-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>']
    for k, (a, b, text) in enumerate(edges):
        parts.append(_edge(pos[a], pos[b], text, lane_x + (k % 6) * 8))
    parts += [_box(n, pos[n["id"]]) for n in nodes]
    return "\n".join(parts) + "\n</svg>"


def _edge(a: tuple[int, int], b: tuple[int, int], text: str, lane_x: int) -> str:
    x1, y1 = a[0] + BOX_W // 2, a[1] + BOX_H
    x2, y2 = b[0] + BOX_W // 2, b[1]
    if y2 - y1 <= GAP_Y:  # adjacent rows
        d = f"M{x1},{y1} C{x1},{y1 + GAP_Y // 2} {x2},{y2 - GAP_Y // 2} {x2},{y2}"
        lx, ly = (x1 + x2) // 2 + 6, (y1 + y2) // 2 + 4
    else:  # around the rows in between, through the lane on the right
        sx, sy, ex, ey = a[0] + BOX_W, a[1] + BOX_H // 2, b[0] + BOX_W, b[1] + BOX_H // 2
        d = f"M{sx},{sy} L{lane_x},{sy} L{lane_x},{ey} L{ex},{ey}"
        lx, ly = lane_x + 4, (sy + ey) // 2
    path = f'<path d="{d}" fill="none" stroke="#555" stroke-width="1.3" marker-end="url(#df-arrow)"/>'
    return path + (f'<text x="{lx}" y="{ly}" fill="#333" font-size="10">{_e(text)}</text>' if text else "")


def _box(n: dict[str, Any], xy: tuple[int, int]) -> str:
    x, y = xy
    style = {"host": 'fill="#f7f7f7" stroke="#888" stroke-dasharray="5,3"',
             "bottleneck": 'fill="#fdecea" stroke="#d62728" stroke-width="3"',
             "layer": 'fill="#eef4fb" stroke="#4c78a8" stroke-width="1.3"'}[n["kind"]]
    lines = [_clip(t, 44) for t in n["lines"] if t]
    if n["kind"] == "bottleneck":
        lines[0] = _clip(n["lines"][0], 30) + " — bottleneck"
    bold = [' font-weight="bold"'] + [""] * len(lines)
    texts = "".join(f'<text x="{x + 8}" y="{y + 16 + 15 * i}"{bold[i]}>{_e(t)}</text>' for i, t in enumerate(lines))
    return (f'<g><title>{_e(" | ".join(n["lines"]))}</title>'
            f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6" {style}/>{texts}</g>')


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# ---- per-layer costs -------------------------------------------------------------------------------------
def _costs(r: dict[str, Any], res: Results) -> str:
    rows = [row for row in r["layers"] if "cycles" in row]
    if not rows:
        return '<h2 id="costs">Cost per layer</h2>\n<p>No hardware model (hw disabled).</p>'
    hw = r["hardware"]
    synth = _synth_by_node(r, res.synth)
    names = [row["name"] for row in rows]

    def measured(key: str) -> list[float | None] | None:
        return [synth.get(n, {}).get(key) for n in names] if synth else None

    panels = [{"title": "cycles / frame", "estimate": [row["cycles"] for row in rows],
               "limit": hw["cycles_per_frame"], "limit_label": "frame period"},
              {"title": "MACs / frame", "estimate": [row["macs"] for row in rows]},
              {"title": "multipliers (PE × SIMD)", "estimate": [row["pe"] * row["simd"] if row["macs"] else 0
                                                                for row in rows]},
              {"title": "DSP", "estimate": [row["resources"]["dsp"] for row in rows],
               "synth": measured("dsp")},
              {"title": "LUT", "estimate": [row["resources"]["lut"] for row in rows], "synth": measured("lut")},
              {"title": "BRAM36", "estimate": [row["resources"]["bram36"] for row in rows],
               "synth": measured("bram36_eq")}]
    src = ("estimates of the resource model (docs/hardware.md) next to Yosys synthesis (OUT/synth/)" if synth
           else "estimates of the resource model (docs/hardware.md); `hlsgen synth OUT` adds synthesis figures")
    return (f'<h2 id="costs">Cost per layer</h2>\n<p class="muted">Bars: {_inline(src)}. Dashed line: the frame '
            f'period, {hw["cycles_per_frame"]:,} cycles.</p>\n'
            f'<div class="plot">{plots.layer_bars(names, panels)}</div>')


def _synth_by_node(r: dict[str, Any], u: dict[str, Any] | None) -> dict[str, dict[str, float]]:
    """Synthesis resources per IR node (utilization.json names the layers as the dataflow does)."""
    if not isinstance(u, dict) or not isinstance(u.get("layers"), list):
        return {}
    flow = ((r.get("hardware") or {}).get("dataflow") or {}).get("layers", [])
    node_of = {lay["name"]: lay["node"] for lay in flow}
    return {node_of.get(str(x.get("name")), str(x.get("name"))): x["resources"] for x in u["layers"]
            if isinstance(x, dict) and x.get("status") == "ok" and isinstance(x.get("resources"), dict)}


# ---- quantization ----------------------------------------------------------------------------------------
def _quantization(r: dict[str, Any]) -> str:
    p = r.get("profile")
    head = '<h2 id="quantization">Quantization</h2>\n'
    if not p:
        return head + "<p>No profile in report.json (compiled by an older hlsgen).</p>"
    rows = [(f"input {p['input']['tensor']}", None, p["input"]["activation"])]
    ops = {row["name"]: row["op"] for row in r["layers"]}
    profiled = [(name, p["layers"][name]) for name in ops if name in p["layers"]]  # in layer order
    rows += [(name, v["weights"], v["activation"]) for name, v in profiled
             if (v["weights"] or v["activation"]) and ops[name] not in LAYOUT_OPS]
    text = (f"Histograms of {_e(p['samples'])}, counts on a log scale; dashed lines: the range the integer type "
            "covers, shaded: clipped. Weights in LSB of their channel's scale (a quantized model's own codes). "
            "A range starting at 0 clips the negative values on purpose: it is a ReLU folded into the quantizer.")
    table = ["<table><tr><th>tensor</th><th>type</th><th class=n>scale</th><th class=n>zero point</th>"
             "<th>range</th><th>seen</th><th class=n>clipped</th></tr>"]
    for name, w, a in rows:
        if w:
            scale = f"{w['scale_min']:.4g} … {w['scale_max']:.4g}" if w["per_channel"] else f"{w['scale_min']:.4g}"
            table.append(_qrow(f"{name} weights", w, scale, "0", f"{w['range'][0]} … {w['range'][1]}",
                               f"{w['lo'] + 0.5:.4g} … {w['hi'] - 0.5:.4g}"))
        if a:
            table.append(_qrow(f"{name} output" if not name.startswith("input ") else name, a, f"{a['scale']:.4g}",
                               str(a["zero_point"]), f"{a['range'][0]:.4g} … {a['range'][1]:.4g}",
                               f"{a['data_min']:.4g} … {a['data_max']:.4g}"))
    table.append("</table>")
    return (head + f'<p class="muted">{text}</p>\n<div class="plot">{plots.histograms(rows)}</div>\n'
            + "\n".join(table) + "\n" + _floored(r))


def _qrow(name: str, h: dict[str, Any], scale: str, zp: str, rng: str, seen: str) -> str:
    relu = h.get("clipped_below") is not None and h["range"][0] >= 0  # below a range from 0: a ReLU, not a loss
    flagged = (h["clipped_above"] if relu else h["clipped"]) or 0
    cls = ' class="fail n"' if flagged > 0.01 else ' class="n"'
    return (f"<tr><td>{_e(shown(name))}</td><td>{_e(h['type'])}</td><td class=n>{_e(scale)}</td>"
            f"<td class=n>{_e(zp)}</td><td>{_e(rng)}</td><td>{_e(seen)}</td>"
            f"<td{cls}>{_clipped(h)}</td></tr>")


def _clipped(h: dict[str, Any]) -> str:
    """The clipped share, and for activations its split (below the range at 0 is a ReLU's work)."""
    total = plots.percent(h["clipped"])
    if h.get("clipped_below") is None or not h["clipped"]:
        return total
    return f"{total} ({plots.percent(h['clipped_below'])} below, {plots.percent(h['clipped_above'])} above)"


def _floored(r: dict[str, Any]) -> str:
    head = "<h3>BatchNorm channels floored</h3>\n"
    if not r["bn_floored"]:
        return head + "<p>No channel was floored.</p>"
    cells = "".join(f"<tr><td>{_e(shown(f['node']))}</td><td class=n>{_e(f['channel'])}</td>"
                    f"<td class=n>{f['variance']:.3g}</td><td class=n>{f['floor']:g}</td></tr>"
                    for f in r["bn_floored"])
    return (head + "<table><tr><th>node</th><th class=n>channel</th><th class=n>variance</th>"
            f"<th class=n>raised to</th></tr>{cells}</table>")


# ---- error -----------------------------------------------------------------------------------------------
def _clipped_note(error: dict[str, Any] | None) -> str:
    share = (error or {}).get("saturated_fraction") or 0.0
    return f"{share:.2%} clipped" if share >= 5e-5 else ("<0.01% clipped" if share > 0 else "")



def _errors(r: dict[str, Any], res: Results) -> str:
    e, p = r["errors"], r.get("profile") or {}
    out = ['<h2 id="error">Error</h2>',
           f"<p>End to end on {_e(e['sample'])}: golden (integer, dequantized) vs float model, max relative per "
           f"output {_e(', '.join(f'{v:.3g}' for v in e['golden_vs_float_relative']))}; argmax agreement "
           f"{_e(', '.join(f'{v:.0%}' for v in e['argmax_agreement']))}.</p>"]
    layers = p.get("layers", {})
    ops = {row["name"]: row["op"] for row in r["layers"]}
    names = [n for n, op in ops.items() if (layers.get(n) or {}).get("error") and op not in LAYOUT_OPS]
    ort = _ort_rows(r, res)
    series: list[tuple[str, list[float | None]]] = []
    if names:
        errs = [layers[n]["error"] for n in names]
        series = [("max |golden − float|, values in range (rounding)", [e["rounding_max_lsb"] for e in errs]),
                  ("mean, values in range", [e["rounding_mean_lsb"] for e in errs]),
                  ("max, values beyond the range (saturation)", [e["saturation_max_lsb"] or None for e in errs])]
    if ort:
        by = {row["name"]: row for row in ort["layers"]}
        names = names or [row["name"] for row in ort["layers"]]
        series += [("onnxruntime, fed (worst)", [by.get(n, {}).get("max_fed") for n in names]),
                   ("onnxruntime, end to end (worst)", [by.get(n, {}).get("max_end_to_end") for n in names])]
    if series:
        ref = _e(p.get("reference", "the float model"))
        out.append(f'<p class="muted">Per layer on {p.get("error_samples", "")} inputs, in LSB of the layer\'s '
                   f"output scale: the golden model's dequantized output against {ref}. Values whose reference "
                   "lies within the layer's quantization range show the rounding error (0.5 LSB of the layer's own, "
                   "plus what earlier layers' rounding and clipping carried in); values beyond it are "
                   "clipped by the range (calibration's choice, or the model's own quantizer: by design, not a "
                   "fault of the hardware) and are shown apart, with the clipped share next to the layer's name."
                   + (" onnxruntime: |golden − onnxruntime| in LSB of the codes." if ort else "") + "</p>")
        notes = [_clipped_note(layers.get(n, {}).get("error")) for n in names]
        out.append(f'<div class="plot">{plots.error_bars(names, series, notes)}</div>')
    failed = r.get("onnxruntime")
    if ort is None and isinstance(failed, dict) and failed.get("error"):
        out.append(f"<p>onnxruntime agreement could not be computed: {_e(shown(str(failed['error'])))}</p>")
    else:
        out.append(_ort_table(ort))
    return "\n".join(out)


def _ort_rows(r: dict[str, Any], res: Results) -> dict[str, Any] | None:
    ort = r.get("onnxruntime")
    if isinstance(ort, dict) and isinstance(ort.get("layers"), list):
        return ort
    c = res.compare
    return c if isinstance(c, dict) and isinstance(c.get("layers"), list) else None


def _ort_table(ort: dict[str, Any] | None) -> str:
    if ort is None:
        return ("<p>onnxruntime agreement: not computed at compile (done there for QDQ models). Get it with "
                "<code>hlsgen compare MODEL [-c CONFIG] [--calib DATA] --json OUT/compare.json</code>, then "
                "<code>python -m hlsgen.report.html OUT</code>.</p>")
    verdict = "PASS" if ort.get("ok") else "FAIL"
    rows = "".join(f"<tr><td>{_e(shown(str(x.get('name'))))}</td><td>{_e(x.get('op'))}</td>"
                   f"<td class=n>{_e(x.get('max_fed'))}</td>"
                   f"<td class=n>{100 * float(x.get('mismatch_fed') or 0):.2f}%</td>"
                   f"<td class=n>{_e(x.get('max_end_to_end'))}</td></tr>" for x in ort["layers"])
    return (f"<h3>onnxruntime agreement</h3>\n<p><span class=\"{verdict.lower()}\">{verdict}</span> "
            f"(bound {_e(ort.get('bound_lsb'))} LSB fed): onnxruntime {_e(ort.get('onnxruntime'))} running "
            f"{_e(ort.get('reference'))} on {_e(ort.get('inputs'))} input(s), {_e(ort.get('input_source'))}.</p>\n"
            "<table><tr><th>layer</th><th>op</th><th class=n>worst fed (LSB)</th><th class=n>off by ≥1</th>"
            f"<th class=n>worst end to end</th></tr>{rows}</table>")


# ---- simulation and synthesis ----------------------------------------------------------------------------
def _runs(res: Results) -> str:
    out = ['<h2 id="runs">Simulation and synthesis</h2>', "<table><tr><th>run</th><th>date</th><th>result</th></tr>"]
    c = res.csim
    if isinstance(c, dict):
        ok = bool(c.get("passed"))
        what = "every output word bit-exact against the golden model" if ok else f"MISMATCH: {c.get('divergence')}"
        out.append(f"<tr><td>csim (g++)</td><td>{_e(c.get('date', ''))}</td><td>{_verdict(ok)} {_e(what)}; "
                   f"{_e(c.get('frames', '?'))} frames</td></tr>")
    else:
        out.append("<tr><td>csim</td><td></td><td class=muted>not run: <code>hlsgen csim OUT</code></td></tr>")
    for sim, (data, date) in res.rtlsim.items():
        for test, t in sorted(data.items()):
            if isinstance(t, dict):
                out.append(f"<tr><td>rtlsim ({_e(sim)}) {_e(test)}</td><td>{_e(date)}</td><td>{_rtl(t)}</td></tr>")
    if not res.rtlsim:
        out.append("<tr><td>rtlsim</td><td></td><td class=muted>not run: <code>hlsgen rtlsim OUT</code></td></tr>")
    out.append("</table>")
    out.append(_synth_summary(res.synth))
    out.append(_pnr_summary(res.pnr))
    return "\n".join(out)


def _verdict(ok: bool) -> str:
    return '<span class="pass">PASS</span>' if ok else '<span class="fail">FAIL</span>'


def _rtl(t: dict[str, Any]) -> str:
    text = (f"{'bit-exact' if t.get('passed') else 'MISMATCH'}, {t.get('beats')}/{t.get('expected_beats')} output "
            f"beats, {t.get('frames')} frames")
    cpf, model = t.get("cycles_per_frame"), t.get("model_cycles")
    if isinstance(cpf, int | float) and isinstance(model, int | float) and model and not t.get("stall"):
        text += f"; {cpf:,.0f} cycles/frame (model {model:,})"
    if t.get("stall"):
        text += f"; random stalls {t.get('stall')}"
    return f"{_verdict(bool(t.get('passed')))} {_e(text)}"


def _synth_summary(u: dict[str, Any] | None) -> str:
    if not isinstance(u, dict) or not isinstance(u.get("total"), dict):
        return "<p class=muted>Synthesis: not run (<code>hlsgen synth OUT</code>).</p>"
    tot, pct = u["total"], u.get("percent", {})
    items = ", ".join(f"{k.upper()} {_e(tot.get(k))} ({_e(pct.get(k, '?'))}%)"
                      for k in ("dsp", "lut", "ff", "bram36_eq") if k in tot)
    over = (f' <span class="fail">over budget: {_e(", ".join(map(str, u.get("over", []))))}</span>'
            if u.get("over") else "")
    return f"<p>Synthesis (Yosys {_e(u.get('yosys', ''))}, {_e(u.get('part', ''))}): {items}.{over}</p>"


def _pnr_summary(p: dict[str, Any] | None) -> str:
    if not isinstance(p, dict) or "fmax_mhz" not in p:
        return "<p class=muted>Place and route: not run (<code>hlsgen pnr OUT</code>, Lattice ECP5).</p>"
    fmax = p.get("fmax_mhz")
    shown_fmax = f"{fmax:.1f} MHz" if isinstance(fmax, int | float) else "no clocked path"
    verdict = _verdict(bool(p.get("met")))
    return (f"<p>Place and route (nextpnr-ecp5, {_e(p.get('part', ''))}, out of context): Fmax {_e(shown_fmax)} "
            f"against {_e(p.get('target_mhz'))} MHz {verdict}.</p>")


# ---- tables of report.md, links --------------------------------------------------------------------------
def _tables(r: dict[str, Any], res: Results) -> str:
    md = "\n".join(line for line in render_markdown(r).splitlines() if not line.startswith("# "))  # the title
    parts = ['<h2 id="tables">Tables (report.md)</h2>', markdown_html(md, level=1)]
    if res.synth_md:
        parts += ["<h3>Synthesis (synth/utilization.md)</h3>", markdown_html(res.synth_md, level=2)]
    if res.pnr_md:
        body = "\n".join(line for line in res.pnr_md.splitlines() if not line.startswith("# "))
        parts += ["<h3>Place and route (pnr/pnr.md)</h3>", markdown_html(body, level=2)]
    return "\n".join(parts)


def markdown_html(md: str, level: int = 1) -> str:
    """The Markdown subset report.md uses (headings, tables, lists, paragraphs, `code`, **bold**) as
    HTML; every character of the text is escaped first. Headings move down by `level`."""
    out: list[str] = []
    table: list[list[str]] = []
    for line in [*md.splitlines(), ""]:
        if line.startswith("|"):
            table.append([c.strip() for c in _split_row(line)])
            continue
        if table:
            out.append(_table_html(table))
            table = []
        if line.startswith("#"):
            n = min(6, len(line) - len(line.lstrip("#")) + level)
            out.append(f"<h{n}>{_inline(line.lstrip('#').strip())}</h{n}>")
        elif line.startswith("- "):
            out.append(f"<ul><li>{_inline(line[2:])}</li></ul>")
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
    return "\n".join(out).replace("</ul>\n<ul>", "\n")


def _split_row(line: str) -> list[str]:
    cells, cur, i = [], "", 1
    body = line.strip()
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cur, i = cur + "|", i + 2
            continue
        if ch == "|":
            cells.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    return cells


def _table_html(rows: list[list[str]]) -> str:
    head, rest = rows[0], rows[1:]
    align = ["n" if c.endswith(":") else "" for c in rest[0]] if rest and set("".join(rest[0])) <= set("-:") else []
    body = rest[1:] if align else rest
    cls = [f' class="{a}"' if a else "" for a in align] + [""] * len(head)
    lines = ["<table><tr>" + "".join(f"<th{cls[i]}>{_inline(c)}</th>" for i, c in enumerate(head)) + "</tr>"]
    lines += ["<tr>" + "".join(f"<td{cls[i]}>{_inline(c)}</td>" for i, c in enumerate(row)) + "</tr>" for row in body]
    return "\n".join(lines) + "</table>"


def _inline(text: str) -> str:
    """`code` and **bold** of escaped text."""
    parts = _e(text).split("`")
    s = "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))
    bold = s.split("**")
    return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(bold)) if len(bold) % 2 else s


def _files(out: Path) -> str:
    """Relative links to the files in OUT, by folder (the first FILES_PER_FOLDER of each)."""
    groups: dict[str, list[str]] = {}
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out)
        if p.is_file() and not any(part.startswith(".") for part in rel.parts) and rel.as_posix() != NAME:
            groups.setdefault(rel.parent.as_posix(), []).append(rel.as_posix())
    html_parts = ['<h2 id="files">Generated files</h2>', '<div class="files">']
    for folder, files in groups.items():
        links = "".join(f'<li><a href="{_e(quote(f))}">{_e(f)}</a></li>' for f in files[:FILES_PER_FOLDER])
        extra = len(files) - FILES_PER_FOLDER
        more = f"<li class=muted>… and {extra} more</li>" if extra > 0 else ""
        html_parts.append(f"<h3>{_e(folder if folder != '.' else 'OUT')}/</h3><ul>{links}{more}</ul>")
    html_parts.append("</div>")
    return "\n".join(html_parts)


def main(argv: list[str] | None = None) -> int:
    """`python -m hlsgen.report.html OUT`: rebuild OUT/report.html from what OUT holds."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m hlsgen.report.html OUT", file=sys.stderr)
        return 2
    path = refresh(args[0])
    if path is None:
        print(f"hlsgen: error: {args[0]}: not a folder written by `hlsgen compile`", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

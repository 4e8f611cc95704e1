"""MLPerf Tiny reference networks (ResNet-8, DS-CNN, FC autoencoder) through hlsgen, measured in one run.

Builds the three int8 QDQ models of benchmarks/mlperf_models.py, compiles each with the DEFAULT
settings (no config file, no `hw` section: the part and folding are hlsgen's defaults), then per model:
  rtlsim        `hlsgen rtlsim OUT`: cycles per frame in steady state from back-to-back frames (the
                no-stall test of OUT/rtlsim/verilator/result.json), first-frame latency, bit-exactness
  cycle model   report.json `hardware`: cycles per frame, multipliers (sum of PE*SIMD), MAC bound
  synth         `hlsgen synth OUT` (Yosys): DSP, LUT, FF, BRAM36 -- 'not available' when this hlsgen
                has no synth command
  pnr           with --part naming a Lattice ECP5 part (compiled for it, so folded to its budget) or
                --pnr: `hlsgen pnr OUT` (synth_ecp5 + nextpnr-ecp5, out of context): the measured Fmax,
                the microseconds per frame at that clock, the critical path by layer
and prints one table with the published ResNet-8 anchors and the targets of issue 8:
  ms/frame      cycles per frame at 100 MHz (the frame interval; the anchors are per-inference figures)
  MAC bound     MACs / multipliers: the cycles per frame with every multiplier busy every cycle
  MAC/mult/cyc  MACs / (cycles per frame * multipliers); MAC/DSP/cyc the same per Yosys DSP
Anchors: hls4ml MLPerf Tiny ResNet-8 on PYNQ-Z2 (XC7Z020, 100 MHz) 7.64 ms; fpgaConvNet 0.147 ms with
525 DSPs at 187 MHz; the physical limit at 100 MHz on 220 DSPs with 2 MACs/DSP/cycle (12.5 M / 440).
Writes the table as JSON to OUT/mlperf_tiny.json.
Run: make bench-mlperf   (or .venv/bin/python benchmarks/mlperf_tiny.py [--only resnet8] [--skip-synth]
     [--skip-rtlsim] [--part LFE5U-85F-6BG381C] [--pnr] [--out build/mlperf_tiny]); the Verilator builds take
     minutes (cached afterwards), an ECP5 place and route of ResNet-8 about 15 minutes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from mlperf_models import MODELS, calib_path  # noqa: E402

CLOCK_MHZ = 100.0
TARGETS = {"cycles": {"resnet8": 40_000, "dscnn": 10_000, "fc_ae": 1_000},
           "dsp": 220, "lut": 42_560, "bram36": 140}
RN8_MACS = 12_501_632  # the ResNet-8 of mlperf_models (the MLPerf Tiny reference: 12.5 M MACs)
ANCHORS = [  # ResNet-8 only: (column, ms per inference, DSPs, clock MHz, note)
    ("hls4ml RN8", 7.64, None, 100.0, "hls4ml, MLPerf Tiny v0.7 ResNet-8, PYNQ-Z2 (XC7Z020) at 100 MHz"),
    ("fpgaConvNet RN8", 0.147, 525, 187.0, "fpgaConvNet, ResNet-8, 525 DSPs at 187 MHz"),
    ("limit RN8", RN8_MACS / 440 / CLOCK_MHZ / 1e3, 220, 100.0,
     "physical limit: 220 DSPs x 2 MACs/cycle at 100 MHz = 12.5 M MACs / 440"),
]


def hlsgen_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("hlsgen")
    return [str(exe)] if exe.exists() else ["hlsgen"]


def run(cmd: list[str], log: Path) -> tuple[int, str, float]:
    """Run a command; its stdout+stderr go to `log` and are returned with the exit code and seconds."""
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    text = p.stdout + p.stderr
    log.write_text(f"$ {' '.join(cmd)}\n{text}")
    return p.returncode, text, time.monotonic() - start


def params_of(model_path: Path) -> int:
    """Weights and biases of the QDQ model: integer initializers read by a DequantizeLinear."""
    m = onnx.load(model_path)
    inits = {t.name: t for t in m.graph.initializer}
    count = 0
    for n in m.graph.node:
        if n.op_type == "DequantizeLinear" and n.input[0] in inits:
            arr = numpy_helper.to_array(inits[n.input[0]])
            if arr.dtype in (np.int8, np.int32) and arr.size > 1:
                count += arr.size
    return count


def synth_available() -> bool:
    p = subprocess.run([*hlsgen_cmd(), "--help"], capture_output=True, text=True)
    return re.search(r"\bsynth\b", p.stdout) is not None


def _find_resources(obj: Any) -> dict[str, Any] | None:
    """The first mapping (depth-first) that has DSP and LUT counts, keys compared case-insensitively."""
    if isinstance(obj, dict):
        low = {str(k).lower(): v for k, v in obj.items()}
        if "dsp" in low and "lut" in low and all(isinstance(low[k], int | float) for k in ("dsp", "lut")):
            return low
        for v in obj.values():
            found = _find_resources(v)
            if found:
                return found
    if isinstance(obj, list):
        for v in obj:
            found = _find_resources(v)
            if found:
                return found
    return None


def synth(out: Path, logs: Path) -> dict[str, Any]:
    """`hlsgen synth OUT`: the totals of OUT/synth/utilization.json (BRAM36 counted as BRAM36 + BRAM18/2),
    or, should that file not be there, the first DSP/LUT mapping in any new JSON file under OUT/synth."""
    before = time.time()
    rc, text, secs = run([*hlsgen_cmd(), "synth", str(out)], logs / "synth.log")
    res: dict[str, Any] = {"status": "ok" if rc == 0 else f"exit {rc}", "seconds": round(secs, 1),
                           "log": str(logs / "synth.log")}
    util = out / "synth" / "utilization.json"
    if util.exists() and util.stat().st_mtime >= before - 1:
        u = json.loads(util.read_text())
        total = u.get("total", {})
        res.update(file=str(util), part=u.get("part"), failed_runs=u.get("failed", []), over=u.get("over", []),
                   dsp=total.get("dsp"), lut=total.get("lut"), lutram=total.get("lutram"), ff=total.get("ff"),
                   bram18=total.get("bram18"), bram36=total.get("bram36_eq", total.get("bram36")),
                   wall_seconds=u.get("wall_seconds"))
    else:
        files = [f for f in (out / "synth").rglob("*.json") if f.stat().st_mtime >= before - 1] \
            if (out / "synth").is_dir() else []
        for f in files:
            found = _find_resources(json.loads(f.read_text()))
            if found:
                res["file"] = str(f)
                res.update({k: found[k] for k in ("dsp", "lut", "ff", "bram36", "lutram") if k in found})
                break
    if rc != 0:
        res["error"] = (text.strip().splitlines() or [""])[-1][:300]
    return res


def rtlsim(out: Path, logs: Path) -> dict[str, Any]:
    rc, text, secs = run([*hlsgen_cmd(), "rtlsim", str(out)], logs / "rtlsim.log")
    result_file = out / "rtlsim" / "verilator" / "result.json"
    res: dict[str, Any] = {"status": "ok" if rc == 0 else f"exit {rc}", "seconds": round(secs, 1),
                           "log": str(logs / "rtlsim.log")}
    if not result_file.exists():
        res["error"] = (text.strip().splitlines() or [""])[-1][:300]
        return res
    results = json.loads(result_file.read_text())
    steady = next((r for r in results.values() if not r["stall"]), None)
    res["bit_exact"] = bool(results) and all(r["passed"] for r in results.values())
    if steady is not None:
        res.update(cycles_per_frame=steady["cycles_per_frame"], latency_cycles=steady["latency"],
                   frames=steady["frames"], frame_end_cycles=steady["frame_end_cycles"])
    m = re.search(r"(cached build|build ([\d.]+) s), simulation ([\d.]+) s", text)
    if m:
        res["build_s"] = 0.0 if m.group(2) is None else float(m.group(2))
        res["sim_s"] = float(m.group(3))
    return res


def pnr(out: Path, logs: Path) -> dict[str, Any]:
    """`hlsgen pnr OUT`: OUT/pnr/result.json's Fmax, utilization and critical path."""
    rc, text, secs = run([*hlsgen_cmd(), "pnr", str(out)], logs / "pnr.log")
    res: dict[str, Any] = {"status": "ok" if rc == 0 else f"exit {rc}", "seconds": round(secs, 1),
                           "log": str(logs / "pnr.log")}
    result = out / "pnr" / "result.json"
    if rc == 0 and result.exists():
        r = json.loads(result.read_text())
        cp = r.get("critical_path") or {}
        res.update(part=r["part"], fmax_mhz=r["fmax_mhz"], target_mhz=r["target_mhz"], utilization=r["utilization"],
                   critical_ns=cp.get("delay_ns"), critical_from=cp.get("from"), critical_to=cp.get("to"))
    else:
        res["error"] = (text.strip().splitlines() or [""])[-1][:300]
    return res


def measure(name: str, models_dir: Path, out_root: Path, do_rtlsim: bool, do_synth: bool | None,
            part: str | None = None, do_pnr: bool = False) -> dict[str, Any]:
    model_path, _ = MODELS[name](models_dir)
    out, logs = out_root / name, out_root / "logs" / name
    logs.mkdir(parents=True, exist_ok=True)
    row: dict[str, Any] = {"model": name, "onnx": str(model_path), "params": params_of(model_path)}
    cmd = [*hlsgen_cmd(), "compile", str(model_path), "--calib", str(calib_path(model_path)), "-o", str(out)]
    if part:  # fold to that part's budget: the only setting that is not hlsgen's default
        config = out_root / "part.yaml"
        config.write_text(f"hw:\n  part: {part}\n")
        cmd += ["-c", str(config)]
    rc, text, secs = run(cmd, logs / "compile.log")
    row["compile"] = {"status": "ok" if rc == 0 else f"exit {rc}", "seconds": round(secs, 1)}
    if rc != 0:
        row["compile"]["error"] = (text.strip().splitlines() or [""])[-1][:300]
        print(f"{name}: compile failed: {row['compile']['error']}", flush=True)
        return row
    report = json.loads((out / "report.json").read_text())
    hw = report["hardware"] or {}
    row.update(macs=report["totals"]["macs"], part=report["config"]["hw"].get("hls", {}).get("part"),
               model_cycles=hw.get("cycles_per_frame"), multipliers=hw.get("multipliers"),
               mac_bound_cycles=hw.get("mac_bound_cycles"), bottleneck=hw.get("bottleneck"),
               widths=stream_widths(hw))
    print(f"{name}: compiled in {secs:.1f} s: {row['macs']:,} MACs, model {row['model_cycles']:,} cycles/frame, "
          f"{row['multipliers']} multipliers", flush=True)
    if do_rtlsim:
        row["rtlsim"] = rtlsim(out, logs)
        r = row["rtlsim"]
        print(f"{name}: rtlsim {r['status']} in {r['seconds']:.0f} s: "
              f"{r.get('cycles_per_frame', 'n/a')} cycles/frame, bit-exact {r.get('bit_exact')}", flush=True)
    if do_synth:
        row["synth"] = synth(out, logs)
        print(f"{name}: synth {row['synth']['status']} in {row['synth']['seconds']:.0f} s", flush=True)
    elif do_synth is None:
        row["synth"] = {"status": "not available (this hlsgen has no `synth` command)"}
    if do_pnr:
        row["pnr"] = pnr(out, logs)
        p = row["pnr"]
        print(f"{name}: pnr {p['status']} in {p['seconds']:.0f} s: Fmax {p.get('fmax_mhz', 'n/a')} MHz", flush=True)
    return row


def stream_widths(hw: dict[str, Any]) -> dict[str, Any]:
    """What folded streams and narrow ports save (report.json hardware.fifos / ports): per layer the
    FIFO bits in front of it now and at one pixel a beat (the FIFO of the same reach, in pixels); the
    converters' own FIFOs; the ports' TDATA bits now and at one pixel a beat."""
    fifos = hw.get("fifos") or []
    converters = {c["name"] for c in hw.get("converters") or []}
    per_layer: dict[str, dict[str, int]] = {}
    for f in fifos:
        key = "converters" if f["reader"] in converters else f["reader"].removeprefix("layer_")
        row = per_layer.setdefault(key, {"bits": 0, "bits_at_one_pixel_a_beat": 0, "widest_beat": 0, "pixel_bits": 0})
        row["bits"] += f["bits"]
        row["bits_at_one_pixel_a_beat"] += 0 if key == "converters" else f["bits_at_one_pixel_a_beat"]
        row["widest_beat"] = max(row["widest_beat"], f["beat_bits"])
        row["pixel_bits"] = max(row["pixel_bits"], f["pixel_bits"])
    ports = (hw.get("ports") or {}).get("ports") or []
    return {"layers": per_layer, "ports": [{"port": p["port"], "tdata_bits": p["tdata_bits"],
                                            "beats_per_frame": p["beats_per_frame"]} for p in ports]}


def render_widths(rows: list[dict[str, Any]]) -> str:
    """One table per model: FIFO bits per layer now vs at one pixel a beat, and the ports."""
    out = []
    for r in rows:
        w = r.get("widths")
        if not w:
            continue
        out.append(f"{r['model']}: FIFO bits in front of each layer (folded now / at one pixel a beat)")
        out.append(f"  {'layer':<28}{'widest beat':>12}{'pixel':>8}{'FIFO bits':>12}{'1 px/beat':>12}")
        for name, v in w["layers"].items():
            old = "" if name == "converters" else f"{v['bits_at_one_pixel_a_beat']:,}"
            out.append(f"  {name:<28}{v['widest_beat']:>12,}{v['pixel_bits']:>8,}{v['bits']:>12,}{old:>12}")
        now = sum(v["bits"] for v in w["layers"].values())
        old_total = sum(v["bits_at_one_pixel_a_beat"] for v in w["layers"].values())
        out.append(f"  {'total':<28}{'':>12}{'':>8}{now:>12,}{old_total:>12,}")
        out.append("  ports: " + ", ".join(f"{p['port']} {p['tdata_bits']} bits x {p['beats_per_frame']} beats/frame"
                                           for p in w["ports"]))
    return "\n".join(out)


# ---------------------------------------------------------------- the table


def _num(v: Any, digits: int = 0) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return f"{v:,.{digits}f}"


def derived(row: dict[str, Any]) -> dict[str, Any]:
    """The figures of one model's column (None where a measurement is missing)."""
    sim = row.get("rtlsim", {})
    syn = row.get("synth", {})
    cpf = sim.get("cycles_per_frame")
    cycles = cpf if cpf is not None else row.get("model_cycles")
    macs, mult, dsp = row.get("macs"), row.get("multipliers"), syn.get("dsp")
    target = TARGETS["cycles"].get(row["model"])
    d = {
        "compile": status if (status := str(row.get("compile", {}).get("status", ""))).startswith("ok") else "FAILED",
        "bit_exact": sim.get("bit_exact"),
        "macs": macs, "params": row.get("params"),
        "cycles_rtlsim": cpf, "cycles_model": row.get("model_cycles"),
        "sim_over_model": cpf / row["model_cycles"] if cpf and row.get("model_cycles") else None,
        "ms_per_frame": cycles / CLOCK_MHZ / 1e3 if cycles else None,
        "latency_ms": sim["latency_cycles"] / CLOCK_MHZ / 1e3 if sim.get("latency_cycles") else None,
        "multipliers": mult, "mac_bound": macs / mult if macs and mult else None,
        "dsp": dsp, "lut": syn.get("lut"), "ff": syn.get("ff"), "bram36": syn.get("bram36"),
        "target_cycles": target,
        "cycles_source": "rtlsim" if cpf is not None else "cycle model" if cycles else None,
    }
    fmax = row.get("pnr", {}).get("fmax_mhz")
    d["fmax_mhz"] = fmax
    d["us_per_frame_at_fmax"] = cycles / fmax if cycles and fmax else None
    d["over_mac_bound"] = cycles / d["mac_bound"] if cycles and d["mac_bound"] else None
    d["mac_per_mult_cycle"] = macs / (cycles * mult) if cycles and mult and macs else None
    d["mac_per_dsp_cycle"] = macs / (cycles * dsp) if cycles and dsp and macs else None
    d["dsp_mac_bound"] = macs / dsp if macs and dsp else None
    d["over_dsp_mac_bound"] = cycles / d["dsp_mac_bound"] if cycles and d["dsp_mac_bound"] else None
    d["meets_cycles"] = (cycles <= target) if cycles and target else None
    for k in ("dsp", "lut", "bram36"):
        d[f"meets_{k}"] = (d[k] <= TARGETS[k]) if d[k] is not None else None
    return d


def anchor_columns() -> list[tuple[str, dict[str, Any]]]:
    cols = []
    for name, ms, dsp, mhz, _ in ANCHORS:
        cycles_100 = ms * 1e3 * CLOCK_MHZ
        measured = not name.startswith("limit")  # the limit is a frame interval, not a latency
        d: dict[str, Any] = {"macs": RN8_MACS, "ms_per_frame": ms, "latency_ms": ms if measured else None, "dsp": dsp,
                             "cycles_at_100mhz": cycles_100, "clock_mhz": mhz, "cycles_own_clock": ms * 1e3 * mhz}
        if dsp:
            d["mac_per_dsp_cycle"] = RN8_MACS / (ms * 1e3 * mhz * dsp)
        cols.append((name, d))
    return cols


ROWS = [  # (label, key, digits)
    ("compile (default settings)", "compile", None), ("rtlsim bit-exact", "bit_exact", None),
    ("MACs/frame", "macs", 0), ("params (weights+biases)", "params", 0),
    ("cycles/frame, rtlsim steady state", "cycles_rtlsim", 0), ("cycles/frame, cycle model", "cycles_model", 0),
    ("  rtlsim / model", "sim_over_model", 3), ("target cycles/frame", "target_cycles", 0),
    ("  meets cycle target", "meets_cycles", None),
    ("cycles/frame at own clock (anchors)", "cycles_own_clock", 0),
    ("ms/frame at 100 MHz (anchors: own clock)", "ms_per_frame", 3),
    ("first-frame latency ms at 100 MHz", "latency_ms", 3),
    ("multipliers (sum PE*SIMD)", "multipliers", 0), ("MAC bound cycles (MACs/multipliers)", "mac_bound", 0),
    ("  cycles / MAC bound", "over_mac_bound", 2), ("MACs per multiplier per cycle", "mac_per_mult_cycle", 3),
    ("Yosys DSP (target <= 220)", "dsp", 0), ("  cycles / DSP MAC bound (MACs/DSP)", "over_dsp_mac_bound", 2),
    ("MACs per DSP per cycle", "mac_per_dsp_cycle", 3),
    ("Yosys LUT (target <= 42,560)", "lut", 0), ("Yosys FF", "ff", 0), ("Yosys BRAM36 (target <= 140)", "bram36", 1),
    ("  meets DSP/LUT/BRAM targets", "meets_res", None),
    ("Fmax MHz (nextpnr-ecp5, --part/--pnr)", "fmax_mhz", 1), ("us/frame at that Fmax", "us_per_frame_at_fmax", 1),
]


def render(columns: list[tuple[str, dict[str, Any]]]) -> str:
    def cell(d: dict[str, Any], key: str, digits: int | None) -> str:
        if key == "meets_res":
            flags = [d.get(f"meets_{k}") for k in ("dsp", "lut", "bram36")]
            return "-" if all(f is None for f in flags) else "yes" if all(flags) else "NO"
        v = d.get(key)
        if isinstance(v, bool):
            return "yes" if v else "NO"
        return _num(v, digits or 0)

    width = max(len(r[0]) for r in ROWS) + 2
    cols = [(name, [cell(d, key, digits) for _, key, digits in ROWS]) for name, d in columns]
    widths = [max(len(name), *(len(c) for c in cells)) + 2 for name, cells in cols]
    lines = ["".ljust(width) + "".join(name.rjust(w) for (name, _), w in zip(cols, widths, strict=True))]
    for i, (label, _, _) in enumerate(ROWS):
        values = (cells[i].rjust(w) for (_, cells), w in zip(cols, widths, strict=True))
        lines.append(label.ljust(width) + "".join(values))
    return "\n".join(lines)


def hlsgen_source() -> str:
    """Which hlsgen the CLI runs (PYTHONPATH may point at another checkout): its commit, and whether
    hlsgen/, templates/ or testbench/ have uncommitted changes there."""
    p = subprocess.run([sys.executable, "-c", "import hlsgen; print(hlsgen.__file__)"], capture_output=True, text=True)
    if p.returncode != 0:
        return "hlsgen not importable"
    root = Path(p.stdout.strip()).resolve().parents[1]
    git = ["git", "-C", str(root)]
    head = subprocess.run([*git, "log", "-1", "--format=%h %cI %s"], capture_output=True, text=True)
    if head.returncode != 0 or not shutil.which("git"):
        return f"{root} (not a git checkout)"
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "hlsgen", "templates", "testbench"],
                           capture_output=True, text=True).stdout.split("\n")
    n = sum(1 for line in dirty if line.strip())
    return f"{root} at {head.stdout.strip()[:90]}" + (f" + {n} uncommitted file(s)" if n else "")


def merge(files: list[Path]) -> tuple[list[dict[str, Any]], str]:
    """Model rows of several runs, step by step: a step (rtlsim, synth) is taken from the first file
    that measured it; the runs must be of the same hlsgen."""
    runs = [json.loads(f.read_text()) for f in files]
    sources = {r["hlsgen"] for r in runs}
    if len(sources) > 1:
        raise SystemExit(f"--merge: the runs are of different hlsgen versions: {sorted(sources)}")
    rows: dict[str, dict[str, Any]] = {}
    for run_ in runs:
        for r in run_["models"]:
            into = rows.setdefault(r["model"], dict(r))
            for step in ("rtlsim", "synth", "pnr"):
                have = into.get(step, {}).get("status", "")
                if step in r and (not have or have.startswith("not available")):
                    into[step] = r[step]
    return list(rows.values()), sources.pop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=sorted(MODELS), action="append",
                    help="measure only this model (repeatable)")
    ap.add_argument("--skip-synth", action="store_true")
    ap.add_argument("--skip-rtlsim", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "mlperf_tiny")
    ap.add_argument("--part", help="compile for this part (its budget); an ECP5 part also runs `hlsgen pnr`")
    ap.add_argument("--pnr", action="store_true", help="run `hlsgen pnr` (ECP5 place and route) on each model")
    ap.add_argument("--merge", type=Path, nargs="+", metavar="JSON",
                    help="measure nothing: print and write (to OUT) the table of earlier runs' mlperf_tiny.json "
                         "files, e.g. an rtlsim run and a synth run made in parallel (later files fill gaps)")
    args = ap.parse_args()
    out_root = args.out.resolve()
    out_root.mkdir(parents=True, exist_ok=True)
    if args.merge:
        rows, source = merge(args.merge)
        print(f"hlsgen: {source}", flush=True)
    else:
        source = hlsgen_source()
        print(f"hlsgen: {source}", flush=True)
        do_synth: bool | None = False if args.skip_synth else (True if synth_available() else None)
        if do_synth is None:
            print("synth: not available (this hlsgen has no `synth` command); resource rows left empty", flush=True)
        names = [n for n in MODELS if not args.only or n in args.only]
        do_pnr = args.pnr or bool(args.part and args.part.lower().startswith("lfe5"))
        rows = [measure(n, out_root / "models", out_root, not args.skip_rtlsim, do_synth, args.part, do_pnr)
                for n in names]
    columns = [(r["model"], derived(r)) for r in rows] + anchor_columns()
    table = render(columns)
    print()
    print(table)
    print("cycles-based rows use the rtlsim figure when measured, else the cycle model;"
          " anchors: " + "; ".join(f"{a[0]} = {a[4]}" for a in ANCHORS))
    print()
    print(render_widths(rows))
    for r in rows:
        if not r["compile"]["status"].startswith("ok"):
            print(f"{r['model']}: compile {r['compile']['status']}: {r['compile']['error']}")
        if r.get("pnr", {}).get("critical_ns"):
            p = r["pnr"]
            print(f"{r['model']}: critical path {p['critical_ns']:.2f} ns from {p['critical_from']['layer']} "
                  f"({p['critical_from']['unit']}: {p['critical_from']['signal']}) to {p['critical_to']['layer']} "
                  f"({p['critical_to']['unit']}: {p['critical_to']['signal']})")
        for step in ("rtlsim", "synth", "pnr"):
            s = r.get(step)
            if s and not s["status"].startswith("not available") and (s["status"] != "ok" or s.get("bit_exact") is False
                                                                     or s.get("failed_runs")):
                failed = f", failed runs {s['failed_runs']}" if s.get("failed_runs") else ""
                print(f"{r['model']}: {step} {s['status']}{failed}: {s.get('error', '')} (log {s.get('log', '-')})")
    result = {"date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"), "hlsgen": source,
              "clock_mhz": CLOCK_MHZ, "targets": TARGETS, "models": rows,
              "table": {name: d for name, d in columns},
              "anchors": [{"name": a[0], "ms": a[1], "dsp": a[2], "clock_mhz": a[3], "note": a[4]} for a in ANCHORS]}
    path = out_root / "mlperf_tiny.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True, default=float) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

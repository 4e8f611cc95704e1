"""What `hlsgen rtlsim` prints: per test bit-exactness, cycles per frame against the cycle model,
first-frame latency, and on a mismatch the first divergent output, layer and the waveform path; and
`record_csim`, which writes OUT/csim/result.json. The results reach OUT/report.html when the command
line refreshes it after the run (hlsgen.cli; from Python: hlsgen.report.html.refresh)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from hlsgen.support.outdir import write_file_atomically


def print_summary(results: dict[str, Any], sim: str, build_s: float, cached: bool, sim_s: float,
                  run_dir: Path, wave_file: Path | None, expected: tuple[str, ...] = ()) -> None:
    build = "cached build" if cached else f"build {build_s:.1f} s"
    print(f"rtlsim ({sim}): {build}, simulation {sim_s:.1f} s, logs in {run_dir}")
    if not results:
        print(f"  no test result: the simulation stopped early (see {run_dir / 'sim.log'})")
    for name in expected:
        if results and name not in results:
            print(f"  {name}: no result: the simulation stopped early (see replay.log and sim.log in {run_dir})")
    for name, r in results.items():
        print("  " + test_line(name, r))
        if not r["passed"]:
            for line in failure_lines(r):
                print("    " + line)
    if wave_file is not None:
        print(f"  waveform: {wave_file}")


def record_csim(out_dir: str | Path, passed: bool, build_seconds: float, run_seconds: float,
                divergence: object = None, layers: bool = False) -> None:
    """OUT/csim/result.json (atomically): the verdict of a C simulation and when it ran."""
    out = Path(out_dir)
    meta = _json(out / "vectors" / "meta.json")
    result = {"passed": passed, "build_seconds": round(build_seconds, 2), "run_seconds": round(run_seconds, 3),
              "divergence": None if divergence is None else str(divergence), "layers_compared": layers,
              "frames": meta.get("frames") if isinstance(meta, dict) else None,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    text = (json.dumps(result, indent=2, sort_keys=True) + "\n").encode()
    write_file_atomically(out / "csim" / "result.json", lambda f: f.write(text))


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def test_line(name: str, r: dict[str, Any]) -> str:
    verdict = "bit-exact" if r["passed"] else "MISMATCH"
    line = (f"{name}: {verdict}, {r['beats']}/{r['expected_beats']} output beats, {r['frames']} frames"
            + (f", stall {r['stall']:.2f} seed {r['seed']}" if r["stall"] else ""))
    cpf, model = r.get("cycles_per_frame"), r.get("model_cycles")
    if cpf is not None and not r["stall"]:
        line += f"; {cpf:,.0f} cycles/frame (model {model:,}, {100 * (cpf / model - 1):+.1f}%)"
    if r.get("latency") is not None:
        line += f"; first-frame latency {r['latency']:,} cycles"
    if r.get("cycles_per_second"):
        line += f"; SV replay: {r['simulated_cycles']:,} cycles at {r['cycles_per_second']:,} cycles/s"
    return line


def failure_lines(r: dict[str, Any]) -> list[str]:
    lines = []
    if r.get("describe"):
        lines.append(f"first divergent output: {r['describe']}")
    elif r["beats"] < r["expected_beats"]:
        lines.append(f"timeout: {r['beats']} of {r['expected_beats']} output beats (deadlock or too slow)")
    layer = r.get("first_layer")
    if layer:
        lines.append(f"first divergent layer: {layer['layer']} (node {layer['node']}): {layer['describe']}")
    elif r.get("layers") == []:
        lines.append("no layer traces (RTL without hlsgen debug taps)")
    return lines

"""Simulated cycles per second of the SystemVerilog replay testbench against the cocotb run, in one run.

Compiles examples/resnet_cifar (or takes an OUT folder written by `hlsgen compile`), builds both
Verilator models (cached by content, ~/.cache/hlsgen/rtlsim) and streams the same frames back to
back, without stalls, through
  * the replay: OUT/tb/replay/hg_replay_tb.sv, `verilator --binary`, every output word and every
    layer stream compared in SystemVerilog (the `throughput` run of `hlsgen rtlsim`);
  * the cocotb run: the cocotb `throughput` test of OUT/tb/ (driver, monitor and scoreboard in Python,
    the back-to-back run of `hlsgen rtlsim` before the replay).
Both count cycles up to the end of the last output frame. Prints simulated cycles per second against
the wall clock of the whole run (simulator start-up, vector loading and reading the results into
result.json included) and against the CPU time of the child processes (one core each), the ratio,
and the replay's simulator process alone: its CPU seconds, simulated cycles per CPU second and CPU
microseconds per simulated cycle (the figure to compare on a shared machine: the wall clock depends
on the load). Builds are not timed. `--no-cocotb` runs only the replay (the cocotb run takes minutes).

    .venv/bin/python benchmarks/rtl_replay_speed.py [--frames 4] [--out OUT] [--no-cocotb]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "resnet_cifar"


def _compile(out: Path) -> None:
    from hlsgen.cli import main as hlsgen

    if not (EXAMPLE / "model.onnx").exists():
        subprocess.run([sys.executable, str(EXAMPLE / "make_model.py")], check=True)
    assert hlsgen(["compile", str(EXAMPLE / "model.onnx"), "--calib", str(EXAMPLE / "calib.npy"),
                   "-c", str(EXAMPLE / "config.yaml"), "-o", str(out)]) == 0


def _timed(run: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], float, float]:
    """(result entry, wall seconds, CPU seconds of child processes) of one simulation."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    entry = run()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return entry, wall, cpu


def measure(out: Path, frames: int, cocotb_run: bool = True) -> dict[str, dict[str, Any]]:
    from hlsgen.tools import replay, rtlsim
    from hlsgen.tools.environment import simulator_env

    top, sources = rtlsim.design(out)
    simulator_env("verilator")
    rbuild, rbuild_s, _ = rtlsim.build(replay.replay_sources(out, sources), replay.REPLAY_TOP, "verilator", False,
                                       kind="replay")
    cbuild, cbuild_s = (rtlsim.build(sources, top, "verilator", False)[:2] if cocotb_run else (rbuild, 0.0))
    print(f"builds: replay {rbuild_s:.1f} s, cocotb {cbuild_s:.1f} s (0.0 = cached)", file=sys.stderr)

    def sv() -> dict[str, Any]:
        run_dir = rtlsim.fresh_run_dir(out, out / "rtlsim" / "bench-replay")
        replay.run_replay(out, top, "verilator", rbuild, run_dir, frames, False)
        return dict(json.loads((run_dir / "result.json").read_text())["throughput"])

    def cocotb() -> dict[str, Any]:
        run_dir = out / "rtlsim" / "bench-cocotb"
        results, _, _ = rtlsim.simulate(out, top, "verilator", cbuild, frames, 1, False, run_dir,
                                        tests=r"\.throughput$")
        return dict(results["throughput"])

    rows = {}
    for name, run in (("sv-replay", sv), ("cocotb", cocotb))[:2 if cocotb_run else 1]:
        entry, wall, cpu = _timed(run)
        cycles = entry["frame_end_cycles"][-1] if entry["frame_end_cycles"] else 0
        rows[name] = {"passed": entry["passed"], "cycles": cycles, "wall_s": wall, "cpu_s": cpu,
                      "cycles_per_s_wall": cycles / wall, "cycles_per_s_cpu": cycles / cpu if cpu else 0.0,
                      "cycles_per_frame": entry["cycles_per_frame"], "latency": entry["latency"],
                      "sim_s": entry.get("sim_seconds"), "sim_cpu_s": entry.get("sim_cpu_seconds")}
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=4, help="frames streamed back to back in each run (default 4)")
    ap.add_argument("--out", type=Path, help="an OUT folder of `hlsgen compile` (default: compile the example)")
    ap.add_argument("--no-cocotb", action="store_true", help="only the replay (skip the slow cocotb run)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "resnet_cifar"
        if args.out is None:
            _compile(out)
        rows = measure(out.resolve(), args.frames, not args.no_cocotb)
    print(f"ResNet-8 CIFAR example, {args.frames} frames back to back, Verilator, one core")
    print(f"{'run':10} {'bit-exact':>9} {'cycles':>9} {'wall s':>7} {'cpu s':>7} {'cycles/s wall':>14} "
          f"{'cycles/s cpu':>13}")
    for name, r in rows.items():
        print(f"{name:10} {r['passed']!s:>9} {r['cycles']:>9,} {r['wall_s']:>7.2f} {r['cpu_s']:>7.2f} "
              f"{r['cycles_per_s_wall']:>14,.0f} {r['cycles_per_s_cpu']:>13,.0f}")
    sv = rows["sv-replay"]
    print(f"replay simulator process alone (no result reading): {sv['sim_s']:.2f} s wall, "
          f"{sv['cycles'] / sv['sim_s']:,.0f} cycles/s; {sv['sim_cpu_s']:.2f} s CPU, "
          f"{sv['cycles'] / sv['sim_cpu_s']:,.0f} cycles per CPU second, "
          f"{1e6 * sv['sim_cpu_s'] / sv['cycles']:.2f} us of CPU per simulated cycle")
    if "cocotb" not in rows:
        return
    co = rows["cocotb"]
    print(f"speed-up of the replay: {sv['cycles_per_s_wall'] / co['cycles_per_s_wall']:.1f}x (wall), "
          f"{sv['cycles_per_s_cpu'] / co['cycles_per_s_cpu']:.1f}x (cpu)")
    same = (sv["cycles_per_frame"], sv["latency"]) == (co["cycles_per_frame"], co["latency"])
    print(f"same cycles/frame and latency in both runs: {same} ({sv['cycles_per_frame']:,.0f} cycles/frame, "
          f"latency {sv['latency']:,})")


if __name__ == "__main__":
    main()

"""Simulated hardware throughput of the ResNet-8 CIFAR example against its bounds, in one run.

Compiles examples/resnet_cifar, simulates the Verilog with Verilator (no stalls, back-to-back frames)
and prints cycles per frame against the cycle model (report.json) and the MAC bound (cycles that the
design's PE·SIMD multipliers would need at 100 % use), plus the first-frame latency and the frame
rate at the configured clock. Run: .venv/bin/python benchmarks/rtl_cycles.py [--frames 4]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "resnet_cifar"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--frames", type=int, default=4)
    args = ap.parse_args()
    if not (EXAMPLE / "model.onnx").exists():
        subprocess.run([sys.executable, str(EXAMPLE / "make_model.py")], check=True)
    from hlsgen.cli import main as hlsgen
    from hlsgen.tools.environment import simulator_env
    from hlsgen.tools.rtlsim import build, design, simulate

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "resnet_cifar"
        hlsgen(["compile", str(EXAMPLE / "model.onnx"), "--calib", str(EXAMPLE / "calib.npy"),
                "-c", str(EXAMPLE / "config.yaml"), "-o", str(out)])
        report = json.loads((out / "report.json").read_text())
        hw, clock_ns = report["hardware"], report["config"]["hw"]["hls"]["clock_ns"]
        top, sources = design(out)
        simulator_env("verilator")
        build_dir, build_s, _ = build(sources, top, "verilator", False)
        results, sim_s, _ = simulate(out, top, "verilator", build_dir, args.frames, 1, False)
    run = results["throughput"]
    cpf, model, bound = run["cycles_per_frame"], hw["cycles_per_frame"], hw["mac_bound_cycles"]
    mhz = 1000.0 / clock_ns
    print(f"bit-exact              : {run['passed']}")
    print(f"cycles/frame simulated : {cpf:,.0f}")
    print(f"  vs cycle model       : {cpf / model:.3f}  (model {model:,})")
    print(f"  vs MAC bound         : {cpf / bound:.3f}  ({hw['multipliers']} multipliers, bound {bound:,})")
    print(f"first-frame latency    : {run['latency']:,} cycles = {run['latency'] / cpf:.2f} frames")
    print(f"frames/s at {mhz:.0f} MHz     : {mhz * 1e6 / cpf:,.0f}")
    print(f"verilator build {build_s:.1f} s, simulation {sim_s:.1f} s")


if __name__ == "__main__":
    main()

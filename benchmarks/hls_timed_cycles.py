"""The generated HLS dataflow's cycles per frame (the timed model) against the cycle model, for every
../shared/corpus model compiled with the default settings, in one run.

hlsgen.tools.hls_timing replays each kernel's loops and stream accesses with the FIFO depths the HLS
backend writes (hls.rate_depths) and reports the steady-state frame interval of rewinding pipelines;
the cycle model (report.json hardware.cycles_per_frame) is what the folding search promised. A ratio
above 1 is throughput the HLS design loses to stalls (a FIFO too shallow for a rate mismatch); a few
cycles over it on a small frame is a line-buffer fill. Models that ask for calibration data get the
corpus reference inputs. Run: .venv/bin/python benchmarks/hls_timed_cycles.py [--frames 3] [--only NAME]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--only", help="one corpus model (its file name without .onnx)")
    args = ap.parse_args()
    if not (CORPUS / "models").is_dir():
        sys.exit(f"no corpus at {CORPUS}")
    from hlsgen import compile_model
    from hlsgen.errors import HlsgenError
    from hlsgen.hw.dataflow import build_dataflow
    from hlsgen.tools.hls_timing import time_network

    print(f"{'model':36} {'cycle model':>12} {'timed HLS':>12} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in sorted((CORPUS / "models").glob("*.onnx")):
            if args.only and model.stem != args.only:
                continue
            try:
                c = compile_model(model)
            except HlsgenError as e:
                if "calib" not in str(e):
                    print(f"{model.stem:36} refused: {e}")
                    continue
                with np.load(CORPUS / "expected" / f"{model.stem}.npz") as ref:
                    x = ref["inputs"]
                np.save(Path(tmp) / "x.npy", x)
                c = compile_model(model, calib=Path(tmp) / "x.npy")
            df = build_dataflow(c.graph, c.config.hw)
            timed = time_network(df, c.config.hw, frames=args.frames, drain=False).cycles_per_frame
            print(f"{model.stem:36} {df.cycles_per_frame:>12,} {timed:>12,} {timed / df.cycles_per_frame:>7.4f}",
                  flush=True)


if __name__ == "__main__":
    main()

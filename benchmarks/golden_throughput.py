"""Golden-model throughput on the ResNet-8 CIFAR example, one core, measured in one run.

Prints images/s of the integer golden model, of the float64 reference of the same model, and of
onnxruntime (float, one thread) for scale, plus the ratios. Target (issue 2): >= 50 images/s.
Run: make bench   (or .venv/bin/python benchmarks/golden_throughput.py [--batch 64] [--repeat 3])
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core: before numpy is imported
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "resnet_cifar"


def best_rate(fn, n_images: int, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return n_images / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not (EXAMPLE / "model.onnx").exists():
        subprocess.run([sys.executable, str(EXAMPLE / "make_model.py")], check=True)
    from hlsgen import compile_model, float_reference, run_golden

    c = compile_model(EXAMPLE / "model.onnx", EXAMPLE / "config.yaml", EXAMPLE / "calib.npy")
    x = np.load(EXAMPLE / "calib.npy")[: args.batch]
    golden = best_rate(lambda: run_golden(c, x), len(x), args.repeat)
    ref = best_rate(lambda: float_reference(c, x), len(x), args.repeat)
    print(f"golden (integer) : {golden:8.1f} images/s  (target 50: {golden / 50:.2f}x)")
    print(f"float64 reference: {ref:8.1f} images/s  (golden/reference {golden / ref:.2f})")
    try:
        import onnxruntime as ort
    except ImportError:
        return
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(EXAMPLE / "model.onnx"), so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    ort_rate = best_rate(lambda: [sess.run(None, {name: img[None]}) for img in x], len(x), args.repeat)
    print(f"onnxruntime float: {ort_rate:8.1f} images/s  (golden/onnxruntime {golden / ort_rate:.2f})")


if __name__ == "__main__":
    main()

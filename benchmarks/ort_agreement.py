"""Golden model vs onnxruntime on QDQ models: agreement at every rounding point, default config.

Prints, for each test model quantized by onnxruntime.quantize_static (QDQ, per-channel int8 weights,
int8 or uint8 activations) and the qdq_cnn example, per model:
  layers       hardware layers compared (two-step: how many reproduce an intermediate quantizer too)
  worst fed    worst |golden - onnxruntime| in LSB over every rounding point of the source model, each
               fed onnxruntime's own inputs (tests/ort_agreement.py); no output excluded
  off by one   share of those outputs that differ at all
  fused fed    the fused layers fed only their layer inputs (a step-1 near-tie is then amplified by
               step 2's gain)
  end to end   the golden model run alone
With `--corpus DIR`, also every DIR/*__qdq.onnx that hlsgen compiles (synthetic N(0,1) inputs).
Run: .venv/bin/python benchmarks/ort_agreement.py [--corpus /work/shared/corpus/models]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import model_zoo  # noqa: E402
from ort_agreement import layer_agreement  # noqa: E402

from hlsgen import compile_model  # noqa: E402
from hlsgen.config.compile import config_from_dict  # noqa: E402
from hlsgen.errors import HlsgenError  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402

MODELS = {"resnet_tiny": model_zoo.resnet_tiny, "dw_separable": model_zoo.dw_separable, "mlp": model_zoo.mlp}
HEADER = f"{'model':<34}{'act':<7}{'layers':>7}{'two-step':>9}{'worst fed':>10}{'off by one':>11}" \
         f"{'fused fed':>10}{'end to end':>11}"


def row(name: str, act: str, model: onnx.ModelProto, x: np.ndarray, quant: dict | None = None) -> str:
    c = compile_model(from_onnx_model(model, name), config_from_dict({"quant": quant or {}}, "bench"))
    rows = layer_agreement(c, model, x)
    total = sum(r.outputs for r in rows)
    off = sum(r.mismatch_fed * r.outputs for r in rows) / total
    return (f"{name:<34}{act:<7}{len(rows):>7}{sum(r.steps == 2 for r in rows):>9}"
            f"{max(r.max_fed for r in rows):>10}{100 * off:>10.3f}%{max(r.max_fed_fused for r in rows):>10}"
            f"{max(r.max_end_to_end for r in rows):>11}")


def zoo_rows(n: int) -> None:
    for name, build in MODELS.items():
        for act in ("int8", "uint8"):
            fm = build()
            calib = model_zoo.random_inputs(fm, 32, seed=1)
            with tempfile.TemporaryDirectory() as tmp:
                qdq = model_zoo.qdq_quantize(fm, calib, activation_type=act, tmp_dir=Path(tmp))
            print(row(name, act, qdq, model_zoo.random_inputs(fm, n, seed=2)), flush=True)
    example = ROOT / "examples" / "qdq_cnn"
    if not (example / "model.onnx").is_file():  # generated, not committed
        subprocess.run([sys.executable, str(example / "make_model.py")], check=True, capture_output=True)
    x = np.load(example / "sample.npy").astype(np.float32)[:n]
    print(row("examples/qdq_cnn", "int8", onnx.load(example / "model.onnx"), x), flush=True)


def corpus_rows(folder: Path, n: int) -> None:
    for path in sorted(folder.glob("*__qdq.onnx")):
        model = onnx.load(path)
        shape = [d.dim_value or 1 for d in model.graph.input[0].type.tensor_type.shape.dim][1:]
        x = np.random.default_rng(0).standard_normal((n, *shape)).astype(np.float32)
        try:
            print(row(path.stem, "", model, x), flush=True)
        except (HlsgenError, KeyError, ValueError) as e:
            print(f"{path.stem:<34}not compared: {str(e).splitlines()[0][:90]}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, help="also every CORPUS/*__qdq.onnx")
    ap.add_argument("-n", type=int, default=16, help="inputs per model")
    args = ap.parse_args()
    print(HEADER)
    zoo_rows(args.n)
    if args.corpus:
        corpus_rows(args.corpus, args.n)


if __name__ == "__main__":
    main()

"""Golden model vs onnxruntime on QDQ models: per-layer and end-to-end integer agreement.

Prints, for each test model quantized by onnxruntime.quantize_static (QDQ, per-channel int8
weights, int8 or uint8 activations), what `hlsgen compare` measures (hlsgen.compare): the worst
|golden - onnxruntime| in LSB at every rounding point fed onnxruntime's own inputs (the contract:
1 LSB; a two-step layer has two points), the worst with each layer fed only its layer inputs
("fused"), the share of values off by 1, and the worst end to end. Both fusion modes are shown:
  fuse_across_qdq=false  (default) every rounding of the model kept, two-step layers where a fusion
                         crosses a quantizer
  fuse_across_qdq=true   opt-in approximation: fusions drop the model's intermediate roundings
Run: .venv/bin/python benchmarks/ort_agreement.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import model_zoo  # noqa: E402

from hlsgen import compile_model  # noqa: E402
from hlsgen.compare import layer_agreement  # noqa: E402
from hlsgen.config import config_from_dict  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402

MODELS = {"resnet_tiny": model_zoo.resnet_tiny, "dw_separable": model_zoo.dw_separable, "mlp": model_zoo.mlp}


def main() -> None:
    print(f"{'model':<14}{'act':<7}{'fuse':<7}{'layers':>7}{'2-step':>8}{'max fed':>9}{'fused':>7}"
          f"{'mism.%':>8}{'end-to-end':>12}")
    for name, build in MODELS.items():
        for act in ("int8", "uint8"):
            fm = build()
            calib = model_zoo.random_inputs(fm, 32, seed=1)
            with tempfile.TemporaryDirectory() as tmp:
                qdq = model_zoo.qdq_quantize(fm, calib, activation_type=act, tmp_dir=Path(tmp))
            x = model_zoo.random_inputs(fm, 16, seed=2)
            for fuse in (False, True):
                cfg = config_from_dict({"quant": {"fuse_across_qdq": fuse}}, "bench")
                rows = layer_agreement(compile_model(from_onnx_model(qdq, name), cfg), qdq, x)
                mism = 100 * sum(r.mismatch_fed * r.outputs for r in rows) / sum(r.outputs for r in rows)
                print(f"{name:<14}{act:<7}{str(fuse):<7}{len(rows):>7}{sum(r.steps == 2 for r in rows):>8}"
                      f"{max(r.max_fed for r in rows):>9}{max(r.max_fed_fused for r in rows):>7}{mism:>8.2f}"
                      f"{max(r.max_end_to_end for r in rows):>12}")


if __name__ == "__main__":
    main()

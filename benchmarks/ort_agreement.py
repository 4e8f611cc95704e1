"""Golden model vs onnxruntime on QDQ models: per-layer and end-to-end integer agreement.

Prints, for each test model quantized by onnxruntime.quantize_static (QDQ, per-channel int8
weights, int8 or uint8 activations), the worst |golden - onnxruntime| in LSB per layer when the layer
is fed onnxruntime's own inputs, and end to end. Both fusion modes are shown:
  fuse_across_qdq=false  every rounding of the model kept: the bound is 1 LSB per layer
  fuse_across_qdq=true   (default) BN/residual/activation fused across Q/DQ: bound 1 + ceil(g·s1/2s)
Run: .venv/bin/python benchmarks/ort_agreement.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import model_zoo  # noqa: E402
from ort_agreement import layer_agreement  # noqa: E402

from hlsgen import compile_model  # noqa: E402
from hlsgen.config import config_from_dict  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402

MODELS = {"resnet_tiny": model_zoo.resnet_tiny, "dw_separable": model_zoo.dw_separable, "mlp": model_zoo.mlp}


def main() -> None:
    print(f"{'model':<14}{'act':<7}{'fuse':<7}{'layers':>7}{'max/layer':>11}{'worst-bound':>13}"
          f"{'mism.%':>8}{'end-to-end':>12}{'excluded':>10}")
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
                mism = 100 * sum(r.mismatch_fed for r in rows) / len(rows)
                print(f"{name:<14}{act:<7}{str(fuse):<7}{len(rows):>7}{max(r.max_fed for r in rows):>11}"
                      f"{max(r.max_fed - r.bound for r in rows):>13}{mism:>8.2f}"
                      f"{max(r.max_end_to_end for r in rows):>12}{sum(r.excluded for r in rows):>10}")


if __name__ == "__main__":
    main()

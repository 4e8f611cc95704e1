"""Small float CNN quantized by onnxruntime ``quantize_static`` into a QDQ model, for hlsgen.

Writes next to this file:
  model_float.onnx  float ONNX (opset 13), input [1,3,16,16] -> logits [1,10]
  model.onnx        the QDQ model: per-channel int8 weights, int8 activations (MinMax calibration)
  sample.npy        8 synthetic test images, float32 [8,3,16,16]

Network: conv3x3+BN+Relu, depthwise conv3x3+Relu, pointwise conv1x1+Relu, residual Add with the
stem output, GlobalAveragePool, Flatten, Gemm. Calibration images are synthetic (low-pass filtered
noise, mean 0 / std 1) since no dataset can be downloaded; BN statistics are fitted to them.
Deterministic: running it twice produces byte-identical files. Run from anywhere:
  .venv/bin/python examples/qdq_cnn/make_model.py
"""

import logging
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _common import Builder, finish, fit_bn, save, save_npy, smooth_images  # noqa: E402

SEED = 7
N_CALIB, N_SAMPLE = 32, 8


def build(rng: np.random.Generator) -> Builder:
    """conv3x3(3->16)+BN+Relu -> dw3x3+Relu -> pw1x1+Relu -> Add(stem) -> GAP -> Flatten -> Gemm(16->10)."""
    b = Builder(rng)
    stem = b.op("Relu", [b.bn(b.conv("x", 3, 16, 3), 16)])
    h = b.op("Relu", [b.conv(stem, 16, 16, 3, group=16, bias=True)])
    h = b.op("Relu", [b.conv(h, 16, 16, 1, bias=True)])
    h = b.op("Add", [stem, h])
    h = b.op("Flatten", [b.op("GlobalAveragePool", [h])], axis=1)
    b.dense(h, 16, 10)
    return b


def quantize(float_path: Path, qdq_path: Path, calib: np.ndarray) -> None:
    """onnxruntime static QDQ quantization: per-channel int8 weights, int8 activations, MinMax."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter({"x": image[None]} for image in calib)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self._it, None)

    logging.disable(logging.WARNING)  # ORT's "consider pre-processing" advice: not wanted here
    try:
        quantize_static(float_path, qdq_path, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    finally:
        logging.disable(logging.NOTSET)
    print(f"wrote {qdq_path}")


def main() -> None:
    rng = np.random.default_rng(SEED)
    calib = smooth_images(rng, N_CALIB, (3, 16, 16), sigma=2.0)
    sample = smooth_images(rng, N_SAMPLE, (3, 16, 16), sigma=2.0)
    b = build(rng)
    fit_bn(b, calib)
    save(finish(b, [1, 3, 16, 16], [1, 10], "qdq_cnn"), HERE / "model_float.onnx")
    quantize(HERE / "model_float.onnx", HERE / "model.onnx", calib)
    save_npy(sample, HERE / "sample.npy")


if __name__ == "__main__":
    main()

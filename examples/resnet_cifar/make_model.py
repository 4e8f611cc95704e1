"""ResNet-8-style CIFAR float model + synthetic calibration data for the hlsgen demo.

Writes next to this file:
  model.onnx   float ONNX (opset 13), input [1,3,32,32] -> softmax [1,10]
  calib.npy    64 synthetic calibration images, float32 [64,3,32,32]
  sample.npy   8 further synthetic images, float32 [8,3,32,32]
  config.yaml  hlsgen quantization config (8-bit weights/activations, percentile calibration)

The images are low-pass filtered noise normalised to mean 0 / std 1 (no dataset can be downloaded).
Weights are He-initialised from a fixed seed; BatchNormalization running statistics are fitted to
the calibration images (with onnxruntime) so each BN really normalises its input. Deterministic:
running it twice produces byte-identical files. Run from anywhere:
  .venv/bin/python examples/resnet_cifar/make_model.py
"""

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _common import Builder, finish, fit_bn, save, save_npy, smooth_images  # noqa: E402

SEED = 2024
N_CALIB, N_SAMPLE = 64, 8
CONFIG = """\
quant:
  weight_bits: 8
  act_bits: 8
  calibration: percentile
  percentile: 99.99
bn:
  var_floor: 1.0e-4
"""


def basic_block(b: Builder, x: str, cin: int, cout: int, stride: int) -> str:
    """Conv3x3+BN+Relu, Conv3x3+BN, + shortcut (identity, or Conv1x1+BN when the shape changes), Relu."""
    h = b.op("Relu", [b.bn(b.conv(x, cin, cout, 3, stride), cout)])
    h = b.bn(b.conv(h, cout, cout, 3), cout)
    skip = x if stride == 1 and cin == cout else b.bn(b.conv(x, cin, cout, 1, stride), cout)
    return b.op("Relu", [b.op("Add", [skip, h])])


def build(rng: np.random.Generator) -> Builder:
    """Stem conv3x3(16)+BN+Relu; stages 16/32/64, strides 1/2/2; GAP, Flatten, Gemm(64->10), Softmax."""
    b = Builder(rng)
    h = b.op("Relu", [b.bn(b.conv("x", 3, 16, 3), 16)])
    for cin, cout, stride in ((16, 16, 1), (16, 32, 2), (32, 64, 2)):
        h = basic_block(b, h, cin, cout, stride)
    h = b.op("Flatten", [b.op("GlobalAveragePool", [h])], axis=1)
    b.op("Softmax", [b.dense(h, 64, 10)], axis=1)
    return b


def main() -> None:
    rng = np.random.default_rng(SEED)
    calib = smooth_images(rng, N_CALIB, (3, 32, 32))
    sample = smooth_images(rng, N_SAMPLE, (3, 32, 32))
    b = build(rng)
    fit_bn(b, calib)
    save(finish(b, [1, 3, 32, 32], [1, 10], "resnet8_cifar"), HERE / "model.onnx")
    save_npy(calib, HERE / "calib.npy")
    save_npy(sample, HERE / "sample.npy")
    (HERE / "config.yaml").write_text(CONFIG)
    print(f"wrote {HERE / 'config.yaml'}")


if __name__ == "__main__":
    main()

"""Step 1 of docs/tutorial.md: a small PyTorch CNN exported to ONNX with torch.onnx.export.

Writes, under the output folder (default build/tutorial/):

- ``tiny_cnn.onnx``: the float model (input ``x`` [1, 3, 16, 16], output ``logits`` [1, 10]);
- ``calib.npy``: 64 calibration images, float32 [64, 3, 16, 16];
- ``sample.npy``: 8 further images, float32 [8, 3, 16, 16].

The weights are PyTorch's default initialisation from a fixed seed and the images synthetic (low-pass
filtered noise, normalised per image): no data set can be downloaded here. The BatchNorm running
statistics are measured on the calibration images (a pass in train mode with cumulative averaging),
as training would leave them. Needs the ``tutorial`` extra: ``pip install -e '.[tutorial]'``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from torch import nn


class TinyCNN(nn.Module):
    """Conv-BN-ReLU, max pool, Conv-ReLU, average pool over the whole map, Linear: 5 hardware layers."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8, momentum=None)  # momentum=None: cumulative average of the batches seen
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        # an 8x8 average over the whole 8x8 map: torch.onnx.export (dynamo) writes AveragePool for it, but
        # ReduceMean for nn.AdaptiveAvgPool2d(1) or x.mean((2, 3)), which hlsgen does not read (yet)
        self.gap = nn.AvgPool2d(8)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = torch.relu(self.conv2(x))
        return self.fc(torch.flatten(self.gap(x), 1))


def images(n: int, seed: int) -> np.ndarray:
    """Synthetic 16x16 RGB images: noise smoothed by a 3x3 box filter, each normalised to mean 0, std 1."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3, 18, 18))
    x = sum(x[:, :, i:i + 16, j:j + 16] for i in range(3) for j in range(3))
    x = (x - x.mean(axis=(1, 2, 3), keepdims=True)) / x.std(axis=(1, 2, 3), keepdims=True)
    return x.astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--out", default="build/tutorial", help="output folder (default: build/tutorial)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(0)
    model = TinyCNN()
    calib, sample = images(64, seed=1), images(8, seed=2)
    with torch.no_grad():
        model.train()
        model(torch.from_numpy(calib))  # BatchNorm running statistics from the calibration images
    model.eval()

    torch.onnx.export(model, (torch.from_numpy(sample[:1]),), out / "tiny_cnn.onnx",
                      input_names=["x"], output_names=["logits"], opset_version=18, dynamo=True, verbose=False)
    np.save(out / "calib.npy", calib)
    np.save(out / "sample.npy", sample)
    print(f"wrote {out / 'tiny_cnn.onnx'} (torch {torch.__version__}, opset 18)")
    print(f"wrote {out / 'calib.npy'} float32{list(calib.shape)} and {out / 'sample.npy'} float32{list(sample.shape)}")


if __name__ == "__main__":
    main()

"""Step 5 of docs/tutorial.md: a quantization-aware PyTorch model written with Brevitas, exported to QONNX.

The same network as export_torch.py, written with Brevitas layers: 8-bit per-output-channel weights
(``QuantConv2d``/``QuantLinear``), a signed 8-bit input quantizer (``QuantIdentity``) and unsigned 8-bit
activations after each ReLU (``QuantReLU``), 8-bit outputs of the max pool, the average pool and the
last layer. Brevitas's ``export_qonnx`` writes QONNX ``Quant`` nodes (scale, zero point, bit width)
on every weight and activation, so hlsgen needs no calibration data for it.

The quantizer scales are learned parameters; here they are initialised from statistics of the
calibration images (a few forward passes in train mode), which is what calibration before
quantization-aware training does; no training follows (no data set can be downloaded here).

Writes ``tiny_cnn_qonnx.onnx`` under the output folder (default build/tutorial/), which must hold
``calib.npy`` from export_torch.py. Needs the ``tutorial`` extra: ``pip install -e '.[tutorial]'``.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

warnings.filterwarnings("ignore", message="fast_hadamard_transform")  # printed by brevitas's import
import brevitas  # noqa: E402
import brevitas.nn as qnn  # noqa: E402
from brevitas.export import export_qonnx  # noqa: E402
from brevitas.quant import Int8ActPerTensorFloat, Int8WeightPerChannelFloat, Uint8ActPerTensorFloat  # noqa: E402


class TinyQuantCNN(nn.Module):
    """QuantIdentity, QuantConv-BN-QuantReLU, max pool, QuantConv-QuantReLU, average pool, QuantLinear."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = qnn.QuantIdentity(act_quant=Int8ActPerTensorFloat, return_quant_tensor=True)
        self.conv1 = qnn.QuantConv2d(3, 8, 3, padding=1, bias=False, weight_quant=Int8WeightPerChannelFloat)
        self.bn1 = nn.BatchNorm2d(8, momentum=None)
        self.relu1 = qnn.QuantReLU(act_quant=Uint8ActPerTensorFloat, return_quant_tensor=True)
        self.pool = nn.MaxPool2d(2)  # on a QuantTensor: keeps its quantization
        self.conv2 = qnn.QuantConv2d(8, 16, 3, padding=1, bias=False, weight_quant=Int8WeightPerChannelFloat)
        self.relu2 = qnn.QuantReLU(act_quant=Uint8ActPerTensorFloat, return_quant_tensor=True)
        self.gap = nn.AvgPool2d(8)
        self.gap_q = qnn.QuantIdentity(act_quant=Uint8ActPerTensorFloat, return_quant_tensor=True)
        self.fc = qnn.QuantLinear(16, 10, bias=False, weight_quant=Int8WeightPerChannelFloat)
        self.out_q = qnn.QuantIdentity(act_quant=Int8ActPerTensorFloat)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu1(self.bn1(self.conv1(self.inp(x))))
        x = self.relu2(self.conv2(self.pool(x)))
        x = self.gap_q(self.gap(x))
        return self.out_q(self.fc(torch.flatten(x, 1)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--out", default="build/tutorial", help="folder with calib.npy (default: build/tutorial)")
    args = ap.parse_args()
    out = Path(args.out)
    calib = torch.from_numpy(np.load(out / "calib.npy"))

    torch.manual_seed(0)
    model = TinyQuantCNN()
    model.train()
    with torch.no_grad():
        for batch in calib.split(16):  # BatchNorm statistics and the activation scales from the images
            model(batch)
    model.eval()

    path = out / "tiny_cnn_qonnx.onnx"
    export_qonnx(model, input_t=calib[:1], export_path=str(path))
    print(f"wrote {path} (brevitas {brevitas.__version__}, torch {torch.__version__})")


if __name__ == "__main__":
    main()

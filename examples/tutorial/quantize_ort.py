"""Step 2 of docs/tutorial.md: the float ONNX model quantized by onnxruntime's quantize_static (QDQ, int8).

A CalibrationDataReader feeds the calibration images of ``calib.npy`` one at a time; onnxruntime
records every activation's range (MinMax) and writes a QDQ model: QuantizeLinear/DequantizeLinear
pairs around the float ops, int8 weights (per tensor, or per output channel with ``--per-channel``),
int32 biases, int8 activations. Needs only onnxruntime (a dependency of hlsgen).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import numpy as np
import onnxruntime
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static


class NpyReader(CalibrationDataReader):
    """Yields {input name: one image [1, C, H, W]} for every image of a .npy file, then None."""

    def __init__(self, path: str, input_name: str) -> None:
        self.data = np.load(path).astype(np.float32)
        self.input_name = input_name
        self.it: Iterator[np.ndarray] = iter(self.data)

    def get_next(self) -> dict[str, np.ndarray] | None:
        x = next(self.it, None)
        return None if x is None else {self.input_name: x[None]}

    def rewind(self) -> None:
        self.it = iter(self.data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="float ONNX model")
    ap.add_argument("calib", help="calibration inputs, .npy [N, C, H, W]")
    ap.add_argument("out", help="QDQ model to write")
    ap.add_argument("--per-channel", action="store_true", help="one weight scale per output channel")
    args = ap.parse_args()

    sess = onnxruntime.InferenceSession(args.model, providers=["CPUExecutionProvider"])
    reader = NpyReader(args.calib, sess.get_inputs()[0].name)
    quantize_static(args.model, args.out, reader, quant_format=QuantFormat.QDQ, per_channel=args.per_channel,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    kind = "per-channel" if args.per_channel else "per-tensor"
    print(f"wrote {args.out}: QDQ, int8 weights ({kind}), int8 activations, "
          f"{len(reader.data)} calibration images (onnxruntime {onnxruntime.__version__})")


if __name__ == "__main__":
    main()

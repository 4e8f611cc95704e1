"""The three MLPerf Tiny reference networks as int8 QDQ ONNX models, built here (nothing is downloaded).

    resnet8(dir)   image classification (IC): ResNet-8 for CIFAR-10, input [1, 3, 32, 32], 10 classes
    dscnn(dir)     keyword spotting (KWS): DS-CNN, input [1, 1, 49, 10] (49 frames x 10 MFCCs), 12 classes
    fc_ae(dir)     anomaly detection (AD): FC autoencoder, input [1, 640] (5 frames x 128 mel bins)

Each returns `(qdq_onnx_path, calibration_data)` and writes into `dir`: `<name>_float.onnx` (the float
network with its BatchNorms), `<name>.onnx` (the QDQ int8 model), `<name>_calib.npy` and
`<name>_sample.npy` (inputs for compile and compare, disjoint from the calibration set).

Shapes follow the reference Keras models of github.com/mlcommons/tiny (v1.0 training scripts): layer
widths, kernels, strides and TensorFlow's 'same' padding (asymmetric where TF pads more at the
bottom/right: the stride-2 3x3 convs of ResNet-8 pad (0, 0, 1, 1), DS-CNN's 10x4 stride-2 conv pads
(4, 1, 5, 1)); the fixed-size AveragePool of the Keras models; biases on every conv and dense;
ResNet-8's 1x1 projection shortcuts have no BatchNorm. Weights are random (He-normal, fixed seed), so
the networks classify nothing; what matters for hardware is that shapes and value ranges are realistic:

- inputs are synthetic stand-ins for the datasets: low-pass filtered noise images (CIFAR-10 after
  per-image standardisation), MFCC-like features (time-correlated, variance falling with the
  coefficient index), log-mel-like spectra (smooth across frequency, correlated over 5 frames);
- every BatchNorm's running statistics are fitted to the calibration inputs (so every layer's
  pre-activation is normalised, as after training), with random gamma/beta;
- the BatchNorms are then folded into the preceding conv/dense, as TFLite's int8 converter does for
  the reference int8 models, and the float model is quantized by onnxruntime's `quantize_static`
  (QDQ format, int8 activations and weights, per-channel weights, MinMax calibration).

Deterministic: the same seed gives byte-identical files. Run to write the models of all three into a
folder: .venv/bin/python benchmarks/mlperf_models.py [DIR]  (default build/mlperf_tiny/models)
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from _common import Builder, finish, session, smooth_images  # noqa: E402

N_CALIB, N_SAMPLE = 64, 16


# ---------------------------------------------------------------- building blocks


def conv(b: Builder, x: str, cin: int, cout: int, kernel: tuple[int, int], stride: int, pads: list[int],
         group: int = 1) -> str:
    """Conv with bias (Keras default), He-normal weights, explicit ONNX pads [top, left, bottom, right]."""
    kh, kw = kernel
    fan_in = (cin // group) * kh * kw
    w = b.rng.normal(0.0, np.sqrt(2.0 / fan_in), (cout, cin // group, kh, kw))
    bias = b.rng.normal(0.0, 0.05, cout)
    return b.op("Conv", [x, b.const("w", w), b.const("b", bias)], kernel_shape=[kh, kw], strides=[stride] * 2,
                pads=pads, group=group)


def tf_same_pads(in_hw: tuple[int, int], kernel: tuple[int, int], stride: int) -> list[int]:
    """TensorFlow's padding='same' as ONNX pads: the odd pixel of padding goes to the bottom/right."""
    before, after = [], []
    for size, k in zip(in_hw, kernel, strict=True):
        out = -(-size // stride)
        total = max((out - 1) * stride + k - size, 0)
        before.append(total // 2)
        after.append(total - total // 2)
    return before + after


def bn_relu(b: Builder, x: str, c: int, relu: bool = True) -> str:
    h = b.bn(x, c)
    return b.op("Relu", [h]) if relu else h


# ---------------------------------------------------------------- the three networks


def build_resnet8(b: Builder) -> None:
    """mlcommons/tiny benchmark/training/image_classification/keras_model.py, resnet_v1_eembc."""
    h = bn_relu(b, conv(b, "x", 3, 16, (3, 3), 1, [1, 1, 1, 1]), 16)
    size, cin = 32, 16
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        pads = tf_same_pads((size, size), (3, 3), stride)
        y = bn_relu(b, conv(b, h, cin, cout, (3, 3), stride, pads), cout)
        y = bn_relu(b, conv(b, y, cout, cout, (3, 3), 1, [1, 1, 1, 1]), cout, relu=False)
        skip = h if stride == 1 else conv(b, h, cin, cout, (1, 1), stride, [0, 0, 0, 0])  # projection, no BN
        h = b.op("Relu", [b.op("Add", [skip, y])])
        size, cin = size // stride, cout
    h = b.op("Flatten", [b.op("AveragePool", [h], kernel_shape=[8, 8], strides=[8, 8])], axis=1)
    b.op("Softmax", [b.dense(h, 64, 10)], axis=1)


def build_dscnn(b: Builder) -> None:
    """mlcommons/tiny benchmark/training/keyword_spotting/keras_model.py, ds_cnn (dropout omitted)."""
    h = bn_relu(b, conv(b, "x", 1, 64, (10, 4), 2, tf_same_pads((49, 10), (10, 4), 2)), 64)  # -> 25 x 5
    for _ in range(4):
        h = bn_relu(b, conv(b, h, 64, 64, (3, 3), 1, [1, 1, 1, 1], group=64), 64)
        h = bn_relu(b, conv(b, h, 64, 64, (1, 1), 1, [0, 0, 0, 0]), 64)
    h = b.op("Flatten", [b.op("AveragePool", [h], kernel_shape=[25, 5], strides=[25, 5])], axis=1)
    b.op("Softmax", [b.dense(h, 64, 12)], axis=1)


def build_fc_ae(b: Builder) -> None:
    """mlcommons/tiny benchmark/training/anomaly_detection/keras_model.py: Dense+BN+ReLU, linear output."""
    h, n_in = "x", 640
    for n_out in (128, 128, 128, 128, 8, 128, 128, 128, 128):
        h = bn_relu(b, b.dense(h, n_in, n_out), n_out)
        n_in = n_out
    b.dense(h, n_in, 640)


# ---------------------------------------------------------------- synthetic data


def mfcc_like(rng: np.random.Generator, n: int, frames: int = 49, coeffs: int = 10) -> np.ndarray:
    """[n, 1, frames, coeffs]: each coefficient a smooth random walk over time (a speech envelope),
    standard deviation falling with the coefficient index like MFCCs (c0 largest); scaled to std 1."""
    t = np.arange(frames)
    kernel = np.exp(-0.5 * ((t[:, None] - t[None, :]) / 2.5) ** 2)  # temporal smoothing
    x = np.einsum("ts,nsc->ntc", kernel, rng.standard_normal((n, frames, coeffs)))
    x /= x.std(axis=1, keepdims=True) + 1e-9
    x *= 1.0 / (1.0 + 0.35 * np.arange(coeffs))
    x += rng.normal(0.0, 0.5, (n, 1, coeffs)) * 1.0 / (1.0 + 0.35 * np.arange(coeffs))
    x /= x.std()
    return x[:, None].astype(np.float32)


def logmel_like(rng: np.random.Generator, n: int, frames: int = 5, bins: int = 128) -> np.ndarray:
    """[n, frames * bins]: log-mel-like spectra, a random spectral shape per example smooth across
    frequency plus small frame-to-frame changes, standardised over the set (as the AD front-end does)."""
    f = np.arange(bins)
    smooth = np.exp(-0.5 * ((f[:, None] - f[None, :]) / 4.0) ** 2)
    base = rng.standard_normal((n, 1, bins)) @ smooth * 0.3 - 0.02 * f
    x = base + 0.3 * (rng.standard_normal((n, frames, bins)) @ smooth) * 0.3
    x = (x - x.mean()) / x.std()
    return x.reshape(n, frames * bins).astype(np.float32)


# ---------------------------------------------------------------- BN fitting and folding, quantization


def fit_bn(b: Builder, data: np.ndarray) -> None:
    """Each BN's running mean/var := the statistics of its input on `data` (per channel; axis 1 of
    [N, C] or [N, C, H, W]), in graph order, so later BNs see already-normalised earlier layers."""
    for idx, node in enumerate(b.nodes):
        if node.op_type != "BatchNormalization":
            continue
        partial = Builder(b.rng)
        partial.nodes, partial.inits = b.nodes[:idx], b.inits
        (act,) = session(partial.model(["N", *data.shape[1:]], node.input[0])).run(None, {"x": data})
        axes = (0,) if act.ndim == 2 else (0, 2, 3)
        act = act.astype(np.float64)
        for name, value in ((node.input[3], act.mean(axis=axes)), (node.input[4], act.var(axis=axes))):
            b.inits[name] = numpy_helper.from_array(value.astype(np.float32), name)


def fold_bn(b: Builder) -> None:
    """Fold every BatchNormalization into the Conv/Gemm that feeds it (weights scaled per output
    channel, bias shifted); the BN node disappears and the conv takes over its output name."""
    producers = {n.output[0]: n for n in b.nodes}
    keep = []
    for node in b.nodes:
        if node.op_type != "BatchNormalization":
            keep.append(node)
            continue
        src = producers[node.input[0]]
        assert src.op_type in ("Conv", "Gemm"), src.op_type
        gamma, beta, mean, var = (numpy_helper.to_array(b.inits[i]).astype(np.float64) for i in node.input[1:5])
        eps = next(a.f for a in node.attribute if a.name == "epsilon")
        scale = gamma / np.sqrt(var + eps)
        w_name, b_name = src.input[1], src.input[2]
        w = numpy_helper.to_array(b.inits[w_name]).astype(np.float64)
        bias = numpy_helper.to_array(b.inits[b_name]).astype(np.float64)
        w = w * scale.reshape(-1, *([1] * (w.ndim - 1)))  # Conv [Cout, ...]; Gemm transB=1: [N, K]
        bias = (bias - mean) * scale + beta
        for name, value in ((w_name, w), (b_name, bias)):
            b.inits[name] = numpy_helper.from_array(value.astype(np.float32), name)
        for name in node.input[1:5]:
            del b.inits[name]
        src.output[0] = node.output[0]
    b.nodes = keep


def quantize(float_path: Path, qdq_path: Path, calib: np.ndarray) -> None:
    """onnxruntime static quantization: QDQ, int8 activations and per-channel int8 weights, MinMax."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter({"x": sample[None]} for sample in calib)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self._it, None)

    logging.disable(logging.WARNING)  # ORT's "consider pre-processing" advice: the BNs are folded already
    try:
        quantize_static(float_path, qdq_path, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    finally:
        logging.disable(logging.NOTSET)


def _make(out_dir: str | Path, name: str, seed: int, in_shape: list[int], out_shape: list[int],
          build: Callable[[Builder], None],
          data: Callable[[np.random.Generator, int], np.ndarray]) -> tuple[Path, np.ndarray]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    calib, sample = data(rng, N_CALIB), data(rng, N_SAMPLE)
    b = Builder(rng)
    build(b)
    fit_bn(b, calib)
    float_path, qdq_path = out / f"{name}_float.onnx", out / f"{name}.onnx"
    float_path.write_bytes(finish(b, in_shape, out_shape, name).SerializeToString())
    fold_bn(b)
    folded = out / f".{name}_folded.onnx"
    folded.write_bytes(finish(b, in_shape, out_shape, name).SerializeToString())
    try:
        quantize(folded, qdq_path, calib)
    finally:
        folded.unlink(missing_ok=True)
    onnx.checker.check_model(onnx.load(qdq_path))
    np.save(out / f"{name}_calib.npy", calib)
    np.save(out / f"{name}_sample.npy", sample)
    return qdq_path, calib


def resnet8(out_dir: str | Path) -> tuple[Path, np.ndarray]:
    """MLPerf Tiny IC: ResNet-8, CIFAR-10 input [1, 3, 32, 32] -> softmax [1, 10]."""
    return _make(out_dir, "resnet8", 1001, [1, 3, 32, 32], [1, 10], build_resnet8,
                 lambda rng, n: smooth_images(rng, n, (3, 32, 32), sigma=1.5))


def dscnn(out_dir: str | Path) -> tuple[Path, np.ndarray]:
    """MLPerf Tiny KWS: DS-CNN, MFCC input [1, 1, 49, 10] -> softmax [1, 12]."""
    return _make(out_dir, "dscnn", 1002, [1, 1, 49, 10], [1, 12], build_dscnn, mfcc_like)


def fc_ae(out_dir: str | Path) -> tuple[Path, np.ndarray]:
    """MLPerf Tiny AD: FC autoencoder, log-mel input [1, 640] -> reconstruction [1, 640]."""
    return _make(out_dir, "fc_ae", 1003, [1, 640], [1, 640], build_fc_ae, logmel_like)


MODELS: dict[str, Callable[[str | Path], tuple[Path, np.ndarray]]] = {
    "resnet8": resnet8, "dscnn": dscnn, "fc_ae": fc_ae}


def sample_path(model_path: Path) -> Path:
    """The held-out inputs written next to a model by its builder."""
    return model_path.with_name(f"{model_path.stem}_sample.npy")


def calib_path(model_path: Path) -> Path:
    return model_path.with_name(f"{model_path.stem}_calib.npy")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "mlperf_tiny" / "models"
    for make in MODELS.values():
        path, calib = make(out)
        print(f"wrote {path} (calibration {calib.dtype}{list(calib.shape)})")


if __name__ == "__main__":
    main()

"""The MLPerf Tiny reference models of benchmarks/mlperf_models.py: each builds as an int8 QDQ model with
the reference shapes, `hlsgen compile` accepts it with the default settings, and `hlsgen compare`
finds the golden model within 1 LSB of onnxruntime at every layer (exit code 0)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from hlsgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import mlperf_models  # noqa: E402

# model: (MACs per frame, hardware layers, of which rounding layers, source Conv/Gemm count, input shape)
EXPECTED = {
    "resnet8": (12_501_632, 12, 11, 10, (64, 3, 32, 32)),  # 12 = 9 conv + avgpool + Flatten + dense
    "dscnn": (2_656_768, 12, 11, 10, (64, 1, 49, 10)),
    "fc_ae": (264_192, 10, 10, 10, (64, 640)),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, np.ndarray]]:
    folder = tmp_path_factory.mktemp("mlperf_models")
    return {name: make(folder) for name, make in mlperf_models.MODELS.items()}


def test_every_model_is_tested() -> None:
    assert set(EXPECTED) == set(mlperf_models.MODELS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_model_is_int8_qdq_per_channel(name: str, models: dict[str, tuple[Path, np.ndarray]]) -> None:
    path, calib = models[name]
    assert calib.shape == EXPECTED[name][4] and calib.dtype == np.float32 and np.isfinite(calib).all()
    m = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    ops = [n.op_type for n in m.graph.node]
    assert "BatchNormalization" not in ops  # folded before quantization, as for the int8 reference models
    layers = [n for n in m.graph.node if n.op_type in ("Conv", "Gemm")]
    assert len(layers) == EXPECTED[name][3]
    dq_of = {n.output[0]: n for n in m.graph.node if n.op_type == "DequantizeLinear"}
    for layer in layers:
        w_dq = dq_of[layer.input[1]]
        assert inits[w_dq.input[0]].dtype == np.int8
        assert inits[w_dq.input[1]].size == inits[w_dq.input[0]].shape[0] > 1  # one scale per output channel
        assert inits[dq_of[layer.input[0]].input[2]].dtype == np.int8  # int8 activations
    # deterministic: building again gives the same bytes
    again, _ = mlperf_models.MODELS[name](path.parent / "again")
    assert again.read_bytes() == path.read_bytes()


# hlsgen's HLS backend refuses stream beats over 4096 bits (hlsgen/backends/hls.py MAX_BEAT_BITS, since
# be53068); the autoencoder's 640 x int8 input and output are one 5120-bit beat each. Only this exact
# refusal is tolerated (as xfail): any other failure fails, and the test passes again once it is lifted.
KNOWN_LIMIT = "over Vitis's 4096-bit limit"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_compiles_with_defaults(name: str, models: dict[str, tuple[Path, np.ndarray]], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = models[name]
    out = tmp_path / "out"
    rc = main(["compile", str(path), "--calib", str(mlperf_models.calib_path(path)), "-o", str(out)])
    err = capsys.readouterr().err
    if rc == 2 and KNOWN_LIMIT in err:
        pytest.xfail(f"hlsgen refuses the model with the default settings: {err.strip()}")
    assert rc == 0, err
    report = json.loads((out / "report.json").read_text())
    macs, n_layers, _, _, _ = EXPECTED[name]
    assert report["totals"]["macs"] == macs
    assert report["totals"]["layers"] == n_layers
    assert report["hardware"]["cycles_per_frame"] > 0
    assert (out / "rtl" / "files.f").exists() and (out / "hls").is_dir()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_golden_matches_onnxruntime(name: str, models: dict[str, tuple[Path, np.ndarray]], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = models[name]
    sample = mlperf_models.sample_path(path)
    assert main(["compare", str(path), "--input", str(sample), "--json", str(tmp_path / "cmp.json")]) == 0
    cmp = json.loads((tmp_path / "cmp.json").read_text())
    assert cmp["ok"] and cmp["inputs"] == len(np.load(sample))
    assert len(cmp["layers"]) == EXPECTED[name][2]  # every integer layer was compared
    assert "PASS" in capsys.readouterr().out

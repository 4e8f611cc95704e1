"""C simulation (g++) of whole networks: the model zoo, a QDQ model and every example, bit-exact.

Zoo models are compared layer by layer (csim with layers=True); the examples go through the command
line exactly as a user runs them (`hlsgen compile`, then `hlsgen csim`, which checks the outputs).
Every generated project is also checked for synthesizable style (hlsgen.backends.hls_lint).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import model_zoo as zoo
import onnx
import pytest

from hlsgen.backends.hls_lint import lint_hls
from hlsgen.cli import main
from hlsgen.pipeline import compile_model
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import csim

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {
    "resnet_cifar": ("model.onnx", ["--calib", "calib.npy", "-c", "config.yaml"]),
    "qdq_cnn": ("model.onnx", []),
    "mlp_yaml": ("model.yaml", []),
}


def _zoo_model(name: str, folder: Path) -> tuple[Path, Path]:
    """The model file and a calibration batch for a zoo network ("qdq": resnet_tiny quantized by ORT)."""
    import numpy as np

    base = zoo.resnet_tiny() if name == "qdq" else getattr(zoo, name)()
    calib = zoo.random_inputs(base, 16, seed=1)
    m = zoo.qdq_quantize(base, calib, tmp_dir=folder) if name == "qdq" else base
    path = folder / f"{name}.onnx"
    onnx.save(m, path)
    np.save(folder / "calib.npy", calib)
    return path, folder / "calib.npy"


# heavy: the zoo MLP (an MLP is C-simulated by default in test_example_csim_from_the_command_line[mlp_yaml])
@pytest.mark.parametrize("name", ["resnet_tiny", "dw_separable", pytest.param("mlp", marks=pytest.mark.heavy), "qdq"])
def test_zoo_model_csim_every_layer(name: str, tmp_path: Path) -> None:
    model, calib = _zoo_model(name, tmp_path)
    c = compile_model(model, None, calib)
    out, _ = write_compilation(c, tmp_path / "out")
    assert lint_hls(out / "hls") == []
    r = csim(out, layers=True)
    assert r.divergence is None, str(r.divergence)
    assert r.passed


@pytest.fixture(scope="module")
def examples() -> Path:
    for name, (model, _) in EXAMPLES.items():
        if not (ROOT / "examples" / name / model).is_file():
            subprocess.run([sys.executable, str(ROOT / "examples" / name / "make_model.py")], check=True,
                           capture_output=True)
    return ROOT / "examples"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_csim_from_the_command_line(name: str, examples: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture) -> None:
    folder = examples / name
    model, extra = EXAMPLES[name]
    args = [str(folder / model)] + [a if a.startswith("-") else str(folder / a) for a in extra]
    assert main(["compile", *args, "-o", str(tmp_path / "out")]) == 0
    assert lint_hls(tmp_path / "out" / "hls") == []
    assert main(["csim", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "PASS: 4 frames" in printed and "csim PASS: build" in printed


@pytest.mark.heavy
def test_resnet_cifar_parallel_every_layer(examples: Path, tmp_path: Path) -> None:
    """The ResNet example at full parallelism (PE = SIMD = 8 where the channels allow), 8 frames,
    every layer compared."""
    from hlsgen.config.compile import config_from_dict, load_config

    folder = examples / "resnet_cifar"
    base = load_config(folder / "config.yaml")
    cfg = config_from_dict({**base.to_dict(), "hw": {"pe": 8, "simd": 8, "frames": 8}}, "test")
    out, _ = write_compilation(compile_model(folder / "model.onnx", cfg, folder / "calib.npy"), tmp_path / "out")
    r = csim(out, layers=True)
    assert r.passed and r.divergence is None, str(r.divergence)

"""Every bundled example runs end to end through the CLI, as a user would run it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from example_models import make_example

from hlsgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {
    "resnet_cifar": ("model.onnx", ["--calib", "calib.npy", "-c", "config.yaml"]),
    "qdq_cnn": ("model.onnx", []),
    "mlp_yaml": ("model.yaml", []),
}


@pytest.fixture(scope="module")
def built() -> dict[str, Path]:
    """Run every example's make_model.py once (they are deterministic and fast; with pytest-xdist the
    controller ran them before the workers started: tests/example_models.py)."""
    return {name: make_example(name) for name in EXAMPLES}


def _args(folder: Path, name: str) -> list[str]:
    model, extra = EXAMPLES[name]
    return [str(folder / model)] + [a if a.startswith("-") else str(folder / a) for a in extra]


def test_every_example_folder_is_listed() -> None:
    folders = {p.parent.name for p in (ROOT / "examples").glob("*/make_model.py")}
    assert folders == set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_compiles_and_runs(name: str, built: dict[str, Path], tmp_path: Path) -> None:
    folder = built[name]
    assert main(["compile", *_args(folder, name), "-o", str(tmp_path / "out")]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["totals"]["layers"] >= 3
    assert all(a >= 0.5 for a in report["errors"]["argmax_agreement"])
    assert sorted(p.name for p in (tmp_path / "out" / "graph").iterdir())[0] == "00_source.txt"

    sample = folder / "sample.npy"
    assert main(["run", *_args(folder, name), "--input", str(sample), "--output", str(tmp_path / "y.npy")]) == 0
    assert main(["run", *_args(folder, name), "--input", str(sample), "--output", str(tmp_path / "q.npy"),
                 "--int"]) == 0
    y, q = np.load(tmp_path / "y.npy"), np.load(tmp_path / "q.npy")
    assert y.dtype == np.float32 and len(y) == len(np.load(sample))
    assert np.issubdtype(q.dtype, np.integer) and len(q) == len(y)

"""The real-model corpus (../shared/corpus, 18 published models) as a user runs it, when it exists.

Golden mode of the corpus's own check.py: every model must be `ok` (no clear-error, no crash).
Every QDQ model of the corpus: `hlsgen compare` (onnxruntime, optimizations off) exits 0, i.e.
every rounding point of every layer is within 1 LSB fed. The corpus is not copied into the repo.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hlsgen.cli import main

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not (CORPUS / "check.py").is_file(), reason="../shared/corpus is not here")


def test_every_corpus_model_runs_in_golden_mode() -> None:
    hlsgen = Path(sys.executable).parent / "hlsgen"
    r = subprocess.run([sys.executable, str(CORPUS / "check.py"), "--hlsgen", str(hlsgen), "--mode", "golden"],
                       capture_output=True, text=True, timeout=600)
    summary = r.stdout.strip().splitlines()[-1]
    assert r.returncode == 0 and "ok 18, clear-error 0, crash 0, timeout 0" in summary, r.stdout[-3000:]


@pytest.mark.parametrize("stem", ["conv1d_small_keras__qdq", "keras_conv2d_conversion__qdq",
                                  "residual_block_clean__qdq", "vww_96_float__qdq"])
def test_corpus_qdq_models_within_one_lsb_of_onnxruntime(stem: str, tmp_path: Path) -> None:
    x = tmp_path / "x.npy"
    np.save(x, np.load(CORPUS / "expected" / f"{stem}.npz")["inputs"][:4])
    assert main(["compare", str(CORPUS / "models" / f"{stem}.onnx"), "--input", str(x)]) == 0

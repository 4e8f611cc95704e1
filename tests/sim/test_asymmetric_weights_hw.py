"""Weights with zero points in hardware (issue 20): the exact codes w − zw (9 bits here) of a MatMul
weight onnxruntime quantized like an activation are bit-exact in C simulation and in the Verilog,
each with a negative control (one weight code off by one is caught)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import model_zoo
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from fuzz_check import check_csim, check_rtl_and_its_control  # noqa: E402  (the fuzz suite's csim and SV-replay checks)

from hlsgen import compile_model  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402
from hlsgen.report.output import write_compilation  # noqa: E402
from hlsgen.tools.csim import csim  # noqa: E402


@pytest.fixture(scope="module")
def asym_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("asym")
    calib = np.random.default_rng(3).standard_normal((24, 1, 16)).astype(np.float32)
    qdq = model_zoo.qdq_quantize(model_zoo.reshaped_weight_mlp(), calib, per_channel=False, tmp_dir=root)
    c = compile_model(from_onnx_model(qdq, "asym"))
    assert [c.graph.tensor(n.inputs[1]).qtype.int.bits for n in c.graph.nodes if n.op == "QGemm"] == [9, 8]
    out, _ = write_compilation(c, root / "out")
    return out


def test_asymmetric_weights_csim_bit_exact(asym_out: Path) -> None:
    check_csim(asym_out)


def test_a_wrong_weight_code_is_caught_by_csim(asym_out: Path, tmp_path: Path) -> None:
    """The first weight code of the 9-bit layer moved by 64 (it still fits its type)."""
    bad = tmp_path / "bad"
    shutil.copytree(asym_out, bad)
    weights = bad / "hls" / "src" / "weights.h"
    text = weights.read_text()
    m = re.search(r"_w\[\d+\]\[\d+\] = \{\s*\{(-?\d+)", text)
    assert m is not None
    weights.write_text(text[:m.start(1)] + str(int(m.group(1)) + 64) + text[m.end(1):])
    assert not csim(bad, layers=True).passed


def test_asymmetric_weights_rtl_bit_exact_and_a_wrong_code_is_caught(asym_out: Path, tmp_path: Path) -> None:
    def zero_first_layer(bad: Path) -> None:
        mems = sorted((bad / "rtl").glob("*_w.mem"), key=lambda f: len(f.read_text()))
        words = mems[-1].read_text().split()  # the wide first layer's ROM: every weight 0
        mems[-1].write_text("".join("0" * len(w) + "\n" for w in words))

    check_rtl_and_its_control(asym_out, tmp_path, zero_first_layer)

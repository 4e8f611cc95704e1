"""QONNX Trunc in hardware: one requant layer (offset in x_zp, rounding half up or half even, shift k),
bit-exact in C simulation and in the Verilog with random stalls."""

from __future__ import annotations

from pathlib import Path

import pytest
from qonnx_models import trunc_model

from hlsgen import compile_model
from hlsgen.cli import main
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import csim


@pytest.mark.parametrize("mode", ["FLOOR", "CEIL"])
def test_trunc_csim_and_rtl_bit_exact(mode: str, tmp_path: Path) -> None:
    c = compile_model(from_onnx_model(trunc_model(mode, mode == "FLOOR")))
    out, _ = write_compilation(c, tmp_path / "out")
    r = csim(out, layers=True)
    assert r.passed and r.divergence is None
    assert main(["rtlsim", str(out), "--frames", "2"]) == 0

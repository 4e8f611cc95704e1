"""QONNX Trunc (v1 and v2) exactly as qonnx's execute_onnx defines it (issue 7): the golden model's
integer codes equal a float64 transcription of qonnx's reference for FLOOR, CEIL and ROUND on
negative and positive codes; the Trunc becomes one requant layer (hardware: tests/sim/test_trunc_hw.py)."""

from __future__ import annotations

import numpy as np
import pytest
from qonnx_models import S, trunc_model

from hlsgen import compile_model, run_golden
from hlsgen.frontend.from_onnx import from_onnx_model


def qonnx_reference(x: np.ndarray, mode: str, v2: bool) -> np.ndarray:
    """The codes y of qonnx's trunc(): q = round(x/s + zp) (here after the 10-bit input Quant), y = f(q / 2^4)."""
    q = np.clip(np.round(x / S), -512, 511)
    f = {"FLOOR": np.floor, "CEIL": np.ceil, "ROUND": np.round}[mode]
    y = f(q / 16)
    return np.clip(y, -32, 31) if v2 else y


@pytest.mark.parametrize("v2", [False, True])
@pytest.mark.parametrize("mode", ["FLOOR", "CEIL", "ROUND"])
def test_trunc_codes_equal_qonnx(mode: str, v2: bool) -> None:
    x = np.random.default_rng(3).uniform(-8, 8, (6, 3, 4, 4)).astype(np.float32)
    x[0, 0, 0, :4] = np.array([-24, -8, 8, 24]) * S  # ties of q/16 for ROUND (half to even)
    c = compile_model(from_onnx_model(trunc_model(mode, v2)))  # fully quantized: no calibration data
    assert [n.op for n in c.graph.nodes if n.op.startswith("Q")] == ["QuantizeInput", "QRequant"]
    (codes,) = run_golden(c, x, integer=True)
    assert np.array_equal(codes, qonnx_reference(x, mode, v2).astype(np.int64))
    (real,) = run_golden(c, x)
    assert np.array_equal(real, qonnx_reference(x, mode, v2) * (S * 16 if v2 else S))


def test_trunc_negative_control() -> None:
    """FLOOR and truncation toward zero differ on negative codes: the check sees it."""
    x = np.full((1, 3, 4, 4), -17 * S, np.float32)
    c = compile_model(from_onnx_model(trunc_model("FLOOR", False)))
    (codes,) = run_golden(c, x, integer=True)
    assert np.all(codes == -2) and not np.array_equal(codes, np.trunc(-17 / 16) * np.ones_like(codes))

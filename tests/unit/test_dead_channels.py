"""Calibration survives dead and near-constant channels (issue 7): the weight-scale floor.

A trained network can hold a channel whose weights are ~1e-30 beside a bias of 0.15 (vww_96's dead
filter), or a whole layer of ~1e-6 weights with 0.08 biases (dense_big_keras). Quantized at
max|w|/127 the bias would need ~2^100; hlsgen floors the weight scale so the bias fits bias_bits and
reports the channels.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx_builders import init, model, node, vi

from hlsgen import compile_model, float_reference, run_golden
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.numerics import bias_scale_floor, quantize_bias


@pytest.mark.parametrize("bits", [16, 32])
def test_floor_is_the_smallest_scale_whose_bias_fits(bits: int) -> None:
    b = np.array([0.146, -3.5, 1e-3])
    s_x = 0.0123
    floor = bias_scale_floor(b, s_x, bits)
    codes = quantize_bias(b, s_x * floor, bits)
    limit = (1 << (bits - 1)) - 1
    assert int(np.abs(codes).max()) <= limit and int(np.abs(codes[1])) >= limit - 1
    with pytest.raises(ValueError, match=f"needs more than {bits} bits"):  # negative control: 0.1 % below
        quantize_bias(b, s_x * floor * 0.999, bits)


def dead_filter_model() -> tuple:
    w = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32) * 0.5
    w[2] = 1e-30  # a dead output channel with a live bias
    b = np.array([0.1, -0.2, 0.146, 0.05], np.float32)
    m = model([node("Gemm", ["x", "w", "b"], ["y"], transB=1)], [vi("x", [1, 8])], [vi("y", [1, 4])],
              [init("w", w), init("b", b)], opset=13)
    return m, w, b


def test_dead_channel_compiles_reports_and_stays_accurate() -> None:
    m, w, b = dead_filter_model()
    x = np.random.default_rng(4).uniform(-1, 1, (16, 8)).astype(np.float32)
    c = compile_model(from_onnx_model(m), calib=x)
    notes = [n for n in c.graph.notes if n.kind == "weight_scale_floor"]
    assert len(notes) == 1 and notes[0].data["channels"] == [2]
    codes = next(t.data for t in c.graph.tensors.values() if t.data is not None and t.integer and t.shape == (4, 8))
    assert np.array_equal(codes[2], np.zeros(8, np.int64))  # 1e-30 rounds to 0 at the floored scale
    (ours,) = run_golden(c, x)
    (ref,) = float_reference(c, x)
    assert float(np.max(np.abs(ours - ref))) < 0.02 * float(np.max(np.abs(ref)))

"""Inputs that reach the first layer through layout ops stream in their own memory order and run
bit-exactly in C simulation (issue 7: NHWC inputs with one channel, flat inputs, 1-D convs).

Each model is built synthetically, compiled with calibration data, and C-simulated layer by layer
(`csim(layers=True)` compares every stream with the golden model). The input stream's order is
checked to be the input buffer's memory order (what a DMA sends).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx_builders import init, model, node, vi

from hlsgen import compile_model
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import csim

RNG = np.random.default_rng(11)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def nhwc_one_channel() -> tuple[onnx.ModelProto, tuple[int, ...]]:
    """tf2onnx/qonnx Keras converter: [1, 8, 8, 1] -> Reshape [1, 1, 8, 8] -> Conv 3x3 -> Relu."""
    nodes = [node("Reshape", ["x", "s"], ["r"]), node("Conv", ["r", "w", "b"], ["c"], kernel_shape=[3, 3]),
             node("Relu", ["c"], ["y"])]
    inits = [init("s", np.array([1, 1, 8, 8]), np.int64), init("w", rand(4, 1, 3, 3)), init("b", rand(4))]
    return model(nodes, [vi("x", [1, 8, 8, 1])], [vi("y", [1, 4, 6, 6])], inits, opset=13), (8, 8, 1)


def flat_kws() -> tuple[onnx.ModelProto, tuple[int, ...]]:
    """A flat [1, 60] input -> Reshape [1, 10, 6, 1] (NHWC) -> Transpose(0, 3, 1, 2) -> Conv."""
    nodes = [node("Reshape", ["x", "s"], ["r"]), node("Transpose", ["r"], ["t"], perm=[0, 3, 1, 2]),
             node("Conv", ["t", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), node("Relu", ["c"], ["y"])]
    inits = [init("s", np.array([1, 10, 6, 1]), np.int64), init("w", rand(3, 1, 3, 3)), init("b", rand(3))]
    return model(nodes, [vi("x", [1, 60])], [vi("y", [1, 3, 10, 6])], inits, opset=13), (60,)


def conv1d() -> tuple[onnx.ModelProto, tuple[int, ...]]:
    """Keras Conv1D via OnnxMLTools: [1, W, C] -> Transpose -> Conv(rank 3, pads (1, 2)) -> Relu -> Gemm."""
    nodes = [node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
             node("Conv", ["t", "w", "b"], ["c"], kernel_shape=[4], pads=[1, 2]), node("Relu", ["c"], ["r"]),
             node("Flatten", ["r"], ["f"]), node("Gemm", ["f", "wd", "bd"], ["y"])]
    inits = [init("w", rand(3, 4, 4)), init("b", rand(3)), init("wd", rand(30, 5)), init("bd", rand(5))]
    return model(nodes, [vi("x", [1, 10, 4])], [vi("y", [1, 5])], inits, opset=13), (10, 4)


@pytest.mark.parametrize("build", [nhwc_one_channel, flat_kws, conv1d])
def test_layout_input_streams_in_memory_order_and_csim_is_bit_exact(build, tmp_path: Path) -> None:
    m, in_shape = build()
    calib = RNG.uniform(-1, 1, (8, *in_shape)).astype(np.float32)
    c = compile_model(from_onnx_model(m), calib=calib)
    df = build_dataflow(c.graph, c.config.hw)
    assert np.array_equal(df.input.order, np.arange(int(np.prod(in_shape))))
    out, _ = write_compilation(c, tmp_path / "out")
    r = csim(out, layers=True)
    assert r.divergence is None and r.passed

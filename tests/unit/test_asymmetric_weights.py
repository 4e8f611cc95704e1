"""Weights with zero points (issue 20): onnxruntime quantizes a weight that is computed when the model
loads (a Reshape of a constant, as in the ONNX-zoo MNIST CNN) like an activation, per tensor with a zero
point. hlsgen takes its exact symmetric codes w − zw at the same scale (a type one bit wider where
needed), so every layer still agrees with onnxruntime within 1 LSB; dropping the zero point is caught."""

from __future__ import annotations

import importlib
from pathlib import Path

import model_zoo
import numpy as np
import onnx
import pytest
from ort_agreement import agreement_from, ort_integers

import hlsgen.passes.quantize_layer as quantize_layer
from hlsgen import compile_model
from hlsgen.config.compile import config_from_dict
from hlsgen.frontend import from_onnx_model
from hlsgen.ir import IntType

RNG = np.random.default_rng(20)


@pytest.fixture(scope="module")
def quantized(tmp_path_factory: pytest.TempPathFactory) -> tuple[onnx.ModelProto, np.ndarray]:
    float_model = model_zoo.reshaped_weight_mlp()
    calib = RNG.standard_normal((24, 1, 16)).astype(np.float32)
    qdq = model_zoo.qdq_quantize(float_model, calib, per_channel=False, tmp_dir=tmp_path_factory.mktemp("ort"))
    return qdq, RNG.standard_normal((6, 16)).astype(np.float32)


def _weight_zero_points(qdq: onnx.ModelProto) -> list[int]:
    """Zero points of the DequantizeLinear nodes feeding a MatMul's weight input."""
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in qdq.graph.initializer}
    producer = {o: n for n in qdq.graph.node for o in n.output}
    zps = []
    for n in qdq.graph.node:
        if n.op_type == "MatMul" and (dq := producer.get(n.input[1])) is not None and dq.op_type == "DequantizeLinear":
            zps.append(int(inits[dq.input[2]].reshape(-1)[0]) if len(dq.input) > 2 else 0)
    return zps


def test_the_model_has_the_idiom(quantized: tuple[onnx.ModelProto, np.ndarray]) -> None:
    assert any(zp != 0 for zp in _weight_zero_points(quantized[0]))  # else this test would test nothing


def test_asymmetric_weights_agree_with_onnxruntime(quantized: tuple[onnx.ModelProto, np.ndarray]) -> None:
    qdq, x = quantized
    c = compile_model(from_onnx_model(qdq, "asym"), config_from_dict({}, "test"))
    first = c.graph.node(next(n.name for n in c.graph.nodes if n.op == "QGemm"))
    w = c.graph.tensor(first.inputs[1])
    assert w.qtype is not None and not np.any(w.qtype.zero_point) and w.qtype.int == IntType(9, True)
    rows = agreement_from(c, ort_integers(qdq, x), x)
    assert len(rows) == 2 and max(r.max_fed for r in rows) <= 1, rows


def test_dropping_the_zero_point_is_caught(quantized: tuple[onnx.ModelProto, np.ndarray],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: the weight codes as stored, without − zw, disagree with onnxruntime by far more."""
    qdq, x = quantized
    original = quantize_layer.weight_codes

    def without_zero_point(w, bits, node, min_scale=None):  # type: ignore[no-untyped-def]
        codes, scale, kind = original(w, bits, node, min_scale)
        if w.integer and np.any(w.qtype.zero_point):
            return w.data.astype(np.int64), scale, w.qtype.int
        return codes, scale, kind

    monkeypatch.setattr(importlib.import_module("hlsgen.passes.quantize"), "weight_codes", without_zero_point)
    c = compile_model(from_onnx_model(qdq, "asym"), config_from_dict({}, "test"))
    rows = agreement_from(c, ort_integers(qdq, x), x)
    assert max(r.max_fed for r in rows) > 1


def test_a_weight_quantized_along_its_input_axis_is_refused(tmp_path: Path) -> None:
    from hlsgen.errors import HlsgenError
    from hlsgen.ir import Node, QType, Tensor
    from hlsgen.ir.types import INT8

    w = Tensor("w", (4, 3), QType(INT8, np.ones(3), np.zeros(3, np.int64), axis=1), np.zeros((4, 3), np.int64), True)
    with pytest.raises(HlsgenError, match="along axis 1"):
        quantize_layer.weight_codes(w, 8, Node("fc", "Gemm", ("x", "w", "b"), ("y",)))

"""The golden model agrees with onnxruntime on QDQ models made by onnxruntime.quantize_static."""

from __future__ import annotations

from pathlib import Path

import model_zoo
import numpy as np
import pytest
from ort_agreement import LayerAgreement, layer_agreement

from hlsgen import compile_model
from hlsgen.config import config_from_dict
from hlsgen.frontend import from_onnx_model

MODELS = {"resnet_tiny": model_zoo.resnet_tiny, "dw_separable": model_zoo.dw_separable, "mlp": model_zoo.mlp}


def _qdq(name: str, act: str, tmp: Path) -> tuple[object, np.ndarray]:
    float_model = MODELS[name]()
    calib = model_zoo.random_inputs(float_model, 24, seed=1)
    qdq = model_zoo.qdq_quantize(float_model, calib, activation_type=act, tmp_dir=tmp)
    return qdq, model_zoo.random_inputs(float_model, 6, seed=2)


def _agreement(name: str, act: str, tmp: Path, fuse_across: bool) -> list[LayerAgreement]:
    qdq, x = _qdq(name, act, tmp)
    cfg = config_from_dict({"quant": {"fuse_across_qdq": fuse_across}}, "test")
    c = compile_model(from_onnx_model(qdq, name), cfg)  # type: ignore[arg-type]
    return layer_agreement(c, qdq, x)  # type: ignore[arg-type]


@pytest.mark.parametrize("act", ["int8", "uint8"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_layer_within_one_lsb_when_keeping_model_roundings(name: str, act: str, tmp_path: Path) -> None:
    rows = _agreement(name, act, tmp_path, fuse_across=False)
    assert rows, "no layer compared"
    assert all(r.bound == 1 or r.op == "QGemm" for r in rows)  # only MatMul+Add always fuses
    worst = max(rows, key=lambda r: r.max_fed)
    assert worst.max_fed <= 1, worst


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fused_layers_within_double_rounding_bound(name: str, tmp_path: Path) -> None:
    rows = _agreement(name, "int8", tmp_path, fuse_across=True)
    for r in rows:
        assert r.max_fed <= r.bound, r
    plain = [r for r in rows if r.bound == 1]
    assert plain and all(r.max_fed <= 1 for r in plain)


def test_agreement_check_catches_a_wrong_multiplier(tmp_path: Path) -> None:
    """Negative control: one layer's multiplier off by 3% is seen as a many-LSB disagreement."""
    qdq, x = _qdq("resnet_tiny", "int8", tmp_path)
    cfg = config_from_dict({"quant": {"fuse_across_qdq": False}}, "test")
    c = compile_model(from_onnx_model(qdq, "resnet_tiny"), cfg)  # type: ignore[arg-type]
    target = next(n for n in c.graph.nodes if n.op == "QConv")
    wrong = target.with_attrs(mult=tuple(int(m * 1.03) for m in target.attrs["mult"]))
    broken = c.graph.apply(__import__("hlsgen.ir", fromlist=["Edit"]).Edit(remove=(target.name,), add=(wrong,)))
    rows = layer_agreement(type(c)(**{**c.__dict__, "graph": broken}), qdq, x)  # type: ignore[arg-type]
    assert next(r for r in rows if r.name == target.name).max_fed > 1

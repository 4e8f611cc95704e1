"""The golden model agrees with onnxruntime on QDQ models: every rounding point of the source model,
fed onnxruntime's own inputs, within 1 LSB, no output excluded, default config."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import model_zoo
import numpy as np
import onnx
import pytest
from ort_agreement import LayerAgreement, agreement_from, ort_integers

from hlsgen import Compilation, compile_model
from hlsgen.config.compile import config_from_dict
from hlsgen.frontend import from_onnx_model
from hlsgen.ir import Edit, Node
from hlsgen.ir.epilogue import two_step

MODELS = {"resnet_tiny": model_zoo.resnet_tiny, "dw_separable": model_zoo.dw_separable, "mlp": model_zoo.mlp,
          "resnet_tiny_mean": lambda: model_zoo.resnet_tiny(mean=True)}  # ReduceMean head, opset 18
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "qdq_cnn"


def _qdq(name: str, act: str, tmp: Path, calib_scale: float = 1.0) -> tuple[onnx.ModelProto, np.ndarray]:
    """The model quantized by onnxruntime, and test inputs. A calib_scale < 1 calibrates on smaller
    inputs than the test ones, so the model's quantizers (intermediate ones too) saturate."""
    float_model = MODELS[name]()
    calib = model_zoo.random_inputs(float_model, 24, seed=1) * np.float32(calib_scale)
    qdq = model_zoo.qdq_quantize(float_model, calib, activation_type=act, tmp_dir=tmp)
    return qdq, model_zoo.random_inputs(float_model, 6, seed=2)


def _compile(model: onnx.ModelProto, name: str, quant: dict | None = None) -> Compilation:
    return compile_model(from_onnx_model(model, name), config_from_dict({"quant": quant or {}}, "test"))


def _check(rows: list[LayerAgreement]) -> None:
    assert rows, "no layer compared"
    worst = max(rows, key=lambda r: r.max_fed)
    assert worst.max_fed <= 1, worst


@pytest.mark.parametrize("act", ["int8", "uint8"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_rounding_point_within_one_lsb_by_default(name: str, act: str, tmp_path: Path) -> None:
    qdq, x = _qdq(name, act, tmp_path)
    c = _compile(qdq, name)
    rows = agreement_from(c, ort_integers(qdq, x), x)
    _check(rows)
    assert not [n for n in c.graph.notes if n.kind == "fused_rounding"]  # nothing approximated
    if name != "dw_separable" or act == "int8":  # every model here has fused two-step layers
        assert any(r.steps == 2 for r in rows)


def _saturated_intermediates(c: Compilation, ort: dict[str, np.ndarray]) -> int:
    """How many codes of the two-step layers' intermediate tensors onnxruntime clamped."""
    count = 0
    for note in c.graph.notes:
        if note.kind == "two_step":
            codes = ort[next(a for a in [note.data["tensor"], *note.data["aliases"]] if a in ort)]
            info = np.iinfo(codes.dtype)
            count += int(np.sum((codes == info.min) | (codes == info.max)))
    return count


@pytest.mark.parametrize("name", ["resnet_tiny", "dw_separable"])
def test_saturating_intermediates_within_one_lsb(name: str, tmp_path: Path) -> None:
    """Calibrated on inputs 3x smaller than the test inputs: the intermediate quantizers saturate,
    and the two-step layers still reproduce every output (nothing excluded)."""
    qdq, x = _qdq(name, "int8", tmp_path, calib_scale=0.3)
    c = _compile(qdq, name)
    ort = ort_integers(qdq, x)
    assert _saturated_intermediates(c, ort) > 100
    _check(agreement_from(c, ort, x))


def test_example_qdq_cnn_within_one_lsb() -> None:
    if not (EXAMPLE / "model.onnx").is_file():  # generated, not committed
        subprocess.run([sys.executable, str(EXAMPLE / "make_model.py")], check=True, capture_output=True)
    qdq = onnx.load(EXAMPLE / "model.onnx")
    x = np.load(EXAMPLE / "sample.npy").astype(np.float32)[:6]
    c = _compile(qdq, "qdq_cnn")
    _check(agreement_from(c, ort_integers(qdq, x), x))


def _two_step_layer(c: Compilation) -> Node:
    return next(n for n in c.graph.nodes if two_step(n))


def _corrupt_step1(c: Compilation, **changes: object) -> Compilation:
    """The first two-step layer with its step 1 changed (`changes` of ir/epilogue.Step's fields)."""
    target = _two_step_layer(c)
    e = target.attr("epilogue")
    wrong = replace(e, mid=replace(e.mid, **changes))
    broken = c.graph.apply(Edit(remove=(target.name,), add=(target.with_attrs(epilogue=wrong),)))
    return Compilation(**{**c.__dict__, "graph": broken})


@pytest.mark.parametrize("what", ["clamp", "rounding", "multiplier"])
def test_agreement_check_catches_a_wrong_intermediate_step(what: str, tmp_path: Path) -> None:
    """Negative controls: dropping step 1's clamp, its rounding (the single-rounding fusion), or a 3%
    wrong step-1 multiplier is seen as a disagreement of more than 1 LSB."""
    qdq, x = _qdq("resnet_tiny", "int8", tmp_path, calib_scale=0.3)
    c = _compile(qdq, "resnet_tiny")
    ort = ort_integers(qdq, x)
    _check(agreement_from(c, ort, x))
    if what == "clamp":
        broken = _corrupt_step1(c, lo=-(1 << 20), hi=1 << 20)
    elif what == "multiplier":
        mid = _two_step_layer(c).attr("epilogue").mid
        broken = _corrupt_step1(c, mult=tuple(int(m * 1.03) for m in mid.mult))
    else:
        broken = _compile(qdq, "resnet_tiny", {"fuse_across_qdq": True})
        assert [n for n in broken.graph.notes if n.kind == "fused_rounding"]
    rows = agreement_from(broken, ort, x)
    assert max(max(r.max_fed, r.max_fed_fused) for r in rows) > 1

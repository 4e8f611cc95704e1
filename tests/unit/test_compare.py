"""`hlsgen compare`: golden model vs onnxruntime per layer, exit codes, and its negative control."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import model_zoo
import numpy as np
import pytest
from onnx_builders import init, model, node, vi

from hlsgen.cli import main
from hlsgen.compare import compare_model, render_table, to_json
from hlsgen.golden import KERNELS

DEFAULTS = "quant:\n  rounding: half_even\nbn:\n  var_floor: 1.0e-4\n"  # a config, all defaults
MODELS = {"resnet_tiny": lambda: model_zoo.resnet_tiny(with_bn=False), "mlp": model_zoo.mlp}


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """resnet_tiny (convs, residual adds, pools; no BatchNorm) and mlp quantized by onnxruntime (QDQ),
    an input batch for each, and a config."""
    folder = tmp_path_factory.mktemp("compare")
    files: dict[str, Path] = {}
    for name, build in MODELS.items():
        fm = build()
        qdq = model_zoo.qdq_quantize(fm, model_zoo.random_inputs(fm, 24, seed=1), tmp_dir=folder)
        files[name] = folder / f"{name}__qdq.onnx"
        files[name].write_bytes(qdq.SerializeToString())
        files[f"{name}_float"] = folder / f"{name}.onnx"
        files[f"{name}_float"].write_bytes(fm.SerializeToString())
        files[f"{name}_x"] = folder / f"{name}_x.npy"
        np.save(files[f"{name}_x"], model_zoo.random_inputs(fm, 6, seed=2))
    files["config"] = folder / "config.yaml"
    files["config"].write_text(DEFAULTS)
    return files


def _err_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hlsgen: error: ") and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("name", ["resnet_tiny", "mlp"])
def test_qdq_model_agrees_within_one_lsb(name: str, zoo: dict[str, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.json"
    args = ["compare", str(zoo[name]), "--input", str(zoo[f"{name}_x"]), "-c", str(zoo["config"]), "--json", str(out)]
    assert main(args) == 0
    table = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["ok"] is True and report["inputs"] == 6 and report["bound_lsb"] == 1
    assert report["layers"], "no layer compared"
    for row in report["layers"]:
        assert row["max_fed"] in (0, 1) and row["ok"] is True, row
        assert 0.0 <= row["mismatch_fed"] <= 1.0 and row["outputs"] > 0
        assert row["name"] in table
    assert table.splitlines()[-1].startswith("PASS")


def test_default_batch_is_eight_synthetic_inputs(zoo: dict[str, Path]) -> None:
    cmp = compare_model(zoo["mlp"])
    assert cmp.inputs == 8 and "synthetic" in cmp.input_source
    assert [r.op for r in cmp.rows] == ["QGemm"] * 3
    assert to_json(cmp)["ok"] == cmp.ok == all(r.max_fed <= 1 for r in cmp.rows)


def test_calibration_data_is_the_default_batch(zoo: dict[str, Path]) -> None:
    cmp = compare_model(zoo["mlp"], calib=zoo["mlp_x"])
    assert cmp.inputs == 6 and cmp.input_source == "calibration data"


def test_negative_control_a_layer_off_by_two(zoo: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """One QConv's golden kernel made to add 2 to every output: compare must see it and exit 1."""
    clean = compare_model(zoo["resnet_tiny"], inputs=zoo["resnet_tiny_x"])
    assert clean.ok
    target = next(r.name for r in clean.rows if r.op == "QConv")
    qconv = KERNELS["QConv"]

    def off_by_two(n, g, inputs):  # type: ignore[no-untyped-def]
        y = qconv(n, g, inputs)
        return y + 2 if n.name == target else y

    monkeypatch.setitem(KERNELS, "QConv", off_by_two)
    assert main(["compare", str(zoo["resnet_tiny"]), "--input", str(zoo["resnet_tiny_x"])]) == 1
    table = capsys.readouterr().out
    assert table.splitlines()[-1].startswith("FAIL: 1 layer(s)") and target in table.splitlines()[-1]
    broken = compare_model(zoo["resnet_tiny"], inputs=zoo["resnet_tiny_x"])
    bad = [r for r in broken.rows if not r.ok]
    assert [r.name for r in bad] == [target]
    assert bad[0].max_fed > 1 and bad[0].max_end_to_end > 1 and bad[0].mismatch_fed > 0.5
    assert "FAIL" in render_table(broken) and not broken.ok


def test_bad_input_paths_exit_2_with_one_line(zoo: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path / "nope.onnx")]) == 2
    assert "nope.onnx" in _err_line(capsys)
    assert main(["compare", str(zoo["mlp"]), "--input", str(tmp_path / "nope.npy")]) == 2
    assert "nope.npy" in _err_line(capsys)
    np.save(tmp_path / "wrong.npy", np.zeros((2, 7), np.float32))
    assert main(["compare", str(zoo["mlp"]), "--input", str(tmp_path / "wrong.npy")]) == 2
    assert "does not fit" in _err_line(capsys)
    assert main(["compare", str(zoo["mlp"]), "--json", str(tmp_path)]) == 2
    assert "is a folder" in _err_line(capsys)
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    assert main(["compare", str(tmp_path / "junk.onnx")]) == 2
    assert "junk.onnx" in _err_line(capsys)


def test_float_and_yaml_models_need_export_qdq(zoo: dict[str, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(zoo["mlp_float"]), "--calib", str(zoo["mlp_x"])]) == 2
    assert "float model" in (err := _err_line(capsys)) and "export-qdq" in err
    yaml_model = Path(__file__).resolve().parents[2] / "examples" / "mlp_yaml" / "model.yaml"
    assert main(["compare", str(yaml_model)]) == 2
    assert "export-qdq" in _err_line(capsys)


def test_qonnx_model_is_refused_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qonnx = "qonnx.custom_op.general"
    quant = node("Quant", ["x", "s", "z", "b"], ["y"], name="q", domain=qonnx, signed=1, narrow=0,
                 rounding_mode="ROUND")
    m = model([quant], [vi("x", [1, 4])], [vi("y", [1, 4])],
              [init("s", 0.125), init("z", 0.0), init("b", 8.0)], opset=11, extra_domains=[qonnx])
    path = tmp_path / "qonnx.onnx"
    path.write_bytes(m.SerializeToString())
    assert main(["compare", str(path)]) == 2
    err = _err_line(capsys)
    assert "QONNX" in err and "Quant" in err and "QDQ" in err


def test_onnxruntime_is_imported_only_by_a_comparison() -> None:
    code = "import sys, hlsgen.cli, hlsgen.compare, hlsgen.api; print('onnxruntime' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"

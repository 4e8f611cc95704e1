"""`hlsgen compare` and `hlsgen export-qdq`: golden model vs onnxruntime per rounding point, exit codes,
negative controls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import model_zoo
import numpy as np
import onnx
import pytest
from onnx_builders import init, model, node, vi

from hlsgen import compile_model
from hlsgen.cli import main
from hlsgen.golden import KERNELS
from hlsgen.interop.compare import compare_model, layer_agreement, render_table, to_json
from hlsgen.interop.export_qdq import export_qdq

DEFAULTS = "quant:\n  rounding: half_even\nbn:\n  var_floor: 1.0e-4\n"  # a config, all defaults
MODELS = {"resnet_tiny": model_zoo.resnet_tiny, "mlp": model_zoo.mlp}
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """resnet_tiny and mlp, float and quantized by onnxruntime (QDQ), an input batch for each, a config."""
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


def _within_one_lsb(report: dict) -> None:
    assert report["ok"] is True and report["bound_lsb"] == 1 and report["layers"], report
    for row in report["layers"]:
        assert row["max_fed"] in (0, 1) and row["ok"] is True, row
        assert 0.0 <= row["mismatch_fed"] <= 1.0 and row["outputs"] > 0


@pytest.mark.parametrize("name", sorted(MODELS))
def test_qdq_model_agrees_within_one_lsb(name: str, zoo: dict[str, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.json"
    args = ["compare", str(zoo[name]), "--input", str(zoo[f"{name}_x"]), "-c", str(zoo["config"]), "--json", str(out)]
    assert main(args) == 0
    table = capsys.readouterr().out
    report = json.loads(out.read_text())
    _within_one_lsb(report)
    assert report["inputs"] == 6 and report["reference"] == "the source QDQ model"
    assert all(row["name"] in table for row in report["layers"])
    assert table.splitlines()[-1].startswith("PASS")


def test_two_step_layers_are_checked_at_both_roundings(zoo: dict[str, Path]) -> None:
    """resnet_tiny's BatchNorms sit between two quantizers: those layers have two rounding points."""
    cmp = compare_model(zoo["resnet_tiny"], inputs=zoo["resnet_tiny_x"])
    two = [r for r in cmp.rows if r.steps == 2]
    assert two and all(r.op == "QConv" for r in two) and cmp.ok


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
    verdict = capsys.readouterr().out.splitlines()[-1]
    assert verdict.startswith("FAIL: 1 layer(s)") and target in verdict
    broken = compare_model(zoo["resnet_tiny"], inputs=zoo["resnet_tiny_x"])
    bad = [r for r in broken.rows if not r.ok]
    assert [r.name for r in bad] == [target]
    assert bad[0].max_fed > 1 and bad[0].max_end_to_end > 1 and bad[0].mismatch_fed > 0.4
    assert "FAIL" in render_table(broken) and not broken.ok


def test_float_and_yaml_models_compare_through_export(zoo: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(zoo["resnet_tiny_float"]), "--calib", str(zoo["resnet_tiny_x"])]) == 0
    assert "exported as QDQ" in capsys.readouterr().out
    cmp = compare_model(EXAMPLES / "mlp_yaml" / "model.yaml")
    assert cmp.ok and "exported" in cmp.reference and [r.op for r in cmp.rows] == ["QGemm"] * 3


def test_export_negative_control(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through an export too: fc2's golden kernel off by 2 codes fails, the other layers pass."""
    qgemm = KERNELS["QGemm"]
    monkeypatch.setitem(KERNELS, "QGemm", lambda n, g, i: qgemm(n, g, i) - 2 if n.name == "fc2" else qgemm(n, g, i))
    cmp = compare_model(EXAMPLES / "mlp_yaml" / "model.yaml")
    assert [r.name for r in cmp.rows if not r.ok] == ["fc2"]


def test_export_of_a_qdq_model_keeps_both_roundings(zoo: dict[str, Path]) -> None:
    """resnet_tiny's two-step layers exported (t as its own QuantizeLinear): onnxruntime on the export
    agrees with the golden model at every rounding point."""
    c = compile_model(zoo["resnet_tiny"])
    exported = export_qdq(c.graph)
    onnx.checker.check_model(exported, full_check=True)
    rows = layer_agreement(c, exported, np.load(zoo["resnet_tiny_x"]))
    assert any(r.steps == 2 for r in rows) and all(r.max_fed <= 1 for r in rows), rows


def _qonnx_conv(path: Path) -> Path:
    dom = "qonnx.custom_op.general"
    nodes = [node("Quant", ["x", "s_in", "z0", "b8"], ["xq"], name="quant_in", domain=dom, signed=1, narrow=0,
                  rounding_mode="ROUND"),
             node("Quant", ["w", "s_w", "z0", "b4"], ["wq"], name="quant_w", domain=dom, signed=1, narrow=1,
                  rounding_mode="ROUND"),
             node("Conv", ["xq", "wq"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             node("Relu", ["c"], ["r"], name="relu"),
             node("Quant", ["r", "s_out", "z0", "b8"], ["y"], name="quant_out", domain=dom, signed=0, narrow=0,
                  rounding_mode="ROUND")]
    w = np.random.default_rng(0).normal(0, 0.5, (3, 2, 3, 3))
    inits = [init("s_in", 0.125), init("z0", 0.0), init("b8", 8.0), init("b4", 4.0), init("w", w),
             init("s_w", np.array([0.1, 0.2, 0.3]).reshape(3, 1, 1, 1)), init("s_out", 0.25)]
    m = model(nodes, [vi("x", [1, 2, 6, 6])], [vi("y", [1, 3, 6, 6])], inits, opset=11, extra_domains=[dom])
    path.write_bytes(m.SerializeToString())
    return path


def test_inspect_lists_the_ops_the_file_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`source ops` names the file's op types (QONNX Quant, not the QuantizeLinear/DequantizeLinear
    pairs the front-end translates them to; Flatten, not Reshape)."""
    model = onnx.load(_qonnx_conv(tmp_path / "qonnx.onnx"))
    flat = node("Flatten", ["y"], ["flat"], name="flatten", axis=1)
    model.graph.node.append(flat)
    model.graph.output[0].CopyFrom(vi("flat", [1, 108]))
    (tmp_path / "flat.onnx").write_bytes(model.SerializeToString())
    assert main(["inspect", str(tmp_path / "flat.onnx")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("model ") and "(qonnx, opset 11)" in lines[0]
    assert lines[1] == "source ops: Conv×1, Flatten×1, Quant×3, Relu×1"


def test_qonnx_model_compares_through_export(tmp_path: Path) -> None:
    """onnxruntime cannot run QONNX Quant nodes: the compiled graph is exported as QDQ instead."""
    cmp = compare_model(_qonnx_conv(tmp_path / "qonnx.onnx"))
    assert cmp.ok and "exported" in cmp.reference and [r.op for r in cmp.rows] == ["QConv"]


def test_export_qdq_writes_a_checked_onnx_model(zoo: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "resnet_qdq.onnx"
    assert main(["export-qdq", str(zoo["resnet_tiny"]), "-o", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    m = onnx.load(out)
    onnx.checker.check_model(m, full_check=True)
    ops = {n.op_type for n in m.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear", "Conv", "Gemm"} <= ops
    assert not any(n.domain for n in m.graph.node)
    assert main(["export-qdq", str(zoo["resnet_tiny"]), "-o", str(tmp_path)]) == 2
    assert "is a folder" in _err_line(capsys)


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
    assert main(["compare", str(zoo["mlp_float"])]) == 2  # a float model needs calibration data
    assert "--calib" in _err_line(capsys)


def test_onnxruntime_is_imported_only_by_a_comparison() -> None:
    code = ("import sys, hlsgen.cli, hlsgen.interop.compare, hlsgen.interop.export_qdq; "
            "print('onnxruntime' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"

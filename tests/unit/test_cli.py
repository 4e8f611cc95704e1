"""CLI behaviour: exit codes, one-line errors, atomic and deterministic output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import model_zoo
import numpy as np
import pytest

from hlsgen import compile_model, run_golden
from hlsgen.cli import main


@pytest.fixture(scope="module")
def mlp_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("mlp")
    model = model_zoo.mlp(seed=3)
    path = folder / "mlp.onnx"
    path.write_bytes(model.SerializeToString())
    calib = folder / "calib.npy"
    np.save(calib, model_zoo.random_inputs(model, 32, seed=1))
    return path, calib


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hlsgen.cli", *args], capture_output=True, text=True)


def test_missing_model_is_one_line_exit_2(tmp_path: Path) -> None:
    r = _cli("compile", str(tmp_path / "nope.onnx"), "-o", str(tmp_path / "out"))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "nope.onnx" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_debug_shows_traceback(tmp_path: Path) -> None:
    r = _cli("--debug", "inspect", str(tmp_path / "nope.onnx"))
    assert r.returncode != 0 and "Traceback" in r.stderr


def test_unknown_config_key_suggests(mlp_model: tuple[Path, Path], tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("quant:\n  weigth_bits: 4\n")
    r = _cli("compile", str(mlp_model[0]), "--calib", str(mlp_model[1]), "-c", str(cfg), "-o", str(tmp_path / "o"))
    assert r.returncode == 2 and "weigth_bits" in r.stderr and "weight_bits" in r.stderr
    assert not (tmp_path / "o").exists()


def test_float_model_without_calibration_is_refused(mlp_model: tuple[Path, Path], tmp_path: Path) -> None:
    r = _cli("compile", str(mlp_model[0]), "-o", str(tmp_path / "o"))
    assert r.returncode == 2 and "--calib" in r.stderr
    assert not (tmp_path / "o").exists()


def test_failed_compile_keeps_previous_output(mlp_model: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert main(["compile", str(mlp_model[0]), "--calib", str(mlp_model[1]), "-o", str(out)]) == 0
    before = (out / "report.json").read_bytes()
    assert main(["compile", str(mlp_model[0]), "-o", str(out)]) == 2  # no calibration: fails
    assert (out / "report.json").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["o"]  # no temporary folders left behind


def test_compile_is_deterministic(mlp_model: tuple[Path, Path], tmp_path: Path) -> None:
    outs = []
    for i in range(2):
        out = tmp_path / f"o{i}"
        assert main(["compile", str(mlp_model[0]), "--calib", str(mlp_model[1]), "-o", str(out)]) == 0
        outs.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert outs[0] == outs[1] and len(outs[0]) > 5


def test_run_int_matches_api(mlp_model: tuple[Path, Path], tmp_path: Path) -> None:
    x = model_zoo.random_inputs(model_zoo.mlp(seed=3), 5, seed=9)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(mlp_model[0]), "--calib", str(mlp_model[1]), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "q.npy"), "--int"]) == 0
    expected = run_golden(compile_model(mlp_model[0], calib=mlp_model[1]), x, integer=True)[0]
    got = np.load(tmp_path / "q.npy")
    assert np.array_equal(got, expected)
    got[0, 0] += 1  # negative control: one changed code is seen
    assert not np.array_equal(got, expected)


def test_wrong_input_shape_names_file(mlp_model: tuple[Path, Path], tmp_path: Path) -> None:
    np.save(tmp_path / "bad.npy", np.zeros((2, 7), np.float32))
    r = _cli("run", str(mlp_model[0]), "--calib", str(mlp_model[1]), "--input", str(tmp_path / "bad.npy"),
             "--output", str(tmp_path / "y.npy"))
    assert r.returncode == 2 and "bad.npy" in r.stderr and "[N, 32]" in r.stderr
    assert not (tmp_path / "y.npy").exists()


def test_inspect_lists_layers_and_tail(tmp_path: Path) -> None:
    path = tmp_path / "r.onnx"
    path.write_bytes(model_zoo.resnet_tiny().SerializeToString())
    r = _cli("inspect", str(path))
    assert r.returncode == 0, r.stderr
    assert "residual add + relu" in r.stdout and "Softmax" in r.stdout


def test_compile_refuses_to_replace_a_foreign_folder(mlp_model: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "project"
    out.mkdir()
    (out / "keep.txt").write_text("not hlsgen's")
    r = _cli("compile", str(mlp_model[0]), "--calib", str(mlp_model[1]), "-o", str(out))
    assert r.returncode == 2 and "was not written by `hlsgen compile`" in r.stderr
    assert (out / "keep.txt").read_text() == "not hlsgen's"


@pytest.mark.parametrize("damage", ["bad_hex", "short", "bad_json"])
def test_simulators_refuse_damaged_vectors(mlp_model: tuple[Path, Path], tmp_path: Path, damage: str) -> None:
    out = tmp_path / "o"
    assert main(["compile", str(mlp_model[0]), "--calib", str(mlp_model[1]), "-o", str(out)]) == 0
    vec = out / "vectors"
    if damage == "bad_hex":
        lines = (vec / "input.hex").read_text().splitlines()
        (vec / "input.hex").write_text("\n".join(["z" * len(lines[0])] + lines[1:]) + "\n")
    elif damage == "short":
        (vec / "output.hex").write_text("\n".join((vec / "output.hex").read_text().splitlines()[:-1]) + "\n")
    else:
        (vec / "meta.json").write_text("{bad json")
    r = _cli("rtlsim", str(out))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert "vectors" in r.stderr


def test_compile_to_dot_in_a_project_folder_deletes_nothing(mlp_model: tuple[Path, Path], tmp_path: Path) -> None:
    """The issue-9 data-loss case: `-o .` in a folder holding report.json, a thesis and the inputs."""
    import shutil

    for name in ("report.json", "thesis.tex"):
        (tmp_path / name).write_text(name)
    shutil.copy(mlp_model[0], tmp_path / "m.onnx")
    shutil.copy(mlp_model[1], tmp_path / "c.npy")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = subprocess.run([sys.executable, "-m", "hlsgen.cli", "compile", "m.onnx", "--calib", "c.npy", "-o", "."],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "refusing" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "thesis.tex").read_text() == "thesis.tex"


def test_a_closed_stdout_is_no_traceback() -> None:
    """`hlsgen inspect m | head -1`: the reader leaves after one line; hlsgen exits 141 without a word."""
    model = Path(__file__).resolve().parents[2] / "examples" / "mlp_yaml" / "model.yaml"
    p = subprocess.Popen([sys.executable, "-m", "hlsgen.cli", "inspect", str(model)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # before hlsgen writes anything: its first print meets a closed pipe
    err = p.stderr.read()
    assert p.wait(timeout=60) == 141, err
    assert err == ""


def test_a_pe_beyond_the_channels_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`hw.pe: 1000` was capped at every layer's channels without a word; a layer's own `pe: 1000` too."""
    model = Path(__file__).resolve().parents[2] / "examples" / "mlp_yaml" / "model.yaml"
    (tmp_path / "default.yaml").write_text("hw: {pe: 1000}\n")
    assert main(["compile", str(model), "-c", str(tmp_path / "default.yaml"), "-o", str(tmp_path / "a")]) == 0
    warning = ("warning: hw.pe 1000 is more than the channels of 3 layer(s), which use all their channels instead: "
               "fc1 pe 32, fc2 pe 16, fc3 pe 10")
    assert capsys.readouterr().err.splitlines() == [warning]
    assert warning.removeprefix("warning: ") in (tmp_path / "a" / "report.md").read_text()
    (tmp_path / "own.yaml").write_text("hw: {layers: {fc1: {pe: 1000}}}\n")
    assert main(["compile", str(model), "-c", str(tmp_path / "own.yaml"), "-o", str(tmp_path / "b")]) == 2
    assert capsys.readouterr().err == ("hlsgen: error: hw.layers.fc1.pe: 1000 is more than the layer's 32 output "
                                       "channels (at most 32)\n")
    assert not (tmp_path / "b").exists()

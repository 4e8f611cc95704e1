"""No command writes over one of its inputs or over a file hlsgen did not write (hlsgen.support.outfile).

Every case checks the user's bytes after the refusal, so a command that wrote over the file and
then failed would not pass. The files hlsgen wrote are recorded in a ledger under $HLSGEN_CACHE,
which each test points at its own folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import model_zoo
import numpy as np
import onnx
import pytest

from hlsgen.cli import main


@pytest.fixture(autouse=True)
def own_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HLSGEN_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def qdq(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A QDQ MLP (onnxruntime's quantize_static) and an input batch for it."""
    folder = tmp_path_factory.mktemp("outfile")
    fm = model_zoo.mlp()
    x = model_zoo.random_inputs(fm, 4, seed=1)
    model = folder / "mlp__qdq.onnx"
    model.write_bytes(model_zoo.qdq_quantize(fm, x, tmp_dir=folder).SerializeToString())
    np.save(folder / "x.npy", x)
    return model, folder / "x.npy"


def _copy(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes())
    return dst


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("hlsgen: error:") and "Traceback" not in err, err
    return err


def test_export_qdq_in_the_old_argument_order_leaves_both_models(qdq: tuple[Path, Path], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`hlsgen export-qdq a.onnx b.onnx` used to replace a.onnx with the export of b.onnx."""
    a, b = _copy(qdq[0], tmp_path / "a_model.onnx"), _copy(qdq[0], tmp_path / "b_model.onnx")
    before = a.read_bytes()
    with pytest.raises(SystemExit) as e:  # argparse: -o is required, a second model is unexpected
        main(["export-qdq", str(a), str(b)])
    assert e.value.code == 2
    assert a.read_bytes() == before and b.read_bytes() == before
    capsys.readouterr()


def test_export_qdq_takes_model_then_out(qdq: tuple[Path, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "export.onnx"
    assert main(["export-qdq", str(qdq[0]), "-o", str(out)]) == 0
    assert {"QuantizeLinear", "DequantizeLinear"} <= {n.op_type for n in onnx.load(out).graph.node}
    first = out.read_bytes()
    assert main(["export-qdq", str(qdq[0]), "-o", str(out)]) == 0  # hlsgen's own file: replaced
    assert out.read_bytes() == first
    capsys.readouterr()


@pytest.mark.parametrize("target", ["model", "hardlink", "symlink"])
def test_export_qdq_never_writes_over_its_model(qdq: tuple[Path, Path], tmp_path: Path, target: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    model = _copy(qdq[0], tmp_path / "m.onnx")
    out = {"model": model, "hardlink": tmp_path / "link.onnx", "symlink": tmp_path / "sym.onnx"}[target]
    if target == "hardlink":
        os.link(model, out)
    elif target == "symlink":
        out.symlink_to(model)
    before = model.read_bytes()
    assert main(["export-qdq", str(model), "-o", str(out)]) == 2
    assert "is an input of this command" in _err(capsys)
    assert model.read_bytes() == before


def test_run_never_writes_over_its_input_or_model(qdq: tuple[Path, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    model, x = _copy(qdq[0], tmp_path / "m.onnx"), _copy(qdq[1], tmp_path / "x.npy")
    saved = {p: p.read_bytes() for p in (model, x)}
    assert main(["run", str(model), "--input", str(x), "--output", str(x)]) == 2
    assert "is an input of this command" in _err(capsys)
    assert main(["run", str(model), "--input", str(x), "--output", str(model)]) == 2
    assert "name a .npy or .npz file" in _err(capsys)
    assert {p: p.read_bytes() for p in saved} == saved


def test_compare_never_writes_json_over_its_model(qdq: tuple[Path, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    model = _copy(qdq[0], tmp_path / "m.onnx")
    before = model.read_bytes()
    assert main(["compare", str(model), "--input", str(qdq[1]), "--json", str(model)]) == 2
    assert "name a .json file" in _err(capsys)
    calib_as_json = _copy(qdq[1], tmp_path / "x.json")  # an input, whatever its name says
    assert main(["compare", str(model), "--calib", str(calib_as_json), "--json", str(calib_as_json)]) == 2
    assert "is an input of this command" in _err(capsys)
    assert model.read_bytes() == before


def test_a_file_hlsgen_did_not_write_is_never_replaced(qdq: tuple[Path, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The user's file, or hlsgen's file edited since, is refused; hlsgen's own file is replaced."""
    model, x = qdq
    out = tmp_path / "y.npy"
    np.save(out, np.arange(3))
    users = out.read_bytes()
    assert main(["run", str(model), "--input", str(x), "--output", str(out)]) == 2
    assert "was not written by hlsgen" in _err(capsys)
    assert out.read_bytes() == users
    out.unlink()
    assert main(["run", str(model), "--input", str(x), "--output", str(out)]) == 0
    assert main(["run", str(model), "--input", str(x), "--output", str(out)]) == 0  # its own: replaced
    capsys.readouterr()
    np.save(out, np.load(out) + 1)  # edited by the user since
    edited = out.read_bytes()
    assert main(["run", str(model), "--input", str(x), "--output", str(out)]) == 2
    assert "was not written by hlsgen" in _err(capsys)
    assert out.read_bytes() == edited


def test_compare_json_is_replaced_only_when_hlsgen_wrote_it(qdq: tuple[Path, Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    model, x = qdq
    out = tmp_path / "table.json"
    out.write_text('{"mine": true}\n')
    assert main(["compare", str(model), "--input", str(x), "--json", str(out)]) == 2
    assert "was not written by hlsgen" in _err(capsys)
    assert out.read_text() == '{"mine": true}\n'
    out.unlink()
    assert main(["compare", str(model), "--input", str(x), "--json", str(out)]) == 0
    assert main(["compare", str(model), "--input", str(x), "--json", str(out)]) == 0
    capsys.readouterr()


def test_a_lost_ledger_refuses_rather_than_replaces(qdq: tuple[Path, Path], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    model, x = qdq
    out = tmp_path / "y.npy"
    assert main(["run", str(model), "--input", str(x), "--output", str(out)]) == 0
    monkeypatch.setenv("HLSGEN_CACHE", str(tmp_path / "another_cache"))
    written = out.read_bytes()
    assert main(["run", str(model), "--input", str(x), "--output", str(out)]) == 2
    assert "was not written by hlsgen" in _err(capsys)
    assert out.read_bytes() == written

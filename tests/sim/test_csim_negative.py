"""Negative controls of the C simulation: a deliberately wrong table, rounding mode or beat count in
the generated C++ must make csim fail, and csim must name the layer where the hardware departs from
the golden model. The designs are those of test_csim_ops (generated again here; only the corrupted
copies are compiled)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from test_csim_ops import CONFIGS, OPS_NET, build, tie_model

from hlsgen.hw.model import Dataflow, Kind
from hlsgen.tools.csim import csim


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Dataflow]]:
    """Generated projects (not compiled): the int8 op net and the rounding-tie model."""
    root = tmp_path_factory.mktemp("csim_negative")
    (root / "ops.yaml").write_text(OPS_NET)
    onnx.save(tie_model(), root / "ties.onnx")
    np.save(root / "calib.npy", np.random.default_rng(1).standard_normal((8, 4, 6, 6)).astype(np.float32) * 2)
    made = {"ops_int8": build(root / "ops_int8", root / "ops.yaml", CONFIGS["ops_int8"])[:2]}
    for rounding in ("half_even", "half_up"):
        made[f"ties_{rounding}"] = build(root / f"ties_{rounding}", root / "ties.onnx",
                                         {"quant": {"rounding": rounding}}, root / "calib.npy")[:2]
    return made


def _corrupt(src: Path, dst: Path, path: str, edit: Any) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("build"))
    f = dst / "hls" / path
    text = f.read_text()
    changed = edit(text)
    assert changed != text
    f.write_text(changed)
    return dst


def _edit_table(name: str, change: Any) -> Any:
    """An edit of weights.h applying `change` to every entry of one table (the type stays valid)."""
    def edit(text: str) -> str:
        start = text.index(f" {name}[")
        start = text.index("= {", start)
        end = text.index("};", start)
        body = re.sub(r"-?\d+", lambda m: str(change(int(m.group(0)))), text[start:end])
        return text[:start] + body + text[end:]
    return edit


def test_corrupt_multiplier_is_named(folders: dict, tmp_path: Path) -> None:
    out, df = folders["ops_int8"]
    victim = next(lay for lay in df.layers if lay.kind == "dwconv")
    bad = _corrupt(out, tmp_path / "bad", "src/weights.h", _edit_table(f"{victim.name}_m", lambda m: m // 2))
    r = csim(bad, layers=True)
    assert not r.passed and r.divergence is not None
    assert r.divergence.layer == victim.name and r.divergence.channel is not None
    assert r.divergence.expected != r.divergence.got


def test_flipped_rounding_is_named(folders: dict, tmp_path: Path) -> None:
    out, df = folders["ties_half_even"]
    victim = df.layers[1]  # conv2: a plain conv whose requant hits ties

    def flip(text: str) -> str:
        start = text.index(f"struct cfg_{victim.name} ")
        return text[:start] + text[start:].replace("ROUNDING = 0;", "ROUNDING = 1;", 1)

    r = csim(_corrupt(out, tmp_path / "bad", "src/params.h", flip), layers=True)
    assert not r.passed and r.divergence is not None and r.divergence.layer == victim.name


def test_short_fork_is_caught(folders: dict, tmp_path: Path) -> None:
    """A kernel reading one beat too few per frame: hls::stream warnings or misaligned frames fail."""
    out = folders["ties_half_even"][0]
    beats = int(re.search(r"fork2<(\d+)>", (out / "hls" / "src" / "top.cpp").read_text()).group(1))
    bad = _corrupt(out, tmp_path / "bad", "src/top.cpp",
                   lambda t: t.replace(f"fork2<{beats}>", f"fork2<{beats - 1}>", 1))
    r = csim(bad, layers=True)
    assert not r.passed and ("hls::stream" in r.output.lower() or "unread" in r.output)


def test_output_mismatch_localized_by_rebuild(folders: dict, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The default path (outputs only) fails, then rebuilds with taps and names the layer."""
    out, df = folders["ties_half_up"]
    victim = next(lay for lay in df.layers if lay.kind != Kind.CONVERT)
    r = csim(_corrupt(out, tmp_path / "bad", "src/weights.h", _edit_table(f"{victim.name}_w", lambda w: -w)))
    assert not r.passed and r.divergence is not None and r.divergence.layer == victim.name
    printed = capsys.readouterr().out
    assert "MISMATCH" in printed and "-DHLSGEN_TAP" in printed

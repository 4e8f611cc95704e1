"""The self-testing bitstream (`hlsgen pnr OUT --board ulx3s --bitstream`, tools/selftest.py and
tools/bitstream.py): the board top (the design, its test vectors in ROM, hg_selftest's checker, LEDs)
simulated as the board runs it, under Verilator and Icarus: PASS on the real vectors, twice (the second
run started by FIRE1), FAIL on a corrupted golden word and on a corrupted weight; then the bitstream
itself, whose sources are the simulated ones, and a PLL clock the routed top cannot reach refused.

The design: tests/sim/test_synth.py's two dense layers, compiled for the ULX3S's LFE5U-85F (synth and
P&R of the board top take ~30 s on an idle 2-core machine; the simulations a few seconds each).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import rtl_nets
from test_synth import two_dense

from hlsgen.cli import main
from hlsgen.devices.boards import find_board
from hlsgen.errors import HlsgenError
from hlsgen.tools import selftest
from hlsgen.tools.bitstream import BIT, bitstream

ULX3S = find_board("ulx3s")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, folds, _ = two_dense()
    return rtl_nets.compile_to(tmp_path_factory.mktemp("selftest"), model, hw={"layers": folds, "part": ULX3S.part})


def _golden(out: Path) -> list[str]:
    return (out / "vectors" / "output.hex").read_text().split()


@pytest.mark.parametrize("sim", ["verilator", "icarus"])
def test_the_board_top_passes_on_the_real_vectors_twice(compiled: Path, sim: str) -> None:
    r = selftest.simulate(compiled, ULX3S, sim)
    assert not r["timeout"] and [run["run"] for run in r["runs"]] == [1, 2]
    assert all(run["pass"] and run["mismatches"] == 0 for run in r["runs"])
    assert r["runs"][0]["cycles"] == r["runs"][1]["cycles"] > 0  # FIRE1 reran the same frames


def test_a_corrupted_golden_word_fails(compiled: Path) -> None:
    words = _golden(compiled)
    words[1] = f"{int(words[1], 16) ^ 1:0{len(words[1])}x}"  # one bit of one output beat
    r = selftest.simulate(compiled, ULX3S, "verilator", ("\n".join(words) + "\n").encode())
    assert [(run["pass"], run["mismatches"]) for run in r["runs"]] == [(False, 1), (False, 1)]


def test_a_corrupted_weight_fails(compiled: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(compiled, bad)
    mem = sorted((bad / "rtl").glob("*_w.mem"))[0]
    lines = mem.read_text().split("\n")
    first = lines[0]
    lines[0] = f"{int(first, 16) ^ (1 << (4 * len(first) - 2)):0{len(first)}x}"  # a high bit of the first word
    mem.write_text("\n".join(lines))
    r = selftest.simulate(bad, ULX3S, "icarus")
    assert not r["timeout"] and all(not run["pass"] and run["mismatches"] >= 1 for run in r["runs"])


@pytest.fixture(scope="module")
def built(compiled: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    mp = pytest.MonkeyPatch()
    mp.setenv("HLSGEN_CACHE", str(tmp_path_factory.mktemp("cache")))
    try:
        return bitstream(compiled, "ulx3s")
    finally:
        mp.undo()


def test_the_bitstream_is_built_from_the_simulated_sources(built: dict[str, Any], compiled: Path) -> None:
    bit = (compiled / "pnr" / BIT).read_bytes()
    assert b"Part: LFE5U-85F-6CABGA381" in bit[:64] and b"\xff\xff\xbd\xb3" in bit[:64]  # ecppack's header, preamble
    assert built["met"] and built["fmax_mhz"] >= built["pll_mhz"] and built["board"] == "ulx3s"
    # the PLL at 90 % of the out-of-context Fmax, which the same OUT/pnr/result.json holds
    fmax = json.loads((compiled / "pnr" / "result.json").read_text())["fmax_mhz"]
    assert built["pll_mhz"] <= 0.9 * fmax
    sources = compiled / "pnr" / "ulx3s" / "sources"
    simulated = selftest.sources(compiled, ULX3S, built["pll_mhz"])
    for name, data in simulated.items():
        assert (sources / name).read_bytes() == data, name
    lpf = (sources / "ulx3s.lpf").read_text()
    assert 'LOCATE COMP "clk_25mhz" SITE "G2"' in lpf and 'LOCATE COMP "led[2]" SITE "C1"' in lpf
    assert "EHXPLLL" in (sources / "hg_pll.sv").read_text()
    assert built["utilization"]["IO"]["used"] == 1 + 2 + 8  # the oscillator, two buttons, eight LEDs


def test_a_clock_the_top_cannot_reach_is_refused(built: dict[str, Any], compiled: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    before = (compiled / "pnr" / BIT).read_bytes()
    assert main(["pnr", str(compiled), "--board", "ulx3s", "--bitstream", "--freq", "400"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("hlsgen: error:")]
    assert len(errors) == 1 and "under the PLL's 400 MHz" in errors[0] and "give --freq" in errors[0]
    assert (compiled / "pnr" / BIT).read_bytes() == before  # nothing written


def test_board_refusals_are_one_line(compiled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pnr", str(compiled), "--board", "ulx3s"]) == 2
    assert "--board and --bitstream go together" in capsys.readouterr().err
    with pytest.raises(HlsgenError, match="board 'icebreaker' is not one hlsgen knows: ulx3s"):
        find_board("icebreaker")

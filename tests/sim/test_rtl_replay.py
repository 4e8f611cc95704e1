"""The SystemVerilog replay testbench (OUT/tb/replay/, the back-to-back run of `hlsgen rtlsim`): bit-exact
on a small network with every layer stream checked in SV, the same figures as the cocotb run, and
negative controls: a corrupted output word, a corrupted layer word and a mutated RTL multiplier are
each reported with the right first word and layer; a timeout is reported as such; Icarus runs the same
testbench and agrees cycle for cycle (heavy).

The replay build is cached by content (rtlsim.build), so the vector controls reuse one build.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import rtl_nets

from hlsgen.tools import replay, rtlsim
from hlsgen.tools.environment import simulator_env


def run_replay(out: Path, sim: str = "verilator", frames: int | None = None, extra: tuple[str, ...] = ()) -> dict:
    """Only the replay run (no cocotb): its result entry."""
    top, sources = rtlsim.design(out)
    simulator_env(sim)
    build_dir, _, _ = rtlsim.build(replay.replay_sources(out, sources), replay.REPLAY_TOP, sim, False, kind="replay")
    run_dir = rtlsim.fresh_run_dir(out, out / "rtlsim" / f"replay-{sim}")
    replay.run_replay(out, top, sim, build_dir, run_dir, frames, False, extra)
    return json.loads((run_dir / "result.json").read_text())["throughput"]


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, folds = rtl_nets.grid_net()
    return rtl_nets.compile_to(tmp_path_factory.mktemp("grid_replay"), model, hw={"layers": folds})


@pytest.fixture(scope="module")
def good(grid: Path) -> dict[str, Any]:
    return run_replay(grid, frames=3)


def _copy(grid: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(grid, out, ignore=shutil.ignore_patterns("rtlsim"))
    return out


def _meta(out: Path) -> dict[str, Any]:
    return json.loads((out / "vectors" / "meta.json").read_text())


def test_replay_is_bit_exact_on_every_layer(good: dict[str, Any], grid: Path) -> None:
    r = good
    assert r["testbench"] == "sv-replay" and r["end"] == "done"
    meta = _meta(grid)
    assert r["passed"] and r["mismatches"] == 0 and r["beats"] == r["expected_beats"] == \
        3 * meta["outputs"][0]["beats_per_frame"] == 3 * 2  # a 10-code output pixel: 2 beats of 5 at 64 bits
    assert [row["stream"] for row in r["layers"]] == [lay["name"] for lay in meta["layers"]]
    for row, lay in zip(r["layers"], meta["layers"], strict=True):
        assert row["first_mismatch"] is None and row["beats"] == row["expected_beats"] == 3 * lay["beats_per_frame"]
    assert r["first_layer"] is None
    assert r["cycles_per_frame"] == r["model_cycles"] == 3402 and r["latency"] > 0
    assert r["simulated_cycles"] > 3 * 3402 and r["cycles_per_second"] > 0
    _, sources = rtlsim.design(grid)
    key = rtlsim.build_key(replay.replay_sources(grid, sources), replay.REPLAY_TOP, "verilator", False, "replay")
    log = (rtlsim.cache_root() / key / "build.log").read_text()
    assert "verilator --cc --exe --build --no-timing" in log and "%Warning" not in log  # builds warning-free


def test_replay_agrees_with_the_cocotb_run(good: dict[str, Any], grid: Path) -> None:
    """The cocotb throughput test (still in OUT/tb) sees the same frame ends and latency."""
    top, sources = rtlsim.design(grid)
    simulator_env("verilator")
    build_dir, _, _ = rtlsim.build(sources, top, "verilator", False)
    res, _, _ = rtlsim.simulate(grid, top, "verilator", build_dir, 3, 1, False, grid / "rtlsim" / "cocotb",
                                tests="throughput")
    c = res["throughput"]
    assert c["passed"] and c["latency"] == good["latency"] and c["cycles_per_frame"] == good["cycles_per_frame"]
    assert [b - a for a, b in zip(c["frame_end_cycles"], c["frame_end_cycles"][1:], strict=False)] == \
        [b - a for a, b in zip(good["frame_end_cycles"], good["frame_end_cycles"][1:], strict=False)]


def test_standalone_report_reader(good: dict[str, Any], grid: Path) -> None:
    """`python -m hlsgen_tb.replay` in OUT/tb (no hlsgen import) gives the same entry."""
    report = grid / "rtlsim" / "replay-verilator" / "replay.txt"
    r = subprocess.run([sys.executable, "-m", "hlsgen_tb.replay", str(report)], cwd=grid / "tb",
                       capture_output=True, text=True, env={"PYTHONPATH": str(grid / "tb"), "PATH": ""})
    assert r.returncode == 0, r.stderr
    entry = json.loads(r.stdout)
    assert {k: entry[k] for k in ("passed", "layers", "frame_end_cycles")} == \
        {k: good[k] for k in ("passed", "layers", "frame_end_cycles")}


def _flip(path: Path, index: int) -> tuple[int, int]:
    """Invert every bit of channel 0 of beat `index` in a vectors file; (old, new) beat values."""
    words = path.read_text().split()
    old = int(words[index], 16)
    new = old ^ 0xFF
    words[index] = format(new, "x").rjust(len(words[index]), "0")
    path.write_text("\n".join(words) + "\n")
    return old, new


def test_corrupted_output_word_is_the_first_mismatch(grid: Path, tmp_path: Path) -> None:
    out = _copy(grid, tmp_path)
    meta = _meta(out)
    per = meta["outputs"][0]["beats_per_frame"]
    index = per + per // 2  # frame 1 of the stored frames
    old, new = _flip(out / "vectors" / "output.hex", index)
    r = run_replay(out, frames=3)
    assert not r["passed"] and r["mismatches"] == 1 and r["beats"] == r["expected_beats"]
    m = r["first_mismatch"]
    fold = meta["outputs"][0]["fold"]
    folds = -(-meta["outputs"][0]["channels"] // fold)  # beats a pixel
    beat = per // 2
    assert (m["index"], m["frame"], m["pixel"], m["channel"]) == (index, 1, beat // folds, beat % folds * fold)
    bits = meta["outputs"][0]["bits"]
    sign = 1 << (bits - 1)
    assert m["got"] == ((old & 0xFF) ^ sign) - sign and m["expected"] == ((new & 0xFF) ^ sign) - sign
    assert r["first_layer"] is None  # the layer vectors still match: the RTL is right, the word was not


def test_corrupted_layer_word_names_the_layer(grid: Path, tmp_path: Path) -> None:
    out = _copy(grid, tmp_path)
    lay = _meta(out)["layers"][2]
    index = lay["beats_per_frame"] + 5
    _flip(out / "vectors" / lay["file"], index)
    r = run_replay(out, frames=2)
    assert r["passed"]  # the network output is still right
    first = r["first_layer"]
    assert first["layer"] == lay["layer"] and first["first_mismatch"]["index"] == index
    assert [row["first_mismatch"] is None for row in r["layers"]].count(False) == 1


def test_mutated_multiplier_is_caught_and_layer_named(grid: Path, tmp_path: Path) -> None:
    out = _copy(grid, tmp_path)
    top = out / "rtl" / "hlsgen_top.sv"
    text = top.read_text()
    unit = text.index("u_layer_conv_7_node (")  # the dilated stride-2 conv with LeakyReLU
    start = text.index("'h", text.rindex(".MULT(", 0, unit)) + 2
    end = text.index(")", start)
    top.write_text(text[:start] + "0" * (end - start) + text[end:])  # every multiplier 0
    r = run_replay(out, frames=2)
    assert not r["passed"] and r["mismatches"] > 0 and r["first_mismatch"]["frame"] == 0
    assert r["first_layer"]["layer"] == "layer_conv_7_node"
    layers = [row["layer"] for row in r["layers"]]
    bad = [row["layer"] for row in r["layers"] if row["first_mismatch"] is not None]
    assert layers.index(bad[0]) == layers.index("layer_conv_7_node")  # nothing before it diverged


def test_timeout_is_reported(grid: Path, tmp_path: Path) -> None:
    out = _copy(grid, tmp_path)
    r = run_replay(out, frames=2, extra=("+hlsgen_max_cycles=500",))
    assert not r["passed"] and r["end"] == "timeout" and r["beats"] < r["expected_beats"]
    assert r["mismatches"] == 0 and r["first_mismatch"] is None


@pytest.mark.heavy
def test_icarus_runs_the_same_testbench(grid: Path) -> None:
    """Icarus (four-state) agrees with Verilator on every figure, layer rows included (heavy: Icarus
    needs 30 s of CPU and more for the 7k cycles of two grid frames)."""
    if not shutil.which("iverilog"):
        pytest.skip("Icarus Verilog not installed (Debian: apt-get install iverilog)")
    verilator = run_replay(grid, frames=2)
    r = run_replay(grid, sim="icarus", frames=2)
    keys = ("passed", "beats", "frame_end_cycles", "latency", "layers", "simulated_cycles")
    assert {k: r[k] for k in keys} == {k: verilator[k] for k in keys}


def test_rtlsim_runs_the_replay_then_the_stalls(grid: Path) -> None:
    """`hlsgen rtlsim`: `throughput` is the SV replay on all frames, `random_stalls` cocotb on two."""
    assert rtlsim.run_rtlsim(grid, frames=3, seed=4) == 0
    res = rtl_nets.results(grid)
    assert res["throughput"]["testbench"] == "sv-replay" and res["throughput"]["frames"] == 3
    stalls = res["random_stalls"]
    assert "testbench" not in stalls and stalls["frames"] == 2 and stalls["stall"] > 0 and stalls["passed"]
    assert (grid / "rtlsim" / "verilator" / "replay.txt").exists()

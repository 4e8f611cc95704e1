"""hg_requant (the requant epilogue of every RTL layer) against hlsgen.numerics, value by value.

One Verilator build of a wrapper with two lanes (ties to even, half up) runs a cocotb test that feeds
random operands, exact rounding ties at every shift, LeakyReLU (m_neg), skip terms and values that
saturate at both clamps, and compares each output with `numerics.scale_accumulator` +
`numerics.requantize`. The cocotb test lives in this file too (its name does not start with test_).

A second wrapper (rtl_two_step_tb.sv) holds hg_mvu_lane with a two-step epilogue (docs/numerics.md §8)
over two channels, ties to even and half up: accumulators make step 1 (the model's intermediate
quantizer) round on exact ties and saturate at both ends, step 2 adds skip codes and a bias; every
output is compared with `numerics.fused_epilogue`. Negative control: the same outputs disagree with
the single-rounding form and with step 1 unclamped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from hlsgen import numerics

HERE = Path(__file__).resolve().parent
ZP, LO, HI = 3, -100, 90
RQ_SV = HERE.parents[1] / "templates" / "verilog" / "rtl" / "hg_requant.sv"
# hg_requant's register stages: y follows its operands by DEPTH cycles (and no fewer: the first DEPTH
# outputs are not compared, every later one is, against the operands of DEPTH cycles before)
DEPTH = int(re.search(r"localparam int DEPTH = (\d+);", RQ_SV.read_text()).group(1))


def operand_table(n: int = 3000, seed: int = 5) -> np.ndarray:
    """Rows (x, m, m_neg, sx, sm, sh); the second half are exact ties of x*m at shift sh."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-(1 << 19), 1 << 19, n)
    m = rng.integers(-(1 << 16), 1 << 16, n)
    mn = rng.integers(-(1 << 16), 1 << 16, n)
    sx = rng.integers(-512, 512, n)
    sm = rng.integers(-(1 << 17), 1 << 17, n)
    sh = rng.integers(0, 41, n)
    half = n // 2
    sh[half:] = rng.integers(1, 11, n - half)  # ties: v = (2k+1) * 2^(sh-1), no skip, m = 1
    k = rng.integers(-200, 200, n - half)
    x[half:], m[half:], sx[half:] = (2 * k + 1) << (sh[half:] - 1), 1, 0
    mn[half:] = 1
    return np.stack([x, m, mn, sx, sm, sh], axis=1)


def expected(rows: np.ndarray, rounding: str) -> np.ndarray:
    x, m, mn, sx, sm, sh = rows.T
    v = numerics.scale_accumulator(x, m, mn) + sx * sm
    return numerics.requantize(v, sh, ZP, LO, HI, rounding)


def _signed8(v: int) -> int:
    return v - 256 if v & 0x80 else v


@cocotb.test()
async def requant_vectors(dut) -> None:  # noqa: ANN001 - cocotb handle
    rows = operand_table()
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    names = ("x", "m", "m_neg", "sx", "sm", "sh")
    got_even, got_up = [], []
    for i in range(len(rows) + DEPTH):  # DEPTH register stages
        if i < len(rows):
            for name, value in zip(names, rows[i], strict=True):
                getattr(dut, name).value = int(value)
        await RisingEdge(dut.clk)
        if i >= DEPTH:
            got_even.append(_signed8(int(dut.y_even.value)))
            got_up.append(_signed8(int(dut.y_up.value)))
    for rounding, got in (("half_even", got_even), ("half_up", got_up)):
        want = expected(rows, rounding)
        bad = np.flatnonzero(np.asarray(got) != want)
        assert bad.size == 0, f"{rounding}: {rows[bad[0]].tolist()}: got {got[bad[0]]}, want {want[bad[0]]}"


def test_vectors_cover_ties_and_clamps() -> None:
    rows = operand_table()
    even, up = expected(rows, "half_even"), expected(rows, "half_up")
    assert np.sum(even != up) > 200  # many exact ties, where the modes differ
    assert np.sum(even == LO) > 50 and np.sum(even == HI) > 50  # both clamps saturate
    assert np.sum((rows[:, 0] * rows[:, 1] < 0) & (rows[:, 1] != rows[:, 2])) > 200  # m_neg used


# ---- two-step epilogue (hg_mvu_lane) ----------------------------------------------------------------
LATENCY = 2 * DEPTH  # two hg_requant steps
# per channel: M1, S1, M, S, Mb, skip zp, B2 (as in rtl_two_step_tb.sv)
CH = np.array([[3, 2, 5, 3, 2, -6, -9], [12345, 17, -7, 4, 3, 4, 100]], dtype=np.int64)
MID = (-5, -128, 127)
OUT = (7, -100, 90)


def two_step_table(n: int = 4000, seed: int = 3) -> np.ndarray:
    """Rows (nf, acc, skip): channel 0 with acc = 2 mod 4 half the time (exact ties of 3·acc/4)."""
    rng = np.random.default_rng(seed)
    nf = rng.integers(0, 2, n)
    acc = np.where(nf == 0, rng.integers(-400, 400, n), rng.integers(-(1 << 19), 1 << 19, n))
    ties = (nf == 0) & (rng.random(n) < 0.5)
    acc[ties] = 4 * (acc[ties] // 4) + 2
    return np.stack([nf, acc, rng.integers(-128, 128, n)], axis=1)


def two_step_expected(rows: np.ndarray, rounding: str, mid_clamp: bool = True, two_steps: bool = True) -> np.ndarray:
    nf, acc, skip = rows.T
    m1, s1, m, s, mb, zps, b2 = (CH[nf, i] for i in range(7))
    lo_t, hi_t = MID[1:] if mid_clamp else (-(1 << 30), 1 << 30)
    last = numerics.RequantStep(m, s, *OUT)
    if not two_steps:  # the single-rounding fusion: one shift for acc·M1·M (exact here)
        last = numerics.RequantStep(m1 * m, s1 + s, *OUT)
        return numerics.fused_epilogue(acc, last, None, (skip, zps, mb << s1), b2 << s1, rounding)
    mid = numerics.RequantStep(m1, s1, MID[0], lo_t, hi_t)
    return numerics.fused_epilogue(acc, last, mid, (skip, zps, mb), b2, rounding)


@cocotb.test()
async def two_step_vectors(dut) -> None:  # noqa: ANN001 - cocotb handle
    rows = two_step_table()
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    got_even, got_up = [], []
    for i in range(len(rows) + LATENCY):
        if i < len(rows):
            nf, acc, skip = (int(v) for v in rows[i])
            dut.nf.value = nf
            dut.acc.value = acc
            dut.skip_data.value = (skip & 0xFF) << (8 * nf)
        await RisingEdge(dut.clk)
        if i >= LATENCY:
            got_even.append(_signed8(int(dut.y_even.value)))
            got_up.append(_signed8(int(dut.y_up.value)))
    for rounding, got in (("half_even", got_even), ("half_up", got_up)):
        want = two_step_expected(rows, rounding)
        bad = np.flatnonzero(np.asarray(got) != want)
        assert bad.size == 0, f"{rounding}: {rows[bad[0]].tolist()}: got {got[bad[0]]}, want {want[bad[0]]}"
        # negative controls: the check would see a dropped intermediate clamp or rounding
        assert np.sum(np.asarray(got) != two_step_expected(rows, rounding, mid_clamp=False)) > 100
        assert np.sum(np.asarray(got) != two_step_expected(rows, rounding, two_steps=False)) > 100


def test_two_step_vectors_cover_ties_and_saturation() -> None:
    rows = two_step_table()
    nf, acc = rows[:, 0], rows[:, 1]
    v = CH[nf, 0] * acc
    t = MID[0] + numerics.round_shift(v, CH[nf, 1])
    assert np.sum((nf == 0) & (v % 4 == 2)) > 500  # exact ties in step 1
    assert np.sum(t < MID[1]) > 300 and np.sum(t > MID[2]) > 300  # step 1 saturates both ways
    assert np.sum(two_step_expected(rows, "half_even") != two_step_expected(rows, "half_up")) > 100


def _run(tmp_path: Path, sources: list[Path], top: str, testcase: str) -> None:
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner

    from hlsgen.tools.environment import outside_pytest, simulator_env

    simulator_env("verilator")
    runner = get_runner("verilator")
    runner.build(sources=[str(s) for s in sources], hdl_toplevel=top, build_dir=str(tmp_path / "b"),
                 timescale=("1ns", "1ps"), log_file=str(tmp_path / "build.log"))
    with outside_pytest():
        xml = runner.test(hdl_toplevel=top, hdl_toplevel_lang="verilog", test_module="test_rtl_requant",
                          testcase=testcase, test_dir=str(HERE), build_dir=str(tmp_path / "b"),
                          results_xml=str(tmp_path / "r.xml"), log_file=str(tmp_path / "sim.log"),
                          extra_env={"PYTHONPATH": os.pathsep.join([str(HERE)])})
    assert get_results(Path(xml)) == (1, 0), (tmp_path / "sim.log").read_text()[-3000:]


def test_requant_lane_matches_numerics(tmp_path: Path) -> None:
    from hlsgen.backends.render import TEMPLATES

    _run(tmp_path, [TEMPLATES / "verilog" / "rtl" / "hg_requant.sv", TEMPLATES / "verilog" / "rtl" / "hg_mul.sv",
                    HERE / "rtl_requant_tb.sv"], "rtl_requant_tb",
         "requant_vectors")


def test_two_step_lane_matches_numerics(tmp_path: Path) -> None:
    from hlsgen.backends.render import TEMPLATES

    rtl = TEMPLATES / "verilog" / "rtl"
    _run(tmp_path, [rtl / "hg_requant.sv", rtl / "hg_mul.sv", rtl / "hg_table.sv", rtl / "hg_delay.sv",
                    rtl / "hg_mvu_lane.sv", HERE / "rtl_two_step_tb.sv"],
         "rtl_two_step_tb",
         "two_step_vectors")


def test_callers_spell_the_requant_depth() -> None:
    """Every module that instantiates hg_requant (or hg_mvu_lane) delays its side data by RQD = DEPTH."""
    callers = [p for p in RQ_SV.parent.glob("*.sv")
               if p.name not in (RQ_SV.name, "hg_sum_lanes.sv")  # its callers, hg_pool and hg_gap, delay
               and re.search(r"^\s*hg_(requant|mvu_lane|sum_lanes) #\(", p.read_text(), re.M)]
    assert {p.name for p in callers} >= {"hg_mvu_lane.sv", "hg_mvu.sv", "hg_eltwise.sv", "hg_pool.sv", "hg_gap.sv"}
    for p in callers:
        assert re.findall(r"localparam int RQD = (\d+);", p.read_text()) == [str(DEPTH)], p.name

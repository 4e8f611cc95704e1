"""hg_requant (the requant epilogue of every RTL layer) against hlsgen.numerics, value by value.

One Verilator build of a wrapper with two lanes (ties to even, half up) runs a cocotb test that feeds
random operands, exact rounding ties at every shift, LeakyReLU (m_neg), skip terms and values that
saturate at both clamps, and compares each output with `numerics.scale_accumulator` +
`numerics.requantize`. The cocotb test lives in this file too (its name does not start with test_).
"""

from __future__ import annotations

import os
from pathlib import Path

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from hlsgen import numerics

HERE = Path(__file__).resolve().parent
ZP, LO, HI = 3, -100, 90


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
    for i in range(len(rows) + 2):  # two register stages
        if i < len(rows):
            for name, value in zip(names, rows[i], strict=True):
                getattr(dut, name).value = int(value)
        await RisingEdge(dut.clk)
        if i >= 2:
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


def test_requant_lane_matches_numerics(tmp_path: Path) -> None:
    from cocotb_tools.runner import get_runner

    from hlsgen.backends.render import TEMPLATES
    from hlsgen.sim.tools import outside_pytest, simulator_env

    simulator_env("verilator")
    sources = [TEMPLATES / "verilog" / "rtl" / "hg_requant.sv", HERE / "rtl_requant_tb.sv"]
    runner = get_runner("verilator")
    runner.build(sources=[str(s) for s in sources], hdl_toplevel="rtl_requant_tb", build_dir=str(tmp_path / "b"),
                 timescale=("1ns", "1ps"), log_file=str(tmp_path / "build.log"))
    with outside_pytest():
        xml = runner.test(hdl_toplevel="rtl_requant_tb", hdl_toplevel_lang="verilog", test_module="test_rtl_requant",
                          test_dir=str(HERE), build_dir=str(tmp_path / "b"), results_xml=str(tmp_path / "r.xml"),
                          log_file=str(tmp_path / "sim.log"), extra_env={"PYTHONPATH": os.pathsep.join([str(HERE)])})
    from cocotb_tools.check_results import get_results

    assert get_results(Path(xml)) == (1, 0), (tmp_path / "sim.log").read_text()[-3000:]

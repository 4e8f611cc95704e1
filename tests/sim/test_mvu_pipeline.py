"""hg_mvu's adder tree and the latency the Python side accounts for it.

hg_mvu sums a lane's SIMD products in TD = tree_depth(SIMD) register stages (groups of 4 a stage, at
most 2 partial sums left for the accumulate stage); hw/layers/mvu.tree_depth is the same count, and
hw/fifo.py's timed lead model adds it to UNIT_LATENCY for every matrix-vector layer. The RTL function
is evaluated by Icarus (its text cut out of hg_mvu.sv) and compared with the Python one for every SIMD
up to 1100; the negative control shows the comparison sees an off-by-one.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from hlsgen.backends.render import TEMPLATES
from hlsgen.hw import fifo
from hlsgen.hw.layers import mvu

MVU_SV = TEMPLATES / "verilog" / "rtl" / "hg_mvu.sv"
N_MAX = 1100


def rtl_tree_depths(tmp_path: Path) -> list[int]:
    """tree_depth(n) of hg_mvu.sv for n = 1 .. N_MAX, evaluated by Icarus."""
    assert shutil.which("iverilog"), "iverilog is required (make test installs it: apt-get install iverilog)"
    fn = re.search(r"^\s*function int tree_depth\(.*?endfunction", MVU_SV.read_text(), re.S | re.M)
    assert fn, "no tree_depth function in hg_mvu.sv"
    tb = tmp_path / "tb.sv"
    tb.write_text(f"module tb;\n{fn.group(0)}\n    initial begin\n"
                  f"        for (int n = 1; n <= {N_MAX}; n++) $display(\"%0d\", tree_depth(n));\n"
                  "        $finish;\n    end\nendmodule\n")
    subprocess.run(["iverilog", "-g2012", "-o", str(tmp_path / "tb.vvp"), str(tb)], check=True)
    out = subprocess.run(["vvp", "-n", str(tmp_path / "tb.vvp")], check=True, capture_output=True, text=True)
    return [int(v) for v in out.stdout.split() if v.isdigit()]


def disagreements(rtl: list[int], py: Callable[[int], int]) -> list[int]:
    assert len(rtl) == N_MAX
    return [n for n in range(1, N_MAX + 1) if rtl[n - 1] != py(n)]


def test_tree_depth_is_the_rtl_one(tmp_path: Path) -> None:
    rtl = rtl_tree_depths(tmp_path)
    assert disagreements(rtl, mvu.tree_depth) == []
    # the definition: the smallest d with SIMD <= 2 * 4^d
    assert [mvu.tree_depth(n) for n in (1, 2, 3, 8, 9, 32, 33, 128, 129, 512, 513)] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5]


def test_tree_depth_negative_control(tmp_path: Path) -> None:
    """An off-by-one Python count (a stage fewer from SIMD 9 on) is seen by the comparison."""
    rtl = rtl_tree_depths(tmp_path)
    wrong = disagreements(rtl, lambda n: mvu.tree_depth(n) - (1 if n > 8 else 0))
    assert wrong and wrong[0] == 9


def test_unit_latency_adds_the_tree() -> None:
    """A matrix-vector layer's latency in the timed lead model grows with its tree; other kinds get
    UNIT_LATENCY."""
    from hlsgen.hw.model import Kind

    class Lay:
        def __init__(self, kind: Kind, simd: int) -> None:
            self.kind, self.simd = kind, simd

    gemm, dw, pool = Lay(Kind.GEMM, 13), Lay(Kind.DWCONV, 13), Lay(Kind.MAXPOOL, 13)
    assert fifo.unit_latency(gemm) == fifo.UNIT_LATENCY + 2  # type: ignore[arg-type]
    assert fifo.unit_latency(dw) == fifo.UNIT_LATENCY  # type: ignore[arg-type]  # hg_mvu runs SIMD 1
    assert fifo.unit_latency(pool) == fifo.UNIT_LATENCY  # type: ignore[arg-type]

"""Lookup-table layers (QLut: Sigmoid, Tanh, ... on a quantized input) in hardware: C simulation
bit-exact layer by layer, the Verilog bit-exact with random stalls and at the modelled cycles, each
with a negative control (a corrupted table is caught)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx_builders import init, model, node, vi

from hlsgen import compile_model
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import csim

RNG = np.random.default_rng(31)


def lut_net():
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Sigmoid", ["c1"], ["s"]),
             node("Conv", ["s", "w2", "b2"], ["c2"], kernel_shape=[1, 1]),
             node("HardSwish", ["c2"], ["h"]),
             node("Conv", ["h", "w3", "b3"], ["y"], kernel_shape=[1, 1])]
    inits = [init("w1", RNG.standard_normal((5, 3, 3, 3))), init("b1", RNG.standard_normal(5)),
             init("w2", RNG.standard_normal((4, 5, 1, 1))), init("b2", RNG.standard_normal(4)),
             init("w3", RNG.standard_normal((2, 4, 1, 1))), init("b3", np.zeros(2))]
    return model(nodes, [vi("x", [1, 3, 6, 5])], [vi("y", [1, 2, 6, 5])], inits, opset=14)


@pytest.fixture(scope="module")
def lut_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x = RNG.uniform(-1, 1, (8, 3, 6, 5)).astype(np.float32)
    c = compile_model(from_onnx_model(lut_net()), calib=x)
    assert [n.op for n in c.graph.nodes].count("QLut") == 2
    out, _ = write_compilation(c, tmp_path_factory.mktemp("lut") / "out")
    return out


def test_lut_layers_csim_bit_exact(lut_out: Path) -> None:
    r = csim(lut_out, layers=True)
    assert r.divergence is None and r.passed


def test_corrupted_table_is_caught(lut_out: Path, tmp_path: Path) -> None:
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(lut_out, bad)
    weights = bad / "hls" / "src" / "weights.h"
    text = weights.read_text()
    head = text.index("layer_Sigmoid_1_t[256] = {")
    body_start, body_end = text.index("{", head) + 1, text.index("};", head)
    shifted = [str((int(v) + 1) % 128) for v in text[body_start:body_end].replace("\n", " ").split(",") if v.strip()]
    weights.write_text(text[:body_start] + ", ".join(shifted) + text[body_end:])
    r = csim(bad, layers=True)
    assert not r.passed and r.divergence is not None and "Sigmoid" in str(r.divergence)


def test_lut_layers_rtl_bit_exact_with_stalls(lut_out: Path) -> None:
    from hlsgen.cli import main

    assert main(["rtlsim", str(lut_out), "--frames", "2"]) == 0


def test_corrupted_rom_is_caught_in_rtl(lut_out: Path, tmp_path: Path) -> None:
    import shutil

    from hlsgen.tools.environment import simulator_env
    from hlsgen.tools.rtlsim import build, design, simulate

    bad = tmp_path / "bad"
    shutil.copytree(lut_out, bad)
    (mem,) = (bad / "rtl").glob("*Sigmoid*_t.mem")
    words = mem.read_text().split()
    mem.write_text("".join(f"{(int(w, 16) + 1) % 256:02x}\n" for w in words))
    simulator_env("verilator")
    top, sources = design(bad)
    build_dir, _, _ = build(sources, top, "verilator", False)
    results, _, _ = simulate(bad, top, "verilator", build_dir, 2, 1, False)
    assert results and not any(r["passed"] for r in results.values())


def test_lut_design_lints(lut_out: Path) -> None:
    from rtl_nets import verilator_lint

    assert (lut_out / "rtl" / "hg_lut.sv").is_file()
    r = verilator_lint(lut_out / "rtl")
    assert r.returncode == 0 and "%Warning" not in r.stderr, r.stderr[-3000:]

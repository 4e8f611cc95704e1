"""Mid-network layout changes that the stream order cannot absorb get a reorder layer (a frame
buffer written in arrival order, read in canonical order) in front of the reading layer (issue 7).

The test net swaps H and W between two convs (Transpose(0, 1, 3, 2)) and reshapes [4, 6, 4] ->
[8, 3, 4] before a third: two reorder layers. C simulation is bit-exact layer by layer; the Verilog
is bit-exact with random stalls and its cycles equal the model; a corrupted read order is caught.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx_builders import init, model, node, vi

from hlsgen import compile_model
from hlsgen.cli import main
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.params import ReorderParams
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import csim

RNG = np.random.default_rng(41)


def reorder_net():
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", ["c1"], ["r1"]),
             node("Transpose", ["r1"], ["t"], perm=[0, 1, 3, 2]),
             node("Conv", ["t", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Reshape", ["c2", "shape"], ["r"]),
             node("Conv", ["r", "w3", "b3"], ["y"], kernel_shape=[1, 1])]
    inits = [init("w1", RNG.standard_normal((4, 3, 3, 3))), init("b1", RNG.standard_normal(4)),
             init("w2", RNG.standard_normal((4, 4, 3, 3))), init("b2", RNG.standard_normal(4)),
             init("shape", np.array([1, 8, 3, 4]), np.int64),
             init("w3", RNG.standard_normal((2, 8, 1, 1))), init("b3", np.zeros(2))]
    return model(nodes, [vi("x", [1, 3, 4, 6])], [vi("y", [1, 2, 3, 4])], inits, opset=13)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory):
    x = RNG.uniform(-1, 1, (8, 3, 4, 6)).astype(np.float32)
    c = compile_model(from_onnx_model(reorder_net()), calib=x)
    out, _ = write_compilation(c, tmp_path_factory.mktemp("reorder") / "out")
    return c, out


def test_two_reorder_layers_with_their_cycles(compiled) -> None:
    c, _ = compiled
    df = build_dataflow(c.graph, c.config.hw)
    reorders = [lay for lay in df.layers if lay.kind == "reorder"]
    assert len(reorders) == 2
    for lay in reorders:
        p = lay.params
        assert isinstance(p, ReorderParams) and lay.cycles == max(p.in_pixels, p.elements)  # two banks
        assert sorted(lay.arrays["perm"].tolist()) == list(range(p.elements))


def test_reorder_csim_bit_exact(compiled) -> None:
    _, out = compiled
    r = csim(out, layers=True)
    assert r.divergence is None and r.passed


def test_reorder_rtl_bit_exact_with_stalls(compiled) -> None:
    _, out = compiled
    assert main(["rtlsim", str(out), "--frames", "2"]) == 0


def test_corrupted_read_order_is_caught_in_rtl(compiled, tmp_path: Path) -> None:
    import shutil

    from hlsgen.tools.environment import simulator_env
    from hlsgen.tools.rtlsim import build, design, simulate

    _, out = compiled
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    mem = sorted((bad / "rtl").glob("*_perm.mem"))[0]
    words = mem.read_text().split()
    mem.write_text("\n".join(words[1:] + words[:1]) + "\n")  # every element read one place late
    simulator_env("verilator")
    top, sources = design(bad)
    build_dir, _, _ = build(sources, top, "verilator", False)
    results, _, _ = simulate(bad, top, "verilator", build_dir, 2, 1, False)
    assert results and not any(r["passed"] for r in results.values())


def test_reorder_design_lints(compiled) -> None:
    from rtl_nets import verilator_lint

    _, out = compiled
    assert (out / "rtl" / "hg_reorder.sv").is_file()
    r = verilator_lint(out / "rtl")
    assert r.returncode == 0 and "%Warning" not in r.stderr, r.stderr[-3000:]

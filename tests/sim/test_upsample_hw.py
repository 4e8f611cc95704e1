"""Nearest-neighbour upsampling (ONNX Resize x2) as a hardware layer (upsample: hg_upsample, resize.h).

Two nets: conv -> maxpool -> conv -> Resize x2 -> conv, and a U-Net-ish skip, conv -> (skip) +
Resize(conv(maxpool)) -> Add -> conv, where the skip FIFO must hold what the upsampled branch lags
behind. C simulation is bit-exact layer by layer; the Verilog is bit-exact with random stalls and
its cycles per frame equal the model (replay run); a corrupted golden vector, and a wrong repeat
in the RTL (each row replayed from the wrong buffer slot), are caught.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from onnx_builders import init, model, node, vi

from hlsgen import compile_model
from hlsgen.cli import main
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.model import Kind
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import csim

RNG = np.random.default_rng(43)


def _conv(x: str, y: str, w: str, cin: int, cout: int) -> tuple[list, list]:
    nodes = [node("Conv", [x, w, f"{w}_b"], [f"{y}_c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", [f"{y}_c"], [y])]
    weights = RNG.standard_normal((cout, cin, 3, 3)) * 0.3
    return nodes, [init(w, weights), init(f"{w}_b", RNG.standard_normal(cout) * 0.1)]


def chain_net():
    """conv -> maxpool -> conv -> Resize x2 -> conv on [1, 3, 8, 6]."""
    a, ia = _conv("x", "c1", "w1", 3, 4)
    b, ib = _conv("m", "c2", "w2", 4, 6)
    nodes = [*a, node("MaxPool", ["c1"], ["m"], kernel_shape=[2, 2], strides=[2, 2]), *b,
             node("Resize", ["c2", "", "sc"], ["u"], mode="nearest"),
             node("Conv", ["u", "w3", "b3"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    inits = [*ia, *ib, init("sc", [1, 1, 2, 2]), init("w3", RNG.standard_normal((2, 6, 3, 3)) * 0.3),
             init("b3", np.zeros(2))]
    return model(nodes, [vi("x", [1, 3, 8, 6])], [vi("y", [1, 2, 8, 6])], inits, opset=13)


def skip_net():
    """s = conv(x); Add(s, Resize x2(conv(maxpool(s)))) -> conv, on [1, 3, 8, 6]."""
    a, ia = _conv("x", "s", "w1", 3, 4)
    b, ib = _conv("m", "c2", "w2", 4, 4)
    nodes = [*a, node("MaxPool", ["s"], ["m"], kernel_shape=[2, 2], strides=[2, 2]), *b,
             node("Resize", ["c2", "", "sc"], ["u"], mode="nearest"),
             node("Add", ["s", "u"], ["j"]),
             node("Conv", ["j", "w3", "b3"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    inits = [*ia, *ib, init("sc", [1, 1, 2, 2]), init("w3", RNG.standard_normal((2, 4, 3, 3)) * 0.3),
             init("b3", np.zeros(2))]
    return model(nodes, [vi("x", [1, 3, 8, 6])], [vi("y", [1, 2, 8, 6])], inits, opset=13)


NETS = {"chain": chain_net, "skip": skip_net}


@pytest.fixture(scope="module", params=sorted(NETS))
def compiled(request, tmp_path_factory: pytest.TempPathFactory):
    x = RNG.uniform(-1, 1, (8, 3, 8, 6)).astype(np.float32)
    c = compile_model(from_onnx_model(NETS[request.param](), request.param), calib=x)
    out, _ = write_compilation(c, tmp_path_factory.mktemp(f"upsample_{request.param}") / "out")
    return c, out


def test_one_upsample_layer_with_its_cycles(compiled) -> None:
    c, _ = compiled
    df = build_dataflow(c.graph, c.config.hw)
    (up,) = [lay for lay in df.layers if lay.kind == Kind.UPSAMPLE]
    x, out = df.streams[up.inputs[0]], df.streams[up.output]
    assert (x.height, x.width, out.height, out.width) == (4, 3, 8, 6)
    assert up.cycles == out.pixels == 48


def test_upsample_csim_bit_exact(compiled) -> None:
    _, out = compiled
    r = csim(out, layers=True)
    assert r.divergence is None and r.passed


def test_upsample_rtl_bit_exact_with_stalls_at_the_modelled_speed(compiled) -> None:
    _, out = compiled
    assert main(["rtlsim", str(out), "--frames", "3"]) == 0
    t = json.loads((out / "rtlsim" / "verilator" / "result.json").read_text())["throughput"]
    assert t["passed"] and t["cycles_per_frame"] == t["model_cycles"], t


def _rtl_fails(bad: Path) -> bool:
    from hlsgen.tools.environment import simulator_env
    from hlsgen.tools.rtlsim import build, design, simulate

    simulator_env("verilator")
    top, sources = design(bad)
    build_dir, _, _ = build(sources, top, "verilator", False)
    results, _, _ = simulate(bad, top, "verilator", build_dir, 2, 1, False)
    return bool(results) and not any(r["passed"] for r in results.values())


def test_a_wrong_repeat_in_the_rtl_is_caught(compiled, tmp_path: Path) -> None:
    """Negative control: hg_upsample replaying column x + 1 of its row buffer (a wrong repeat) fails."""
    _, out = compiled
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    sv = bad / "rtl" / "hg_upsample.sv"
    text = sv.read_text()
    assert "reads ? in_data : row[x]" in text
    wrong = "reads ? in_data : row[x == LAST_X[XB-1:0] ? '0 : x + 1'b1]"
    sv.write_text(text.replace("reads ? in_data : row[x]", wrong))
    assert _rtl_fails(bad)


def test_a_corrupted_vector_is_caught_in_csim(compiled, tmp_path: Path) -> None:
    """Negative control of the C simulation: one code of the golden output changed fails it."""
    _, out = compiled
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    hexes = sorted((bad / "vectors").glob("output*.hex"))
    assert hexes
    words = hexes[0].read_text().split()
    words[3] = format(int(words[3], 16) ^ 1, f"0{len(words[3])}x")
    hexes[0].write_text("\n".join(words) + "\n")
    assert not csim(bad).passed


def test_upsample_design_lints(compiled) -> None:
    from rtl_nets import verilator_lint

    _, out = compiled
    assert (out / "rtl" / "hg_upsample.sv").is_file()
    r = verilator_lint(out / "rtl")
    assert r.returncode == 0 and "%Warning" not in r.stderr, r.stderr[-3000:]

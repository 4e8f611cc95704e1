"""A windowed average pool on pixels wider than a stream beat may be (544 x 8-bit codes, 4,352 bits;
its 13-bit window sums 7,072): it takes its window fold-major like the wide max pool
(pool.reads_fold_major), a fold of 256 channels at a time (a power of two whose sums fit 4,096 bits:
pool.lanes_over), 3 beats a pixel, the last one 32 channels and zero padding; its requant is one
multiplier for every channel, PE requant lanes over the fold, and the last fold's padding lanes are
written as zero (HLS requant_lanes LAST_C, Verilog hg_pool FOLDS/LAST_C). Before, the HLS backend refused
it with the stream's width. conv 1x1 (8 -> 544) -> AveragePool 3x3 (stride 1, padded, count_include_pad)
-> conv 1x1 (544 -> 16) on a 3x4 image. C simulation, layer by layer, and the Verilog are bit-exact,
cycles equal to the model, each with negative controls."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx_builders import init, model, node, vi

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from fuzz_check import check_csim, check_rtl_and_its_control, needs_fast_rtl  # noqa: E402
from rtl_nets import set_config_const  # noqa: E402

from hlsgen import compile_model  # noqa: E402
from hlsgen.config.compile import config_from_dict  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402
from hlsgen.hw.convert import WIDEST_BEAT  # noqa: E402
from hlsgen.hw.dataflow import build_dataflow  # noqa: E402
from hlsgen.hw.layers import pool  # noqa: E402
from hlsgen.hw.model import Kind  # noqa: E402
from hlsgen.report.output import write_compilation  # noqa: E402
from hlsgen.tools.csim import csim  # noqa: E402

C, H, W = 544, 3, 4


def wide_avg_net():
    rng = np.random.default_rng(13)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[1, 1]), node("Relu", ["c1"], ["r1"]),
             node("AveragePool", ["r1"], ["p"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
                  count_include_pad=1),
             node("Conv", ["p", "w2", "b2"], ["y"], kernel_shape=[1, 1])]
    inits = [init("w1", rng.standard_normal((C, 8, 1, 1)) * 0.3), init("b1", rng.standard_normal(C) * 0.1),
             init("w2", rng.standard_normal((16, C, 1, 1)) * 0.05), init("b2", np.zeros(16))]
    m = model(nodes, [vi("x", [1, 8, H, W])], [vi("y", [1, 16, H, W])], inits, opset=13)
    return m, rng.uniform(-1, 1, (16, 8, H, W)).astype(np.float32)


def _compile():
    m, calib = wide_avg_net()
    return compile_model(from_onnx_model(m, "wide_avgpool"), config_from_dict({"hw": {"frames": 2}}, "test"), calib)


@pytest.fixture(scope="module")
def avg_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = write_compilation(_compile(), tmp_path_factory.mktemp("wide_avgpool") / "out")
    return out


def test_the_pool_takes_256_channels_a_beat_and_no_beat_is_over_4096_bits() -> None:
    c = _compile()
    df = build_dataflow(c.graph, c.config.hw)
    avg = next(lay for lay in df.layers if lay.kind == Kind.AVGPOOL)
    x, p = df.streams[avg.inputs[0]], df.streams[avg.output]
    assert x.channels * x.bits > WIDEST_BEAT and pool.reads_fold_major(avg, x) and pool.lanes_over(avg) == 256
    assert x.fold == p.fold == 256 and x.folds == p.folds == 3 and 256 % avg.pe == 0
    assert avg.cycles == max(H * W, H * W * max(9, 256 // avg.pe)) * 3
    assert max(s.beat_bits for s in df.streams.values()) <= WIDEST_BEAT


@pytest.mark.parametrize("control", ["pad_lanes", "pad_taps"])
def test_csim_bit_exact_layer_by_layer_and_its_controls(avg_out: Path, tmp_path: Path, control: str) -> None:
    check_csim(avg_out)
    bad = tmp_path / "bad"
    shutil.copytree(avg_out, bad)
    params = bad / "hls" / "src" / "params.h"
    # pad_lanes: the last fold's 224 padding lanes requantized (to the zero point), not written as zero;
    # pad_taps: the window's padding taps hold code 0, not the input zero point
    text = params.read_text()
    params.write_text(set_config_const(text, "AveragePool", "LAST_C", 256) if control == "pad_lanes" else
                      set_config_const(text, "AveragePool", "PAD_VALUE", 5))
    r = csim(bad, layers=True)
    assert not r.passed and r.divergence is not None


@needs_fast_rtl
@pytest.mark.parametrize("control", ["rep_step", "last_lanes"])
def test_rtl_bit_exact_and_its_controls(avg_out: Path, tmp_path: Path, control: str) -> None:
    def corrupt(bad: Path) -> None:
        top = bad / "rtl" / "hlsgen_top.sv"
        text = top.read_text()
        if control == "rep_step":  # the pool's window no longer shifts a beat a repeat: fold 0 thrice
            assert text.count(".REP_STEP(1)") == 1
            top.write_text(text.replace(".REP_STEP(1)", ".REP_STEP(0)"))
        else:  # the last fold's 32 live channels zeroed too (the padding mask is on that fold, and only there)
            assert text.count(".LAST_C(32)") == 1
            top.write_text(text.replace(".LAST_C(32)", ".LAST_C(0)"))

    check_rtl_and_its_control(avg_out, tmp_path, corrupt)

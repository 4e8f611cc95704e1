"""A windowed max pool and a lookup table (Sigmoid) on pixels wider than a stream beat may be (544 x
8-bit codes, 4,352 bits over WIDEST_BEAT's 4,096): both read and write common.widest_fold = 512
channels a beat, 2 beats a pixel, the last one 32 channels and zero padding. The max pool takes its
window one fold at a time (pool.reads_fold_major: HLS sliding_window TAP_FOLDS, Verilog hg_window
REP_STEP 1), the table writes a last beat's padding lanes as zero (HLS lut_layer LAST_C, Verilog hg_lut
FOLDS/LAST_C). conv 1x1 (8 -> 544) -> MaxPool 2x2 (stride 1, padded top and left) -> Sigmoid -> conv
1x1 (544 -> 16) on a 3x4 image. C simulation, layer by layer, and the Verilog (random stalls, cycles
equal to the model) are bit-exact, each with negative controls."""

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


def wide_net():
    rng = np.random.default_rng(11)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[1, 1]), node("Relu", ["c1"], ["r1"]),
             node("MaxPool", ["r1"], ["p"], kernel_shape=[2, 2], strides=[1, 1], pads=[1, 1, 0, 0]),
             node("Sigmoid", ["p"], ["s"]), node("Conv", ["s", "w2", "b2"], ["y"], kernel_shape=[1, 1])]
    inits = [init("w1", rng.standard_normal((C, 8, 1, 1)) * 0.3), init("b1", rng.standard_normal(C) * 0.1),
             init("w2", rng.standard_normal((16, C, 1, 1)) * 0.05), init("b2", np.zeros(16))]
    m = model(nodes, [vi("x", [1, 8, H, W])], [vi("y", [1, 16, H, W])], inits, opset=13)
    return m, rng.uniform(-1, 1, (16, 8, H, W)).astype(np.float32)


def _compile():
    m, calib = wide_net()
    return compile_model(from_onnx_model(m, "wide_pool_lut"), config_from_dict({"hw": {"frames": 2}}, "test"), calib)


@pytest.fixture(scope="module")
def wide_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = write_compilation(_compile(), tmp_path_factory.mktemp("wide_pool_lut") / "out")
    return out


def test_the_pool_and_the_table_go_two_beats_a_pixel() -> None:
    c = _compile()
    df = build_dataflow(c.graph, c.config.hw)
    mp = next(lay for lay in df.layers if lay.kind == Kind.MAXPOOL)
    lut = next(lay for lay in df.layers if lay.kind == Kind.LUT)
    x, p, s = df.streams[mp.inputs[0]], df.streams[mp.output], df.streams[lut.output]
    assert x.channels * x.bits > WIDEST_BEAT and pool.reads_fold_major(mp, x)
    assert x.fold == p.fold == s.fold == WIDEST_BEAT // 8 == 512 and x.folds == p.folds == s.folds == 2
    assert mp.cycles == max(H * W, H * W * 4) * 2 and lut.cycles == H * W * 2
    assert max(st.beat_bits for st in df.streams.values()) <= WIDEST_BEAT


@pytest.mark.parametrize("control", ["pad_lanes", "pool_pad"])
def test_csim_bit_exact_layer_by_layer_and_its_controls(wide_out: Path, tmp_path: Path, control: str) -> None:
    check_csim(wide_out)
    bad = tmp_path / "bad"
    shutil.copytree(wide_out, bad)
    params = bad / "hls" / "src" / "params.h"
    # pad_lanes: the table also writes the last beat's 480 padding lanes (rom[0 - X_LO], not zero);
    # pool_pad: the pool's padding taps hold the highest code, so they win at the top and left border
    text = params.read_text()
    params.write_text(set_config_const(text, "Sigmoid", "LAST_C", 512) if control == "pad_lanes" else
                      set_config_const(text, "MaxPool", "PAD_VALUE", 127))
    r = csim(bad, layers=True)
    assert not r.passed and r.divergence is not None


@needs_fast_rtl
@pytest.mark.parametrize("control", ["rep_step", "last_lanes"])
def test_rtl_bit_exact_and_its_controls(wide_out: Path, tmp_path: Path, control: str) -> None:
    def corrupt(bad: Path) -> None:
        top = bad / "rtl" / "hlsgen_top.sv"
        text = top.read_text()
        if control == "rep_step":  # the pool's window no longer shifts a beat a repeat: fold 0 twice
            assert text.count(".REP_STEP(1)") == 1
            top.write_text(text.replace(".REP_STEP(1)", ".REP_STEP(0)"))
        else:  # the table zeroes the last beat's 32 live channels too (so its padding lanes are masked
            assert text.count(".LAST_C(32)") == 1  # on the pixel's last beat, and only there)
            top.write_text(text.replace(".LAST_C(32)", ".LAST_C(0)"))

    check_rtl_and_its_control(wide_out, tmp_path, corrupt)

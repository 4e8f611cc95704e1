"""A global average pool too wide for whole-pixel beats (issue 20: MobileNetV2's head was refused with
"GlobalAveragePool_104: its sums_t beats have 6272 bits"): it reads its input PE channels a beat
(hw/layers/pool.reads_folded), sums in a memory of ceil(C/PE) words and requantizes on the last
pixel's beats. The net's 640 x 8-bit pixels (5,120 bits) and 640 sums of 12 bits both exceed 4,096.
C simulation and the Verilog (hg_gap) are bit-exact, each with a negative control; cycles per frame
of the pool are its input beats."""

from __future__ import annotations

import math
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx_builders import init, model, node, vi

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from fuzz_check import check_csim, check_rtl_and_its_control  # noqa: E402
from rtl_nets import first_table_entry_scaled  # noqa: E402

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

C = 640


def wide_gap_net(channels: int = C):
    rng = np.random.default_rng(3)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[1, 1]), node("Relu", ["c1"], ["r1"]),
             node("GlobalAveragePool", ["r1"], ["g"]), node("Flatten", ["g"], ["f"]),
             node("Gemm", ["f", "w2", "b2"], ["y"], transB=1)]
    inits = [init("w1", rng.standard_normal((channels, 8, 1, 1)) * 0.3),
             init("b1", rng.standard_normal(channels) * 0.1),
             init("w2", rng.standard_normal((10, channels)) * 0.05), init("b2", np.zeros(10))]
    m = model(nodes, [vi("x", [1, 8, 2, 2])], [vi("y", [1, 10])], inits, opset=13)
    return m, rng.uniform(-1, 1, (16, 8, 2, 2)).astype(np.float32)


def _compile(channels: int = C, pe: int | None = None):
    m, calib = wide_gap_net(channels)
    layers = {"GlobalAveragePool_2": {"pe": pe}} if pe else {}
    return compile_model(from_onnx_model(m, "gap"), config_from_dict({"hw": {"layers": layers}}, "test"), calib)


@pytest.fixture(scope="module")
def gap_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = write_compilation(_compile(pe=16), tmp_path_factory.mktemp("gap") / "out")
    return out


def test_the_wide_pool_reads_pe_channels_a_beat_and_no_beat_is_over_4096_bits() -> None:
    c = _compile(pe=16)
    df = build_dataflow(c.graph, c.config.hw)
    gap = next(lay for lay in df.layers if lay.kind == Kind.AVGPOOL)
    x = df.streams[gap.inputs[0]]
    assert pool.reads_folded(gap, x) and x.fold == gap.pe == 16 and x.channels * x.bits > WIDEST_BEAT
    assert gap.cycles == x.pixels * math.ceil(C / 16)
    assert max(s.beat_bits for s in df.streams.values()) <= WIDEST_BEAT
    kernels = {code.name: code for code in hls_context(df, c.config.hw)["layers"]}
    assert kernels[gap.name].kernel == "global_avgpool_folded"


def test_a_narrow_pool_still_reads_whole_pixels() -> None:
    c = _compile(channels=64)
    df = build_dataflow(c.graph, c.config.hw)
    gap = next(lay for lay in df.layers if lay.kind == Kind.AVGPOOL)
    assert not pool.reads_folded(gap, df.streams[gap.inputs[0]]) and df.streams[gap.inputs[0]].fold == 64


def test_wide_pool_csim_bit_exact_and_a_wrong_multiplier_is_caught(gap_out: Path, tmp_path: Path) -> None:
    check_csim(gap_out)
    bad = tmp_path / "bad"
    shutil.copytree(gap_out, bad)
    weights = bad / "hls" / "src" / "weights.h"
    weights.write_text(first_table_entry_scaled(weights.read_text(), "layer_GlobalAveragePool_2_m"))
    assert not csim(bad, layers=True).passed


def test_wide_pool_rtl_bit_exact_and_a_wrong_sum_offset_is_caught(gap_out: Path, tmp_path: Path) -> None:
    def corrupt(bad: Path) -> None:  # channel 0 X_OFF (PIXELS * x_zp) off by 4,096: its sums shift by 1,024 codes
        top = bad / "rtl" / "hlsgen_top.sv"
        text = top.read_text()
        m = re.search(r"hg_gap #\(.*?\.X_OFF\(\d+'h[0-9a-f]*([0-9a-f]{8})\)", text, re.S)
        assert m
        top.write_text(text[:m.start(1)] + f"{(int(m.group(1), 16) + 4096) & 0xFFFFFFFF:08x}" + text[m.end(1):])

    check_rtl_and_its_control(gap_out, tmp_path, corrupt)


def test_report_lists_each_fifo_at_its_beat_width(gap_out: Path) -> None:
    """report.json hardware.fifos: depth x beat bits, against the same reach at one pixel a beat."""
    import json

    hw = json.loads((gap_out / "report.json").read_text())["hardware"]
    assert len(hw["fifos"]) == len(hw["fifo_depths"])
    for f in hw["fifos"]:
        assert f["bits"] == f["depth_beats"] * f["beat_bits"]
        pixels = -(-f["depth_beats"] // f["beats_per_pixel"])
        assert f["bits_at_one_pixel_a_beat"] == pixels * f["pixel_bits"]
    into_pool = next(f for f in hw["fifos"] if f["reader"] == "layer_GlobalAveragePool_2")
    assert (into_pool["beat_bits"], into_pool["pixel_bits"], into_pool["beats_per_pixel"]) == (16 * 8, C * 8, C // 16)

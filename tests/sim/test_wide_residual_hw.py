"""A residual conv whose skip pixels are wider than a stream beat may be (544 x 8-bit codes, 4,352 bits
over WIDEST_BEAT's 4,096) reads its skip input PE channels a beat, one beat per output fold
(mvu.in_folds, mvu.skip_folds); before, the HLS backend refused the net with the skip stream's 4,352-bit
beats. conv 1x1 (8 -> 544) + ReLU -> conv 1x1 (544 -> 544) + Add(skip) + ReLU -> GlobalAveragePool ->
Gemm (544 -> 10) on a 1x2 image, in two foldings of the residual conv: the default (PE 4 with one
time-shared requant unit, so the RTL's slot counter walks the 4 groups a skip beat serves, HLS
mvu_shared_residual) and PE 136 x SIMD 4 (a requant unit a lane: the hand-off beat of 136 accumulators
and skip codes would exceed HANDOFF_MAX_BITS; HLS conv_mvu_residual). C simulation,
layer by layer, and the Verilog are bit-exact, cycles per frame equal to the model; the negative
controls read one skip beat a pixel (HLS) and take every group's skip code from slot 0 or a lane's
from its mirror lane (RTL)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

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
from hlsgen.hw.layers import mvu  # noqa: E402
from hlsgen.report.output import write_compilation  # noqa: E402
from hlsgen.tools.csim import csim  # noqa: E402

C, H, W = 544, 1, 2
# "shared": PE 4, what the search chose before it costed FIFOs at their folded widths (7f30f14: PE 24)
FOLDINGS: dict[str, dict[str, Any]] = {"shared": {"layers": {"Conv_2": {"pe": 4}}},
                                       "lanes": {"layers": {"Conv_2": {"pe": 136, "simd": 4}}}}


def wide_residual_net():
    rng = np.random.default_rng(7)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[1, 1]), node("Relu", ["c1"], ["r1"]),
             node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[1, 1]), node("Add", ["c2", "r1"], ["a"]),
             node("Relu", ["a"], ["r2"]), node("GlobalAveragePool", ["r2"], ["g"]), node("Flatten", ["g"], ["f"]),
             node("Gemm", ["f", "w3", "b3"], ["y"], transB=1)]
    inits = [init("w1", rng.standard_normal((C, 8, 1, 1)) * 0.3), init("b1", rng.standard_normal(C) * 0.1),
             init("w2", rng.standard_normal((C, C, 1, 1)) * 0.05), init("b2", rng.standard_normal(C) * 0.1),
             init("w3", rng.standard_normal((10, C)) * 0.05), init("b3", np.zeros(10))]
    m = model(nodes, [vi("x", [1, 8, H, W])], [vi("y", [1, 10])], inits, opset=13)
    return m, rng.uniform(-1, 1, (16, 8, H, W)).astype(np.float32)


def _compile(folding: str):
    m, calib = wide_residual_net()
    hw = {"frames": 2, **FOLDINGS[folding]}
    return compile_model(from_onnx_model(m, "wide_residual"), config_from_dict({"hw": hw}, "test"), calib)


_OUTS: dict[str, Path] = {}


def _out(folding: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled OUT folder of `folding`, written once per session."""
    if folding not in _OUTS:
        _OUTS[folding], _ = write_compilation(_compile(folding), tmp_path_factory.mktemp(f"wide_res_{folding}") / "out")
    return _OUTS[folding]


@pytest.mark.parametrize("folding", sorted(FOLDINGS))
def test_the_skip_is_read_pe_channels_a_beat_and_no_beat_is_over_4096_bits(folding: str) -> None:
    c = _compile(folding)
    df = build_dataflow(c.graph, c.config.hw)
    conv = next(lay for lay in df.layers if len(lay.inputs) == 2)
    skip = df.streams[conv.inputs[1]]
    assert skip.channels * skip.bits > WIDEST_BEAT
    assert skip.fold == conv.pe and skip.folds == C // conv.pe and mvu.skip_folds(conv, skip) == 1
    assert max(s.beat_bits for s in df.streams.values()) <= WIDEST_BEAT
    code = {k.name: k for k in hls_context(df, c.config.hw)["layers"]}[conv.name]
    rq = mvu.requant_units(conv, df.streams[conv.inputs[0]])
    assert (rq < conv.pe) == (folding == "shared")
    assert code.kernel == ("mvu_shared_residual" if folding == "shared" else "conv_mvu_residual")


def _replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.mark.parametrize("folding", sorted(FOLDINGS))
def test_csim_bit_exact_layer_by_layer_and_one_skip_beat_a_pixel_is_caught(
        folding: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    out = _out(folding, tmp_path_factory)
    check_csim(out)
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    kernel = bad / "hls" / "src" / "kernels" / "mvu.h"
    kernel.write_text(_replace_once(kernel.read_text(), "if (C::RESIDUAL && sg == 0 && first)",
                                    "if (C::RESIDUAL && nf == 0 && first)"))
    r = csim(bad, layers=True)
    assert not r.passed and r.divergence is not None


@needs_fast_rtl
@pytest.mark.parametrize("folding", ["shared", pytest.param("lanes", marks=pytest.mark.heavy)])  # Icarus: 1 / 8 min
def test_rtl_bit_exact_and_its_control(folding: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    out = _out(folding, tmp_path_factory)

    def corrupt(bad: Path) -> None:  # one requant unit: every group's code from slot 0; a unit a lane:
        lane = bad / "rtl" / "hg_mvu_lane.sv"  # lane p reads lane PE-1-p's channel of its slot
        old, new = (("if ({{(32 - NB){1'b0}}, sk_slot} == k)", "if (k == 0)") if folding == "shared" else
                    ("skip_data[(k * PE + LANE) * SKB +: SKB]", "skip_data[(k * PE + PE - 1 - LANE) * SKB +: SKB]"))
        lane.write_text(_replace_once(lane.read_text(), old, new))

    check_rtl_and_its_control(out, tmp_path, corrupt)

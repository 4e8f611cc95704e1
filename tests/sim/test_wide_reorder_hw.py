"""A reorder (a frame buffer behind a mid-network Transpose) on pixels wider than a stream beat may be
(544 x 8-bit codes, 4,352 bits): it writes its input as it arrives, common.widest_fold = 512 channels a
beat, 2 beats a pixel, and reads it back in canonical order into beats of 512, a pixel's short last beat
zero above its 32 codes (hw/layers/reorder.buffer_index; HLS reorder_layer OUT_PC, Verilog hg_reorder
OUT_PC). Before, the HLS backend refused it with the stream's width. conv 1x1 (8 -> 544) -> Transpose
(H <-> W) -> conv 3x3 (544 -> 16) on a 2x3 image. C simulation, layer by layer, and the Verilog are
bit-exact, cycles equal to the model; the controls read every element one place late (both backends)
and end the output beats at the lanes only (RTL)."""

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
from hlsgen.config.compile import config_from_dict  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402
from hlsgen.hw.convert import WIDEST_BEAT  # noqa: E402
from hlsgen.hw.dataflow import build_dataflow  # noqa: E402
from hlsgen.hw.model import Kind  # noqa: E402
from hlsgen.report.output import write_compilation  # noqa: E402
from hlsgen.tools.csim import csim  # noqa: E402

C, H, W = 544, 2, 3


def wide_reorder_net():
    rng = np.random.default_rng(17)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[1, 1]), node("Relu", ["c1"], ["r1"]),
             node("Transpose", ["r1"], ["t"], perm=[0, 1, 3, 2]),
             node("Conv", ["t", "w2", "b2"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    inits = [init("w1", rng.standard_normal((C, 8, 1, 1)) * 0.3), init("b1", rng.standard_normal(C) * 0.1),
             init("w2", rng.standard_normal((16, C, 3, 3)) * 0.02), init("b2", np.zeros(16))]
    m = model(nodes, [vi("x", [1, 8, H, W])], [vi("y", [1, 16, W, H])], inits, opset=13)
    return m, rng.uniform(-1, 1, (16, 8, H, W)).astype(np.float32)


def _compile():
    m, calib = wide_reorder_net()
    return compile_model(from_onnx_model(m, "wide_reorder"), config_from_dict({"hw": {"frames": 2}}, "test"),
                         calib)


@pytest.fixture(scope="module")
def reorder_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = write_compilation(_compile(), tmp_path_factory.mktemp("wide_reorder") / "out")
    return out


def test_the_reorder_goes_two_beats_a_pixel_and_no_beat_is_over_4096_bits() -> None:
    c = _compile()
    df = build_dataflow(c.graph, c.config.hw)
    reorder = next(lay for lay in df.layers if lay.kind == Kind.REORDER)
    x, y = df.streams[reorder.inputs[0]], df.streams[reorder.output]
    assert x.channels * x.bits > WIDEST_BEAT and x.fold == y.fold == 512 and x.folds == y.folds == 2
    assert reorder.cycles == max(H * W * 2, H * W * C)  # input beats, elements: two banks overlap them
    assert max(s.beat_bits for s in df.streams.values()) <= WIDEST_BEAT


def _one_late(text: str, start: str) -> str:
    """The perm table after `start` in `text` (a C initializer list) rotated by one: every element read
    one place late."""
    at = text.index(start)
    open_, close = text.index("{", at), text.index("}", at)
    values = [v.strip() for v in text[open_ + 1:close].split(",") if v.strip()]
    return text[:open_ + 1] + ", ".join(values[1:] + values[:1]) + text[close:]


def test_csim_bit_exact_layer_by_layer_and_a_late_read_is_caught(reorder_out: Path, tmp_path: Path) -> None:
    check_csim(reorder_out)
    bad = tmp_path / "bad"
    shutil.copytree(reorder_out, bad)
    weights = bad / "hls" / "src" / "weights.h"
    text = weights.read_text()
    weights.write_text(_one_late(text, next(line for line in text.splitlines() if "_perm[" in line)))
    r = csim(bad, layers=True)
    assert not r.passed and r.divergence is not None


@needs_fast_rtl
@pytest.mark.parametrize("control", ["late", pytest.param("lanes_only", marks=pytest.mark.heavy)])  # ~1 min each
def test_rtl_bit_exact_and_its_controls(reorder_out: Path, tmp_path: Path, control: str) -> None:
    def corrupt(bad: Path) -> None:
        if control == "late":
            mem = next((bad / "rtl").glob("*_perm.mem"))
            words = mem.read_text().split()
            mem.write_text("\n".join(words[1:] + words[:1]) + "\n")
        else:  # a pixel's beats no longer end at its last code: 544 codes fill 1 beat and a bit of the next
            top = bad / "rtl" / "hlsgen_top.sv"
            text = top.read_text()
            assert text.count(f".OUT_PC({C})") == 1
            top.write_text(text.replace(f".OUT_PC({C})", ".OUT_PC(1024)"))

    check_rtl_and_its_control(reorder_out, tmp_path, corrupt)

"""Concat and Split/Slice on pixels wider than a stream beat may be (WIDEST_BEAT's 4,096 bits) move beats
of a fold that divides every channel range (hw/layers/channels.py): a concat writes each input's beats of
a pixel in turn, a slice drops the beats outside its range. Before, the HLS backend refused such a net
with the stream's width ("stream c ... has 4800-bit beats").

conv 1x1 (8 -> 544) + ReLU = a; Split(a) into [272, 272] = s0, s1 (slices of a 4,352-bit pixel, 272
channels a beat); Slice a[32:96) = s2 (32 channels a beat); conv 1x1 (272 -> 272) of s1 = b;
Concat(b, s0, s2) (608 channels, 4,864 bits: 16 channels a beat, 38 beats a pixel) -> conv 1x1 (608 -> 4),
on a 2x2 image. C simulation, layer by layer, and the Verilog are bit-exact, with cycles per frame as
modelled; the negative controls swap the concat's first two inputs' beats (csim) or data (RTL), and take
each slice's beats mirrored within the pixel (both backends): beat counts unchanged, codes wrong."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx_builders import init, model, node, vi

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from fuzz_check import check_csim, check_rtl_and_its_control, needs_fast_rtl, run_replay  # noqa: E402

from hlsgen import compile_model  # noqa: E402
from hlsgen.backends.hls import hls_context  # noqa: E402
from hlsgen.config.compile import config_from_dict  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402
from hlsgen.hw.convert import WIDEST_BEAT  # noqa: E402
from hlsgen.hw.dataflow import build_dataflow  # noqa: E402
from hlsgen.hw.layers import channels  # noqa: E402
from hlsgen.hw.model import Kind  # noqa: E402
from hlsgen.report.output import write_compilation  # noqa: E402
from hlsgen.tools.csim import csim  # noqa: E402

C, H, W = 544, 2, 2
# the tested folding (the default search gives 1,088 cycles a frame; before the search costed FIFOs at their
# folded widths it put this net over the xc7z020's LUTs at any folding and took PE 1 everywhere: 295,936)
FOLDING = {"Conv_0": {"pe": 16}, "Conv_4": {"pe": 16, "simd": 16}, "Conv_6": {"pe": 4, "simd": 16}}


def wide_channels_net():
    rng = np.random.default_rng(11)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[1, 1]), node("Relu", ["c1"], ["a"]),
             node("Split", ["a", "split"], ["s0", "s1"], name="split", axis=1),
             node("Slice", ["a", "starts", "ends", "axes"], ["s2"], name="slice"),
             node("Conv", ["s1", "w2", "b2"], ["b"], kernel_shape=[1, 1]),
             node("Concat", ["b", "s0", "s2"], ["cat"], name="concat", axis=1),
             node("Conv", ["cat", "w3", "b3"], ["y"], kernel_shape=[1, 1])]
    inits = [init("w1", rng.standard_normal((C, 8, 1, 1)) * 0.3), init("b1", rng.standard_normal(C) * 0.1),
             init("split", np.array([272, 272], np.int64)), init("starts", np.array([32], np.int64)),
             init("ends", np.array([96], np.int64)), init("axes", np.array([1], np.int64)),
             init("w2", rng.standard_normal((272, 272, 1, 1)) * 0.05), init("b2", rng.standard_normal(272) * 0.1),
             init("w3", rng.standard_normal((4, 608, 1, 1)) * 0.05), init("b3", np.zeros(4))]
    m = model(nodes, [vi("x", [1, 8, H, W])], [vi("y", [1, 4, H, W])], inits, opset=13)
    return m, rng.uniform(-1, 1, (16, 8, H, W)).astype(np.float32)


def _compile():
    m, calib = wide_channels_net()
    return compile_model(from_onnx_model(m, "wide_channels"), config_from_dict({"hw": {"frames": 2, "layers": FOLDING}},
                                                                             "test"), calib)


@pytest.fixture(scope="module")
def wide_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = write_compilation(_compile(), tmp_path_factory.mktemp("wide_channels") / "out")
    return out


def test_concat_and_slices_move_beats_of_a_common_divisor_and_no_beat_is_over_4096_bits() -> None:
    c = _compile()
    df = build_dataflow(c.graph, c.config.hw)
    by_kind = {k: [lay for lay in df.layers if lay.kind == k] for k in (Kind.CONCAT, Kind.SLICE)}
    (cat,) = by_kind[Kind.CONCAT]
    p = channels.params_of(cat)
    assert p.in_c == (272, 272, 64) and p.fold == 16 and channels.beats(p) == 38 and cat.cycles == H * W * 38
    assert all(df.streams[s].fold == 16 for s in [*cat.inputs, cat.output])
    folds = sorted((channels.params_of(s).start, channels.params_of(s).fold, s.cycles) for s in by_kind[Kind.SLICE])
    assert folds == [(0, 272, H * W * 2), (32, 32, H * W * 17), (272, 272, H * W * 2)]
    assert max(s.beat_bits for s in df.streams.values()) <= WIDEST_BEAT
    kernels = {k.name: k.kernel for k in hls_context(df, c.config.hw)["layers"]}
    assert kernels[cat.name] == "concat_folded" and {kernels[s.name] for s in by_kind[Kind.SLICE]} == {"slice_folded"}


def test_a_concat_of_narrow_pixels_still_takes_whole_pixels() -> None:
    p = channels.ConcatParams(4, (3, 5), 8, 8)
    assert not channels.is_folded(p) and channels.beats(p) == 1
    assert channels.fold_of((272, 272, 64), 8) == 16 and channels.fold_of((300, 301), 8) == 1
    assert channels.fold_of((0, 1024), 8) == 512  # a slice from channel 0: its length, at most a beat


def _replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


# the 3-input concat takes input 1's 17 beats first, then input 0's (the 4-input overload ends otherwise)
CONCAT_SWAPPED = ("y = a.read();\n        else if (j < C::END_1) y = b.read();\n        else y = c.read();",
                  "y = b.read();\n        else if (j < C::END_1) y = a.read();\n        else y = c.read();")
MIRRORED_SLICE = ("if (j >= C::FIRST && j <= C::LAST)",
                  "if (C::IN_BEATS - 1 - j >= C::FIRST && C::IN_BEATS - 1 - j <= C::LAST)")


@pytest.mark.parametrize("control", ["concat_order", "slice_mirrored"])
def test_csim_bit_exact_layer_by_layer_and_its_controls(wide_out: Path, tmp_path: Path, control: str) -> None:
    check_csim(wide_out)
    bad = tmp_path / "bad"
    shutil.copytree(wide_out, bad)
    kernel = bad / "hls" / "src" / "kernels" / "channels.h"
    text = kernel.read_text()
    kernel.write_text(_replace_once(text, *(CONCAT_SWAPPED if control == "concat_order" else MIRRORED_SLICE)))
    r = csim(bad, layers=True)
    assert not r.passed and r.divergence is not None


@needs_fast_rtl
# Icarus: ~70 s each (three replays); the slice's RTL control runs with `make test-all` (the suite's 20 minutes)
@pytest.mark.parametrize("control", ["concat_data", pytest.param("slice_mirrored", marks=pytest.mark.heavy)])
def test_rtl_bit_exact_cycles_as_modelled_and_its_controls(wide_out: Path, tmp_path: Path, control: str) -> None:
    def corrupt(bad: Path) -> None:
        if control == "concat_data":  # input 0's beats carry input 1's data (and the reverse)
            f = bad / "rtl" / "hg_concat_beats.sv"
            f.write_text(_replace_once(f.read_text(), "picked = in_data[k * W +: W];",
                                       "picked = in_data[(k < 2 ? 1 - k : k) * W +: W];"))
        else:
            f = bad / "rtl" / "hg_slice_beats.sv"
            f.write_text(_replace_once(f.read_text(), "assign kept = j >= FIRST[JB-1:0] && j <= LAST[JB-1:0];",
                                       "assign kept = LB - j >= FIRST && LB - j <= LAST;"))

    check_rtl_and_its_control(wide_out, tmp_path, corrupt)
    r = run_replay(wide_out)
    assert r["cycles_per_frame"] == r["model_cycles"] == 1156, r

"""A depthwise conv on pixels too wide for one beat (issue 20: MobileNetV2's 960-channel depthwise
convs are 7,680-bit pixels): it reads PE channels a beat and the window fold-major, one fold's taps at
a time (hw/layers/mvu.reads_fold_major, common.fold_major_window; HLS sliding_window TAP_FOLDS and
mvu_core DW_FOLDED; Verilog hg_window REP_STEP and hg_mvu DEPTHWISE + IN_FOLDED). An MVU whose
time-shared requant units leave whole padding groups writes such pixels PE channels a beat
(hg_collect REALW). The net: 1x1 expand to 544 channels (4,352-bit pixels), 3x3 depthwise, 1x1
project on a 3x4 image; PE 32 (17 whole folds; a heavy case) and PE 48 (12 folds, the last 16
channels). C simulation and the Verilog are bit-exact with random stalls, cycles equal to the model,
each with a negative control."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx_builders import init, model, node, vi

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from fuzz_check import check_csim, check_rtl_and_its_control  # noqa: E402

from hlsgen import compile_model  # noqa: E402
from hlsgen.config.compile import config_from_dict  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402
from hlsgen.hw.convert import WIDEST_BEAT  # noqa: E402
from hlsgen.hw.dataflow import build_dataflow  # noqa: E402
from hlsgen.hw.layers import mvu  # noqa: E402
from hlsgen.hw.model import Kind  # noqa: E402
from hlsgen.report.output import write_compilation  # noqa: E402
from hlsgen.tools.csim import csim  # noqa: E402

C = 544


def wide_dw_net():
    rng = np.random.default_rng(5)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[1, 1], name="expand"), node("Relu", ["c1"], ["r1"]),
             node("Conv", ["r1", "wd", "bd"], ["d"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=C, name="dw"),
             node("Relu", ["d"], ["r2"]), node("Conv", ["r2", "w3", "b3"], ["y"], kernel_shape=[1, 1], name="project")]
    inits = [init("w1", rng.standard_normal((C, 8, 1, 1)) * 0.3), init("b1", rng.standard_normal(C) * 0.1),
             init("wd", rng.standard_normal((C, 1, 3, 3)) * 0.3), init("bd", rng.standard_normal(C) * 0.1),
             init("w3", rng.standard_normal((16, C, 1, 1)) * 0.05), init("b3", np.zeros(16))]
    m = model(nodes, [vi("x", [1, 8, 3, 4])], [vi("y", [1, 16, 3, 4])], inits, opset=13)
    return m, rng.uniform(-1, 1, (16, 8, 3, 4)).astype(np.float32)


def _compile(pe: int):
    m, calib = wide_dw_net()
    hw = {"layers": {"dw": {"pe": pe}}, "frames": 2}  # a 544-channel simulation is slow in Icarus: 2 small frames
    return compile_model(from_onnx_model(m, "dw"), config_from_dict({"hw": hw}, "test"), calib)


@pytest.fixture(scope="module", params=[pytest.param(32, marks=pytest.mark.heavy), 48], ids=["pe32", "pe48"])
def dw_out(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = write_compilation(_compile(request.param), tmp_path_factory.mktemp("dw") / "out")
    return out


@pytest.mark.parametrize("pe", [32, 48])
def test_the_depthwise_conv_reads_pe_channels_a_beat_fold_major(pe: int) -> None:
    c = _compile(pe)
    df = build_dataflow(c.graph, c.config.hw)
    dw = next(lay for lay in df.layers if lay.kind == Kind.DWCONV)
    x = df.streams[dw.inputs[0]]
    assert x.channels * x.bits > WIDEST_BEAT and mvu.reads_fold_major(dw, x) and x.fold == pe
    assert max(s.beat_bits for s in df.streams.values()) <= WIDEST_BEAT


def test_a_narrow_depthwise_conv_still_reads_whole_pixels() -> None:
    import model_zoo

    m = model_zoo.dw_separable(seed=0)
    c = compile_model(from_onnx_model(m, "dws"), config_from_dict({}, "test"), model_zoo.random_inputs(m, 8, seed=1))
    df = build_dataflow(c.graph, c.config.hw)
    for lay in (lay for lay in df.layers if lay.kind == Kind.DWCONV):
        x = df.streams[lay.inputs[0]]
        assert not mvu.reads_fold_major(lay, x) and x.fold == x.channels


def _negate_lane0_weights(text: str) -> str:
    """Lane 0's row of the depthwise weight table negated (channels 0, PE, 2*PE, ...: some are live)."""
    m = re.search(r"(layer_dw_w\[\d+\]\[\d+\] = \{\s*\{)([^}]*)\}", text)
    assert m, "no depthwise weight table"
    row = ", ".join(str(-int(v)) for v in m.group(2).split(",") if v.strip())
    return text[:m.start(2)] + row + text[m.end(2):]


def test_folded_depthwise_csim_bit_exact_and_negated_weights_are_caught(dw_out: Path, tmp_path: Path) -> None:
    check_csim(dw_out)
    bad = tmp_path / "bad"
    shutil.copytree(dw_out, bad)
    weights = bad / "hls" / "src" / "weights.h"
    weights.write_text(_negate_lane0_weights(weights.read_text()))
    assert not csim(bad, layers=True).passed


def test_folded_depthwise_rtl_bit_exact_and_a_wrong_fold_shift_is_caught(dw_out: Path, tmp_path: Path) -> None:
    def corrupt(bad: Path) -> None:  # the window's repeats no longer shift a beat: fold 0's taps every time
        top = bad / "rtl" / "hlsgen_top.sv"
        text = top.read_text()
        assert text.count(".REP_STEP(1)") == 1
        top.write_text(text.replace(".REP_STEP(1)", ".REP_STEP(0)"))

    check_rtl_and_its_control(dw_out, tmp_path, corrupt)

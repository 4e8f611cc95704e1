"""C simulation of two-step epilogues (numerics.md §8): a QDQ network whose intermediate quantizers
saturate and round on ties is bit-exact layer by layer, and corrupting the intermediate step's clamp
or rounding in the generated C++ is caught and localized."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from two_step_model import two_step_inputs, two_step_model

from hlsgen import numerics
from hlsgen.backends.hls_lint import lint_hls
from hlsgen.config.compile import config_from_dict
from hlsgen.ir.epilogue import two_step
from hlsgen.pipeline import compile_model
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import csim


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("two_step")
    onnx.save(two_step_model(), root / "net.onnx")
    np.save(root / "x.npy", two_step_inputs(4))
    c = compile_model(root / "net.onnx", config_from_dict({}, "test"), root / "x.npy")
    assert all(two_step(n) for n in c.graph.nodes if n.op == "QConv")
    _assert_ties_and_saturation(c, np.load(root / "x.npy"))
    out, _ = write_compilation(c, root / "out")
    return out


def _assert_ties_and_saturation(c: object, x: np.ndarray) -> None:
    """The test is only meaningful if step 1 really rounds ties and clamps on this batch."""
    from hlsgen import intermediates
    from hlsgen.golden.int_ops import along_axis

    g = c.graph  # type: ignore[attr-defined]
    values = intermediates(c, x)  # type: ignore[arg-type]
    node = g.node("conv1")
    mid = node.attr("epilogue").mid
    acc = _accumulator(g, node, values[node.inputs[0]])
    v = acc * along_axis(mid.mult, 4, 1)
    s = along_axis(mid.shift, 4, 1)
    ties = (v - ((v >> s) << s)) == (np.int64(1) << (s - 1))
    t = mid.zp + numerics.round_shift(v, s)
    assert ties.sum() > 10 and ((t < mid.lo) | (t > mid.hi)).sum() > 10


def _accumulator(g: object, node: object, x: np.ndarray) -> np.ndarray:
    from hlsgen.golden.exact import exact_int_matmul
    from hlsgen.golden.window import conv2d, pads4, pair

    w = g.tensor(node.inputs[1]).data  # type: ignore[attr-defined]
    bias = g.tensor(node.inputs[2]).data  # type: ignore[attr-defined]
    pads, pad = pads4(node.attr("pads")), float(node.attr("pad_value"))  # type: ignore[attr-defined]
    acc = conv2d(x.astype(np.float64), w, pads=pads, pad_value=pad,
                 strides=pair(node.attr("strides"), 1), dilations=pair(node.attr("dilations"), 1), group=1,  # type: ignore[attr-defined]
                 matmul=exact_int_matmul)
    return acc + bias.reshape(1, -1, 1, 1)


def test_two_step_network_csim_every_layer(project: Path) -> None:
    assert lint_hls(project / "hls") == []
    r = csim(project, layers=True)
    assert r.divergence is None, str(r.divergence)
    assert r.passed


def _corrupt(src: Path, dst: Path, edit: object) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("build"))
    f = dst / "hls" / "src" / "params.h"
    text = f.read_text()
    changed = edit(text)  # type: ignore[operator]
    assert changed != text
    f.write_text(changed)
    return dst


@pytest.mark.parametrize("what", ["clamp", "zero_point"])
def test_corrupt_intermediate_step_is_caught(project: Path, tmp_path: Path, what: str) -> None:
    """Negative controls: widening step 1's clamp (MID_LO/MID_HI) or moving its zero point makes
    csim fail at that layer."""
    def edit(text: str) -> str:
        start = text.index("struct cfg_layer_conv1 ")
        head, tail = text[:start], text[start:]
        if what == "clamp":
            tail = tail.replace("MID_LO = -128;", "MID_LO = -1000;", 1).replace("MID_HI = 127;", "MID_HI = 1000;", 1)
        else:
            tail = tail.replace("MID_ZP = -3;", "MID_ZP = -2;", 1)
        return head + tail

    r = csim(_corrupt(project, tmp_path / "bad", edit), layers=True)
    assert not r.passed and r.divergence is not None
    assert r.divergence.layer == "layer_conv1"

"""Clamps inside the type range at network level, in Verilog (issue 9's test gap: no network test reached a
clamp inside the type range, so RTL that ignored a layer's clamp bounds passed every test).

A QONNX network with power-of-two scales whose quantizers are wider than the activations' bounds:
Clip(0.25, 2) into an i8 quantizer of step 1/16 (codes 4..32 of -128..127), a ReLU into an i6 quantizer
with zero point 3 (lo = 3 > -32), and a residual block whose conv output is clipped by ReLU6 into the
model's i8 quantizer of step 1/8 (the two-step epilogue's mid clamp 0..48). The golden model reaches
every one of these bounds on the test frames; C-sim and the RTL replay are bit-exact; and a Verilog top
whose requant instance is given the type's range instead of the layer's bounds fails the replay at
that layer (one negative control per clamp).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fuzz_check import check_csim, check_rtl, compile_net_full, needs_fast_rtl, run_replay
from fuzz_nets import Net

from hlsgen import intermediates

CONV3 = {"kind": "conv", "kernel": [3, 3], "stride": 1, "dilation": 1, "pads": [1, 1, 1, 1], "group": 1,
         "gain": 1.0}
CLAMPS = Net("qonnx", (3, 6, 6),
             ({**CONV3, "cout": 4, "act": "clip", "clip": [0.25, 2.0]},
              {**CONV3, "cout": 4, "act": "relu"},
              {"kind": "res", "kernel": 3, "act": "relu6", "post": "none", "skip_first": True, "gain": 2.0}), {},
             {"rounding": "half_even"}, {},
             {"in": {"bits": 8, "signed": True, "zp": 0, "offset": 0},
              "L0": {"bits": 8, "signed": True, "zp": 0, "offset": 1},
              "L1": {"bits": 6, "signed": True, "zp": 3, "offset": 0},
              "L2.conv": {"bits": 8, "signed": True, "zp": 0, "offset": 1},
              "L2": {"bits": 8, "signed": False, "zp": 100, "offset": 0},
              "w:L0_conv": {"bits": 6, "per_channel": True}, "w:L1_conv": {"bits": 4, "per_channel": False},
              "w:L2_conv": {"bits": 8, "per_channel": True}}, seed=5, calib_scale=2.0)


@pytest.fixture(scope="module")
def clamps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    return compile_net_full(tmp_path_factory.mktemp("clamps") / "net", CLAMPS)


@pytest.mark.fuzz
@needs_fast_rtl
def test_clamps_inside_the_type_range_are_reached_and_bit_exact(clamps: tuple[Path, Any]) -> None:
    out, c = clamps
    g = c.graph
    frames = np.load(out.parent / "calib.npy")[:3]  # the vector frames start with the calibration inputs
    values = intermediates(c, frames)
    bounds = {}
    for name in ("L0_conv", "L1_conv"):
        n = g.node(name)
        t = g.tensor(n.outputs[0]).qtype.int
        lo, hi = n.attr("epilogue").out.lo, n.attr("epilogue").out.hi
        v = values[n.outputs[0]]
        inside = [b for b, edge in ((lo, t.lo), (hi, t.hi)) if b != edge]
        assert inside, f"{name}: no clamp inside {t}"
        for b in inside:
            assert np.count_nonzero(v == b) > 0, f"{name}: the clamp at {b} is never reached"
        bounds[name] = (lo, hi, t.lo, t.hi)
    assert bounds == {"L0_conv": (4, 32, -128, 127), "L1_conv": (3, 31, -32, 31)}
    res = g.node("L2_conv")
    mid = res.attr("epilogue").mid
    assert (mid.lo, mid.hi) == (0, 48)  # ReLU6 at 6 / (1/8), inside i8
    check_csim(out)
    check_rtl(out)


# instance parameters of the layer's requant, and the type-range values that ignore the layer's clamp
IGNORED = {"L0_conv": {"LO": "-128", "HI": "127"}, "L1_conv": {"LO": "-32"}, "L2_conv": {"MID_HI": "127"}}


@pytest.mark.fuzz
@needs_fast_rtl
@pytest.mark.parametrize("layer", sorted(IGNORED))
def test_rtl_ignoring_a_layers_clamp_fails(clamps: tuple[Path, Any], layer: str, tmp_path: Path) -> None:
    out, _ = clamps
    bad = tmp_path / "out"
    shutil.copytree(out, bad, ignore=shutil.ignore_patterns("build", "rtlsim"))
    top = bad / "rtl" / "hlsgen_top.sv"
    text = top.read_text()
    start = text.index(f"module hlsgen_top__layer_{layer}")  # the layer module holds its requant
    head, tail = text[:start], text[start:]
    for param, value in IGNORED[layer].items():
        tail, n = re.subn(rf"\.{param}\(-?\d+\)", f".{param}({value})", tail, count=1)
        assert n == 1, (layer, param)
    top.write_text(head + tail)
    r = run_replay(bad)
    assert not r["passed"] and r["mismatches"] > 0, r
    assert layer in str(r["first_layer"]), r["first_layer"]

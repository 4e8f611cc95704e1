"""Time-shared requant units (issue 8): a matrix-vector layer whose fold takes KK·SF cycles
requantizes its PE accumulators on R = PE / Q units over Q <= KK·SF cycles (hlsgen.hw.packing
.requant_units), in the Verilog (hg_mvu's hand-off register) and in the HLS C++ (mvu_requant).

The net covers Q = 6 of PE 12 (R = 2), a residual skip on shared units (R = 1 of PE 12), padding
lanes (PE 4 on 10 channels) and a dense layer; every layer bit-exact in csim and rtlsim (with and
without stalls) at the modelled cycles. Negative controls: a hand-off that does not shift (RTL) or
does not move to the next units' lanes (HLS) must be caught and named.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import model_zoo
import onnx
import pytest
import rtl_nets

from hlsgen.tools.csim import csim
from hlsgen.tools.rtlsim import run_rtlsim


def shared_net(seed: int = 4) -> tuple[onnx.ModelProto, dict[str, dict[str, int]]]:
    """conv 3x3 3->12 (PE 12, Q 6) -> conv 3x3 12->12 + Add + ReLU (residual, PE 12, SIMD 4, Q 12)
    -> conv 3x3 12->10 (PE 4: two padding lanes) -> dense 10*4*4 -> 6 (PE 3)."""
    g = model_zoo.GraphBuilder(seed)
    h = g.op("Relu", [g.conv("x", 3, 12, 3)])
    c1 = g.nodes[-2].name
    r = g.conv(h, 12, 12, 3)
    c2 = g.nodes[-1].name
    h = g.op("Relu", [g.op("Add", [r, h])])
    h = g.op("Relu", [g.conv(h, 12, 10, 3, stride=2, pads=[1, 1, 1, 1])])
    c3 = g.nodes[-2].name
    y = g.dense(g.op("Flatten", [h], axis=1), 10 * 4 * 4, 6)
    fc = g.nodes[-1].name
    folds = {c1: {"pe": 12, "simd": 3}, c2: {"pe": 12, "simd": 4}, c3: {"pe": 4, "simd": 12},
             fc: {"pe": 3, "simd": 10}}
    return g.model([1, 3, 8, 8], y, [1, 6], "shared_net"), folds


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, folds = shared_net()
    out = rtl_nets.compile_to(tmp_path_factory.mktemp("shared"), model, hw={"layers": folds})
    top = (out / "rtl" / "hlsgen_top.sv").read_text()
    units = re.findall(r"\.PE\((\d+)\).*?\.RQ\((\d+)\)", top, flags=re.S)
    assert ("12", "2") in units and ("12", "1") in units and ("4", "1") in units, units
    cpp = (out / "hls" / "src" / "top.cpp").read_text()
    assert "mvu_shared<" in cpp and "mvu_shared_residual<" in cpp
    return out


def test_csim_bit_exact_every_layer(project: Path) -> None:
    r = csim(project, layers=True)
    assert r.passed, r.divergence


def test_rtlsim_bit_exact_at_model_cycles(project: Path) -> None:
    assert run_rtlsim(project, frames=3, seed=2) == 0
    res = rtl_nets.results(project)
    for r in res.values():
        assert r["passed"] and r["mismatches"] == 0 and r["beats"] == r["expected_beats"] > 0
    t = res["throughput"]
    assert t["cycles_per_frame"] == t["model_cycles"], t


def test_rtl_hand_off_that_does_not_shift_is_caught(project: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(project, bad, ignore=shutil.ignore_patterns("rtlsim"))
    sv = bad / "rtl" / "hg_mvu.sv"
    text = sv.read_text()
    old = "hold[i] <= hold[i + RQ];"
    assert text.count(old) == 1
    sv.write_text(text.replace(old, "hold[i] <= hold[i];"))
    assert run_rtlsim(bad, frames=2, waves=True) == 1  # with waves at once: two builds, no rerun
    first = rtl_nets.results(bad)["throughput"]["first_layer"]
    assert first is not None and "conv" in first["layer"], first


def test_hls_hand_off_that_does_not_shift_is_caught(project: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(project, bad, ignore=shutil.ignore_patterns("build", "rtlsim"))
    h = bad / "hls" / "src" / "kernels" / "mvu.h"
    text = h.read_text()
    old = "held = cur >> (C::RQ * LB);"
    assert text.count(old) == 1
    h.write_text(text.replace(old, "held = cur;"))
    r = csim(bad, layers=True)
    assert not r.passed and r.divergence is not None and "conv" in r.divergence.layer, r.divergence

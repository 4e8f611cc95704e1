"""The lean RTL datapath (issue 8, item 4): two int8 MACs per multiplier in hg_mvu (PACK), per-channel
requant parameters from fold-indexed ROMs, and average pools / adds / requants folded over PE requant
lanes. Every design is bit-exact against the golden vectors (with and without random stalls) and
runs at exactly the modelled cycles per frame; each check has a negative control (a mutated RTL
module that must be caught).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import model_zoo
import onnx
import pytest
import rtl_nets

from hlsgen.tools.rtlsim import run_rtlsim


def lean_net(c: int = 20, seed: int = 3) -> tuple[onnx.ModelProto, dict[str, str]]:
    """conv 1x1 + relu -> LeakyRelu (standalone requant) -> Add with the conv output -> global
    average pool -> dense, on [1, c, 4, 4]; returns the model and the node names by role. (4 x 4: the
    pool's line buffer, 8 rows, holds the next frame while the current one is read.)"""
    g = model_zoo.GraphBuilder(seed)
    h = g.op("Relu", [g.conv("x", c, c, 1, pads=[0, 0, 0, 0])])
    conv = g.nodes[-2].name
    r = g.op("LeakyRelu", [h], alpha=0.15)
    rq = g.nodes[-1].name
    a = g.op("Add", [r, h])
    add = g.nodes[-1].name
    p = g.op("GlobalAveragePool", [a])
    gap = g.nodes[-1].name
    y = g.dense(g.op("Flatten", [p], axis=1), c, 6)
    fc = g.nodes[-1].name
    return g.model([1, c, 4, 4], y, [1, 6], "lean_net"), {"conv": conv, "rq": rq, "add": add, "gap": gap, "fc": fc}


def _compile(folder: Path, pes: dict[str, int], c: int = 20) -> Path:
    model, nodes = lean_net(c)
    layers = {nodes["conv"]: {"pe": c, "simd": c}, nodes["fc"]: {"pe": 6, "simd": c}}
    # every folded layer pinned (PE = C unless given), so the design does not depend on device folding
    layers.update({nodes[role]: {"pe": pes.get(role, c)} for role in ("rq", "add", "gap")})
    return rtl_nets.compile_to(folder, model, hw={"layers": layers})


def _check(out: Path, model_cycles: int | None = None) -> None:
    """Bit-exact with and without stalls, every layer trace matched, cycles/frame exactly the model's."""
    assert run_rtlsim(out, frames=4, seed=5) == 0
    res = rtl_nets.results(out)
    for r in res.values():
        assert r["passed"] and r["mismatches"] == 0 and r["beats"] == r["expected_beats"] > 0
        assert r["first_layer"] is None
    t = res["throughput"]
    assert t["cycles_per_frame"] == t["model_cycles"], t
    if model_cycles is not None:
        assert t["model_cycles"] == model_cycles, t


def _mutant_is_caught(out: Path, tmp: Path, module: str, old: str, new: str, layer_kind: str) -> None:
    """The same design with one RTL expression changed: rtlsim must report a mismatch in that layer."""
    bad = tmp / "bad"
    shutil.copytree(out, bad, ignore=shutil.ignore_patterns("rtlsim"))
    sv = bad / "rtl" / module
    text = sv.read_text()
    assert text.count(old) == 1, f"{old!r} not once in {module}"
    sv.write_text(text.replace(old, new))
    assert run_rtlsim(bad, frames=2, waves=True) == 1  # with waves at once: two builds, no rerun
    first = rtl_nets.results(bad)["throughput"]["first_layer"]
    assert first is not None and layer_kind in first["layer"], first


# ---- folded requant lanes: PE = 1, PE not dividing C, PE = C (the layers left at their default) ------
# c = 20 channels, 16 pixels: requant/add cycles = 16 * ceil(20 / PE); global pool max(16, ceil(20 / PE))
FOLDED = {"rq": 3, "add": 6, "gap": 3}


@pytest.fixture(scope="module")
def folded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """requant 7 folds (the last one 2 of 3 lanes) is the bottleneck: 112; add 4 folds of 6 lanes: 64;
    pool 7 folds hidden under its 16 taps."""
    out = _compile(tmp_path_factory.mktemp("folded"), FOLDED)
    _check(out, 112)
    return out


def test_folded_requant_add_pool_bit_exact_at_model_cycles(folded: Path) -> None:
    assert rtl_nets.results(folded)["random_stalls"]["passed"]


@pytest.mark.heavy  # ragged add lanes (PE 6 of 20) are bit-exact in the `folded` design; here only as the bottleneck
def test_add_with_ragged_lanes_as_bottleneck(tmp_path: Path) -> None:
    _check(_compile(tmp_path, {"add": 6}), 64)  # add: PE 6 does not divide 20


# hg_window serves a 4 x 4 global-pool window in 28 cycles per frame (measured with the pool at PE = C,
# model 16: the window generator's limit, not the pool's); the pool's 20 folds hide under it
WINDOW_GAP_CYCLES = 28


@pytest.mark.heavy  # the global pool's lanes are bit-exact in the `folded` design (PE 3); here PE 1 and its cycles
def test_global_pool_with_one_requant_lane(tmp_path: Path) -> None:
    out = _compile(tmp_path, {"gap": 1})
    assert run_rtlsim(out, frames=4, seed=5) == 0
    res = rtl_nets.results(out)
    assert all(r["passed"] and r["first_layer"] is None for r in res.values())
    t = res["throughput"]
    assert t["model_cycles"] == 20 and t["cycles_per_frame"] <= WINDOW_GAP_CYCLES, t


def test_pool_lane_reading_the_wrong_channel_is_caught(folded: Path, tmp_path: Path) -> None:
    _mutant_is_caught(folded, tmp_path, "hg_sum_lanes.sv", "sums[p * AB +: AB]} - off[XB-1:0];",
                      "sums[((p + 1) % PE) * AB +: AB]} - off[XB-1:0];", "globalaveragepool")



@pytest.mark.heavy  # a second lane mutant of the `folded` design; the pool-lane one stays in the default suite
def test_eltwise_lane_reading_the_wrong_fold_is_caught(folded: Path, tmp_path: Path) -> None:
    _mutant_is_caught(folded, tmp_path, "hg_eltwise.sv", "a_data[((k * PE + p) % C) * AB +: AB]};",
                      "a_data[((k * PE + p + PE) % C) * AB +: AB]};", "leakyrelu")


# ---- two MACs per multiplier ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The grid network (3x3/1x1 convs with padding, stride, dilation, a dense layer; PE 4, 8, 3)."""
    model, folds = rtl_nets.grid_net()
    out = rtl_nets.compile_to(tmp_path_factory.mktemp("packed"), model, hw={"layers": folds})
    top = (out / "rtl" / "hlsgen_top.sv").read_text()
    assert top.count(".PACK(1'h1)") >= 3  # dense convs and the gemm with PE >= 2 (not the depthwise one)
    _check(out)
    return out


def test_packed_pairs_bit_exact(packed: Path) -> None:
    assert rtl_nets.results(packed)["throughput"]["passed"]


def test_packed_pair_without_the_sign_correction_is_caught(packed: Path, tmp_path: Path) -> None:
    """The upper field of a pair is w1*xu only after adding the low field's sign: dropping it is caught."""
    _mutant_is_caught(packed, tmp_path, "hg_mvu.sv", "ppq[j][F +: PB] + {{(PB - 1){1'b0}}, ppq[j][F-1]}",
                      "ppq[j][F +: PB]", "conv")


@pytest.mark.heavy  # a second packed-pair mutant; the sign-correction one stays in the default suite
def test_packed_pair_without_the_bias_offset_is_caught(packed: Path, tmp_path: Path) -> None:
    """Signed codes enter as x + 2^(IB-1); without flipping the sign bit back the bias offset is wrong."""
    _mutant_is_caught(packed, tmp_path, "hg_mvu.sv", "? {1'b1, {(IB-1){1'b0}}} : '0;", "? '0 : '0;", "conv")


def test_table_reading_the_next_channel_is_caught(packed: Path, tmp_path: Path) -> None:
    """The per-channel ROMs (hg_table: bias, multipliers, shifts by output fold) must hold channel
    k*PE + lane: tables shifted by one channel are caught."""
    _mutant_is_caught(packed, tmp_path, "hg_table.sv", "VALUES[((k * STRIDE + FIRST) % COUNT) * W +: W]",
                      "VALUES[((k * STRIDE + FIRST + 1) % COUNT) * W +: W]", "conv")

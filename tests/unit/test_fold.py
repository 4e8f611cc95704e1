"""Folding to the device (hlsgen/hw/fold.py) and the resource model's structural counts."""

from __future__ import annotations

import itertools
import math
import re
import sys
from dataclasses import replace
from pathlib import Path

import model_zoo
import numpy as np
import pytest

from hlsgen import compile_model
from hlsgen.config.compile import config_from_dict
from hlsgen.config.hw import HwConfig
from hlsgen.devices.families import FAMILIES
from hlsgen.errors import HlsgenError
from hlsgen.frontend import from_onnx_model
from hlsgen.hw.cost import NONE, Resources, bram18, dsp_slices
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.fifo import output_depth
from hlsgen.hw.fold import Budget, Choice, budget_of, choose_folding
from hlsgen.hw.model import Kind
from hlsgen.hw.resources import glue_resources, layer_resources

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _hw(**budget: int) -> HwConfig:
    return config_from_dict({"hw": {"budget": budget}} if budget else {}, "t").hw


def _random_layers(rng: np.random.Generator, n_layers: int, multi: bool) -> list[list[Choice]]:
    """Layers whose foldings trade cycles for resources: more parallel = fewer cycles, more cost."""
    layers = []
    for _ in range(n_layers):
        work = int(rng.integers(50, 400))
        opts = []
        for i, par in enumerate((1, 2, 3, 4, 6, 8)):
            dsp = par * float(rng.integers(1, 4))
            lut = float(rng.integers(10, 200)) * (par if multi else 1)
            opts.append(Choice(i, math.ceil(work / par), Resources(dsp=dsp, lut=lut, bram36=1.0)))
        layers.append(opts)
    return layers


def _brute_force(layers: list[list[Choice]], budget: Budget, floor: int) -> int:
    best = math.inf
    for combo in itertools.product(*layers):
        total = sum((c.cost for c in combo), NONE)
        if budget.fits(total):
            best = min(best, max([floor] + [c.cycles for c in combo]))
    return int(best)


@pytest.mark.parametrize("seed", range(12))
def test_fastest_folding_equals_exhaustive_search_when_one_resource_binds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    layers = _random_layers(rng, 4, multi=False)
    dsp = float(rng.integers(12, 60))
    hw = _hw(dsp=int(dsp), lut=10**6, bram36=100)
    f = choose_folding(layers, NONE, 10, hw)
    best = _brute_force(layers, Budget(dsp, 1e6, 100), 10)
    assert f.fits and f.cycles == best
    naive = [max(opts, key=lambda c: c.cost.dsp) for opts in layers]  # the most parallel of every layer
    assert not Budget(dsp, 1e6, 100).fits(sum((c.cost for c in naive), NONE))  # the budget really binds


@pytest.mark.parametrize("seed", range(12))
def test_folding_with_several_resources_is_feasible_and_exact_when_certified(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    layers = _random_layers(rng, 4, multi=True)
    budget = Budget(float(rng.integers(15, 60)), float(rng.integers(600, 2500)), 100.0)
    hw = _hw(dsp=int(budget.dsp), lut=int(budget.lut), bram36=100)
    best = _brute_force(layers, budget, 1)
    f = choose_folding(layers, NONE, 1, hw)
    if best == math.inf:
        assert not f.fits
        return
    assert f.fits and budget.fits(f.total) and f.cycles >= best
    if f.optimal:
        assert f.cycles == best


def test_target_fps_takes_the_cheapest_design_meeting_the_rate() -> None:
    layers = [[Choice(0, 400, Resources(dsp=1)), Choice(1, 200, Resources(dsp=2)), Choice(2, 100, Resources(dsp=4))],
              [Choice(0, 300, Resources(dsp=1)), Choice(1, 150, Resources(dsp=2))]]
    cfg = config_from_dict({"hw": {"target_fps": 400_000, "budget": {"dsp": 100, "lut": 100, "bram36": 10}}}, "t")
    f = choose_folding(layers, NONE, 10, cfg.hw)  # 100 MHz / 400k fps = 250 cycles
    assert f.picks == (1, 1) and f.cycles == 200 and f.total.dsp == 4
    fastest = choose_folding(layers, NONE, 10, _hw(dsp=100, lut=100, bram36=10))
    assert fastest.cycles == 150 and fastest.total.dsp > f.total.dsp
    too_fast = config_from_dict({"hw": {"target_fps": 2_000_000}}, "t")  # 50 cycles: below both layers
    with pytest.raises(HlsgenError) as e:
        choose_folding(layers, NONE, 10, too_fast.hw, ["conv_a", "conv_b"])
    assert str(e.value) == ("hw.target_fps 2,000,000 at 100 MHz (hw.hls.clock_ns 10) needs 50 cycles per frame, but "
                            "even at its most parallel folding conv_b (150 cycles), conv_a (100 cycles) take longer: "
                            "the model reaches at most 666,667 frames/s, set by conv_b")


@pytest.mark.parametrize(("fps", "message"), [
    (1e12, "hw.target_fps 1e+12 at 100 MHz (hw.hls.clock_ns 10) leaves less than one clock cycle per frame; at this "
           "clock no design exceeds 100,000,000 frames/s"),
    (2e7, "hw.target_fps 20,000,000 at 100 MHz (hw.hls.clock_ns 10) needs 5 cycles per frame, but the input stream "
          "alone takes 10 (one beat per cycle): at most 10,000,000 frames/s"),
])
def test_an_unreachable_rate_says_which_limit_it_meets(fps: float, message: str) -> None:
    """1e12 frames/s was refused by the config with 'must be a rate in frames/s >= 0' (an unstated
    limit below 1e9); now the config takes any rate and the folding says what caps it."""
    layers = [[Choice(0, 400, Resources(dsp=1))]]
    hw = config_from_dict({"hw": {"target_fps": fps}}, "t").hw
    with pytest.raises(HlsgenError) as e:
        choose_folding(layers, NONE, 10, hw, ["conv_a"])
    assert str(e.value) == message


def test_budget_defaults_to_the_part_with_80_percent_of_its_luts() -> None:
    assert budget_of(_hw()) == Budget(220, 42_560, 140)  # xc7z020
    assert budget_of(config_from_dict({"hw": {"part": "xc7a35tcpg236-1"}}, "t").hw) == Budget(90, 16_640, 50)
    assert budget_of(_hw(dsp=100)) == Budget(100, 42_560, 140)


@pytest.fixture(scope="module")
def resnet():  # type: ignore[no-untyped-def]
    m = model_zoo.resnet_tiny()
    return m, from_onnx_model(m, "resnet_tiny"), model_zoo.random_inputs(m, 8, seed=1)


def test_smaller_budget_gives_a_slower_design_within_it(resnet) -> None:  # type: ignore[no-untyped-def]
    m, g, x = resnet
    wide = build_dataflow(compile_model(g, None, x).graph, _hw())
    assert wide.folding is not None and wide.folding.fits
    need = wide.folding.total.dsp
    hw = _hw(dsp=int(need // 2))
    narrow = build_dataflow(compile_model(g, None, x).graph, hw)
    assert narrow.folding is not None and narrow.folding.fits
    assert narrow.folding.total.dsp <= need // 2
    assert narrow.cycles_per_frame > wide.cycles_per_frame


def test_layer_overrides_win_over_folding(resnet) -> None:  # type: ignore[no-untyped-def]
    m, g, x = resnet
    cfg = config_from_dict({"hw": {"layers": {"conv_12_node": {"pe": 1, "simd": 1}}}}, "t")
    df = build_dataflow(compile_model(g, cfg, x).graph, cfg.hw)
    lay = next(lay for lay in df.layers if lay.node == "conv_12_node")
    assert (lay.pe, lay.simd) == (1, 1)
    assert df.cycles_per_frame == lay.cycles  # the pinned layer is now the bottleneck


def test_dsp_slices_follow_the_dsp48_port_widths() -> None:
    assert dsp_slices(8, 8) == 1
    assert dsp_slices(25, 18) == 1 and dsp_slices(18, 25) == 1
    assert dsp_slices(26, 18) == 2 and dsp_slices(25, 19) == 2
    assert dsp_slices(32, 32) == 4
    assert dsp_slices(27, 18, FAMILIES["xcup"]) == 1 and dsp_slices(27, 18, FAMILIES["xc7"]) == 2
    assert dsp_slices(4, 4) == 0  # an 8-bit result stays in LUTs


def test_bram18_picks_the_cheapest_aspect_ratio() -> None:
    assert bram18(64, 512) == 0  # shallow: LUTRAM
    assert bram18(512, 36) == 1 and bram18(513, 36) == 2
    assert bram18(1024, 18) == 1 and bram18(2048, 8) == 1 and bram18(1000, 72) == 4


def test_report_shows_the_folding_and_the_estimate(resnet) -> None:  # type: ignore[no-untyped-def]
    from hlsgen.report.summary import build_report, render_markdown

    m, g, x = resnet
    c = compile_model(g, None, x)
    df = build_dataflow(c.graph, c.config.hw)
    r = build_report(c, df)
    hw = r["hardware"]
    assert hw["part"] == "xc7z020clg400-1" and hw["folding"]["goal"] == "fastest" and hw["folding"]["fits"]
    rows = [row for row in r["layers"] if "resources" in row]
    assert len(rows) == len([lay for lay in df.layers if lay.kind != Kind.CONVERT])  # converters: hw["converters"]
    assert len(hw["converters"]) == sum(lay.kind == Kind.CONVERT for lay in df.layers) > 0
    assert sum(row["resources"]["dsp"] for row in rows) <= hw["folding"]["estimate"]["dsp"]
    assert hw["frames_per_second"] == round(1e8 / df.cycles_per_frame, 1)
    md = render_markdown(r)
    assert "Folded for `xc7z020clg400-1` (fastest): the estimate fits the budget" in md


def test_every_tradeoff_row_is_what_its_target_fps_gives() -> None:
    """report.md's trade-off table: each row's hw.target_fps, compiled, gives exactly that row's cycles
    and resources; the rows are a Pareto front (slower rows are cheaper in some resource); the first
    is the default (fastest) design itself."""
    model = EXAMPLES / "mlp_yaml" / "model.yaml"
    c = compile_model(model)
    fastest = build_dataflow(c.graph, c.config.hw).folding
    assert fastest is not None and len(fastest.tradeoffs) >= 5
    assert (fastest.tradeoffs[0].cycles, fastest.tradeoffs[0].total) == (fastest.cycles, fastest.total)
    for faster, slower in itertools.pairwise(fastest.tradeoffs):
        assert faster.cycles < slower.cycles
        assert any(getattr(slower.total, k) < getattr(faster.total, k) for k in ("dsp", "lut", "bram36"))
    for row in fastest.tradeoffs:
        cfg = config_from_dict({"hw": {"target_fps": row.fps}}, "t")
        asked = build_dataflow(c.graph, cfg.hw).folding
        assert asked is not None and (asked.cycles, asked.total) == (row.cycles, row.total), row


def test_the_estimate_costs_the_fifos_at_their_folded_widths_and_the_converters() -> None:
    """The folding's total is the estimate of what the dataflow builds: every layer at the folds of its
    streams, every width converter, every FIFO edge as deep and as wide (fold x bits) as built. The
    search once costed the FIFOs at whole pixels a beat (544 channels here) and left the converters out."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))
    import test_wide_channels_hw

    c = test_wide_channels_hw._compile()
    df = build_dataflow(c.graph, c.config.hw)
    family = FAMILIES["xc7"]
    edges = {**df.fifo_depth, **{(s.name, ""): output_depth(s, list(df.layers)) for s in df.outputs}}

    def estimate(widths: dict[str, int]) -> Resources:
        total = glue_resources(edges, widths, family)
        for lay in df.layers:
            total = total + layer_resources(lay, df.streams[lay.inputs[0]], df.streams[lay.output], family)
        return replace(total, lut=total.lut * family.calibration.design_lut_factor)

    assert df.folding is not None and any(lay.kind == Kind.CONVERT for lay in df.layers)
    built = estimate({s.name: s.data_bits for s in df.streams.values()})
    assert df.folding.total.as_dict() == pytest.approx(built.as_dict(), rel=1e-9)
    unfolded = estimate({s.name: s.channels * s.bits for s in df.streams.values()})
    assert unfolded.lutram > built.lutram and unfolded.lut > built.lut


def test_hw_layers_may_name_an_inserted_requant_but_not_a_fused_node() -> None:
    """hw.layers keys are the hardware layers report.md lists: a requant the quantize pass inserts in
    front of a concat (`concat.requant0`) takes its PE; a Relu fused into its conv, or a typo, is an
    error naming the key (before, both were accepted and did nothing)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))
    import test_wide_channels_hw

    m, calib = test_wide_channels_hw.wide_channels_net()
    pinned = test_wide_channels_hw.FOLDING

    def requant_pes(layers: dict[str, dict[str, int]]) -> dict[str, int]:
        c = compile_model(from_onnx_model(m, "w"), config_from_dict({"hw": {"layers": {**pinned, **layers}}}, "t"),
                          calib)
        return {lay.node: lay.pe for lay in build_dataflow(c.graph, c.config.hw).layers if lay.kind == Kind.REQUANT}

    assert requant_pes({}) == {"concat.requant0": 1, "concat.requant1": 1, "concat.requant2": 1}
    assert requant_pes({"concat.requant0": {"pe": 16}})["concat.requant0"] == 16
    for key, hint in (("Relu_1", ""), ("concat_requant0", " (did you mean 'concat.requant0'?)")):
        with pytest.raises(HlsgenError, match=re.escape(f"'hw.layers.{key}' names no hardware layer{hint}")):
            requant_pes({key: {"pe": 2}})

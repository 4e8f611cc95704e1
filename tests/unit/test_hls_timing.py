"""The timed model of the generated HLS dataflow (hlsgen.tools.hls_timing): cycles per frame.

Each kernel call of the generated top function is simulated as its pipelined loop (trip count,
stream accesses per iteration, blocking FIFOs of the generated depths) over several frames. The
network's steady-state interval must be its slowest loop's trip count: the cycle model
(Dataflow.cycles_per_frame) for the ResNet example and for the test nets, except where a
sliding-window generator feeding a one-tap-per-cycle unit is itself the slowest loop (its line-buffer
fill is paid once per frame: named in docs/hls.md). The negative control runs the same designs with
the deadlock-only FIFO depths (no rate sizing) and must come out slower.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

import hlsgen.backends.hls as hls
from hlsgen.config.compile import config_from_dict
from hlsgen.errors import HlsgenError
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.model import Dataflow
from hlsgen.pipeline import compile_model
from hlsgen.tools.hls_timing import DEPTH, time_network

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))
from test_csim_ops import CONFIGS, OPS_NET, WIDE_NET  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "resnet_cifar"
MVU = ("conv_mvu", "conv_mvu_residual", "dense", "dwconv_mvu", "dwconv_mvu_residual")


def _net(tmp_path: Path, name: str, hw: dict | None = None) -> tuple[Dataflow, object]:
    if name == "resnet":
        config = yaml.safe_load((EXAMPLE / "config.yaml").read_text())
        if hw:
            config["hw"] = hw
        c = compile_model(EXAMPLE / "model.onnx", config_from_dict(config, "t"), EXAMPLE / "calib.npy")
    else:
        (tmp_path / "m.yaml").write_text(WIDE_NET if name == "wide" else OPS_NET)
        c = compile_model(tmp_path / "m.yaml", config_from_dict(CONFIGS.get(name, {}), "t"))
    return build_dataflow(c.graph, c.config.hw), c.config.hw


@pytest.fixture(scope="module", params=[None, {"pe": 2, "simd": 8}], ids=["example", "pe2_simd8"])
def resnet(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Dataflow, object]:
    return _net(tmp_path_factory.mktemp("timing"), "resnet", request.param)


def test_resnet_cycles_per_frame_are_the_cycle_model(resnet: tuple[Dataflow, object]) -> None:
    df, hw = resnet
    t = time_network(df, hw, frames=3, drain=False)
    assert t.cycles_per_frame == df.cycles_per_frame  # 36,864 at the example's folds, 147,456 at 2/8
    layers = {lay.name: lay for lay in df.layers}
    for p in t.processes:
        if p.layer and p.name.split("(")[0] in MVU:
            assert p.iters == layers[p.layer].cycles, p.name  # the MVU loop is the cycle model, exactly
        elif p.layer:
            assert p.iters <= df.cycles_per_frame, p.name
        assert p.frame_ends[-1] - p.frame_ends[-2] == df.cycles_per_frame, p.name  # nothing runs slower


@pytest.mark.parametrize("name", ["ops_int8", "ops_mixed", "wide"])
def test_test_nets_run_at_their_slowest_loop(name: str, tmp_path: Path) -> None:
    df, hw = _net(tmp_path, name)
    t = time_network(df, hw, frames=3, drain=False)
    slowest = max(p.iters for p in t.processes)
    assert t.cycles_per_frame == slowest
    # the cycle model, or a line-buffer fill (at most the window's first rows) on top of it
    assert df.cycles_per_frame <= t.cycles_per_frame <= df.cycles_per_frame + 2 * 12 + 3
    drained = time_network(df, hw, frames=3, drain=True)  # non-rewinding pipelines drain every frame
    assert t.cycles_per_frame <= drained.cycles_per_frame <= t.cycles_per_frame + max(DEPTH.values())


@pytest.mark.parametrize("name", ["ops_int8", "ops_mixed", "wide"])
def test_no_deadlock_under_random_input_and_output_stalls(name: str, tmp_path: Path) -> None:
    """The input offers and the outputs accept beats on random cycles only (half of them): every
    process still finishes every frame (the FIFO depths hold under back-pressure)."""
    df, hw = _net(tmp_path, name)
    for seed in range(3):
        t = time_network(df, hw, frames=3, drain=True, stall_seed=seed)
        assert all(p.frame == 3 for p in t.processes)


def test_negative_control_shallow_skip_fifos_deadlock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    df, hw = _net(tmp_path, "ops_int8")
    monkeypatch.setattr(hls, "rate_depths", lambda df, codes: {e: 2 for e in df.fifo_depth})
    with pytest.raises(RuntimeError, match="deadlocked"):
        time_network(df, hw, frames=2, stall_seed=0)


@pytest.mark.parametrize("name", ["ops_mixed", "wide"])
def test_negative_control_without_rate_sizing_is_slower(name: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    df, hw = _net(tmp_path, name)
    assert time_network(df, hw, frames=3, drain=False).cycles_per_frame == df.cycles_per_frame
    monkeypatch.setattr(hls, "rate_depths", lambda df, codes: dict(df.fifo_depth))
    assert time_network(df, hw, frames=3, drain=False).cycles_per_frame > df.cycles_per_frame


def test_pixels_over_4096_bits_are_folded_and_a_forced_one_is_refused(tmp_path: Path) -> None:
    """520 x 8-bit channels (4,160 bits a pixel): the stream between c1 and c2 is folded (docs/streams.md),
    so the HLS backend renders; the same pixels forced whole at the input port (hw.io_bits 0) are refused."""
    (tmp_path / "m.yaml").write_text("""
name: too_wide
input: {name: x, shape: [4, 3, 3]}
layers:
  - {name: c1, op: conv, filters: 520, kernel: 1}
  - {name: c2, op: conv, filters: 4, kernel: 1}
""")
    c = compile_model(tmp_path / "m.yaml", config_from_dict({}, "t"))
    df = build_dataflow(c.graph, c.config.hw)
    c1 = df.streams[next(lay.output for lay in df.layers if lay.node == "c1")]
    assert c1.channels == 520 and c1.fold < 520 and max(s.beat_bits for s in df.streams.values()) <= 4096
    hls.hls_context(df, c.config.hw)  # renders
    (tmp_path / "w.yaml").write_text("""
name: too_wide_input
input: {name: x, shape: [520, 3, 3]}
layers:
  - {name: c1, op: conv, filters: 4, kernel: 1}
""")
    c = compile_model(tmp_path / "w.yaml", config_from_dict({"hw": {"io_bits": 0}}, "t"))
    df = build_dataflow(c.graph, c.config.hw)
    # the whole input pixel reaches the converter in front of c1 (a fold c1 reads): that stream is refused
    with pytest.raises(HlsgenError, match=r"stream x_q \(read by layer_convert_x_q_f\d+\) has 4160-bit beats"):
        hls.hls_context(df, c.config.hw)


def test_tlast_adds_a_process_but_no_cycles(tmp_path: Path) -> None:
    """hw.tlast: an `axis_last` copy process in front of the output port, modelled II=1; the network
    keeps the interval it has without it."""
    (tmp_path / "m.yaml").write_text(OPS_NET)
    timings = []
    for tlast in (False, True):
        c = compile_model(tmp_path / "m.yaml", config_from_dict({"hw": {"tlast": tlast}}, "t"))
        timings.append(time_network(build_dataflow(c.graph, c.config.hw), c.config.hw, frames=3, drain=False))
    plain, with_tlast = timings
    assert not any(p.name.startswith("axis_last(") for p in plain.processes)
    assert any(p.name.startswith("axis_last(") for p in with_tlast.processes)
    assert with_tlast.cycles_per_frame == plain.cycles_per_frame


@pytest.mark.parametrize("net", ["wide_pool_lut", "wide_avgpool", "wide_reorder", "wide_channels"])
def test_fold_major_pools_and_folded_tables_run_at_the_cycle_model(net: str) -> None:
    """A fold-major pool's loops run OUT_PIXELS x TAP_FOLDS windows, a folded table PIXELS x FOLDS
    beats (the model once counted pixels only, and the table deadlocked the network), a folded
    reorder writes a beat at a pixel's last code too, and a folded concat reads its inputs in turn."""
    import test_wide_avgpool_hw
    import test_wide_channels_hw
    import test_wide_pool_lut_hw
    import test_wide_reorder_hw

    nets = {"wide_pool_lut": test_wide_pool_lut_hw, "wide_avgpool": test_wide_avgpool_hw,
            "wide_reorder": test_wide_reorder_hw, "wide_channels": test_wide_channels_hw}
    c = nets[net]._compile()
    df = build_dataflow(c.graph, c.config.hw)
    t = time_network(df, c.config.hw, frames=3, drain=False)
    assert t.cycles_per_frame == df.cycles_per_frame


def test_a_gemm_reading_its_first_fold_does_not_stall_its_producer(monkeypatch: pytest.MonkeyPatch) -> None:
    """conv -> wide global max pool -> converters -> gemm (SIMD-folded input, 5 output folds): the gemm reads
    a pixel's beats in its first output fold only. With the idle folds' beats in its FIFO the network runs
    at the cycle model; without them (the control) the converters stall into that stretch every frame."""
    import test_wide_gmax_hw

    c = test_wide_gmax_hw._compile()
    df = build_dataflow(c.graph, c.config.hw)
    assert time_network(df, c.config.hw, frames=4, drain=False).cycles_per_frame == df.cycles_per_frame
    monkeypatch.setattr(hls, "_first_fold_reads", lambda *args: None)
    assert time_network(df, c.config.hw, frames=4, drain=False).cycles_per_frame > df.cycles_per_frame * 1.4

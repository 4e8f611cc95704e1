"""The hardware view: stream layouts, folds, the cycle model, skip FIFO depths and vector packing."""

from __future__ import annotations

import math
from pathlib import Path

import model_zoo
import numpy as np
import pytest

from hlsgen import compile_model, intermediates
from hlsgen.backends.vectors import pack_beats, stream_codes, unpack_beats
from hlsgen.config.compile import config_from_dict
from hlsgen.frontend import from_onnx_model
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.fifo import FIFO_MARGIN, SLICE_DEPTH, output_depth, skip_depth
from hlsgen.hw.model import Kind
from hlsgen.hw.params import MvuParams, sliding_window


@pytest.fixture(scope="module")
def resnet():  # type: ignore[no-untyped-def]
    m = model_zoo.resnet_tiny()
    c = compile_model(from_onnx_model(m, "resnet_tiny"), calib=model_zoo.random_inputs(m, 16, seed=1))
    return c, build_dataflow(c.graph, c.config.hw)


def test_pack_unpack_round_trip_with_negative_codes() -> None:
    codes = np.array([[-128, 127, -1, 0], [5, -6, 7, -8]])
    beats = pack_beats(codes, 8)
    assert beats[0] == 0x00FF7F80  # channel 0 in the low byte, two's complement
    assert np.array_equal(unpack_beats(beats, 4, 8, True), codes)
    assert not np.array_equal(unpack_beats(beats, 4, 8, False), codes)  # unsigned reading differs


def test_stream_order_is_pixels_raster_channels_inner(resnet) -> None:  # type: ignore[no-untyped-def]
    c, df = resnet
    x = model_zoo.random_inputs(model_zoo.resnet_tiny(), 2, seed=3)
    values = intermediates(c, x)
    s = df.input
    codes = stream_codes(values[s.tensor], s)
    ir = values[s.tensor]  # [N, C, H, W]
    assert codes.shape == (2, s.height * s.width, s.channels)
    assert codes[1, 5 * s.width + 7, 2] == ir[1, 2, 5, 7]


def test_cycle_model_formula_and_balanced_folds(resnet) -> None:  # type: ignore[no-untyped-def]
    c, df = resnet
    for lay in df.layers:
        p = lay.params
        if lay.kind == "conv":
            assert isinstance(p, MvuParams) and p.window is not None
            w = p.window
            want = w.out_h * w.out_w * math.ceil(p.out_c / lay.pe) * w.taps * math.ceil(p.in_c // p.group / lay.simd)
            assert lay.cycles == want
            assert p.out_c % lay.pe == 0 and (p.in_c // p.group) % lay.simd == 0
        assert lay.cycles <= df.cycles_per_frame
    assert df.cycles_per_frame == max(lay.cycles for lay in df.layers)


def test_configured_folds_are_used_even_when_they_do_not_divide() -> None:
    m = model_zoo.resnet_tiny()
    cfg = config_from_dict({"hw": {"layers": {"conv_12_node": {"pe": 3, "simd": 5}}}}, "t")
    c = compile_model(from_onnx_model(m, "r"), cfg, calib=model_zoo.random_inputs(m, 8, seed=1))
    lay = next(lay for lay in build_dataflow(c.graph, c.config.hw).layers if lay.node == "conv_12_node")
    assert (lay.pe, lay.simd) == (3, 5)
    p = lay.params
    assert isinstance(p, MvuParams) and p.window is not None
    assert lay.cycles == p.window.out_h * p.window.out_w * math.ceil(p.out_c / 3) * 9 * math.ceil(p.in_c / 5)


def test_skip_depth_counts_the_lead_of_the_skip_branch() -> None:
    main = np.array([5, 6, 7, 8])  # main pixel i exists once input pixel main[i] arrived
    skip = np.array([1, 2, 3, 4])  # the skip branch is 4 pixels ahead
    assert skip_depth(main, skip) == 4
    assert skip_depth(skip, main) == 0  # the other way round nothing waits
    assert skip_depth(main, main) == 1  # ties: produced together, one may wait


def test_residual_skip_fifo_holds_a_row_and_more(resnet) -> None:  # type: ignore[no-untyped-def]
    _, df = resnet
    joins = [lay for lay in df.layers if len(lay.inputs) == 2]
    assert joins
    first = joins[0]
    window = sliding_window(first.params)
    assert window is not None
    width = window.in_w
    # identity block: the skip waits for two 3x3 convolutions, i.e. about two rows and two pixels
    assert df.fifo_depth[(first.inputs[1], first.name)] >= 2 * width + 2


def test_gemm_weights_follow_the_stream_order() -> None:
    m = model_zoo.dw_separable()
    c = compile_model(from_onnx_model(m, "dw"), calib=model_zoo.random_inputs(m, 8, seed=1))
    df = build_dataflow(c.graph, c.config.hw)
    gemm = next(lay for lay in df.layers if lay.kind == "gemm")
    x = model_zoo.random_inputs(m, 3, seed=4)
    values = intermediates(c, x)
    node = c.graph.node(gemm.node)
    ir_in = values[node.inputs[0]].reshape(3, -1)
    w_ir = c.graph.tensor(node.inputs[1]).data.astype(np.int64)
    streamed = stream_codes(values[df.streams[gemm.inputs[0]].tensor], df.streams[gemm.inputs[0]]).reshape(3, -1)
    assert np.array_equal(streamed @ gemm.arrays["weights"].T, ir_in @ w_ir.T)
    assert not np.array_equal(streamed @ w_ir.T, ir_in @ w_ir.T)  # without the permutation it differs


def test_nhwc_model_streams_its_input_in_memory_order() -> None:
    m = model_zoo.nhwc_tf_style()
    x = model_zoo.random_inputs(m, 4, seed=1)
    c = compile_model(from_onnx_model(m, "nhwc"), calib=x)
    df = build_dataflow(c.graph, c.config.hw)
    assert (df.input.height, df.input.width, df.input.channels) == (8, 8, 3)
    values = intermediates(c, x)
    raw = values[df.input.tensor]  # IR layout is the model's NHWC
    assert np.array_equal(stream_codes(raw, df.input).reshape(4, -1), raw.reshape(4, -1))
    conv = next(lay for lay in df.layers if lay.kind == "conv")
    port = next(lay for lay in df.layers if lay.output == conv.inputs[0])  # 64-bit port beats -> pixels
    assert port.kind == Kind.CONVERT and port.inputs == (df.input.name,)  # the Transpose costs no hardware
    assert not any(lay.kind == Kind.REORDER for lay in df.layers)


def _mlp_dataflow(hw: dict[str, object]):  # type: ignore[no-untyped-def]
    ex = Path(__file__).resolve().parents[2] / "examples" / "mlp_yaml"
    c = compile_model(ex / "model.yaml", config_from_dict({"hw": hw}, "t"))
    return build_dataflow(c.graph, c.config.hw)


def test_one_beat_per_frame_edges_get_a_register_slice() -> None:
    """Dense vectors between units that take >= 2 cycles per frame: depth 1 (hg_fifo's register slice,
    no LUTRAM), the output edge too; a unit at one cycle per frame needs full rate: FIFO_MARGIN."""
    folded = _mlp_dataflow({"layers": {"fc1": {"pe": 2, "simd": 8}, "fc2": {"pe": 2, "simd": 8},
                                       "fc3": {"pe": 2, "simd": 8}}, "io_bits": 0})  # a vector a beat
    assert all(lay.cycles >= 2 for lay in folded.layers)
    assert set(folded.fifo_depth.values()) == {SLICE_DEPTH}
    last = folded.layers[-1]
    assert output_depth(folded.streams[last.output], list(folded.layers)) == SLICE_DEPTH
    unrolled = _mlp_dataflow({"layers": {"fc1": {"pe": 32, "simd": 64}, "fc2": {"pe": 2, "simd": 8},
                                         "fc3": {"pe": 2, "simd": 8}}, "io_bits": 0})
    fc1, fc2 = unrolled.layers[0], unrolled.layers[1]
    assert fc1.cycles == 1
    assert unrolled.fifo_depth[(unrolled.input.name, fc1.name)] == FIFO_MARGIN  # its consumer is fc1
    assert unrolled.fifo_depth[(fc1.output, fc2.name)] == FIFO_MARGIN  # its producer is fc1


def test_multi_beat_streams_keep_the_full_rate_margin(resnet) -> None:  # type: ignore[no-untyped-def]
    _, df = resnet
    for (stream, _), depth in df.fifo_depth.items():
        if df.streams[stream].pixels > 1:
            assert depth >= FIFO_MARGIN

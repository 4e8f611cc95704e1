"""Converter-aware folding (hw/slow_converters.py): the folding search alone gives the wide global max
pool net (conv 8 -> 544 channels, GlobalMaxPool reading 512 channels a beat, Gemm 544 -> 10) a conv at
PE 37, whose stream goes to the pool's 512-channel beats through a 1-channel converter: 4,896 cycles a
frame where the conv takes 135. With the converters in the loop the conv takes a PE whose fold joins
into 512-channel beats and no converter is slower than the design's slowest layer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))
from test_wide_gmax_hw import _compile  # noqa: E402

from hlsgen.hw import slow_converters  # noqa: E402
from hlsgen.hw.dataflow import build_dataflow  # noqa: E402
from hlsgen.hw.model import Kind  # noqa: E402


def _dataflow():
    c = _compile()
    return build_dataflow(c.graph, c.config.hw)


def test_no_converter_is_slower_than_the_slowest_layer() -> None:
    df = _dataflow()
    slowest = max(lay.cycles for lay in df.layers if lay.kind != Kind.CONVERT)
    chains = slow_converters.converter_chains(df.layers)
    assert chains and all(c.cycles <= slowest for c in chains)
    assert df.cycles_per_frame == slowest
    conv = next(lay for lay in df.layers if lay.kind == Kind.CONV)
    assert 512 % df.streams[conv.output].fold == 0  # a join into the pool's beats, not a gcd path


def test_the_search_alone_leaves_a_gcd_converter_as_the_bottleneck(monkeypatch: pytest.MonkeyPatch) -> None:
    """The negative control: with the narrowing switched off the slow chain is there, named."""
    fast = _dataflow().cycles_per_frame
    monkeypatch.setattr(slow_converters, "_keep_fast", lambda *args: False)
    df = _dataflow()
    slowest = max(lay.cycles for lay in df.layers if lay.kind != Kind.CONVERT)
    slow = [c for c in slow_converters.converter_chains(df.layers) if c.cycles > slowest]
    assert [(c.producer, c.reader) for c in slow][:1] == [("layer_Conv_0", "layer_GlobalMaxPool_1")]
    assert df.cycles_per_frame == slow[0].cycles > 4 * fast
    assert df.bottleneck.startswith("layer_convert_")


def test_a_chain_runs_from_the_stream_converted_to_its_reader() -> None:
    df = _dataflow()
    chain = next(c for c in slow_converters.converter_chains(df.layers) if c.reader == "layer_Gemm_3")
    assert (chain.source, chain.producer) == ("g", "layer_GlobalMaxPool_1")
    assert chain.cycles == max(lay.cycles for lay in df.layers if lay.kind == Kind.CONVERT
                               and lay.output.startswith("g_"))

"""Data-width converters (convert): the same tensor from one fold of a stream to another, inserted by
hw/stream_folds.py where a producer's fold is not its consumer's. Not lowered from an IR node: its
layer carries the node of the stream's consumer. One unit in both backends: a chain of hg_split /
hg_join (templates/verilog/rtl/) and of split / join (templates/hls/kernels/dwc.h), each moving one
sub-beat per cycle (hw/convert.py). Its logic (beat registers, counters, the split multiplexer) is
costed by the fitted features of every layer: base, in_bits and out_bits of its two beats."""

from __future__ import annotations

from hlsgen.hw.convert import fold_change
from hlsgen.hw.layers.common import no_features, no_macs, no_memories, no_requant, one_form, same_pixel
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import ConvertParams
from hlsgen.ir import Op

OPS: tuple[Op, ...] = ()
KINDS = (Kind.CONVERT,)
options = one_form
last_input_pixel = same_pixel
requant_shape, features, mac_dsp, memories = no_requant, no_features, no_macs, no_memories


def converter(name: str, node: str, src: Stream, out: Stream) -> Layer:
    """The layer turning stream `src` into `out` (the same tensor, another fold)."""
    steps = fold_change(src.channels, src.bits, src.fold, out.fold)
    params = ConvertParams(src.channels, src.fold, out.fold, steps)
    layer = Layer(name, node, Kind.CONVERT, (src.name,), out.name, 1, 1, params, {}, 0, 0)
    return layer.with_cycles(cycles(layer, src, out))


def params_of(layer: Layer) -> ConvertParams:
    assert isinstance(layer.params, ConvertParams)
    return layer.params


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """One sub-beat per cycle in each step; the steps run concurrently."""
    return max(step.cycles(x.pixels) for step in params_of(layer).steps)


def out_folds(layer: Layer, x: Stream, out: Stream) -> tuple[int, ...]:
    return (params_of(layer).out_fold,)


def in_folds(layer: Layer, index: int, s: Stream) -> tuple[int, ...]:
    return (params_of(layer).in_fold,)

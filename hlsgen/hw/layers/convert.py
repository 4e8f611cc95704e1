"""Data-width converters (convert): one stream in another format, inserted by hw/stream_folds.py where a
producer's fold is not its reader's, and at the ports. Not lowered from an IR node. Each is one
primitive (hw/convert.py), a split or a join over sub-beats: a fold A -> B = A/k (split) or B = k·A
(join), groups of a pixel's sub-beats; or whole pixels into port beats of `pack` pixels (join) and
back (split), one group a frame. One unit in both backends: hg_split / hg_join
(templates/verilog/rtl/) and split / join (templates/hls/kernels/dwc.h), one sub-beat per cycle. Its
logic is counted from its structure (`memories`), not fitted: it is registers, counters and one
multiplexer, measured by Yosys (tests/data/synth_fc_ae.json)."""

from __future__ import annotations

from hlsgen.devices.families import Family
from hlsgen.errors import HlsgenError
from hlsgen.hw.convert import Convert
from hlsgen.hw.cost import NONE, Resources
from hlsgen.hw.layers.common import no_macs, no_requant, one_form, same_pixel
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import ConvertParams
from hlsgen.ir import Op

OPS: tuple[Op, ...] = ()
KINDS = (Kind.CONVERT,)
options = one_form
last_input_pixel = same_pixel
requant_shape, mac_dsp = no_requant, no_macs


def step_between(src: Stream, out: Stream) -> tuple[Convert, int]:
    """The one primitive from `src` to `out` and its groups a frame; HlsgenError if it takes more."""
    c, b = src.channels, src.bits
    if src.pack == out.pack == 1:
        if src.fold % out.fold == 0:
            return Convert("split", out.fold * b, -(-c // out.fold), src.fold // out.fold), src.pixels
        if out.fold % src.fold == 0:
            return Convert("join", src.fold * b, -(-c // src.fold), out.fold // src.fold), src.pixels
    elif src.fold == out.fold == c and 1 in (src.pack, out.pack):
        k = max(src.pack, out.pack)
        return (Convert("join", c * b, src.pixels, k) if src.pack == 1 else Convert("split", c * b, src.pixels, k)), 1
    raise HlsgenError(f"stream {src.name}: no single converter from {src.fold} channels x {src.pack} pixels "
                      f"to {out.fold} x {out.pack} a beat")


def converter(name: str, src: Stream, out: Stream) -> Layer:
    """The layer turning stream `src` into `out` (the same tensor in another format). It has no IR node
    (its node is empty, so no per-node lookup ever finds it in place of the layer of a node)."""
    step, groups = step_between(src, out)
    layer = Layer(name, "", Kind.CONVERT, (src.name,), out.name, 1, 1, ConvertParams(src.channels, step, groups),
                  {}, 0, 0)
    return layer.with_cycles(cycles(layer, src, out))


def params_of(layer: Layer) -> ConvertParams:
    assert isinstance(layer.params, ConvertParams)
    return layer.params


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """One sub-beat per cycle."""
    p = params_of(layer)
    return p.step.cycles(p.groups)


def out_folds(layer: Layer, x: Stream, out: Stream) -> tuple[int, ...]:
    return (out.fold,)


def in_folds(layer: Layer, index: int, s: Stream) -> tuple[int, ...]:
    return (s.fold,)


def features(layer: Layer, x: Stream, out: Stream) -> dict[str, float]:
    """None of the fitted features: a converter is costed by its structure (memories)."""
    return {"base": 0.0, "in_bits": 0.0, "out_bits": 0.0}


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    """hg_split: its input beat in a shift register (K·W flip-flops, a 2:1 multiplexer for the bits the
    next beat loads over the shifted ones); hg_join: K-1 held sub-beats and the output beat, with a
    K·W-bit 2:1 multiplexer only where a group ends in a short beat (the constant shift). Both: the
    two counters (hg_subbeats) and a valid flag. Measured by Yosys on the FC autoencoder's three:
    61/68, 322/691, 5/124 LUT/FF (model 61/75, 349/691, 5/131)."""
    c = params_of(layer).step
    counters = max(1, (c.k - 1).bit_length()) + max(1, (c.wide_beats - 1).bit_length()) + 1
    if c.kind == "split":
        return NONE + Resources(lut=c.w * (c.k - 1) + 5, ff=c.k * c.w + counters)
    short = c.last_subs < c.k
    return NONE + Resources(lut=(c.k * c.w if short else 0) + 5, ff=(2 * c.k - 1) * c.w + counters)

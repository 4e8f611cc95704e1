"""Per-layer parameters of the hand-written Verilog modules (templates/verilog/rtl/).

Every dataflow `Layer` becomes one unit, preceded by an `hg_window` when it reads a sliding window:
    conv, dwconv, gemm -> hg_window + hg_mvu   (gemm: the window is the whole input image)
    maxpool, avgpool   -> hg_window + hg_pool
    add, requant       -> hg_eltwise
    lut                -> hg_lut (its table in a .mem file)
    reorder            -> hg_reorder (a frame buffer; its read order in a .mem file)
    convert            -> hg_split or hg_join
    concat, slice      -> hg_concat (all inputs side by side on one in_data), hg_slice; on folded
                          streams hg_concat_beats, hg_slice_beats
    upsample           -> hg_upsample (a row buffer)
`unit(layer, df, top)` returns the template data of one layer: parameter lists and, for MVU layers,
the weight ROM words (written to a .mem file read with $readmemh).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hlsgen.backends.verilog_values import (
    Param,
    flag,
    hex_words,
    min_shift,
    mult_bits,
    pad_word,
    shift_bits,
    unsigned_bits,
    vector,
)
from hlsgen.errors import HlsgenError
from hlsgen.hw.layers import channels, mvu, pool, reads_window_fold_major, reorder
from hlsgen.hw.layers.common import beat_window, fold_major_window
from hlsgen.hw.layers.mvu import lut_multipliers, packs_pairs, requant_units, weight_words
from hlsgen.hw.model import MVU_KINDS, POOL_KINDS, Dataflow, Kind, Layer, Stream
from hlsgen.hw.packing import padded, per_channel
from hlsgen.hw.params import (
    AddParams,
    AvgPoolParams,
    ConcatParams,
    ConvertParams,
    LutParams,
    MaxPoolParams,
    ReorderParams,
    Requant,
    RequantParams,
    SliceParams,
    UpsampleParams,
    Window,
)
from hlsgen.numerics import signed_bits_for


@dataclass(frozen=True)
class Unit:
    name: str
    module: str  # hg_mvu | hg_pool | hg_eltwise
    window: tuple[Param, ...]  # empty: no hg_window in front
    tap_width: int
    params: tuple[Param, ...]
    mem_file: str | None = None
    mem_words: tuple[str, ...] = ()


def unit(layer: Layer, df: Dataflow, top: str) -> Unit:
    x = df.streams[layer.inputs[0]]
    if layer.kind in MVU_KINDS:
        return _mvu_unit(layer, df, x, top)
    if layer.kind in POOL_KINDS:
        return _pool_unit(layer, df, x)
    if layer.kind == Kind.LUT:
        return _lut_unit(layer, df, x, top)
    if layer.kind == Kind.REORDER:
        return _reorder_unit(layer, x, df.streams[layer.output], top)
    if layer.kind == Kind.CONVERT:
        return _convert_unit(layer, x, df.streams[layer.output])
    if layer.kind in channels.KINDS:
        return _channels_unit(layer, x, df.streams[layer.output])
    if layer.kind == Kind.UPSAMPLE:
        return _upsample_unit(layer, x)
    return Unit(layer.name, "hg_eltwise", (), 0, tuple(_eltwise_params(layer, df, x)))


def _lut_unit(layer: Layer, df: Dataflow, x: Stream, top: str) -> Unit:
    """hg_lut: the table of every input code, one word per entry in a .mem file."""
    p = layer.params
    assert isinstance(p, LutParams)
    out = df.streams[layer.output]
    table = np.asarray(layer.arrays["table"], dtype=np.int64)
    mem = f"{top}_{layer.name}_t.mem"
    params = (Param("C", p.fold), Param("FOLDS", p.folds), Param("LAST_C", p.last_lanes), Param("IB", x.bits),
              flag("IN_SIGNED", x.signed), Param("OB", out.bits), Param("ENTRIES", table.size),
              Param("X_LO", int(p.x_lo)), Param("MEM_FILE", mem))
    return Unit(layer.name, "hg_lut", (), 0, params, mem, tuple(hex_words(table.reshape(-1, 1), out.bits)))


def _reorder_unit(layer: Layer, x: Stream, out: Stream, top: str) -> Unit:
    """hg_reorder: the frame's input beats as they arrive, read back in canonical order; each .mem word
    holds an element's source as (input beat << LB) | lane. Folded streams: x.fold lanes a beat in,
    out.fold out, a pixel's OUT_PC codes in consecutive beats."""
    p = layer.params
    assert isinstance(p, ReorderParams)
    source = reorder.buffer_index(layer, x)
    beats, lanes = p.in_pixels * x.folds, x.fold
    wb, lb = unsigned_bits(beats - 1), unsigned_bits(lanes - 1)
    words = (source // lanes) << lb | source % lanes
    mem = f"{top}_{layer.name}_perm.mem"
    folded = [Param("OUT_PC", p.out_c), Param("PB", unsigned_bits(p.out_c - 1))] if out.fold < p.out_c else []
    params = (Param("IN_P", beats), Param("IN_C", lanes), Param("OUT_C", out.fold),
              Param("B", x.bits), Param("ELEMENTS", source.size), Param("WB", wb), Param("LB", lb),
              Param("KB", unsigned_bits(source.size - 1)), Param("CB", unsigned_bits(out.fold - 1)), *folded,
              Param("MEM_FILE", mem))
    return Unit(layer.name, "hg_reorder", (), 0, params, mem, tuple(hex_words(words.reshape(-1, 1), wb + lb)))


def _upsample_unit(layer: Layer, x: Stream) -> Unit:
    """hg_upsample: a row buffer of the input's beats, each pixel FW times, each row FH times."""
    p = layer.params
    assert isinstance(p, UpsampleParams)
    params = (Param("W", x.data_bits), Param("IN_W", p.in_w), Param("FH", p.fh), Param("FW", p.fw),
              Param("FOLDS", p.folds), Param("AB", unsigned_bits(p.in_w * p.folds - 1)),
              Param("KB", unsigned_bits(p.fw - 1)),
              Param("RB", unsigned_bits(p.fh - 1)))
    return Unit(layer.name, "hg_upsample", (), 0, params)


def _convert_unit(layer: Layer, x: Stream, out: Stream) -> Unit:
    """hg_split / hg_join: its one primitive (hw/convert.py)."""
    p = layer.params
    assert isinstance(p, ConvertParams)
    return Unit(layer.name, f"hg_{p.step.kind}", (), 0, (Param("W", p.step.w), Param("S", p.step.s),
                                                          Param("K", p.step.k)))


def _channels_unit(layer: Layer, x: Stream, out: Stream) -> Unit:
    """hg_concat (N inputs, the output pixel's width) or hg_slice (the bits of channels [start, end));
    folded (channels.is_folded), hg_concat_beats (each input's last beat + 1) or hg_slice_beats (the
    beats kept)."""
    p = channels.params_of(layer)
    if isinstance(p, ConcatParams) and channels.is_folded(p):
        beats, cb = channels.beats(p), channels.beats(p).bit_length()
        return Unit(layer.name, "hg_concat_beats", (), 0, (
            Param("N", len(p.in_c)), Param("W", out.data_bits), Param("BEATS", beats), Param("CB", cb),
            vector("ENDS", channels.beat_ends(p), cb)))
    if isinstance(p, ConcatParams):
        return Unit(layer.name, "hg_concat", (), 0, (Param("N", len(p.in_c)), Param("W", out.data_bits)))
    assert isinstance(p, SliceParams)
    if channels.is_folded(p):
        return Unit(layer.name, "hg_slice_beats", (), 0, (
            Param("W", x.data_bits), Param("IN_BEATS", channels.beats(p)), Param("FIRST", p.start // p.fold),
            Param("LAST", (p.end - 1) // p.fold)))
    return Unit(layer.name, "hg_slice", (), 0, (Param("IW", x.data_bits), Param("LO", p.start * x.bits),
                                                 Param("OW", out.data_bits)))


def _requant_common(rq: Requant, out: Stream, shift: np.ndarray) -> list[Param]:
    """The requant unit's parameters: output width, shift range, rounding, zero point and clamp."""
    lo, hi = rq.lo, rq.hi
    return [Param("OB", out.bits), Param("SHB", shift_bits(shift)), Param("MAX_SHIFT", int(np.max(shift, initial=0))),
            Param("MIN_SHIFT", min_shift(shift)),
            flag("ROUND_UP", rq.rounding == "half_up"),
            Param("ZP", rq.zp), Param("LO", lo), Param("HI", hi)]


# ---- windows -------------------------------------------------------------------------------------
def _window(x: Stream, geo: Window, repeat: int, pad: Param, fold_major: bool = False) -> tuple[Param, ...]:
    """hg_window over the stream's beats (a folded stream: common.beat_window, a tap of x.folds beats;
    `fold_major`: common.fold_major_window, the window repeated once per fold, shifted a beat each)."""
    pixels = Window(geo.kernel, geo.strides, geo.pads, geo.dilations, x.height, x.width, x.channels,
                    geo.out_h, geo.out_w, geo.out_c)
    bw = fold_major_window(pixels, x.folds) if fold_major else beat_window(pixels, x.folds)
    names = ("IN_H", "IN_W", "KH", "KW", "SH", "SW", "DH", "DW", "PT", "PL", "OUT_H", "OUT_W")
    values = (bw.in_h, bw.in_w, *bw.kernel, *bw.strides, *bw.dilations, bw.pads[0], bw.pads[1],
              bw.out_h, bw.out_w)
    step = (Param("REP_STEP", 1),) if fold_major else ()
    return (Param("WIDTH", x.data_bits), *(Param(n, int(v)) for n, v in zip(names, values, strict=True)),
            Param("REPEAT", repeat), *step, pad)


def _gemm_geometry(x: Stream) -> Window:
    """A dense layer's window: its whole input image, once."""
    return Window((x.height, x.width), (1, 1), (0, 0, 0, 0), (1, 1), x.height, x.width, x.channels, 1, 1, x.channels)


# ---- matrix-vector units -------------------------------------------------------------------------
def _mvu_unit(layer: Layer, df: Dataflow, x: Stream, top: str) -> Unit:
    p = mvu.params_of(layer)
    out = df.streams[layer.output]
    cout = out.channels
    dw = layer.kind == Kind.DWCONV
    pe, simd = layer.pe, (1 if dw else layer.simd)
    nf = math.ceil(cout / pe)
    geo = p.window or _gemm_geometry(x)
    kk = geo.taps
    words = hex_words(weight_words(layer, x), p.weight_bits)
    mem = f"{top}_{layer.name}_w.mem"
    window = _window(x, geo, nf, pad_word(int(p.pad_value or 0), x.fold, x.bits), reads_window_fold_major(layer, x))
    group = p.group if layer.kind == Kind.CONV else 1
    pack = packs_pairs(layer, x, df.family)
    params = [Param("CIN", x.channels), Param("IB", x.bits), flag("IN_SIGNED", x.signed), Param("COUT", cout),
              Param("PE", pe), Param("SIMD", simd), Param("NF", nf), Param("RQ", requant_units(layer, x)),
              Param("KK", kk), flag("DEPTHWISE", dw),
              Param("GROUP", group),
              Param("WB", p.weight_bits), Param("ACCB", int(p.acc_bits or 32)), flag("PACK", pack),
              flag("LUTMUL", lut_multipliers(layer)),
              Param("MEM_FILE", mem), *_mvu_epilogue(layer, df, nf * pe, _pack_bias_offset(layer, x, pack))]
    if df.family.dsp_primitive:  # the products in the family's DSP block with its own registers (hg_mul)
        params.append(Param("MUL_PRIM", df.family.dsp_primitive))
    if out.fold < cout:  # a folded output stream: groups of RQ requant lanes a beat (hg_collect)
        params += [Param("OBG", out.fold // requant_units(layer, x)), Param("OUTW", out.data_bits)]
    if x.fold < x.channels:  # a folded input: one SIMD slice (depthwise: one PE fold) a beat
        params.append(flag("IN_FOLDED", True))
    return Unit(layer.name, "hg_mvu", window, x.data_bits, tuple(params), mem, tuple(words))


def _pack_bias_offset(layer: Layer, x: Stream, pack: bool) -> np.ndarray:
    """What PACK adds to each output channel's bias: signed codes enter as xu = x + 2^(IB-1), so the
    window sum gains 2^(IB-1)*sum(w) (over every tap, padding taps included: they carry a real code)."""
    w = np.asarray(layer.arrays["weights"], dtype=np.int64)
    w = w.reshape(w.shape[0], -1)
    if not (pack and x.signed):
        return np.zeros(w.shape[0], dtype=np.int64)
    return -(1 << (x.bits - 1)) * w.sum(axis=1)


def _mvu_epilogue(layer: Layer, df: Dataflow, lanes: int, bias_offset: np.ndarray) -> list[Param]:
    p, e = mvu.params_of(layer), mvu.params_of(layer).epilogue
    out = df.streams[layer.output]
    n = out.channels
    mult, shift = per_channel(e.out.mult, n), per_channel(e.out.shift, n)
    neg = per_channel(e.out.mult_neg, n) if e.out.mult_neg is not None else None
    acc = int(p.acc_bits or 32)
    mb = mult_bits(mult, neg)
    bias = per_channel(layer.arrays["bias"], n) + bias_offset  # may leave ACCB bits: the accumulator wraps exactly
    params = [*_requant_common(p.requant, out, shift), Param("MB", mb), flag("HAS_NEG", neg is not None),
              vector("BIAS", padded(bias, lanes), acc),
              vector("MULT", padded(mult, lanes), mb),
              vector("MULT_NEG", padded(neg if neg is not None else mult, lanes), mb),
              vector("SHIFT", padded(shift, lanes), shift_bits(shift))]
    params += _two_step_params(layer, n, lanes)
    if len(layer.inputs) == 1:
        return [*params, Param("SKB", 1)]  # unused skip port: 1 bit per channel, tied to 0
    if len(layer.inputs) > 1:
        if e.skip is None:
            raise HlsgenError(f"layer {layer.node}: a skip input without the epilogue's skip scaling")
        skip = df.streams[layer.inputs[1]]
        smult = per_channel(e.skip.mult, n)
        smb = mult_bits(smult)
        params += [flag("HAS_SKIP", True), Param("SKB", skip.bits), flag("SKIP_SIGNED", skip.signed),
                   Param("SMB", smb), vector("SKIP_MULT", padded(smult, lanes), smb),
                   vector("SKIP_ZP", padded(per_channel(e.skip.zp, n), lanes), skip.bits + 1)]
        if skip.fold < skip.channels:  # a folded skip (pixels over a beat): its channels a beat
            params.append(Param("SKC", skip.fold))
    return params


def _two_step_params(layer: Layer, n: int, lanes: int) -> list[Param]:
    """Step 1 (the model's intermediate quantizer) and the step-2 bias of a two-step epilogue."""
    e = mvu.params_of(layer).epilogue
    params: list[Param] = []
    if e.post_bias is not None:
        pb = per_channel(e.post_bias, n)
        pbb = mult_bits(pb)
        params += [flag("HAS_PB", True), Param("PBB", pbb), vector("POST_BIAS", padded(pb, lanes), pbb)]
    mid = e.mid
    if mid is None:
        return params
    m1, s1 = per_channel(mid.mult, n), per_channel(mid.shift, n)
    neg1 = per_channel(mid.mult_neg, n) if mid.mult_neg is not None else None
    mb1 = mult_bits(m1, neg1)
    zp, lo, hi = mid.zp, mid.lo, mid.hi
    mxb = signed_bits_for(max(abs(lo - zp), abs(hi - zp)))
    tb1 = max(signed_bits_for(max(abs(lo), abs(hi))), mxb) + 1
    return [*params, flag("TWO_STEP", True), Param("MB1", mb1), Param("SHB1", shift_bits(s1)),
            Param("MAX_SHIFT1", int(np.max(s1, initial=0))), Param("MIN_SHIFT1", min_shift(s1)),
            flag("HAS_NEG1", neg1 is not None),
            Param("MID_ZP", zp), Param("MID_LO", lo), Param("MID_HI", hi), Param("MXB", mxb), Param("TB1", tb1),
            vector("MULT1", padded(m1, lanes), mb1), vector("MULT1_NEG", padded(neg1 if neg1 is not None else m1,
                                                                                  lanes), mb1),
            vector("SHIFT1", padded(s1, lanes), shift_bits(s1))]


# ---- pools and elementwise -----------------------------------------------------------------------
def _pool_unit(layer: Layer, df: Dataflow, x: Stream) -> Unit:
    p, a = layer.params, layer.arrays
    assert isinstance(p, MaxPoolParams | AvgPoolParams)
    out = df.streams[layer.output]
    c, kk = x.channels, p.window.taps
    if isinstance(p, MaxPoolParams):  # a fold-major max pool (pool.reads_fold_major): a fold's lanes
        if out.bits != x.bits:
            raise HlsgenError(f"layer {layer.node}: max pooling must keep the code width")
        if pool.reads_folded(layer, x):  # a folded global max pool: a fold's lanes, the frame's folds
            return Unit(layer.name, "hg_gmax", (), 0, (Param("F", x.fold), Param("IB", x.bits),
                        flag("IN_SIGNED", x.signed), Param("NF", x.folds), Param("PIXELS", x.pixels)))
        fold_major = pool.reads_fold_major(layer, x)
        window = _window(x, p.window, x.folds if fold_major else 1, pad_word(int(p.pad_value), x.fold, x.bits),
                         fold_major)
        return Unit(layer.name, "hg_pool", window, x.data_bits, (Param("C", x.fold), Param("IB", x.bits),
                    flag("IN_SIGNED", x.signed), Param("KK", kk), Param("OB", out.bits)))
    common = [Param("C", c), Param("IB", x.bits), flag("IN_SIGNED", x.signed), Param("KK", kk)]
    x_zp = per_channel(p.x_zp, c)
    mult, shift = per_channel(a["mult"], c), per_channel(a["shift"], c)
    mb = mult_bits(mult)
    requant = [*_requant_common(p.requant, out, shift), Param("MB", mb), vector("MULT", mult, mb),
               vector("SHIFT", shift, shift_bits(shift)), vector("X_OFF", x.pixels * x_zp, 32)]
    if pool.reads_folded(layer, x):  # PE channels a beat in; OBG folds a beat out
        return Unit(layer.name, "hg_gap", (), 0, (
            Param("C", c), Param("IB", x.bits), flag("IN_SIGNED", x.signed), Param("PIXELS", x.pixels),
            Param("PE", layer.pe), *requant, Param("OBG", out.fold // layer.pe if out.fold < c else
                                                    math.ceil(c / layer.pe)), Param("OUTW", out.data_bits)))
    fold_major = pool.reads_fold_major(layer, x)  # a fold's lanes, one requant for every channel
    n = x.fold if fold_major else c
    folds = [Param("FOLDS", x.folds), Param("LAST_C", c - (x.folds - 1) * n)] if fold_major else []
    params = [Param("C", n), *common[1:], flag("IS_AVG", True), Param("PE", layer.pe),
              *_requant_common(p.requant, out, shift), Param("MB", mb), vector("MULT", mult[:n], mb),
              vector("SHIFT", shift[:n], shift_bits(shift)), vector("X_OFF", kk * x_zp[:n], 32), *folds]
    window = _window(x, p.window, x.folds if fold_major else 1, pad_word(x_zp[:n].tolist(), n, x.bits), fold_major)
    return Unit(layer.name, "hg_pool", window, n * x.bits, tuple(params))


def _eltwise_params(layer: Layer, df: Dataflow, a_stream: Stream) -> list[Param]:
    p, a = layer.params, layer.arrays
    assert isinstance(p, AddParams | RequantParams)
    out = df.streams[layer.output]
    c = out.channels
    shift = per_channel(a["shift"], c)
    common = [Param("C", c), Param("PE", layer.pe), Param("AB", a_stream.bits), flag("A_SIGNED", a_stream.signed),
              *_requant_common(p.requant, out, shift), vector("SHIFT", shift, shift_bits(shift))]
    if a_stream.fold < c or out.fold < c:  # folded streams: channels a beat
        common += [Param("FI", a_stream.fold), Param("FO", out.fold)]
    if isinstance(p, AddParams):
        b = df.streams[layer.inputs[1]]
        am, bm = per_channel(a["a_mult"], c), per_channel(a["b_mult"], c)
        mb, smb = mult_bits(am), mult_bits(bm)
        return [*common, flag("HAS_B", True), Param("BB", b.bits), flag("B_SIGNED", b.signed), Param("MB", mb),
                Param("SMB", smb), vector("A_MULT", am, mb), vector("A_MULT_NEG", am, mb), vector("B_MULT", bm, smb),
                vector("A_ZP", per_channel(p.a_zp, c), 32), vector("B_ZP", per_channel(p.b_zp, c), 32)]
    mult = per_channel(a["mult"], c)
    neg = per_channel(a["mult_neg"], c) if "mult_neg" in a else None
    mb = mult_bits(mult, neg)
    return [*common, Param("BB", 1), Param("MB", mb), flag("HAS_NEG", neg is not None), vector("A_MULT", mult, mb),
            vector("A_MULT_NEG", neg if neg is not None else mult, mb),
            vector("A_ZP", per_channel(p.x_zp, c), 32)]

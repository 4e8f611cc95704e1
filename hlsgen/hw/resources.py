"""Per-layer resource model: DSP, LUT, FF and BRAM of a layer's hardware for a given folding.

Folding (hlsgen/hw/fold.py) needs the cost of every candidate (PE, SIMD) of every layer before any
Verilog exists, so the cost is estimated from the layer's structure:

Everything device-specific is the family's (hlsgen/devices, passed in as `family`):

- DSP slices are counted structurally, with the rules Yosys applies: a product whose result is at
  least 9 bits and whose operands fit the family's slice takes one slice, wider ones are split
  (`Family.dsp_slices`); two products that share an activation are packed into one slice where
  hg_mvu packs them, and weights of 4 bits or less multiply in LUTs: both decided once, in
  hw/packing.py (`packs_pairs`, `lut_multipliers`), for the Verilog and for this model.
- Block RAM is counted structurally too (the family's MemoryGeometry): a memory deeper than
  lutram_max_depth words becomes 18 Kb block RAMs in the cheapest of the family's aspect ratios;
  shallower ones become LUT RAM, in the shallowest of its LUT-RAM cells that holds them. A weight ROM
  deeper than rom_block_min words is block RAM (hg_mvu asks for it), a shallower one LUT logic (one
  LUT per rom_lut_words words of each bit).
- LUTs and flip-flops are linear in a few structural features of each unit (FEATURES: adder bits of
  the multiply-accumulate, requant units, window buffer bits, ...), with the family's calibrated
  coefficients (devices/calibration.py; benchmarks/resource_model.py fits them against `hlsgen synth`
  and prints the model next to synthesis).

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

FEATURES = ("base", "conv", "mac_bits", "acc_bits", "pool_acc_bits", "mux_bits", "rq_bits", "in_bits", "out_bits",
            "hold_bits", "sel_bits", "lutmul_bits")  # of `features`, each with a calibrated LUT and FF cost


@dataclass(frozen=True)
class Resources:
    dsp: float = 0.0
    lut: float = 0.0
    ff: float = 0.0
    bram36: float = 0.0  # block RAMs in 36 Kb units (an 18 Kb one counts 0.5)
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


def bram18(depth: int, width: int, family: Family = DEFAULT_FAMILY) -> int:
    """18 Kb block RAMs for a depth x width memory in the family's cheapest aspect ratio (0 when LUT RAM)."""
    geometry = family.memory
    if depth <= geometry.lutram_max_depth or width == 0:
        return 0
    return min(math.ceil(depth / d) * math.ceil(width / w) for d, w in geometry.bram18_shapes)


def lutram_luts(depth: int, width: int, family: Family = DEFAULT_FAMILY) -> int:
    """LUTs of a depth x width distributed memory with one write and one read port, as Yosys maps it:
    the shallowest of the family's LUT-RAM cells that holds the depth (the deepest, repeated, beyond
    all), repeated over the width. A single word is a register (0 LUTs)."""
    if depth <= 1:
        return 0
    cells = family.memory.lutram_cells
    cell = next((c for c in cells if depth <= c.depth), cells[-1])
    return math.ceil(depth / cell.depth) * math.ceil(width / cell.width) * cell.luts


def memory(depth: int, width: int, family: Family = DEFAULT_FAMILY) -> Resources:
    """A read-write memory: block RAM, LUT RAM or (a single word) a register."""
    halves = bram18(depth, width, family)
    if halves:
        return Resources(bram36=halves / 2)
    luts = lutram_luts(depth, width, family)
    return Resources(lut=luts, lutram=luts, ff=width if depth <= 1 else 0)


def rom(depth: int, width: int, family: Family = DEFAULT_FAMILY) -> Resources:
    """A read-only table: block RAM when deeper than the family's rom_block_min words, else LUT logic."""
    geometry = family.memory
    if depth > geometry.rom_block_min:
        return Resources(bram36=bram18(depth, width, family) / 2)
    return Resources(lut=width * math.ceil(depth / geometry.rom_lut_words))


def layer_resources(layer: Layer, x: Stream, out: Stream, family: Family = DEFAULT_FAMILY) -> Resources:
    """The estimated resources of one layer's unit (and its window generator) at its folding."""
    return fitted_part(layer, x, out, family) + structural_part(layer, x, out, family)


def fitted_part(layer: Layer, x: Stream, out: Stream, family: Family = DEFAULT_FAMILY) -> Resources:
    """Logic LUTs and flip-flops: linear in the layer's structural features, at the family's calibration."""
    feats = features(layer, x, out)
    fit = family.calibration
    return Resources(lut=sum(fit.lut[k] * v for k, v in feats.items()), ff=sum(fit.ff[k] * v for k, v in feats.items()))


def structural_part(layer: Layer, x: Stream, out: Stream, family: Family = DEFAULT_FAMILY) -> Resources:
    """DSP slices and memories (BRAM, LUTRAM, register files), counted from the structure."""
    return _dsp(layer, x, out, family) + _memories(layer, x, out, family)


def glue_resources(depths: dict[tuple[str, str], int], widths: dict[str, int],
                   family: Family = DEFAULT_FAMILY) -> Resources:
    """FIFOs of the stream edges: (stream, consumer) -> depth in beats; widths: stream -> bits."""
    total = NONE
    for (stream, _), depth in depths.items():
        control = Resources(lut=family.calibration.fifo_luts, ff=2 * max(1, depth).bit_length() + 2)
        total = total + memory(depth, widths[stream], family) + control
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


def _memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    total = NONE
    if layer.kind in MVU_KINDS:
        m = mvu_shape(layer, x)
        total = total + rom(m.words, m.pe * m.simd * mvu.params_of(layer).weight_bits, family)
    rows = window_rows(layer, x)
    if rows:
        total = total + memory(rows * x.width, x.channels * x.bits, family)
    if layer.kind == Kind.LUT:
        total = total + rom(int(layer.arrays["table"].size), out.bits, family)
    if layer.kind == Kind.REORDER:
        total = total + memory(x.pixels, x.channels * x.bits, family)
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
    """Structural features (FEATURES) whose LUT/FF cost is linear (the family's Calibration):
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
    f = dict.fromkeys(FEATURES, 0.0)
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

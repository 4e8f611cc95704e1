"""Per-layer resource model: DSP, LUT, FF and BRAM of a layer's hardware for a given folding.

Folding (hlsgen/hw/fold.py) needs the cost of every candidate (PE, SIMD) of every layer before any
Verilog exists, so the cost is estimated from the layer's structure. Each kind's module in
hw/layers/ counts what its unit builds (`mac_dsp`, `memories`, `requant_shape`, `features`), with
the primitives of hw/cost.py and everything device-specific from the family (hlsgen/devices):

- DSP slices are counted structurally, with the rules Yosys applies: a product whose result is at
  least 9 bits and whose operands fit the family's slice takes one slice, wider ones are split
  (`Family.dsp_slices`); two products that share an activation are packed into one slice where
  hg_mvu packs them, and weights of 4 bits or less multiply in LUTs: both decided once, in
  hw/layers/mvu.py (`packs_pairs`, `lut_multipliers`), for the Verilog and for this model.
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

from hlsgen.devices.families import DEFAULT_FAMILY, Family
from hlsgen.hw.cost import FEATURES, NONE, RequantShape, Resources, dsp_slices, memory
from hlsgen.hw.layers import MODULES
from hlsgen.hw.model import Layer, Stream


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
    unit = MODULES[layer.kind]
    rq = unit.requant_shape(layer, x)
    dsp = (requant_dsp(layer, rq, out, family) if rq else 0) + unit.mac_dsp(layer, x, family)
    return Resources(dsp=dsp) + unit.memories(layer, x, out, family)


def glue_resources(depths: dict[tuple[str, str], int], widths: dict[str, int],
                   family: Family = DEFAULT_FAMILY) -> Resources:
    """FIFOs of the stream edges: (stream, consumer) -> depth in beats; widths: stream -> bits."""
    total = NONE
    for (stream, _), depth in depths.items():
        control = Resources(lut=family.calibration.fifo_luts, ff=2 * max(1, depth).bit_length() + 2)
        total = total + memory(depth, widths[stream], family) + control
    return total


REQUANT_PIECE = 18  # hg_requant multiplies a wider value in two products: x = xh*2^17 + xl, xl unsigned


def requant_products(x_bits: int, mult_bits: int, family: Family) -> int:
    """DSP slices of hg_requant's x * m: one product, or for x over REQUANT_PIECE bits two, the high
    part (x_bits - 17 bits, signed) and the low 17 bits (an 18-bit signed operand)."""
    if x_bits <= REQUANT_PIECE:
        return dsp_slices(x_bits, mult_bits, family)
    low = REQUANT_PIECE - 1
    return dsp_slices(x_bits - low, mult_bits, family) + dsp_slices(low + 1, mult_bits, family)


def requant_dsp(layer: Layer, rq: RequantShape, out: Stream, family: Family) -> int:
    """DSP slices of the requant units: the products of each step, one more for a second operand."""
    mb = rq.mult_bits
    per_unit = requant_products(rq.operand_bits, mb, family) * (2 if rq.two_step else 1)
    if rq.second_operand:
        per_unit += dsp_slices(out.bits + 2, mb, family)
    return rq.units * per_unit


def features(layer: Layer, x: Stream, out: Stream) -> dict[str, float]:
    """Structural features (FEATURES) whose LUT/FF cost is linear (the family's Calibration):
    base      1 per layer
    conv      1 for a (dense or grouped) convolution: its window generator's tap and row counters
    mac_bits  PE·SIMD product bits (packed-product extraction, adder tree, pipeline registers)
    acc_bits  accumulator bits of the PE accumulators
    pool_acc_bits  an average pool's per-channel sums (adders, the held register its lanes drain)
    hold_bits the hand-off register of time-shared requant units (PE accumulators, shifted R a cycle)
    sel_bits  lane operand bits picked at run time (PE·SIMD·IB when the layer folds its inputs, SF > 1,
              or a depthwise layer its channels, NF > 1)
    mux_bits  operand-select bits (a SIMD slice out of SF of an input pixel)
    rq_bits   requant units x (operand + multiplier bits), twice for two steps
    lutmul_bits  PE·SIMD·weight bits·input bits of shift-add (LUT) multipliers, weights <= 4 bits
    in_bits   input beat bits (the window's tap register, lane operand registers; a converter's beats)
    out_bits  output beat bits (the collector and its output register)
    The kind's module gives its own (hw/layers/: mvu and pool); the rest are common."""
    unit = MODULES[layer.kind]
    f = dict.fromkeys(FEATURES, 0.0)
    f["base"] = 1.0
    rq = unit.requant_shape(layer, x)
    if rq:
        f["rq_bits"] = rq.units * (rq.operand_bits + rq.mult_bits) * (2 if rq.two_step else 1)
    f["in_bits"] = x.data_bits
    f["out_bits"] = out.data_bits
    f.update(unit.features(layer, x, out))  # a kind costed structurally zeroes the common ones
    return f

"""The resource model's units: a `Resources` sum, and the structural cost of products and memories.

Everything device-specific is the family's (hlsgen/devices, passed in as `family`): its DSP slice
geometry (`Family.dsp_slices`) and its MemoryGeometry (block-RAM aspect ratios, LUT-RAM cells, the
LUT-RAM and ROM-to-block thresholds). hw/layers/ counts each kind's unit with these, and
hw/resources.py adds the fitted LUT/FF part (FEATURES, at the family's calibration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from hlsgen.devices.families import DEFAULT_FAMILY, Family

FEATURES = ("base", "conv", "mac_bits", "acc_bits", "pool_acc_bits", "mux_bits", "rq_bits", "in_bits", "out_bits",
            "hold_bits", "sel_bits", "lutmul_bits")  # of hw/resources.features, each with a calibrated LUT and FF cost


@dataclass(frozen=True)
class Resources:
    dsp: float = 0.0
    lut: float = 0.0
    ff: float = 0.0
    bram36: float = 0.0  # block RAMs in 36 Kb units (an 18 Kb one counts 0.5)
    lutram: float = 0.0  # LUTs used as memory (also counted in lut)

    def __add__(self, other: Resources) -> Resources:
        return Resources(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def __sub__(self, other: Resources) -> Resources:
        return Resources(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))

    def as_dict(self) -> dict[str, float]:
        return {f.name: round(getattr(self, f.name), 1) for f in fields(self)}


NONE = Resources()


@dataclass(frozen=True)
class RequantShape:
    """A layer's requant units, for their DSP slices and fitted LUT/FF: how many, the width of the value
    they scale and of their multipliers, whether they take two steps (a two-step epilogue) and a second
    operand (a skip or the second input of an add)."""

    units: int
    operand_bits: int
    mult_bits: int  # of the widest multiplier
    two_step: bool = False
    second_operand: bool = False


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

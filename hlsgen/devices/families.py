"""FPGA families as data: what a family's hardware offers and how its tools are driven.

A family carries its multiplier geometry (the DSP slice's signed operand widths: Yosys splits a wider
product into ceil((a-1)/(A-1)) * ceil((b-1)/(B-1)) slices), the slice's name in reports, and the
Yosys command that synthesizes for it. Parts (parts.py) name their family; the resource model, the
folding and `hlsgen synth` read the family from the part, never a family name tested in place.
Adding a family is an entry here (and its parts, and calibration data for the resource model).
"""

from __future__ import annotations

from dataclasses import dataclass

from hlsgen.errors import HlsgenError


@dataclass(frozen=True)
class Family:
    name: str  # also the cache key of `hlsgen synth` runs
    dsp_kind: str  # the DSP slice, as reports name it
    dsp_a_bits: int  # signed operand widths of one slice's multiplier
    dsp_b_bits: int
    synth_command: str  # the Yosys synthesis command, with {top}

    def dsp_slices(self, a_bits: int, b_bits: int) -> int:
        """Slices of one signed a x b product under Yosys's mapping (0: it stays in LUTs)."""
        a, b = max(a_bits, b_bits), min(a_bits, b_bits)
        if a + b < 9 or b < 2:
            return 0
        return -(-(a - 1) // (self.dsp_a_bits - 1)) * -(-(b - 1) // (self.dsp_b_bits - 1))


FAMILIES = {f.name: f for f in (
    Family("xc7", "DSP48E1", 25, 18, "synth_xilinx -family xc7 -noiopad -noclkbuf -top {top}"),
    Family("xcup", "DSP48E2", 27, 18, "synth_xilinx -family xcup -noiopad -noclkbuf -top {top}"),
)}
DEFAULT_FAMILY = FAMILIES["xc7"]  # for parts hlsgen does not know


def find_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise HlsgenError(f"FPGA family {name!r} is not one hlsgen knows: {', '.join(FAMILIES)}") from None

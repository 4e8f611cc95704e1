"""FPGA families as data: what a family's hardware offers and how its tools are driven.

A family carries its multiplier geometry (the DSP slice's signed operand widths: Yosys splits a wider
product into ceil((a-1)/(A-1)) * ceil((b-1)/(B-1)) slices), the slice's name in reports, the Yosys
command that synthesizes for it, the names of the cells that command leaves (cells.py), its memory
geometry (memory.py) and the resource model's calibration (calibration.py). Parts (parts.py) name
their family; the resource model, the folding and `hlsgen synth` read everything from the family,
never a family name tested in place. Adding a family is an entry here, its parts, and its data in
those three modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlsgen.devices import calibration, cells, memory
from hlsgen.devices.calibration import Calibration
from hlsgen.devices.cells import CellMap
from hlsgen.devices.memory import MemoryGeometry
from hlsgen.errors import HlsgenError


@dataclass(frozen=True)
class Family:
    name: str  # also the cache key of `hlsgen synth` runs
    dsp_kind: str  # the DSP slice, as reports name it
    dsp_a_bits: int  # signed operand widths of one slice's multiplier
    dsp_b_bits: int
    synth_command: str  # the Yosys synthesis command, with {top}
    cells: CellMap  # what the cells synth_command leaves count as
    memory: MemoryGeometry
    calibration: Calibration  # the resource model's fitted coefficients

    def dsp_slices(self, a_bits: int, b_bits: int) -> int:
        """Slices of one signed a x b product under Yosys's mapping (0: it stays in LUTs)."""
        a, b = max(a_bits, b_bits), min(a_bits, b_bits)
        if a + b < 9 or b < 2:
            return 0
        return -(-(a - 1) // (self.dsp_a_bits - 1)) * -(-(b - 1) // (self.dsp_b_bits - 1))


FAMILIES = {f.name: f for f in (
    Family("xc7", "DSP48E1", 25, 18, "synth_xilinx -family xc7 -noiopad -noclkbuf -top {top}",
           cells.XILINX, memory.XILINX, calibration.XC7),
    Family("xcup", "DSP48E2", 27, 18, "synth_xilinx -family xcup -noiopad -noclkbuf -top {top}",
           cells.XILINX, memory.XILINX, calibration.XC7),  # not fitted on UltraScale+: the xc7 fit
)}
DEFAULT_FAMILY = FAMILIES["xc7"]  # for parts hlsgen does not know


def find_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise HlsgenError(f"FPGA family {name!r} is not one hlsgen knows: {', '.join(FAMILIES)}") from None

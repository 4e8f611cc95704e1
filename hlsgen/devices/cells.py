"""A family's cell-name map: which cells of its Yosys synthesis count as what (`hlsgen synth`).

Names are as `stat -json` reports them after the family's synthesis command; tools/synth.py sums
the cells of every name a resource lists (LUT memories by their LUT counts). Adding a family whose
synthesis leaves other cells is a CellMap here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CellMap:
    dsp: tuple[str, ...]  # DSP slices
    logic_luts: Mapping[str, int] = field(hash=False)  # logic cells: LUTs each
    lut_memories: Mapping[str, int] = field(hash=False)  # LUT RAMs and shift registers: LUTs each
    flops: tuple[str, ...]  # flip-flops (and latches)
    bram18: tuple[str, ...]  # 18 Kb block RAMs (half a 36 Kb one)
    bram36: tuple[str, ...]  # 36 Kb block RAMs


# synth_xilinx, for 7-series (the E1 cells) and UltraScale+ (E2) alike
XILINX = CellMap(
    dsp=("DSP48E1", "DSP48E2"),
    logic_luts=dict.fromkeys((f"LUT{i}" for i in range(1, 7)), 1),
    lut_memories={"RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "RAM512X1S": 8,
                  "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4, "RAM256X1D": 8,
                  "RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8,
                  "SRL16E": 1, "SRLC16E": 1, "SRLC32E": 1},
    flops=("FDRE", "FDSE", "FDCE", "FDPE", "LDCE", "LDPE"),
    bram18=("RAMB18E1", "RAMB18E2"),
    bram36=("RAMB36E1", "RAMB36E2"),
)


# synth_ecp5 (before nextpnr packs them into TRELLIS_COMB / TRELLIS_FF slices): a CCU2C carry cell is
# two LUT4s, an L6MUX21/PFUMX a slice's own mux (no LUT), a TRELLIS_DPR16X4 (16 x 4 distributed RAM)
# the 4 LUT4s of its RAM slices' halves (its write port takes slice logic nextpnr adds).
ECP5 = CellMap(
    dsp=("MULT18X18D",),
    logic_luts={"LUT4": 1, "CCU2C": 2},
    lut_memories={"TRELLIS_DPR16X4": 4},
    flops=("TRELLIS_FF",),
    bram18=("DP16KD",),
    bram36=(),
)

"""FPGA parts that hlsgen knows: their resource budgets and their family (families.py).

Figures are the device totals from the Xilinx product tables (7-series DS180, Zynq-7000 DS190,
Zynq UltraScale+ DS891,
Virtex UltraScale+ DS923, Alveo data sheets). A part name is matched on its device prefix: xc7z020clg400-1 is an
xc7z020. UltraScale+ parts are of the `xcup` family (DSP48E2 slices), the others of `xc7` (DSP48E1).
"""

from __future__ import annotations

from dataclasses import dataclass

from hlsgen.devices.families import DEFAULT_FAMILY, FAMILIES, Family
from hlsgen.errors import HlsgenError


@dataclass(frozen=True)
class Part:
    device: str  # the device prefix of a part name
    family: Family
    dsp: int  # DSP slices (the family's dsp_kind)
    lut: int  # 6-input LUTs
    lutram: int  # LUTs that can be distributed RAM (SLICEM)
    ff: int  # flip-flops
    bram36: int  # 36 Kb block RAMs (each is two 18 Kb halves)

    def budget(self) -> dict[str, int]:
        return {"dsp": self.dsp, "lut": self.lut, "lutram": self.lutram, "ff": self.ff, "bram36": self.bram36}


_XC7, _XCUP = FAMILIES["xc7"], FAMILIES["xcup"]
PARTS = {p.device: p for p in (
    Part("xc7z010", _XC7, dsp=80, lut=17_600, lutram=6_000, ff=35_200, bram36=60),
    Part("xc7z020", _XC7, dsp=220, lut=53_200, lutram=17_400, ff=106_400, bram36=140),
    Part("xc7a35t", _XC7, dsp=90, lut=20_800, lutram=9_600, ff=41_600, bram36=50),
    Part("xc7a100t", _XC7, dsp=240, lut=63_400, lutram=19_000, ff=126_800, bram36=135),
    Part("xczu3eg", _XCUP, dsp=360, lut=70_560, lutram=28_800, ff=141_120, bram36=216),
    Part("xczu7ev", _XCUP, dsp=1_728, lut=230_400, lutram=101_760, ff=460_800, bram36=312),
    Part("xcvu9p", _XCUP, dsp=6_840, lut=1_182_240, lutram=591_840, ff=2_364_480, bram36=2_160),
    Part("xcu50", _XCUP, dsp=5_952, lut=872_000, lutram=403_000, ff=1_743_000, bram36=1_344),
    Part("xcu250", _XCUP, dsp=12_288, lut=1_728_000, lutram=791_040, ff=3_456_000, bram36=2_688),
)}


def known_part(name: str) -> Part | None:
    """The known part whose device prefix starts `name` (case-insensitive)."""
    low = name.lower()
    return next((PARTS[d] for d in sorted(PARTS, key=len, reverse=True) if low.startswith(d)), None)


def family_of(name: str) -> Family:
    """The family of a part; 7-series for parts hlsgen does not know."""
    part = known_part(name)
    return part.family if part else DEFAULT_FAMILY


def find_part(name: str) -> Part:
    """The known part of `name`, or a one-line error."""
    part = known_part(name)
    if part:
        return part
    raise HlsgenError(f"part {name!r} is not one hlsgen knows; known devices: {', '.join(sorted(PARTS))}")

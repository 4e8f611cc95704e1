"""FPGA parts that hlsgen knows: their resource budgets and their family (families.py).

Figures are the device totals from the Xilinx product tables (7-series DS180, Zynq-7000 DS190,
Zynq UltraScale+ DS891,
Virtex UltraScale+ DS923, Alveo data sheets) and Lattice's ECP5 and ECP5-5G family data sheet
(FPGA-DS-02012). A part name is matched on its device prefix: xc7z020clg400-1 is an xc7z020,
LFE5U-85F-6BG381C an lfe5u-85f. UltraScale+ parts are of the `xcup` family (DSP48E2 slices), the other
Xilinx parts of `xc7` (DSP48E1), LFE5U/LFE5UM/LFE5UM5G of `ecp5` (MULT18X18D; `lut` counts LUT4s, every
one with its flip-flop; `bram36` counts 36 Kb, two DP16KD each; distributed RAM is half the LUTs). An
ECP5 part name also says how nextpnr places it (`pnr_target`): its device, speed grade and package.
"""

from __future__ import annotations

import re
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
    bram36: float  # 36 Kb block RAMs (each is two 18 Kb halves: RAMB18, DP16KD)
    nextpnr_device: str | None = None  # nextpnr-ecp5's device flag (85k, um-85k, um5g-85k), None: no open P&R

    def budget(self) -> dict[str, float]:
        return {"dsp": self.dsp, "lut": self.lut, "lutram": self.lutram, "ff": self.ff, "bram36": self.bram36}


def _ecp5(device: str, luts: int, mult18: int, dp16kd: int, nextpnr: str) -> Part:
    return Part(device, FAMILIES["ecp5"], dsp=mult18, lut=luts, lutram=luts // 2, ff=luts, bram36=dp16kd / 2,
                nextpnr_device=nextpnr)


def _ecp5_sizes() -> list[Part]:
    """LFE5U (no SERDES), LFE5UM (SERDES) and LFE5UM5G (5G SERDES) of each size: the same fabric."""
    sizes = (("12f", 12_096, 28, 32), ("25f", 24_288, 28, 56), ("45f", 43_848, 72, 108), ("85f", 83_640, 156, 208))
    kinds = (("lfe5u", ""), ("lfe5um", "um-"), ("lfe5um5g", "um5g-"))
    return [_ecp5(f"{k}-{size}", luts, mult, ebr, f"{flag}{size[:-1]}k") for k, flag in kinds
            for size, luts, mult, ebr in sizes if not (size == "12f" and k != "lfe5u")]


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
    *_ecp5_sizes(),
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


@dataclass(frozen=True)
class PnrTarget:
    """Where nextpnr-ecp5 places a part: `--{device} --package {package} --speed {speed}`."""
    part: Part
    device: str
    package: str
    speed: int


# ECP5 package codes in part names, and nextpnr's names for them
_ECP5_PACKAGES = {"BG256": "CABGA256", "BG381": "CABGA381", "BG554": "CABGA554", "BG756": "CABGA756",
                  "MG285": "CSFBGA285", "TG144": "TQFP144", "UG285": "CSFBGA285"}


def pnr_target(name: str) -> PnrTarget:
    """The nextpnr target of an ECP5 part name (LFE5U-85F-6BG381C: 85k, CABGA381, speed 6), or a
    one-line error naming what is wrong."""
    part = find_part(name)
    if part.nextpnr_device is None:
        raise HlsgenError(f"part {name!r}: hlsgen places and routes only Lattice ECP5 parts (LFE5U-85F-6BG381C, ...): "
                          f"the {part.family.name} family has no open place-and-route that installs here")
    rest = name[len(part.device):].lstrip("-").upper()
    m = re.fullmatch(r"(\d)([A-Z]{2}\d{3})[CI]?(ES)?", rest)
    if not m or m.group(2) not in _ECP5_PACKAGES:
        raise HlsgenError(f"part {name!r}: give the whole ECP5 part name, device-speed-package, e.g. "
                          f"{part.device.upper()}-6BG381C (packages: {', '.join(sorted(_ECP5_PACKAGES))})")
    speed = int(m.group(1))
    grades = (8,) if part.device.startswith("lfe5um5g") else (6, 7, 8)
    if speed not in grades:
        raise HlsgenError(f"part {name!r}: speed grade {speed}; {part.device.upper()} comes in "
                          f"{', '.join(map(str, grades))}")
    return PnrTarget(part, part.nextpnr_device, _ECP5_PACKAGES[m.group(2)], speed)

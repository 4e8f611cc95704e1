"""The `hw` section of the compile configuration: what the hardware backends build.

    hw:
      top: hlsgen_top          # name of the HLS top function / Verilog top module
      part: xc7z020clg400-1    # the device: folding fits its budget, `hlsgen synth` reports against it
      budget: {dsp: 200, lut: 30000, bram36: 100}  # narrows the part's budget (default: all of it, 80 % LUT)
      target_fps: 0            # > 0: the cheapest folding that meets this rate (default: the fastest that fits)
      pe: 0                    # default output-channel parallelism (0: hlsgen chooses)
      simd: 0                  # default input-channel parallelism (0: hlsgen chooses)
      layers: {conv1: {pe: 8, simd: 3}}
      frames: 4                # test-vector frames written by `hlsgen compile`
      tlast: false             # TLAST (and TKEEP/TSTRB) on the output stream, set on the last beat of a frame
      io_bits: 64              # TDATA bits of the input and output ports (8..4096, whole bytes; 0: one pixel a beat)
      hls: {enabled: true, clock_ns: 10.0, ap_ctrl: none, tool: vitis}   # clock_ns: also the clock of target_fps
      rtl: {enabled: true}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any

from hlsgen.config.schema import (
    Where,
    as_mapping,
    check_int,
    check_keys,
    get_bool,
    get_enum,
    get_float,
    get_int,
    get_str,
)
from hlsgen.devices.parts import find_part
from hlsgen.errors import HlsgenError
from hlsgen.support.identifiers import identifier_problem

AP_CTRL = ("none", "hs")
HLS_TOOLS = ("vitis", "vivado")  # vivado: Vivado HLS (2018.3-2020.1): -std=c++0x, RESOURCE pragmas
DEFAULT_PART = "xc7z020clg400-1"
# Xilinx part names: xc7z020clg400-1, xczu7ev-ffvc1156-2-e, xcvu9p-flga2104-2l-e
_PART = re.compile(r"[A-Za-z][A-Za-z0-9]{2,39}(-[A-Za-z0-9]{1,12}){0,4}\Z")


@dataclass(frozen=True)
class Parallelism:
    pe: int | None = None
    simd: int | None = None


@dataclass(frozen=True)
class Budget:
    """Upper bounds on the resources folding may use; None: the part's own (LUT: 80 % of it)."""

    dsp: int | None = None
    lut: int | None = None
    bram36: int | None = None


@dataclass(frozen=True)
class HlsConfig:
    enabled: bool = True
    part: str = DEFAULT_PART  # always hw.part (kept here for the HLS scripts)
    clock_ns: float = 10.0
    ap_ctrl: str = "none"
    tool: str = "vitis"  # the HLS tool the scripts and pragmas target (HLS_TOOLS)


@dataclass(frozen=True)
class RtlConfig:
    enabled: bool = True


@dataclass(frozen=True)
class HwConfig:
    top: str = "hlsgen_top"
    part: str = DEFAULT_PART
    budget: Budget = field(default_factory=Budget)
    target_fps: float = 0.0
    pe: int = 0
    simd: int = 0
    layers: Mapping[str, Parallelism] = field(default_factory=lambda: MappingProxyType({}))
    frames: int = 4
    tlast: bool = False  # output stream: TLAST on the last beat of each frame (+ TKEEP/TSTRB all ones)
    io_bits: int = 64  # TDATA width of the ports (hw/ports.py); 0: one pixel a beat, as wide as it is
    hls: HlsConfig = field(default_factory=HlsConfig)
    rtl: RtlConfig = field(default_factory=RtlConfig)

    def to_dict(self) -> dict[str, Any]:
        return {"top": self.top, "part": self.part, "budget": {k: v for k, v in asdict(self.budget).items() if v},
                "target_fps": self.target_fps, "pe": self.pe, "simd": self.simd, "frames": self.frames,
                "tlast": self.tlast, "io_bits": self.io_bits,
                "layers": {k: {a: b for a, b in asdict(v).items() if b is not None} for k, v in self.layers.items()},
                "hls": asdict(self.hls), "rtl": asdict(self.rtl)}


def _io_bits(m: Mapping[str, Any], where: Where, default: int) -> int:
    bits = get_int(m, "io_bits", where, default, 0, 4096)
    if bits % 8:
        raise where.error(f"{where.key('io_bits')} {bits} is not whole bytes (8, 16, ..., 4096; 0: a pixel a beat)")
    return bits


def parse_hw(section: Any, where: Where) -> HwConfig:
    m = as_mapping(section, where)
    check_keys(m, HwConfig.__dataclass_fields__, where)
    d = HwConfig()
    top = get_str(m, "top", where, d.top)
    problem = identifier_problem(top)
    if problem:
        raise where.error(f"{where.key('top')} {top!r} {problem}")
    hls = _parse_hls(m.get("hls"), where.child("hls"))
    part = _the_part(m, hls, where)
    budget = _parse_budget(m.get("budget"), where.child("budget"))
    if None in (budget.dsp, budget.lut, budget.bram36):
        try:
            find_part(part)  # folding and `hlsgen synth` need the budget of a known device
        except HlsgenError as e:
            raise where.error(f"{where.key('part')}: {e} (or set all of hw.budget: dsp, lut, bram36)") from None
    return HwConfig(
        top=top,
        part=part,
        budget=budget,
        target_fps=get_float(m, "target_fps", where, d.target_fps, "a rate in frames/s >= 0 (0: fastest)",
                             lambda x: x >= 0),
        pe=get_int(m, "pe", where, d.pe, 0, 4096),
        simd=get_int(m, "simd", where, d.simd, 0, 4096),
        layers=_parse_layers(m.get("layers"), where.child("layers")),
        frames=get_int(m, "frames", where, d.frames, 1, 1000),
        tlast=get_bool(m, "tlast", where, d.tlast),
        io_bits=_io_bits(m, where, d.io_bits),
        hls=HlsConfig(hls.enabled, part, hls.clock_ns, hls.ap_ctrl, hls.tool),
        rtl=RtlConfig(enabled=get_bool(_rtl_map(m.get("rtl"), where.child("rtl")), "enabled",
                                       where.child("rtl"), True)),
    )


def _rtl_map(section: Any, where: Where) -> dict[str, Any]:
    m = as_mapping(section, where)
    check_keys(m, RtlConfig.__dataclass_fields__, where)
    return m


def _the_part(m: dict[str, Any], hls: HlsConfig, where: Where) -> str:
    """hw.part; the older hw.hls.part is accepted as the same setting (both set: they must agree)."""
    if "part" not in m:
        return hls.part
    part = _part(get_str(m, "part", where), where)
    if hls.part != DEFAULT_PART and hls.part != part:
        raise where.error(f"{where.key('part')} {part!r} and {where.key('hls')}.part {hls.part!r} differ; "
                          "set hw.part only")
    return part


def _parse_budget(section: Any, where: Where) -> Budget:
    m = as_mapping(section, where, "a mapping such as {dsp: 200, lut: 30000, bram36: 100}")
    check_keys(m, Budget.__dataclass_fields__, where)
    return Budget(**{k: check_int(v, where.key(k), where, 0, 10_000_000) for k, v in m.items()})


def _parse_hls(section: Any, where: Where) -> HlsConfig:
    m = as_mapping(section, where)
    check_keys(m, HlsConfig.__dataclass_fields__, where)
    d = HlsConfig()
    return HlsConfig(
        enabled=get_bool(m, "enabled", where, d.enabled),
        part=_part(get_str(m, "part", where, d.part), where),
        clock_ns=get_float(m, "clock_ns", where, d.clock_ns, "a finite number > 0", lambda x: 0 < x < 1e6),
        ap_ctrl=get_enum(m, "ap_ctrl", where, AP_CTRL, d.ap_ctrl),
        tool=get_enum(m, "tool", where, HLS_TOOLS, d.tool),
    )


def _part(part: str, where: Where) -> str:
    """The part goes into run_hls.tcl and hls_config.cfg: only a plain part name is accepted."""
    if not _PART.match(part):
        raise where.error(f"{where.key('part')} {part!r} is not a Xilinx part name such as xc7z020clg400-1")
    return part


def _parse_layers(section: Any, where: Where) -> Mapping[str, Parallelism]:
    m = as_mapping(section, where, "a mapping from layer name to {pe, simd}")
    out: dict[str, Parallelism] = {}
    for name, value in m.items():
        at = where.child(str(name))
        entry = as_mapping(value, at, "a mapping such as {pe: 4, simd: 8}")
        check_keys(entry, Parallelism.__dataclass_fields__, at)
        out[str(name)] = Parallelism(**{k: check_int(v, at.key(k), at, 1, 4096) for k, v in entry.items()})
    return MappingProxyType(out)

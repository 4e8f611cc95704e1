"""The `hw` section of the compile configuration: what the hardware backends build.

    hw:
      top: hlsgen_top          # name of the HLS top function / Verilog top module
      pe: 0                    # default output-channel parallelism (0: hlsgen chooses)
      simd: 0                  # default input-channel parallelism (0: hlsgen chooses)
      layers: {conv1: {pe: 8, simd: 3}}
      frames: 4                # test-vector frames written by `hlsgen compile`
      hls: {enabled: true, part: xc7z020clg400-1, clock_ns: 10.0, ap_ctrl: none}
      rtl: {enabled: true}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any

from hlsgen.identifiers import identifier_problem
from hlsgen.schema import Where, as_mapping, check_int, check_keys, get_bool, get_enum, get_float, get_int, get_str

AP_CTRL = ("none", "hs")
# Xilinx part names: xc7z020clg400-1, xczu7ev-ffvc1156-2-e, xcvu9p-flga2104-2l-e
_PART = re.compile(r"[A-Za-z][A-Za-z0-9]{2,39}(-[A-Za-z0-9]{1,12}){0,4}\Z")


@dataclass(frozen=True)
class Parallelism:
    pe: int | None = None
    simd: int | None = None


@dataclass(frozen=True)
class HlsConfig:
    enabled: bool = True
    part: str = "xc7z020clg400-1"
    clock_ns: float = 10.0
    ap_ctrl: str = "none"


@dataclass(frozen=True)
class RtlConfig:
    enabled: bool = True


@dataclass(frozen=True)
class HwConfig:
    top: str = "hlsgen_top"
    pe: int = 0
    simd: int = 0
    layers: Mapping[str, Parallelism] = field(default_factory=lambda: MappingProxyType({}))
    frames: int = 4
    hls: HlsConfig = field(default_factory=HlsConfig)
    rtl: RtlConfig = field(default_factory=RtlConfig)

    def to_dict(self) -> dict[str, Any]:
        return {"top": self.top, "pe": self.pe, "simd": self.simd, "frames": self.frames,
                "layers": {k: {a: b for a, b in asdict(v).items() if b is not None} for k, v in self.layers.items()},
                "hls": asdict(self.hls), "rtl": asdict(self.rtl)}


def parse_hw(section: Any, where: Where) -> HwConfig:
    m = as_mapping(section, where)
    check_keys(m, HwConfig.__dataclass_fields__, where)
    d = HwConfig()
    top = get_str(m, "top", where, d.top)
    problem = identifier_problem(top)
    if problem:
        raise where.error(f"{where.key('top')} {top!r} {problem}")
    return HwConfig(
        top=top,
        pe=get_int(m, "pe", where, d.pe, 0, 4096),
        simd=get_int(m, "simd", where, d.simd, 0, 4096),
        layers=_parse_layers(m.get("layers"), where.child("layers")),
        frames=get_int(m, "frames", where, d.frames, 1, 1000),
        hls=_parse_hls(m.get("hls"), where.child("hls")),
        rtl=RtlConfig(enabled=get_bool(_rtl_map(m.get("rtl"), where.child("rtl")), "enabled",
                                       where.child("rtl"), True)),
    )


def _rtl_map(section: Any, where: Where) -> dict[str, Any]:
    m = as_mapping(section, where)
    check_keys(m, RtlConfig.__dataclass_fields__, where)
    return m


def _parse_hls(section: Any, where: Where) -> HlsConfig:
    m = as_mapping(section, where)
    check_keys(m, HlsConfig.__dataclass_fields__, where)
    d = HlsConfig()
    return HlsConfig(
        enabled=get_bool(m, "enabled", where, d.enabled),
        part=_part(get_str(m, "part", where, d.part), where),
        clock_ns=get_float(m, "clock_ns", where, d.clock_ns, "a finite number > 0", lambda x: 0 < x < 1e6),
        ap_ctrl=get_enum(m, "ap_ctrl", where, AP_CTRL, d.ap_ctrl),
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

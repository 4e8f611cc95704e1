"""Hardware backends: everything `hlsgen compile` writes besides the graph dumps and the report.

Each entry of BACKENDS writes one folder of OUT from a Design: the dataflow (the hardware view shared
by all of them, hlsgen.hw), the hw config, the model's name and the golden values of the test-vector
frames. Backends see no Compilation: what they render is computed before them. The list is literal
and ordered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hlsgen.backends.hls import write_hls
from hlsgen.backends.host import write_host
from hlsgen.backends.testbench import write_testbench
from hlsgen.backends.vectors import write_vectors
from hlsgen.backends.verilog import write_rtl
from hlsgen.config.hw import HwConfig
from hlsgen.hw.model import Dataflow
from hlsgen.hw.ports import PortCodes


@dataclass(frozen=True)
class Design:
    """What the backends render: the dataflow, the hw config, the model's name, and the golden
    model's value of every integer tensor for the `hw.frames` test-vector frames."""

    dataflow: Dataflow
    hw: HwConfig
    name: str
    frame_values: Mapping[str, np.ndarray]
    ports: tuple[PortCodes, ...] = ()  # the input's, then the outputs' (OUT/host/)


Backend = Callable[[Design, Path], None]


def _vectors(d: Design, out: Path) -> None:
    write_vectors(out / "vectors", d.dataflow, d.frame_values, d.hw.frames)


def _hls(d: Design, out: Path) -> None:
    if d.hw.hls.enabled:
        write_hls(d.dataflow, d.hw, out)


def _rtl(d: Design, out: Path) -> None:
    if d.hw.rtl.enabled:
        write_rtl(d.dataflow, out, d.name, d.hw.tlast)
        write_testbench(d.dataflow, out, d.name, d.hw.tlast)


def _host(d: Design, out: Path) -> None:
    if d.ports:
        write_host(d.ports, d.name, out)


BACKENDS: list[tuple[str, Backend]] = [
    ("vectors", _vectors),
    ("host", _host),  # OUT/host: the host side of the ports
    ("hls", _hls),  # OUT/hls unless hw.hls.enabled is false
    ("rtl", _rtl),  # OUT/rtl and OUT/tb unless hw.rtl.enabled is false
]


def hardware_enabled(hw: HwConfig) -> bool:
    return hw.hls.enabled or hw.rtl.enabled


def write_backends(design: Design, out: Path) -> None:
    """Write every backend's folder into `out`."""
    for _, backend in BACKENDS:
        backend(design, out)

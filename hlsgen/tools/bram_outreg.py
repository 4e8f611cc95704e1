"""Block-RAM output registers on ECP5: after synth_ecp5, move the fabric flip-flops that register a
DP16KD's read data into the block (REGMODE OUTREG), a pass over the synthesized netlist (design.json).

Yosys 0.70 maps a synchronous read to a DP16KD without its output register (brams_16kd.txt has no
option for it), so the block's clock-to-output (about 5.8 ns on LFE5U-85F-6) plus a route is in every
path from a block RAM, the longest path of a line-buffered convolution. The RTL registers the read data
once more where it matters (hg_window's stage O). This pass finds each DP16KD whose every connected
read-data bit drives exactly one TRELLIS_FF and nothing else, all of them on the block's clock with one
clock enable and no set/reset, and gives the block those registers instead: REGMODE_A/B = OUTREG, the
flip-flops' enable on OCEA/OCEB, each DO pin driving its flip-flop's output net; the flip-flops go.
Behaviour is unchanged: the output register samples the same read latch the flip-flop sampled, on the
same clock edge and enable (Lattice TN1264; unchecked on silicon here, as hg_mul's DSP registers).
Both ports' modes are set alike because a 36-bit read (Yosys's pseudo-dual-port mapping) spans DOA and
DOB.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Bit = int | str  # a net index, or a constant "0" / "1" / "x" / "z" (Yosys's JSON)
Sinks = dict[Bit, list[tuple[str, str]]]  # net -> (cell, port) it drives; ("", name) for a module port


@dataclass(frozen=True)
class Absorbed:
    block: str  # the DP16KD
    registers: int  # flip-flops moved into it


def absorb_output_registers(netlist: dict[str, Any]) -> list[Absorbed]:
    """Edit `netlist` (Yosys's write_json) in place; returns the blocks changed."""
    done: list[Absorbed] = []
    for module in netlist["modules"].values():
        cells: dict[str, dict[str, Any]] = module.get("cells", {})
        sinks = _sinks(module)
        for name in sorted(n for n, c in cells.items() if c["type"] == "DP16KD"):
            moved = _absorb(cells, name, sinks)
            if moved:
                done.append(Absorbed(name, moved))
    return done


def _sinks(module: dict[str, Any]) -> Sinks:
    found: Sinks = defaultdict(list)
    for name, cell in module.get("cells", {}).items():
        directions = cell.get("port_directions", {})
        for port, bits in cell["connections"].items():
            if directions.get(port) != "output":
                for bit in bits:
                    found[bit].append((name, port))
    for name, port in module.get("ports", {}).items():
        if port["direction"] != "input":
            for bit in port["bits"]:
                found[bit].append(("", name))
    return found


def _read_data(block: dict[str, Any], sinks: Sinks) -> list[tuple[str, Bit]]:
    """The block's DO pins whose nets are read, and those nets."""
    return [(port, bits[0]) for port, bits in sorted(block["connections"].items())
            if port.startswith(("DOA", "DOB")) and sinks.get(bits[0])]


def _plain_register(ff: dict[str, Any], clock: Bit) -> Bit | None:
    """The clock enable of a flip-flop on `clock` with no set/reset and no power-up value; else None."""
    p, c = ff["parameters"], ff["connections"]
    if ff["type"] != "TRELLIS_FF" or c["CLK"][0] != clock or p.get("CLKMUX", "CLK") != "CLK":
        return None
    if p.get("GSR", "ENABLED") != "DISABLED" or p.get("LSRMUX", "LSR") != "LSR" or c.get("LSR", ["0"])[0] != "0":
        return None
    mux = p.get("CEMUX", "1")
    if mux == "1":
        return "1"
    return c["CE"][0] if mux == "CE" else None


def _absorb(cells: dict[str, dict[str, Any]], name: str, sinks: Sinks) -> int:
    block = cells[name]
    p, c = block["parameters"], block["connections"]
    if any(p.get(f"REGMODE_{s}", "NOREG") != "NOREG" for s in "AB") or c["CLKA"] != c["CLKB"]:
        return 0
    if any(c.get(pin, ["0"])[0] != "0" for pin in ("RSTA", "RSTB")):
        return 0
    pins = _read_data(block, sinks)
    registers = _registers_of(cells, pins, sinks, c["CLKB"][0])
    if registers is None:
        return 0
    enable, flops = registers
    for (pin, _), ff in zip(pins, flops, strict=True):
        c[pin] = cells[ff]["connections"]["Q"]
        del cells[ff]
    for side in "AB":
        p[f"REGMODE_{side}"] = "OUTREG"
        c[f"OCE{side}"] = [enable]
        block.setdefault("port_directions", {})[f"OCE{side}"] = "input"
    return len(flops)


def _registers_of(cells: dict[str, dict[str, Any]], pins: Iterable[tuple[str, Bit]], sinks: Sinks,
                  clock: Bit) -> tuple[Bit, list[str]] | None:
    """The flip-flop each DO net drives alone, and their one clock enable; None unless every pin has one."""
    flops: list[str] = []
    enables: set[Bit] = set()
    for _, net in pins:
        loads = sinks.get(net, [])
        if len(loads) != 1 or loads[0][1] != "DI" or loads[0][0] not in cells:
            return None
        ff = loads[0][0]
        enable = _plain_register(cells[ff], clock)
        if enable is None:
            return None
        flops.append(ff)
        enables.add(enable)
    if not flops or len(enables) != 1:
        return None
    return enables.pop(), flops

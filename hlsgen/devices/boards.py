"""Boards hlsgen builds a self-testing bitstream for (`hlsgen pnr --board B --bitstream`): the part,
the oscillator, the LEDs and the buttons, with their pins, as data. The LPF (Lattice's constraint
file) is written from it; adding a board is an entry here.

ULX3S (Radiona; pins from its published ulx3s_v20.lpf, v2.x and v3.0.x boards): a 25 MHz oscillator on
G2, eight LEDs (led[0] B2 ... led[7] H3, active high), PWR (btn[0], D6, low when pressed, pulled up)
and FIRE1 (btn[1], R1, high when pressed, pulled down). It ships with a 12F, 25F, 45F or 85F; the
85F (LFE5U-85F-6BG381C) is the default part, `--part` names another.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlsgen.errors import HlsgenError


@dataclass(frozen=True)
class Pin:
    port: str  # the top-level port bit, e.g. led[0]
    site: str
    pull: str  # PULLMODE: NONE, UP, DOWN


@dataclass(frozen=True)
class Board:
    name: str
    part: str  # the default part
    clock: Pin
    clock_mhz: float
    leds: tuple[Pin, ...]  # led[0] first
    buttons: tuple[Pin, ...]  # btn[0]: a reset, low when pressed; btn[1]: run again, high when pressed

    def lpf(self) -> str:
        """The constraint file of the self-test top's ports (clk_25mhz, led, btn)."""
        lines = [f"# {self.name}: pins of the hlsgen self-test top (hlsgen/devices/boards.py)",
                 "BLOCK RESETPATHS ;", "BLOCK ASYNCPATHS ;"]
        for pin in (self.clock, *self.leds, *self.buttons):
            lines.append(f'LOCATE COMP "{pin.port}" SITE "{pin.site}" ;')
            drive = " DRIVE=4" if pin.port.startswith("led") else ""
            lines.append(f'IOBUF PORT "{pin.port}" PULLMODE={pin.pull} IO_TYPE=LVCMOS33{drive} ;')
        lines.append(f'FREQUENCY PORT "{self.clock.port}" {self.clock_mhz:g} MHz ;')
        return "\n".join(lines) + "\n"


_ULX3S_LEDS = ("B2", "C2", "C1", "D2", "D1", "E2", "E1", "H3")
BOARDS = {b.name: b for b in (
    Board("ulx3s", "LFE5U-85F-6BG381C", Pin("clk_25mhz", "G2", "NONE"), 25.0,
          tuple(Pin(f"led[{i}]", site, "NONE") for i, site in enumerate(_ULX3S_LEDS)),
          (Pin("btn[0]", "D6", "UP"), Pin("btn[1]", "R1", "DOWN"))),
)}


def find_board(name: str) -> Board:
    try:
        return BOARDS[name.lower()]
    except KeyError:
        raise HlsgenError(f"board {name!r} is not one hlsgen knows: {', '.join(BOARDS)}") from None

"""hlsgen/tools/bram_outreg.py on small netlists in Yosys's JSON form: a DP16KD whose read data goes only
into plain flip-flops on its clock gets them as its output register; every condition that makes the move
change behaviour (a second load, a reset, another clock, two enables) leaves the netlist as it was."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hlsgen.tools.bram_outreg import absorb_output_registers
from hlsgen.tools.pnr import block_registers

CLK, CE, OTHER_CLK, OTHER_CE, RST = 2, 3, 4, 5, 6
DO = [10, 11, 12]  # DOB0..2; DOB3's net 13 is read by nothing
Q = [20, 21, 22]


def flop(d: int, q: int, ce: Any = CE, clk: int = CLK, lsr: Any = "0", **params: str) -> dict[str, Any]:
    p = {"CEMUX": "CE", "CLKMUX": "CLK", "GSR": "DISABLED", "LSRMUX": "LSR", "REGSET": "RESET",
         "SRMODE": "LSR_OVER_CE", **params}
    return {"type": "TRELLIS_FF", "parameters": p,
            "port_directions": {"CE": "input", "CLK": "input", "DI": "input", "LSR": "input", "Q": "output"},
            "connections": {"CE": [ce], "CLK": [clk], "DI": [d], "LSR": [lsr], "Q": [q]}}


def netlist(**flop_args: Any) -> dict[str, Any]:
    block = {"type": "DP16KD", "parameters": {"DATA_WIDTH_B": "4"},
             "port_directions": {f"DOB{i}": "output" for i in range(4)} | {"CLKA": "input", "CLKB": "input"},
             "connections": {"CLKA": [CLK], "CLKB": [CLK], "CEB": [7], "OCEA": ["0"], "OCEB": ["1"],
                             "RSTA": ["0"], "RSTB": ["0"], "DOB0": [DO[0]], "DOB1": [DO[1]], "DOB2": [DO[2]],
                             "DOB3": [13]}}
    cells = {"ram": block} | {f"ff{i}": flop(DO[i], Q[i], **flop_args) for i in range(3)}
    return {"modules": {"top": {"attributes": {"top": "1"}, "cells": cells,
                                "ports": {"y": {"direction": "output", "bits": Q}}}}}


def test_the_flops_become_the_blocks_output_register() -> None:
    n = netlist()
    changed = absorb_output_registers(n)
    assert [(a.block, a.registers) for a in changed] == [("ram", 3)]
    cells = n["modules"]["top"]["cells"]
    assert set(cells) == {"ram"}
    ram = cells["ram"]
    assert (ram["parameters"]["REGMODE_A"], ram["parameters"]["REGMODE_B"]) == ("OUTREG", "OUTREG")
    assert ram["connections"]["OCEA"] == ram["connections"]["OCEB"] == [CE]
    # each DO pin drives the net its flip-flop drove; the unread pin keeps its own net
    assert [ram["connections"][f"DOB{i}"] for i in range(4)] == [[Q[0]], [Q[1]], [Q[2]], [13]]
    assert block_registers(n)["DP16KD_outreg"] == 1 and block_registers(n)["DP16KD"] == 1


def test_an_always_enabled_flop_gives_an_always_enabled_register() -> None:
    n = netlist(CEMUX="1")
    assert absorb_output_registers(n)
    assert n["modules"]["top"]["cells"]["ram"]["connections"]["OCEB"] == ["1"]


@pytest.mark.parametrize(("case", "edit"), [
    ("a reset", lambda n: n["modules"]["top"]["cells"]["ff1"]["connections"].update(LSR=[RST])),
    ("another clock", lambda n: n["modules"]["top"]["cells"]["ff2"]["connections"].update(CLK=[OTHER_CLK])),
    ("two enables", lambda n: n["modules"]["top"]["cells"]["ff0"]["connections"].update(CE=[OTHER_CE])),
    ("a power-up value", lambda n: n["modules"]["top"]["cells"]["ff0"]["parameters"].update(GSR="ENABLED")),
    ("a second load", lambda n: n["modules"]["top"]["ports"].update(z={"direction": "output", "bits": [DO[1]]})),
    ("logic before the flop", lambda n: n["modules"]["top"]["cells"]["ff0"]["connections"].update(DI=[30])
     or n["modules"]["top"]["cells"].update(lut={"type": "LUT4", "parameters": {}, "port_directions":
                                                  {"A": "input", "Z": "output"},
                                                  "connections": {"A": [DO[0]], "Z": [30]}})),
    ("a block already registered", lambda n: n["modules"]["top"]["cells"]["ram"]["parameters"].update(
        REGMODE_B="OUTREG")),
])
def test_nothing_moves_when_behaviour_would_change(case: str, edit: Any) -> None:
    n = netlist()
    edit(n)
    before = copy.deepcopy(n)
    assert absorb_output_registers(n) == [], case
    assert n == before

"""DSP blocks the RTL instantiates by a name of its own (hg_mul's HG_MULT18X18D): a model for the
simulators, a black box for Yosys, the vendor primitive with its register parameters after synthesis.

Yosys 0.70's synth_ecp5 maps `a * b` to a bare MULT18X18D and leaves the registers around it in the
fabric, and aborts in ABC9 on a MULT18X18D instantiated with any REG_* parameter set. So hg_mul
instantiates HG_MULT18X18D (templates/verilog/rtl/hg_mult18x18d.sv, the model the simulators run: the
primitive's operand and output registers on CLK0, enabled by CE0); `hlsgen synth` and `hlsgen pnr`
read that file as a black box (`read_verilog -lib`), and after synthesis set the parameters the model
stands for on every instance and rename it to the primitive, which nextpnr-ecp5 places with its
registers. A design whose sources do not have the file (a Xilinx part's) reads as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CellModel:
    file: str  # the model's source, in OUT/rtl/
    cell: str  # the module the RTL instantiates
    primitive: str  # what it becomes after synthesis
    params: tuple[tuple[str, str], ...]  # the primitive's parameters the model stands for


MODELS = (CellModel("hg_mult18x18d.sv", "HG_MULT18X18D", "MULT18X18D",
                    (("REG_INPUTA_CLK", "CLK0"), ("REG_INPUTB_CLK", "CLK0"), ("REG_OUTPUT_CLK", "CLK0"))),)


def _present(files: Sequence[str]) -> list[CellModel]:
    return [m for m in MODELS if m.file in files]


def read_commands(files: Sequence[str]) -> str:
    """Yosys commands reading `files` (in order), the cell models among them as black boxes."""
    models = {m.file for m in _present(files)}
    plain = " ".join(f for f in files if f not in models)
    return f"read_verilog -sv {plain}\n" + "".join(f"read_verilog -sv -lib {f}\n" for f in sorted(models))


def after_synthesis(files: Sequence[str]) -> str:
    """Yosys commands making each black-box cell the primitive it models, with its parameters."""
    commands = []
    for m in _present(files):
        sets = " ".join(f'-set {name} "{value}"' for name, value in m.params)
        commands.append(f"setparam {sets} t:{m.cell}\nchtype -map {m.cell} {m.primitive}\n")
    return "".join(commands)

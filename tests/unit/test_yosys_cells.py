"""hlsgen/tools/yosys_cells.py: the DSP model hg_mul instantiates is read as a black box and becomes the
primitive, with the register parameters its simulation model stands for, after synthesis; sources
without it (none of them is the model) read as plain files."""

from __future__ import annotations

from hlsgen.backends.render import TEMPLATES
from hlsgen.tools.yosys_cells import MODELS, after_synthesis, read_commands


def test_the_model_is_a_black_box_and_becomes_the_primitive() -> None:
    files = ["hg_fifo.sv", "hg_mult18x18d.sv", "hg_mul.sv", "top.sv"]
    assert read_commands(files) == ("read_verilog -sv hg_fifo.sv hg_mul.sv top.sv\n"
                                    "read_verilog -sv -lib hg_mult18x18d.sv\n")
    assert after_synthesis(files) == ('setparam -set REG_INPUTA_CLK "CLK0" -set REG_INPUTB_CLK "CLK0" '
                                      '-set REG_OUTPUT_CLK "CLK0" t:HG_MULT18X18D\n'
                                      "chtype -map HG_MULT18X18D MULT18X18D\n")


def test_sources_without_the_model_read_as_before() -> None:
    assert read_commands(["a.sv", "top.sv"]) == "read_verilog -sv a.sv top.sv\n"
    assert after_synthesis(["a.sv", "top.sv"]) == ""


def test_each_model_file_defines_its_cell_with_the_primitives_port_names() -> None:
    for m in MODELS:
        text = (TEMPLATES / "verilog" / "rtl" / m.file).read_text()
        assert f"module {m.cell} (" in text
        assert all(f"{port}," in text or f"{port}\n" in text for port in ("A17", "B17", "P35", "CLK0", "CE0"))

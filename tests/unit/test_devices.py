"""FPGA families as data (hlsgen/devices): parts name their family; the family's multiplier geometry
and Yosys command are what the resource model and `hlsgen synth` use."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hlsgen.devices.families import DEFAULT_FAMILY, FAMILIES, find_family
from hlsgen.devices.parts import PARTS, family_of, find_part
from hlsgen.errors import HlsgenError
from hlsgen.hw.resources import dsp_slices


def test_every_part_names_a_known_family() -> None:
    assert {p.family.name for p in PARTS.values()} == set(FAMILIES)
    assert find_part("xczu3eg-sbva484-1-e").family.dsp_kind == "DSP48E2"
    assert family_of("xc7z020clg400-1") is FAMILIES["xc7"] and family_of("unknown-part") is DEFAULT_FAMILY


def test_the_family_geometry_is_what_the_slices_are_counted_with() -> None:
    xc7, xcup = FAMILIES["xc7"], FAMILIES["xcup"]
    assert [dsp_slices(a, b, xc7) for a, b in ((8, 8), (25, 18), (26, 18), (25, 19), (32, 32), (4, 4))] == [
        1, 1, 2, 2, 4, 0]
    assert dsp_slices(27, 18, xcup) == 1 and dsp_slices(27, 18, xc7) == 2
    wide = replace(xc7, name="wide", dsp_a_bits=36, dsp_b_bits=36)  # a new family is data: no code changes
    assert dsp_slices(32, 32, wide) == 1 and dsp_slices(32, 32, xc7) == 4
    assert "synth_xilinx -family xcup" in xcup.synth_command.format(top="t")


def test_an_unknown_family_is_one_line() -> None:
    with pytest.raises(HlsgenError, match="FPGA family 'ecp5' is not one hlsgen knows: xc7, xcup"):
        find_family("ecp5")

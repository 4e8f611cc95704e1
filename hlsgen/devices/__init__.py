"""FPGA devices: the parts hlsgen knows, their families and resource budgets.

    parts.py  Part (name, family, DSP, LUT, FF, BRAM36), find_part, family_of
"""

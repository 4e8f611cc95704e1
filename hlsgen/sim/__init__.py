"""Simulation runners: C simulation of the HLS output (csim) and RTL simulation with cocotb (rtlsim).

Tool invocations are argv lists, logged before they run; builds are cached per design.
"""

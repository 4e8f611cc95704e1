"""hlsgen's cocotb harness: AXI-Stream driver and monitor with seeded random stalls, a scoreboard that
compares every output word with the frozen golden vectors, and the per-layer debug-trace check.

Static files, copied into OUT/tb/ by `hlsgen compile`; they never import hlsgen, so the testbench
also runs on a machine (or against RTL) that has only cocotb and a simulator.
"""

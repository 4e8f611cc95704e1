"""`hlsgen rtlsim OUT`: simulate OUT/rtl/ against the golden vectors of OUT/vectors/ with Verilator (or
Icarus), in two runs:

  throughput     the self-checking SystemVerilog replay testbench of OUT/tb/replay/ (hlsgen/tools/replay.py):
                 all frames back to back, no stalls, no Python per cycle; every output word and every
                 layer's output stream compared in SystemVerilog; cycles per frame and latency
  random_stalls  the cocotb testbench of OUT/tb/ with seeded random valid/ready stalls, on fewer frames
                 (`stall_frames`, default min(frames, 2)); per-layer traces from the RTL's debug taps

Builds are cached by content: $readmemh reads the weights and vectors at run time, so the key is the
SystemVerilog sources (the replay testbench included), the simulator, the kind of build and the
waveform switch (cache: $HLSGEN_CACHE or ~/.cache/hlsgen/rtlsim). Each run goes to OUT/rtlsim/<sim>/
(result.json, replay.txt/replay.log, sim.log, layer traces, waveforms). Builds and runs are shown by
hlsgen.support.progress with their elapsed time and an estimate: this design's previous build, else the
builds of other designs scaled by the bytes of Verilog (hlsgen.support.progress.estimate_sized); a run's
from this design's previous seconds per model cycle, else other designs' runs scaled by cycles (the
simulators report frames only at the end, so a run shows its frames and the cycle model's cycles, not
a per-frame count). Exit code 0 when every output of both runs is bit-exact, 1 otherwise; on a
mismatch the first failing run is repeated with a waveform (OUT/rtlsim/<sim>-waves/) unless one was
asked for already.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hlsgen.backends.vectors import check_vectors
from hlsgen.errors import HlsgenError
from hlsgen.support import progress
from hlsgen.support.cache import used
from hlsgen.support.outdir import require_hlsgen_output
from hlsgen.tools import replay
from hlsgen.tools.environment import fst_ok, log, outside_pytest, simulator_env
from hlsgen.tools.results import print_summary

TIMESCALE = ("1ns", "1ps")
# the cocotb model's C++ at -O1 instead of verilated.mk's -Os: a quarter less compile time, and the
# run is paced by Python (the driver and monitor run every clock) whatever the model's speed
COCOTB_MAKEFLAGS = "OPT_FAST=-O1"  # not OPT_SLOW: at -O1 g++ needs minutes for the VPI symbol table
# cocotb's runner makes every signal public (--public-flat-rw); the testbench touches only the top's
# ports, so only those are (public_top.vlt): Verilator optimizes the rest, the model builds faster
COCOTB_VERILATOR_ARGS = ("-Wno-fatal", "--no-public-flat-rw")


STALL_FRAMES = 2  # default frames of the random-stall (cocotb) run
TESTS = ("throughput", "random_stalls")
STALL_TEST = r"\.random_stalls$"  # cocotb test filter (matched against test_<top>.<name>)


def run_rtlsim(out_dir: str | Path, sim: str = "verilator", frames: int | None = None, waves: bool = False,
               seed: int = 1, stall_frames: int | None = None) -> int:
    out = Path(out_dir).resolve()
    top, sources = design(out)
    replay_src = replay.replay_sources(out, sources)
    for flag, value in (("--frames", frames), ("--stall-frames", stall_frames)):
        if value is not None and value < 1:
            raise HlsgenError(f"{flag} must be at least 1, got {value}")
    stall_frames = stall_frames or min(frames or _stored_frames(out), STALL_FRAMES)
    simulator_env(sim)
    run_dir = fresh_run_dir(out, out / "rtlsim" / sim)
    rbuild, rbuild_s, rcached = build(replay_src, replay.REPLAY_TOP, sim, waves, kind="replay")
    replay_s = _replay(out, top, sim, rbuild, run_dir, frames, waves)
    cbuild, cbuild_s, ccached = build(sources, top, sim, waves)
    used(rbuild, cbuild)  # LRU-bounded build caches (hlsgen.support.cache)
    results, stall_s = _stall_run(out, top, sim, cbuild, stall_frames, seed, waves, run_dir)
    sim_s = replay_s + stall_s
    ok = set(results) >= set(TESTS) and all(r["passed"] for r in results.values())
    wave_file = _wave_file(sim, run_dir, top, results) if waves else None
    if not ok and not waves:
        wave_file = _rerun_with_waves(out, top, sim, replay_src, sources, results, frames, stall_frames, seed,
                                      run_dir.with_name(f"{sim}-waves"))
    print_summary(results, sim, rbuild_s + cbuild_s, rcached and ccached, sim_s, run_dir, wave_file, TESTS)
    return 0 if ok else 1


def _stored_frames(out: Path) -> int:
    return int(json.loads((out / "vectors" / "meta.json").read_text())["frames"])


def _cycles_per_frame(out: Path) -> int | None:
    """The cycle model's cycles per frame (OUT/report.json), for the progress estimate."""
    try:
        return int(json.loads((out / "report.json").read_text())["hardware"]["cycles_per_frame"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _replay(out: Path, top: str, sim: str, build_dir: Path, run_dir: Path, frames: int | None, waves: bool) -> float:
    """The replay run, shown as a task: frames and the cycle model's cycles per frame (the simulator
    reports only at the end), elapsed time, and the time left (`_run_estimate`)."""
    n = frames or _stored_frames(out)
    per_frame = _cycles_per_frame(out)
    cycles = n * per_frame if per_frame else None
    keys = (f"rtlsim:{sim}:replay-s/cycle:{out.name}", f"rtlsim:{sim}:replay")
    what = f"{n} frame{'s' if n != 1 else ''}"
    what += f" at {per_frame:,} cycles/frame (~{cycles:,} cycles, cycle model)" if cycles else ""
    with progress.task("rtlsim", f"{sim} replay of {out.name}: {what}", estimate=_run_estimate(cycles, *keys)):
        seconds = replay.run_replay(out, top, sim, build_dir, run_dir, frames, waves)
    if not waves:  # a waveform dump slows the simulator down: not a figure for the next estimate
        _remember_run(seconds, cycles, *keys)
    return seconds


def _run_estimate(cycles: int | None, own: str, kind: str) -> float | None:
    """A simulation run's seconds for `cycles` model cycles: at this design's last seconds per cycle
    (`own`: its frames vary from run to run), else from other designs' runs scaled by their cycles
    (`kind`, hlsgen.support.progress.estimate_sized: their fixed start-up time is not taken per cycle)."""
    if not cycles:
        return None
    rate = progress.estimate(own)
    return rate * cycles if rate else progress.estimate_sized(cycles, kind)


def _remember_run(seconds: float, cycles: int | None, own: str, kind: str) -> None:
    """The figures `_run_estimate` reads (none without the cycle model's cycles)."""
    if cycles:
        progress.remember(seconds / cycles, own)
        progress.remember_sized(seconds, cycles, kind)


def _stall_run(out: Path, top: str, sim: str, build_dir: Path, frames: int, seed: int, waves: bool,
               run_dir: Path) -> tuple[dict[str, Any], float]:
    """The cocotb random-stall run, shown as a task with an estimate by the cycle model's cycles
    (`_run_estimate`; the stalls add cycles in proportion)."""
    per_frame = _cycles_per_frame(out)
    cycles = frames * per_frame if per_frame else None
    keys = (f"rtlsim:{sim}:stall-s/cycle:{out.name}", f"rtlsim:{sim}:stall")
    what = f"{frames} frame{'s' if frames != 1 else ''}, seed {seed}"
    with progress.task("rtlsim", f"{sim} random-stall run of {out.name} (cocotb): {what}",
                       estimate=_run_estimate(cycles, *keys)):
        results, seconds, _ = simulate(out, top, sim, build_dir, frames, seed, waves, run_dir, STALL_TEST,
                                       fresh=False)
    if not waves and results.get("random_stalls", {}).get("passed"):
        _remember_run(seconds, cycles, *keys)
    return results, seconds


def _rerun_with_waves(out: Path, top: str, sim: str, replay_src: list[Path], sources: list[Path],
                      results: dict[str, Any], frames: int | None, stall_frames: int, seed: int,
                      run_dir: Path) -> Path:
    """Repeat the first failing run (the replay, else the stall run) with a waveform in run_dir."""
    progress.step("rtlsim", "mismatch; running again with a waveform")
    fresh_run_dir(out, run_dir)
    if not results.get("throughput", {}).get("passed"):
        rbuild, _, _ = build(replay_src, replay.REPLAY_TOP, sim, True, kind="replay")
        replay.run_replay(out, top, sim, rbuild, run_dir, frames, True)
        return replay.wave_file(sim, run_dir)
    cbuild, _, _ = build(sources, top, sim, True)
    simulate(out, top, sim, cbuild, stall_frames, seed, True, run_dir, STALL_TEST, fresh=False)
    return _wave_path(sim, run_dir, cbuild, top)


def _wave_file(sim: str, run_dir: Path, top: str, results: dict[str, Any]) -> Path:
    """With --waves both runs dump; name the failing one's waveform (the replay's when both passed)."""
    if results.get("throughput", {}).get("passed", False) and not results.get("random_stalls", {}).get("passed"):
        return _wave_path(sim, run_dir, run_dir, top)
    return replay.wave_file(sim, run_dir)


def design(out: Path) -> tuple[str, list[Path]]:
    """(top module, Verilog sources) of a compiled folder, after checking its test vectors."""
    require_hlsgen_output(out, "give the -o folder of `hlsgen compile`")
    files_f = out / "rtl" / "files.f"
    for need in (files_f, out / "vectors" / "meta.json", out / "tb" / "hlsgen_tb"):
        if not need.exists():
            raise HlsgenError(f"{out}: no {need.relative_to(out)}; run `hlsgen compile` with hw.rtl.enabled "
                              "(the default) first")
    check_vectors(out / "vectors")
    sources = [out / "rtl" / name for name in files_f.read_text().split()]
    return sources[-1].stem, sources


def cache_root() -> Path:
    base = os.environ.get("HLSGEN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hlsgen")
    return Path(base) / "rtlsim"


def build_key(sources: list[Path], top: str, sim: str, waves: bool, kind: str = "cocotb") -> str:
    """`kind`: "cocotb" (cocotb runner build of the RTL) or "replay" (the SV replay testbench binary)."""
    from importlib.metadata import version

    h = hashlib.sha256(f"{top}|{sim}|{waves}|{version('cocotb')}".encode())
    if sim == "verilator":
        h.update(version("verilator").encode())
    if kind == "cocotb":
        h.update(f"|{COCOTB_MAKEFLAGS}|{COCOTB_VERILATOR_ARGS}".encode())
    else:
        h.update(f"|{kind}|{replay.VERILATOR_ARGS}|{replay.VERILATOR_MAKEFLAGS}|{replay.EXTERNAL_CLOCK}".encode())
        h.update(replay.MAIN_CPP.encode())  # the C++ main that toggles the clock
    for f in sources:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    prefix = "" if kind == "cocotb" else f"{kind}-"
    return f"{prefix}{sim}-{top}-{h.hexdigest()[:16]}{'-waves' if waves else ''}"


def build(sources: list[Path], top: str, sim: str, waves: bool, kind: str = "cocotb") -> tuple[Path, float, bool]:
    """Build (or reuse) the simulation model; returns (build dir, seconds, reused). A file lock
    keeps two runs of the same design from building into one cache folder at once."""
    build_dir = cache_root() / build_key(sources, top, sim, waves, kind)
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    design = _design_name(sources)
    what = "replay testbench" if kind == "replay" else "cocotb model"
    with open(build_dir.with_suffix(".lock"), "w") as lock:  # one builder per design at a time
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            with progress.task(sim, f"waiting for another process building the {what} of {design}"):
                fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = build_dir / "hlsgen.ok"
        if stamp.exists():
            return build_dir, 0.0, True
        shutil.rmtree(build_dir, ignore_errors=True)
        build_dir.mkdir(parents=True)
        start = time.monotonic()
        size = verilog_bytes(sources)
        keys = (f"{sim}:{kind}{'-waves' if waves else ''}:{design}", f"{sim}:{kind}{'-waves' if waves else ''}")
        with progress.task(sim, f"building the {what} of {design}", estimate=progress.estimate_sized(size, *keys)):
            if kind == "replay":
                log.info("building %s replay testbench of %s in %s", sim, sources[-1].stem, build_dir)
                replay.build_replay(sources, sim, waves, build_dir)
            else:
                _build_cocotb(sources, top, sim, waves, build_dir)
        stamp.write_text("ok\n")
        seconds = time.monotonic() - start
        progress.remember_sized(seconds, size, *keys)  # the estimate of the next build of this kind
        return build_dir, seconds, False


def verilog_bytes(sources: list[Path]) -> int:
    """The size a build's time is estimated by (hlsgen.support.progress.estimate_sized): the bytes of all its
    Verilog, the shared hg_*.sv units and the testbench included. Verilator's build time has a large
    fixed part, which these bytes share: measured on three examples (85, 109 and 128 KB), replay
    testbenches built in 7.9, 8.8 and 12.8 s and one design's time scaled by this size gave another's
    within 1.25x; scaled by the top module's bytes alone (13 to 53 KB) it was off by up to 2.5x."""
    return sum(f.stat().st_size for f in sources)


def _design_name(sources: list[Path]) -> str:
    """The OUT folder of the design's Verilog (OUT/rtl/*.sv), for progress text and estimate keys
    (every design's top module is named alike)."""
    rtl = next((s.parent for s in sources if s.parent.name == "rtl"), None)
    return rtl.parent.name if rtl is not None else sources[-1].stem


def _build_cocotb(sources: list[Path], top: str, sim: str, waves: bool, build_dir: Path) -> None:
    from cocotb_tools.runner import get_runner

    args: list[str] = []
    if sim == "verilator":
        vlt = build_dir / "public_top.vlt"
        vlt.write_text(f'`verilator_config\npublic_flat_rw -module "{top}" -var "*"\n')
        args = [*COCOTB_VERILATOR_ARGS, str(vlt),
                *(["--trace-fst", "--trace-structs"] if waves and fst_ok() else [])]
    log.info("building %s model of %s in %s", sim, top, build_dir)
    make_flags = {"MAKEFLAGS": f"{os.environ.get('MAKEFLAGS', '')} {COCOTB_MAKEFLAGS}".strip()} \
        if sim == "verilator" else {}
    try:
        with _environment(make_flags):
            get_runner(sim).build(sources=[str(s) for s in sources], hdl_toplevel=top, build_dir=str(build_dir),
                                  waves=waves, timescale=TIMESCALE, build_args=args,
                                  log_file=str(build_dir / "build.log"))
    except RuntimeError as e:
        raise RuntimeError(f"{sim} build failed ({e}); see {build_dir / 'build.log'}") from e


def fresh_run_dir(out: Path, run_dir: Path) -> Path:
    """An empty run folder holding the weight ROM files ($readmemh reads them from the working dir)."""
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    for mem in sorted((out / "rtl").glob("*.mem")):
        shutil.copyfile(mem, run_dir / mem.name)
    return run_dir


def simulate(out: Path, top: str, sim: str, build_dir: Path, frames: int | None, seed: int, waves: bool,
             run_dir: Path | None = None, tests: str = ".",
             fresh: bool = True) -> tuple[dict[str, Any], float, Path]:
    """Run the cocotb tests matching `tests` (a regular expression: "." both, "random_stalls" the stall run
    of `hlsgen rtlsim`, "throughput" the cocotb back-to-back run) in OUT/rtlsim/<sim>/;
    returns (result.json contents, seconds, run dir). `fresh`: start from an empty run folder."""
    run_dir = run_dir or out / "rtlsim" / sim
    if fresh:
        fresh_run_dir(out, run_dir)
    env = {"HLSGEN_VECTORS": str(out / "vectors"), "HLSGEN_SEED": str(seed),
           "HLSGEN_RESULT": str(run_dir / "result.json"), "HLSGEN_TRACE_DIR": str(run_dir),
           "HLSGEN_FRAMES": str(frames or "")}
    plusargs = ["+hlsgen_trace"] + ([f"+dumpfile_path={run_dir / (top + '.fst')}"] if sim == "icarus" and waves
                                    else [])
    start = time.monotonic()
    with _environment(env), _on_path(out / "tb"), outside_pytest():
        _run_tests(sim, top, build_dir, run_dir, plusargs, waves, tests)
    result = run_dir / "result.json"
    return (json.loads(result.read_text()) if result.exists() else {}), time.monotonic() - start, run_dir


def _run_tests(sim: str, top: str, build_dir: Path, run_dir: Path, plusargs: list[str], waves: bool,
               tests: str) -> None:
    from cocotb_tools.runner import get_runner

    try:
        get_runner(sim).test(hdl_toplevel=top, hdl_toplevel_lang="verilog", test_module=f"test_{top}",
                             build_dir=str(build_dir), test_dir=str(run_dir), plusargs=plusargs, waves=waves,
                             timescale=TIMESCALE, results_xml=str(run_dir / "results.xml"), test_filter=tests,
                             log_file=str(run_dir / "sim.log"))
    except (SystemExit, RuntimeError) as e:  # the simulator itself failed; result.json tells what it got to
        log.error("simulator failed (%s); see %s", e, run_dir / "sim.log")


def _wave_path(sim: str, run_dir: Path, build_dir: Path, top: str) -> Path:
    if sim == "icarus":
        return run_dir / f"{top}.fst"
    return run_dir / ("dump.fst" if fst_ok() else "dump.vcd")


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def _on_path(folder: Path) -> Iterator[None]:
    """cocotb's runner passes this process's sys.path to the simulator as PYTHONPATH."""
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))

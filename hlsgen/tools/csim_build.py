"""Building the C-sim binaries of OUT/hls with g++: tool location, flags, a cache per design.

Headers: `$XILINX_HLS/include` when XILINX_HLS is set (a Vitis installation), otherwise the ap_int /
hls_stream copy inside the installed `hls4ml` Python package (located without importing it). The
compiler is `$CXX` or `g++`.

Cache: a build is keyed by the SHA-256 of the compiler, the flags, the header folder and every file
of OUT/hls/src and OUT/hls/tb; its objects and binaries live in OUT/hls/build/<key>/ (or under
$HLSGEN_CSIM_CACHE, shared between designs), so an unchanged design is never compiled twice. The
design's object and the testbench's are compiled in parallel, with the ap_int / hls_stream headers
precompiled once per machine (hlsgen.tools.csim_pch). Every tool invocation is an argv
list, printed before it runs and kept in build.log. While g++ runs, hlsgen.support.progress shows a spinner
with the elapsed time and an estimate: this design's previous build of the same kind, else other
designs' builds scaled by the bytes of C++ compiled (`compiled_bytes`, hlsgen.support.progress.estimate_sized).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hlsgen.errors import HlsgenError
from hlsgen.support import progress
from hlsgen.tools.csim_pch import precompiled

Log = Callable[[str], None]
WARNINGS = ["-Wall", "-Wextra", "-Wno-unknown-pragmas", "-Wno-unused-label", "-Wno-uninitialized",
            "-Wno-maybe-uninitialized", "-Wno-unused-parameter"]
BASE_FLAGS = ["-std=c++14", "-O1"]  # -O1: a third faster to build than -O2 and as fast to run


class CsimBuildError(HlsgenError):
    """The generated C++ did not compile (the message holds the compiler's first errors)."""


def header_dir() -> Path:
    """The folder holding ap_int.h and hls_stream.h."""
    tried = []
    xilinx = os.environ.get("XILINX_HLS")
    if xilinx:
        inc = Path(xilinx) / "include"
        if (inc / "ap_int.h").is_file():
            return inc
        tried.append(f"$XILINX_HLS/include ({inc}) has no ap_int.h")
    else:
        tried.append("XILINX_HLS is not set")
    spec = importlib.util.find_spec("hls4ml")
    if spec is not None and spec.submodule_search_locations:
        inc = Path(list(spec.submodule_search_locations)[0]) / "templates" / "vivado" / "ap_types"
        if (inc / "ap_int.h").is_file() and (inc / "hls_stream.h").is_file():
            return inc
        tried.append(f"the hls4ml package has no ap_types headers at {inc}")
    else:
        tried.append("the hls4ml Python package is not installed")
    raise HlsgenError("C simulation needs the ap_int/hls_stream headers: set XILINX_HLS to a Vitis HLS "
                      "installation, or `pip install hls4ml` (its copy is used); " + "; ".join(tried))


def compiler() -> str:
    cxx = os.environ.get("CXX", "g++")
    found = shutil.which(cxx)
    if found is None:
        raise HlsgenError(f"C simulation needs a C++ compiler: {cxx!r} not found (set CXX or install g++)")
    return found


@dataclass(frozen=True)
class Build:
    binary: Path
    seconds: float
    cached: bool


class Builder:
    """Compiles one OUT/hls folder; `build(tap)` returns the (cached) binary."""

    def __init__(self, hls_dir: Path, log: Log = print) -> None:
        self.hls = hls_dir
        self.log = log
        self.cxx = compiler()
        self.include = header_dir()
        self.flags = [*BASE_FLAGS, "-isystem", str(self.include), *WARNINGS]
        self.version = subprocess.run([self.cxx, "-dumpfullversion", "-dumpmachine"], capture_output=True,
                                      text=True).stdout
        cache = os.environ.get("HLSGEN_CSIM_CACHE")
        self.dir = (Path(cache) if cache else hls_dir / "build") / self._key()

    def _key(self) -> str:
        h = hashlib.sha256()
        for part in (self.cxx, self.version, *self.flags):
            h.update(part.encode() + b"\0")
        for folder in ("src", "tb"):
            for f in sorted(p for p in (self.hls / folder).rglob("*") if p.is_file()):
                h.update(str(f.relative_to(self.hls)).encode() + b"\0" + f.read_bytes() + b"\0")
        return h.hexdigest()[:16]

    def build(self, tap: bool = False) -> Build:
        binary = self.dir / ("csim_tap" if tap else "csim")
        if binary.is_file():
            self.log(f"build: cached {binary}")
            return Build(binary, 0.0, True)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log(f"build: headers from {self.include}")
        start = time.perf_counter()
        top_obj = self.dir / ("top_tap.o" if tap else "top.o")
        tb_obj = self.dir / "tb.o"
        flags = [*self.flags, *precompiled(self.cxx, self.version, self.flags, self.log)]
        jobs = {top_obj: [self.cxx, *flags, *(["-DHLSGEN_TAP"] if tap else []), "-c",
                          str(self.hls / "src" / "top.cpp")]}
        if not tb_obj.is_file():
            jobs[tb_obj] = [self.cxx, *flags, "-c", str(self.hls / "tb" / "tb_main.cpp")]
        keys = (f"g++:{binary.name}:{len(jobs)}:{self.hls.parent.name}", f"g++:{binary.name}:{len(jobs)}")
        size = compiled_bytes(self.hls)
        with progress.task("g++", f"building the C-sim binary {binary.name} of {self.hls.parent.name}",
                           estimate=progress.estimate_sized(size, *keys)) as task:
            self._run_parallel(jobs)
            self._run_parallel({binary: [self.cxx, str(top_obj), str(tb_obj)]})
            compiling = task.elapsed  # g++ alone: not the precompiled header, built once per machine
        seconds = time.perf_counter() - start
        progress.remember_sized(compiling, size, *keys)  # the estimate of the next build of this kind
        self.log(f"build: {binary.name} in {seconds:.1f} s")
        return Build(binary, seconds, False)

    def _run_parallel(self, jobs: dict[Path, list[str]]) -> None:
        """Run compiler invocations at once, each writing a private temporary file that replaces its
        target on success (so concurrent builds of one design never see half-written files); a
        failure raises with the compiler's first errors."""
        procs: list[tuple[Path, list[str], subprocess.Popen[str]]] = []
        try:
            with open(self.dir / "build.log", "a") as log:
                for target, argv in jobs.items():
                    full = [*argv, "-o", str(target.with_name(f"{target.name}.{os.getpid()}.tmp"))]
                    self.log("$ " + shlex.join(full))
                    log.write("$ " + shlex.join(full) + "\n")
                    procs.append((target, full, subprocess.Popen(full, stdout=subprocess.PIPE,
                                                                 stderr=subprocess.STDOUT, text=True)))
                outputs = [(target, full, p.communicate()[0], p.returncode) for target, full, p in procs]
                for _, _, text, _ in outputs:
                    log.write(text)
            for _, full, text, code in outputs:
                if code != 0:
                    what = full[full.index("-c") + 1] if "-c" in full else "the C-sim binary"
                    raise CsimBuildError(f"compiling {what} failed (exit {code}): {_first_error(text)} "
                                         f"(full log: {self.dir / 'build.log'})")
            for target, full, _, _ in outputs:
                os.replace(full[-1], target)
        finally:  # a failed or interrupted build leaves no temporary object behind
            for _, full, p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                Path(full[-1]).unlink(missing_ok=True)


def compiled_bytes(hls_dir: Path) -> int:
    """The size a build's time is estimated by (hlsgen.support.progress.estimate_sized): the bytes of the C++
    generated for the design, its own files in OUT/hls/src (top.cpp, top.h, params.h) and the
    testbench of OUT/hls/tb, without the kernel headers (the same for every design, and cheap to parse
    for their size) and the constant tables of weights.h (resnet8's 363 KB take 0.07 s of its 6 s).
    top.cpp's time grows with its layers; the testbench, about 9 KB for every design, stands for the
    fixed part (the testbench object, the link). Measured on three examples: 22, 50 and 66 KB built
    in 1.9, 4.6 and 5.3 to 6.0 s; one design's time scaled by this size gave another's within 1.2x
    (unscaled: up to 3.2x off; without the testbench, up to 1.6x; with the kernel headers, 1.9x)."""
    files = [f for f in (hls_dir / "src").iterdir() if f.is_file() and f.name != "weights.h"]
    return sum(f.stat().st_size for f in [*files, *(hls_dir / "tb").iterdir()] if f.is_file())


def _first_error(text: str) -> str:
    """The compiler's first error line (file:line:col: error: ...), else its first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors[0] if errors else lines[0] if lines else "no output")[:400]

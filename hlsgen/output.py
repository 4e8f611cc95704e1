"""Writing results to disk atomically: a folder appears complete or not at all."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from hlsgen.api import Compilation
from hlsgen.backends import hardware_enabled, write_backends
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.ir import format_graph
from hlsgen.outdir import write_file_atomically, write_folder_atomically
from hlsgen.report import build_report, render_markdown


def write_compilation(c: Compilation, out_dir: str | Path, inputs: Iterable[Path] = ()) -> tuple[Path, dict[str, Any]]:
    """Write OUT atomically; `inputs` (model, config, calibration data) are never inside what is replaced."""
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

    return write_folder_atomically(out_dir, fill, inputs), report


def save_arrays(path: str | Path, arrays: list[np.ndarray], names: list[str]) -> None:
    """One output as .npy; several need a .npz (keyed by output name). Written atomically."""
    def write(f: BinaryIO) -> None:
        if Path(path).suffix == ".npz":
            named: dict[str, Any] = dict(zip(names, arrays, strict=True))
            np.savez(f, **named)
        else:
            np.save(f, arrays[0])

    write_file_atomically(path, write)

"""Writing results to disk atomically: a folder appears complete or not at all."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from hlsgen.backends import Design, hardware_enabled, write_backends
from hlsgen.errors import HlsgenError
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.ports import port_codes
from hlsgen.ir import format_graph
from hlsgen.pipeline import Compilation, intermediates
from hlsgen.report.html import write_html
from hlsgen.report.summary import build_report, render_markdown
from hlsgen.support.outdir import write_folder_atomically
from hlsgen.support.outfile import write_owned_file


def write_compilation(c: Compilation, out_dir: str | Path, inputs: Iterable[Path] = ()) -> tuple[Path, dict[str, Any]]:
    """Write OUT atomically; `inputs` (model, config, calibration data) are never inside what is replaced."""
    df = build_dataflow(c.graph, c.config.hw) if hardware_enabled(c.config.hw) else None
    report = build_report(c, df)
    report["onnxruntime"] = onnxruntime_agreement(c, inputs)

    def fill(tmp: Path) -> None:
        if df is not None:
            frames = c.config.hw.frames
            values = intermediates(c, frame_inputs(c, frames))
            write_backends(Design(df, c.config.hw, c.graph.name, values, port_codes(c.graph, df)), tmp)
        graphs = tmp / "graph"
        graphs.mkdir()
        for i, (name, g) in enumerate(c.stages):
            (graphs / f"{i:02d}_{name}.txt").write_text(format_graph(g))
        (tmp / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
        (tmp / "report.md").write_text(render_markdown(report))
        write_html(tmp, report)  # last: it links the files above

    return write_folder_atomically(out_dir, fill, inputs), report


def frame_inputs(c: Compilation, frames: int) -> np.ndarray:
    """The inputs of the test-vector frames: the calibration/sample inputs, then seeded N(0,1)."""
    pool = c.calibration if c.calibration is not None and len(c.calibration) >= frames else c.sample
    if len(pool) >= frames:
        return pool[:frames]
    extra = np.random.default_rng(1).standard_normal((frames - len(pool), *pool.shape[1:]))
    return np.concatenate([pool, extra.astype(np.float32)])


def onnxruntime_agreement(c: Compilation, inputs: Iterable[Path]) -> dict[str, Any] | None:
    """For an ONNX QDQ source: `hlsgen compare`'s per-layer figures (|golden - onnxruntime| in LSB) on up to
    8 inputs of the error sample, for report.html; None for other formats or without the model file."""
    model = next((Path(p) for p in inputs if Path(p).suffix.lower() == ".onnx"), None)
    if model is None or c.graph.meta.get("format") != "onnx-qdq":
        return None
    from hlsgen.interop.compare import SYNTHETIC_BATCH, Comparison, layer_agreement, to_json
    from hlsgen.interop.ort import ort_reference, ort_version

    x = c.sample[:SYNTHETIC_BATCH]
    try:
        proto, reference = ort_reference(c, model)
        rows = tuple(layer_agreement(c, proto, x))
    except HlsgenError as e:
        return {"error": str(e)}
    source = "synthetic N(0, 1), seed 0" if c.sample_is_synthetic else "calibration data"
    return to_json(Comparison(c.source.name, reference, len(x), source, ort_version(), rows))


ARRAY_SUFFIXES = (".npy", ".npz")


def save_arrays(path: str | Path, arrays: list[np.ndarray], names: list[str], inputs: Iterable[Path] = ()) -> None:
    """One output as .npy; several need a .npz (keyed by output name). Written atomically, never over
    one of `inputs` or a file hlsgen did not write (hlsgen.support.outfile)."""
    def write(f: BinaryIO) -> None:
        if Path(path).suffix == ".npz":
            named: dict[str, Any] = dict(zip(names, arrays, strict=True))
            np.savez(f, **named)
        else:
            np.save(f, arrays[0])

    write_owned_file(path, write, inputs, ARRAY_SUFFIXES)

"""Hardware backends: everything `hlsgen compile` writes besides the graph dumps and the report.

Each entry of BACKENDS writes one folder of OUT from the compilation and its dataflow (the hardware
view shared by all of them, hlsgen.hw). The list is literal and ordered.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from hlsgen.api import Compilation, intermediates
from hlsgen.backends.hls import hls_backend
from hlsgen.backends.vectors import write_vectors
from hlsgen.backends.verilog import rtl_backend
from hlsgen.hw.model import Dataflow

Backend = Callable[[Compilation, Dataflow, Path], None]


def _vectors(c: Compilation, df: Dataflow, out: Path) -> None:
    frames = c.config.hw.frames
    write_vectors(out / "vectors", df, intermediates(c, frame_inputs(c, frames)), frames)


def frame_inputs(c: Compilation, frames: int) -> np.ndarray:
    """The inputs of the test-vector frames: the calibration/sample inputs, then seeded N(0,1)."""
    pool = c.calibration if c.calibration is not None and len(c.calibration) >= frames else c.sample
    if len(pool) >= frames:
        return pool[:frames]
    extra = np.random.default_rng(1).standard_normal((frames - len(pool), *pool.shape[1:]))
    return np.concatenate([pool, extra.astype(np.float32)])


BACKENDS: list[tuple[str, Backend]] = [
    ("vectors", _vectors),
    ("hls", hls_backend),
    ("rtl", rtl_backend),
]


def hardware_enabled(c: Compilation) -> bool:
    return c.config.hw.hls.enabled or c.config.hw.rtl.enabled


def write_backends(c: Compilation, df: Dataflow | None, out: Path) -> None:
    """Write every backend's folder into `out` (nothing when all hardware outputs are disabled)."""
    if df is None:
        return
    for _, backend in BACKENDS:
        backend(c, df, out)

"""The bundled examples' generated files (examples/*/model*.onnx, *.npy, weights.npz), safe in parallel runs.

`make_model.py` of an example rewrites its files in place (not atomically). Under pytest-xdist a worker
regenerating them while another reads them would read a half-written file, so tests/conftest.py runs
every make_model.py once in the controlling process before the workers start and sets $FRESH; tests call
`make_example(name)` instead of running make_model.py themselves: it runs the script only when no
earlier step of this run did (a plain `pytest` run without workers regenerates as before).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FRESH = "HLSGEN_TEST_EXAMPLES_FRESH"  # set (to the run's pid) once every example was regenerated for this run


def regenerate_all() -> None:
    """Run every examples/*/make_model.py (deterministic: the same bytes every time)."""
    for script in sorted(EXAMPLES.glob("*/make_model.py")):
        subprocess.run([sys.executable, str(script)], check=True, capture_output=True)


def make_example(name: str) -> Path:
    """examples/<name>, its generated files written; regenerated unless the whole run's controller did."""
    if not os.environ.get(FRESH):
        subprocess.run([sys.executable, str(EXAMPLES / name / "make_model.py")], check=True, capture_output=True)
    return EXAMPLES / name

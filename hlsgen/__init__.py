"""hlsgen: quantized neural networks to bit-exact FPGA hardware.

The public API: load and compile a model, run its integer golden model, read the report.
The names are imported on first use, so `hlsgen` on the command line reaches its own error and
interrupt handling (hlsgen.cli.main) before numpy and onnx are loaded: a Ctrl-C during start-up is
then one line, not a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hlsgen.errors import HlsgenError, UnsupportedModelError

if TYPE_CHECKING:
    from hlsgen.pipeline import (
        Compilation,
        compile_model,
        float_reference,
        float_stage,
        hardware_outputs,
        intermediates,
        load_model,
        run_golden,
    )

__version__ = "0.1.0"

__all__ = [
    "Compilation",
    "HlsgenError",
    "UnsupportedModelError",
    "compile_model",
    "float_reference",
    "float_stage",
    "hardware_outputs",
    "intermediates",
    "load_model",
    "run_golden",
]

_FROM_API = {"Compilation", "compile_model", "float_reference", "float_stage", "hardware_outputs",
             "intermediates", "load_model", "run_golden"}


def __getattr__(name: str) -> Any:
    if name in _FROM_API:
        from hlsgen import pipeline as api
        return getattr(api, name)
    raise AttributeError(f"module 'hlsgen' has no attribute {name!r}")

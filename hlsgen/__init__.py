"""hlsgen: quantized neural networks to bit-exact FPGA hardware.

The public API: load and compile a model, run its integer golden model, read the report.
"""

from hlsgen.api import (
    Compilation,
    compile_model,
    float_reference,
    float_stage,
    hardware_outputs,
    intermediates,
    load_model,
    run_golden,
)
from hlsgen.errors import HlsgenError, UnsupportedModelError

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

"""The compiler pipeline, as a literal list of passes (each a pure Graph -> Graph function).

FLOAT_PASSES rewrite the float graph (fusions, folding); QUANT_PASSES make it integer. The driver
(hlsgen.pipeline) verifies the graph and writes its canonical text form after every pass.
"""

from __future__ import annotations

from collections.abc import Callable

from hlsgen.ir import Graph
from hlsgen.passes.absorb_qdq import absorb_qdq
from hlsgen.passes.calibrate import calibrate
from hlsgen.passes.check_supported import check_supported
from hlsgen.passes.cleanup import cleanup
from hlsgen.passes.context import PassContext
from hlsgen.passes.fold_bn import fold_bn
from hlsgen.passes.fuse_epilogue import fuse_epilogue
from hlsgen.passes.fuse_matmul_add import fuse_matmul_add
from hlsgen.passes.lower_affine import lower_affine
from hlsgen.passes.quantize import quantize
from hlsgen.passes.scalings_to_affine import scalings_to_affine

Pass = Callable[[Graph, PassContext], Graph]

FLOAT_PASSES: list[Pass] = [
    absorb_qdq,
    cleanup,
    fuse_matmul_add,
    scalings_to_affine,
    fold_bn,
    lower_affine,
    fuse_epilogue,
    check_supported,
]

QUANT_PASSES: list[Pass] = [
    calibrate,
    quantize,
]

__all__ = ["FLOAT_PASSES", "QUANT_PASSES", "Pass", "PassContext"]

"""Golden model vs onnxruntime per rounding point, for the tests: hlsgen.interop.compare's functions, what
`hlsgen compare` runs (see that module's docstring for what is compared and the 1 LSB bound).

`agreement_from(c, ort, x)` gives the rows from onnxruntime's integer tensors `ort` of batch `x`;
a row's `max_fed` is over its rounding points (two for a two-step layer, numerics.md §8), and
`max_fed_fused` is the fused layer fed its layer inputs only, where a step-1 near-tie is amplified
by step 2's gain s_t/s_y, so it can exceed 1.
"""

from __future__ import annotations

from hlsgen.interop.compare import COMPARED_OPS, LayerAgreement, layer_agreement, ort_integers, step_differences
from hlsgen.interop.compare import agreement_rows as agreement_from

__all__ = ["COMPARED_OPS", "LayerAgreement", "agreement_from", "layer_agreement", "ort_integers", "step_differences"]

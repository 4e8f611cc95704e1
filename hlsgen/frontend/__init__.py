"""Front-ends: source models to the IR (docs/ir.md)."""

from hlsgen.frontend.from_onnx import from_onnx_model, load_onnx

__all__ = ["from_onnx_model", "load_onnx"]

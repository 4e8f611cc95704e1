"""onnxruntime as `hlsgen compare` runs it: which model, and every integer tensor it computes.

Graph optimizations off (ORT_DISABLE_ALL), one thread, CPU, image by image, with every node output
shape inference can type exposed as a graph output. onnxruntime is imported only here, lazily.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx

from hlsgen.errors import HlsgenError
from hlsgen.frontend.onnx_ops_common import QONNX_DOMAINS
from hlsgen.pipeline import Compilation

_QDQ_OPS = ("QuantizeLinear", "DequantizeLinear")
_ORT_INPUT_DTYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16}


def ort_reference(c: Compilation, model: Path) -> tuple[onnx.ModelProto, str]:
    """What onnxruntime runs: the source model when it is ONNX QDQ; otherwise (float ONNX, QONNX, which
    onnxruntime cannot run, or YAML) the compiled graph exported as QDQ (hlsgen.interop.export_qdq)."""
    if model.suffix.lower() == ".onnx":
        proto = onnx.load(str(model))
        ops = list(proto.graph.node)
        if any(n.op_type in _QDQ_OPS for n in ops) and not any(n.domain in QONNX_DOMAINS for n in ops):
            return proto, "the source QDQ model"
    from hlsgen.interop.export_qdq import export_qdq

    return export_qdq(c.graph), "the compiled graph exported as QDQ (hlsgen export-qdq)"


def ort_integers(model: onnx.ModelProto, x: np.ndarray) -> dict[str, np.ndarray]:
    """Every integer node output onnxruntime computes for batch `x` (run image by image), by name."""
    sess = _session(expose_all(model))
    inp = sess.get_inputs()[0]
    dtype = _ORT_INPUT_DTYPES.get(inp.type, np.float32)
    names = [o.name for o in sess.get_outputs()]
    runs = []
    for xi in x:
        try:
            runs.append(dict(zip(names, sess.run(names, {inp.name: xi[None].astype(dtype)}), strict=True)))
        except Exception as e:  # onnxruntime's own exception types  # noqa: BLE001
            raise HlsgenError(f"onnxruntime failed to run the model: {_first_line(e)}") from None
    return {k: np.concatenate([r[k] for r in runs]) for k, v in runs[0].items()
            if np.issubdtype(np.asarray(v).dtype, np.integer)}


def ort_version() -> str:
    import onnxruntime

    return str(onnxruntime.__version__)


def _session(model: onnx.ModelProto) -> Any:
    try:
        import onnxruntime as ort
    except ImportError:
        raise HlsgenError("compare needs onnxruntime: pip install onnxruntime") from None
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    try:
        return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        raise HlsgenError(f"onnxruntime cannot load the model: {_first_line(e)}") from None


def expose_all(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy whose graph outputs are every node output shape inference can type (QuantizeLinear outputs
    it leaves untyped get their zero point's type)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001  (then only the declared types are known)
        inferred = model
    typed = {vi.name: vi for vi in (*inferred.graph.value_info, *inferred.graph.output)
             if vi.type.tensor_type.elem_type}
    inits = {t.name: t.data_type for t in model.graph.initializer}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    have = {o.name for o in out.graph.output}
    for node in out.graph.node:
        for name in node.output:
            if not name or name in have:
                continue
            if name in typed:
                out.graph.output.append(typed[name])
            elif node.op_type == "QuantizeLinear":
                zp = node.input[2] if len(node.input) > 2 else ""
                out.graph.output.append(onnx.helper.make_tensor_value_info(
                    name, inits.get(zp, onnx.TensorProto.UINT8), None))
            have.add(name)
    return out


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__

"""Checks on an untrusted ONNX model before any of its tensors is materialised (docs/trust.md).

`load_checked(path, limits)` reads the protobuf without external data, checks every external-data
reference (a relative file inside the model's folder, present, long enough), then loads it.
`check_tensors(model, source, limits)` checks every initializer and Constant-node tensor from its
dims and stored length alone (dims non-negative, element count within limits.tensor_elements, data
length matching the dims) and every declared shape (graph inputs, outputs, value_info). Each refusal
is one `HlsgenError` naming the file and the initializer, node or tensor.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from hlsgen.config.limits import Limits, beyond, elements
from hlsgen.errors import HlsgenError

_PACKED_4BIT = {getattr(TensorProto, n) for n in ("INT4", "UINT4", "FLOAT4E2M1") if hasattr(TensorProto, n)}
_COMPLEX = {TensorProto.COMPLEX64, TensorProto.COMPLEX128}


def load_checked(path: Path, limits: Limits) -> onnx.ModelProto:
    """An ONNX file whose external data (if any) was checked before it was read."""
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as e:  # protobuf decode errors and the like
        raise HlsgenError(f"{path}: not an ONNX model ({type(e).__name__}: {_first_line(e)})") from None
    if model.ir_version == 0 or not model.HasField("graph"):
        raise HlsgenError(f"{path}: not an ONNX model (no graph)")
    external = [t for t in _tensors(model) if t.data_location == TensorProto.EXTERNAL]
    if external:
        for t in external:
            _check_external(t, path, limits)
        from onnx.external_data_helper import load_external_data_for_model

        try:
            load_external_data_for_model(model, str(path.parent))
        except Exception as e:
            raise HlsgenError(f"{path}: cannot read the external data of its initializers "
                              f"({type(e).__name__}: {_first_line(e)})") from None
    return model


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else "no details"


def _check_external(t: TensorProto, path: Path, limits: Limits) -> None:
    info = {e.key: e.value for e in t.external_data}
    where = f"{path}: initializer {t.name!r} keeps its data in external data"
    location = info.get("location", "")
    rel = Path(location)
    if not location or rel.is_absolute() or ".." in rel.parts:
        raise HlsgenError(f"{where} at {location!r}; only a relative file inside the model's folder is read")
    folder = path.resolve().parent
    target = (folder / rel).resolve()
    if folder not in target.parents:
        raise HlsgenError(f"{where} at {location!r}, which leads outside the model's folder (a link?)")
    if not target.is_file():
        raise HlsgenError(f"{where} file {location!r}, which is missing (looked for {target})")
    count = elements(t.dims)
    if count > limits.tensor_elements:
        raise HlsgenError(f"{path}: initializer {t.name!r} of dims {list(t.dims)}: "
                          f"{beyond(limits, 'tensor_elements', count)}")
    try:
        offset, length = int(info.get("offset", 0)), int(info.get("length", -1))
    except ValueError:
        raise HlsgenError(f"{where} with a non-integer offset or length") from None
    size = target.stat().st_size
    need = _data_bytes(t, count)
    if length >= 0 and need is not None and length != need:
        raise HlsgenError(f"{where} of {length:,} bytes, but its dims {list(t.dims)} need {need:,}")
    if need is not None and (offset < 0 or offset + need > size):
        raise HlsgenError(f"{where} {location!r} at offset {offset:,}: the file holds {size:,} bytes, "
                          f"{need:,} are needed")


def _tensors(model: onnx.ModelProto) -> Iterator[TensorProto]:
    g = model.graph
    yield from g.initializer
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                yield a.t


def _data_bytes(t: TensorProto, count: int) -> int | None:
    """Bytes the tensor's data needs in raw form; None for strings."""
    if t.data_type == TensorProto.STRING:
        return None
    if t.data_type in _PACKED_4BIT:
        return (count + 1) // 2
    try:
        return count * np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
    except Exception:
        return None


def _stored_count(t: TensorProto, count: int) -> tuple[int, int] | None:
    """(entries stored, entries the dims need) in the tensor's own fields; None when not checkable."""
    if t.data_location == TensorProto.EXTERNAL or t.data_type == TensorProto.STRING:
        return None
    if t.HasField("raw_data") or len(t.raw_data):
        need = _data_bytes(t, count)
        return None if need is None else (len(t.raw_data), need)
    try:
        field = helper.tensor_dtype_to_field(t.data_type)
    except Exception:
        return None
    need = 2 * count if t.data_type in _COMPLEX else (count + 1) // 2 if t.data_type in _PACKED_4BIT else count
    return len(getattr(t, field)), need


def check_tensors(model: onnx.ModelProto, source: str, limits: Limits) -> None:
    g = model.graph
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                _check_tensor(a.t, f"{source}: node {n.name or n.op_type!r} ({n.op_type}) attribute {a.name!r}",
                              limits)
            elif a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                continue  # subgraphs are refused by the translators
    for t in g.initializer:
        _check_tensor(t, f"{source}: initializer {t.name!r}", limits)
    for vi in [*g.input, *g.output, *g.value_info]:
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            continue
        dims = [d.dim_value for d in tt.shape.dim if d.HasField("dim_value")]
        if any(d < 0 for d in dims):
            raise HlsgenError(f"{source}: tensor {vi.name!r} declares a negative dimension {dims}")
        shown = [d.dim_value if d.HasField("dim_value") else d.dim_param or "?" for d in tt.shape.dim]
        per_sample = dims[1:] if len(tt.shape.dim) > 1 else dims  # a traced batch of any size is fine
        if elements(per_sample) > limits.tensor_elements:
            raise HlsgenError(f"{source}: tensor {vi.name!r} of shape {shown}: "
                              f"{beyond(limits, 'tensor_elements', elements(per_sample))}")


def _check_tensor(t: TensorProto, what: str, limits: Limits) -> None:
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise HlsgenError(f"{what} has negative dims {dims}")
    count = elements(dims)
    if count > limits.tensor_elements:
        raise HlsgenError(f"{what} of dims {dims}: {beyond(limits, 'tensor_elements', count)}")
    stored = _stored_count(t, count)
    if stored is not None and stored[0] != stored[1]:
        unit = "bytes" if len(t.raw_data) else "values"
        raise HlsgenError(f"{what} declares dims {dims} ({stored[1]:,} {unit} of data) but holds "
                          f"{stored[0]:,} {unit}")

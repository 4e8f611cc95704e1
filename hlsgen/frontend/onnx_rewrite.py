"""Exporters' idioms rewritten at the ONNX level, before translation (docs/passes.md, "Front-end").

  upgrade_opset   opsets 6..8 (PyTorch 0.3, OnnxMLTools 1.2) -> opset 13 with onnx.version_converter
  fold_constants  every default-domain node whose inputs are all constants is evaluated once
                  (onnx.reference) and replaced by an initializer: weights computed by Cast, Mul,
                  Div, Reshape, Transpose, Concat ... chains, constant shape subgraphs. Quantize/
                  DequantizeLinear stay (they carry the model's quantization); a layout op over a
                  quantized constant is folded by the translators (Ctx.derived_static).
  unsqueeze_bn    Unsqueeze(axes >= 2) -> BatchNormalization -> Squeeze(same axes), PyTorch's
                  BatchNorm1d on [N, C], becomes the BatchNormalization on [N, C] itself
  conv1d_to_2d    a rank-3 (1-D) Conv becomes a 2-D Conv with H = 1: Reshape x [N,C,W] -> [N,C,1,W],
                  the weight initializer [O,I,K] -> [O,I,1,K] (also behind DequantizeLinear or a
                  QONNX Quant, whose per-channel scale gains the axis), attributes k -> (1, k),
                  pads (a, b) -> (0, a, 0, b), then Reshape the output back to [N,O,W']

Each rewrite returns a new ModelProto (the input is not modified) and keeps every tensor name the
model had, so errors, aliases and onnxruntime comparisons still name the original tensors.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from hlsgen.config.limits import DEFAULT_LIMITS, Limits, beyond, elements
from hlsgen.errors import HlsgenError

OLDEST_OPSET = 6  # older files are refused
UPGRADE_OPSET = 13  # what files older than the translators' minimum are converted to


def default_opset(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    raise HlsgenError("model imports no default ONNX opset")


def upgrade_opset(model: onnx.ModelProto, source: str, min_opset: int, max_opset: int) -> onnx.ModelProto:
    """Opsets OLDEST_OPSET..min_opset-1 are converted to UPGRADE_OPSET; the converter rewrites the
    ops whose semantics changed (Gemm `broadcast`, BatchNormalization `is_test`/`spatial`, ...).
    tests/unit/test_frontend_exporters.py checks with onnxruntime that outputs are unchanged."""
    opset = default_opset(model)
    if opset >= min_opset:
        return model
    if opset < OLDEST_OPSET:
        raise HlsgenError(f"{source}: ONNX opset {opset} not supported ({OLDEST_OPSET}..{max_opset})")
    from onnx import version_converter

    try:
        return version_converter.convert_version(model, UPGRADE_OPSET)
    except Exception as e:  # the converter raises plain RuntimeError/ValueError with a long text
        text = str(e).strip()
        first = text.splitlines()[0][:200] if text else type(e).__name__
        raise HlsgenError(f"{source}: cannot convert ONNX opset {opset} to {UPGRADE_OPSET} ({first})") from None


# ---- constant folding ------------------------------------------------------------------------------
KEEP = frozenset({"QuantizeLinear", "DequantizeLinear", "Constant", "Identity", "Dropout"})


def fold_constants(model: onnx.ModelProto, source: str, limits: Limits = DEFAULT_LIMITS) -> onnx.ModelProto:
    g = model.graph
    known = {t.name for t in g.initializer} | {o for n in g.node if n.op_type == "Constant" for o in n.output}
    folded: list[onnx.NodeProto] = []
    for n in g.node:
        if n.domain in ("", "ai.onnx") and n.op_type not in KEEP and all(i in known for i in n.input if i):
            folded.append(n)
            known.update(o for o in n.output if o)
    if not folded:
        return model
    values = _evaluate(model, folded, source, limits)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    drop = {id(n) for n in folded}
    keep = [n for n, orig in zip(m.graph.node, g.node, strict=True) if id(orig) not in drop]
    del m.graph.node[:]
    m.graph.node.extend(keep)
    needed = {i for n in keep for i in n.input} | {o.name for o in m.graph.output}
    m.graph.initializer.extend(numpy_helper.from_array(np.asarray(v), name) for name, v in values.items()
                               if name in needed)
    return m


def _evaluate(model: onnx.ModelProto, nodes: list[onnx.NodeProto], source: str,
              limits: Limits = DEFAULT_LIMITS) -> dict[str, np.ndarray]:
    """The outputs of `nodes` (all inputs constant), computed by the ONNX reference evaluator once
    shape inference has bounded them (a ConstantOfShape or Tile may ask for any size)."""
    from onnx.reference import ReferenceEvaluator

    g = model.graph
    consts = [n for n in g.node if n.op_type == "Constant"]
    outs = [o for n in nodes for o in n.output if o]
    sub = onnx.helper.make_graph(consts + nodes, "fold", [], [onnx.helper.make_tensor_value_info(o, 0, None)
                                                             for o in outs], list(g.initializer))
    sub_model = onnx.helper.make_model(sub, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    _check_folded_sizes(sub_model, nodes, source, limits)
    try:
        results = ReferenceEvaluator(sub_model).run(None, {})
    except Exception as e:  # the evaluator raises many kinds; the first line names the op
        text = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
        raise HlsgenError(f"{source}: cannot evaluate the constant subgraph ({text})") from None
    return dict(zip(outs, results, strict=True))


# ---- Unsqueeze -> BatchNormalization -> Squeeze ------------------------------------------------------
def unsqueeze_bn(model: onnx.ModelProto) -> onnx.ModelProto:
    g = model.graph
    producers = {o: n for n in g.node for o in n.output}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    pairs = []
    for bn in g.node:
        if bn.op_type != "BatchNormalization":
            continue
        up, downs = producers.get(bn.input[0]), readers.get(bn.output[0], [])
        if up is None or up.op_type != "Unsqueeze" or len(readers.get(up.output[0], [])) != 1 or len(downs) != 1:
            continue
        down = downs[0]
        axes_up, axes_down = _axes(model, up), _axes(model, down) if down.op_type == "Squeeze" else None
        if axes_up and axes_up == axes_down and min(axes_up) >= 2 and bn.output[0] not in {o.name for o in g.output}:
            pairs.append((up, bn, down))
    if not pairs:
        return model
    m = onnx.ModelProto()
    m.CopyFrom(model)
    by_out = {n.output[0]: n for n in m.graph.node if n.output}
    gone: set[str] = set()  # first outputs of the removed Unsqueeze and Squeeze nodes
    for up, bn, down in pairs:
        by_out[bn.output[0]].input[0] = up.input[0]
        by_out[bn.output[0]].output[0] = down.output[0]
        gone |= {up.output[0], down.output[0]}
    keep = [n for n in m.graph.node if not (n.op_type in ("Unsqueeze", "Squeeze") and n.output[0] in gone)]
    del m.graph.node[:]
    m.graph.node.extend(keep)
    return m


def _axes(model: onnx.ModelProto, node: onnx.NodeProto) -> tuple[int, ...] | None:
    """The constant axes of an Unsqueeze/Squeeze (attribute before opset 13, input after)."""
    for a in node.attribute:
        if a.name == "axes":
            return tuple(int(v) for v in onnx.helper.get_attribute_value(a))
    if len(node.input) < 2:
        return None
    for t in model.graph.initializer:
        if t.name == node.input[1]:
            return tuple(int(v) for v in numpy_helper.to_array(t).reshape(-1))
    for n in model.graph.node:
        if n.op_type == "Constant" and n.output[0] == node.input[1] and n.attribute[0].name == "value":
            return tuple(int(v) for v in numpy_helper.to_array(n.attribute[0].t).reshape(-1))
    return None


# ---- 1-D convolution -> 2-D ------------------------------------------------------------------------
def conv1d_to_2d(model: onnx.ModelProto) -> onnx.ModelProto:
    if not any(_is_conv1d(n, *_index(model)) for n in model.graph.node):
        return model
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits, producers = _index(m)
    targets = [id(n) for n in m.graph.node if _is_conv1d(n, inits, producers)]  # before any weight changes
    nodes: list[onnx.NodeProto] = []
    for node in m.graph.node:
        nodes += _conv_as_2d(m, node, inits, producers) if id(node) in targets else [node]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return m


def _index(m: onnx.ModelProto) -> tuple[dict[str, onnx.TensorProto], dict[str, onnx.NodeProto]]:
    return {t.name: t for t in m.graph.initializer}, {o: n for n in m.graph.node for o in n.output}


def _is_conv1d(node: onnx.NodeProto, inits: dict[str, onnx.TensorProto],
               producers: dict[str, onnx.NodeProto]) -> bool:
    return node.op_type == "Conv" and node.domain in ("", "ai.onnx") and _weight_rank(node, inits, producers) == 3


def _weight_source(name: str, inits: dict[str, onnx.TensorProto],
                   producers: dict[str, onnx.NodeProto]) -> tuple[onnx.TensorProto | None, onnx.NodeProto | None]:
    """The initializer a weight comes from, directly or through one DequantizeLinear / QONNX Quant."""
    if name in inits:
        return inits[name], None
    q = producers.get(name)
    if q is not None and q.op_type in ("DequantizeLinear", "Quant") and q.input[0] in inits:
        return inits[q.input[0]], q
    return None, None


def _weight_rank(node: onnx.NodeProto, inits: dict[str, onnx.TensorProto],
                 producers: dict[str, onnx.NodeProto]) -> int | None:
    if len(node.input) < 2:
        return None
    init, _ = _weight_source(node.input[1], inits, producers)
    return None if init is None else len(init.dims)


def _conv_as_2d(m: onnx.ModelProto, node: onnx.NodeProto, inits: dict[str, onnx.TensorProto],
                producers: dict[str, onnx.NodeProto]) -> list[onnx.NodeProto]:
    init, quant = _weight_source(node.input[1], inits, producers)
    assert init is not None
    _unsqueeze_initializer(init)
    if quant is not None and quant.op_type == "Quant":
        for p in quant.input[1:3]:
            if p in inits and len(inits[p].dims) == 3:
                _unsqueeze_initializer(inits[p])
    base = node.name or node.output[0]
    x4, y4 = f"{base}__x2d", f"{base}__y2d"
    to4 = _shape_const(m, f"{base}__shape2d", [0, 0, 1, -1])
    to3 = _shape_const(m, f"{base}__shape1d", [0, 0, -1])
    conv = onnx.NodeProto()
    conv.CopyFrom(node)
    conv.input[0], conv.output[0] = x4, y4
    del conv.attribute[:]
    conv.attribute.extend(_attrs_2d(node))
    return [onnx.helper.make_node("Reshape", [node.input[0], to4], [x4], name=f"{base}__to2d"), conv,
            onnx.helper.make_node("Reshape", [y4, to3], [node.output[0]], name=f"{base}__to1d")]


def _attrs_2d(node: onnx.NodeProto) -> list[onnx.AttributeProto]:
    out = []
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        if a.name in ("kernel_shape", "strides", "dilations"):
            out.append(onnx.helper.make_attribute(a.name, [1, *v]))
        elif a.name == "pads":
            out.append(onnx.helper.make_attribute(a.name, [0, v[0], 0, v[1]]))
        else:
            out.append(a)
    return out


def _unsqueeze_initializer(t: onnx.TensorProto) -> None:
    a = numpy_helper.to_array(t)
    t.CopyFrom(numpy_helper.from_array(a.reshape(a.shape[0], a.shape[1], 1, a.shape[2]), t.name))


def _shape_const(m: onnx.ModelProto, name: str, dims: list[int]) -> str:
    m.graph.initializer.append(numpy_helper.from_array(np.array(dims, dtype=np.int64), name))
    return name


def _check_folded_sizes(sub_model: onnx.ModelProto, nodes: list[onnx.NodeProto], source: str,
                        limits: Limits) -> None:
    """Refuse a constant node whose output (by shape inference) exceeds limits.tensor_elements."""
    try:
        inferred = onnx.shape_inference.infer_shapes(sub_model, strict_mode=False, data_prop=True)
    except Exception:  # inference is best effort; the evaluator reports what it cannot run
        return
    producer = {o: n for n in nodes for o in n.output if o}
    for vi in [*inferred.graph.value_info, *inferred.graph.output]:
        dims = vi.type.tensor_type.shape.dim
        if vi.name not in producer or not dims or not all(d.HasField("dim_value") for d in dims):
            continue
        count = elements(d.dim_value for d in dims)
        if count > limits.tensor_elements:
            n = producer[vi.name]
            raise HlsgenError(f"{source}: node {n.name or n.op_type!r} ({n.op_type}) would build the constant "
                              f"'{vi.name}' of shape {[d.dim_value for d in dims]}: "
                              f"{beyond(limits, 'tensor_elements', count)}")

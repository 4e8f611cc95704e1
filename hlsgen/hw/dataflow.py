"""The hardware view of the integer graph, shared by the HLS and Verilog backends.

Every hardware node of the integer graph becomes one streaming `Layer`; tensors between them become
`Stream`s of pixels in raster order, lowered with all channels of a pixel in one beat (channel 0 in
the low bits) and then folded: a pixel in beats of the fold its producer writes and its readers take,
with width converters between (hw/stream_folds.py). Layout ops (Reshape, Transpose) cost nothing: they
only change which IR element a stream position holds (`Stream.order`), which a Gemm absorbs by
permuting its weight columns.

Folding: a conv layer computes PE output channels at a time, each from SIMD input channels per cycle
(hlsgen/hw/fold.py picks them for the device's budget);
    conv   cycles = out_pixels · ceil(Cout/PE) · Kh·Kw · ceil(Cin_per_group/SIMD)
    dwconv cycles = out_pixels · ceil(C/PE) · Kh·Kw
    gemm   cycles = ceil(Nout/PE) · in_pixels · ceil(Cin/SIMD)
    maxpool cycles = max(in_pixels, out_pixels·Kh·Kw)
    avgpool cycles = max(in_pixels, out_pixels·max(Kh·Kw, ceil(C/PE)))   (PE requant lanes)
    add, requant cycles = pixels · ceil(C/PE);   lut, concat, slice: pixels
A network's steady-state cycles per frame are its slowest layer's. Skip FIFO depths come from the
data dependencies (see `skip_depth`), so residual blocks cannot deadlock under any stall pattern.
"""

from __future__ import annotations

import copy

import numpy as np

from hlsgen.config.hw import HwConfig
from hlsgen.devices.families import Family
from hlsgen.devices.parts import family_of
from hlsgen.errors import HlsgenError
from hlsgen.hw.cost import Resources
from hlsgen.hw.fifo import fifo_depths, output_depth
from hlsgen.hw.fold import Choice, Folding, GlueOf, choose_folding
from hlsgen.hw.layers import lower_node
from hlsgen.hw.layers.reorder import reorder_layer
from hlsgen.hw.model import Dataflow, Layer, Stream, canonical_order
from hlsgen.hw.ports import port_format
from hlsgen.hw.resources import glue_resources, layer_resources
from hlsgen.hw.slow_converters import fold_without_slow_converters
from hlsgen.hw.stream_folds import Folded, fold_streams
from hlsgen.ir import Graph, Node, Op
from hlsgen.ir.ops import HARDWARE_OPS, LAYOUT_OPS, RASTER_INPUT_OPS
from hlsgen.passes.check_supported import hardware_nodes
from hlsgen.support.names import Namer


def build_dataflow(graph: Graph, hw: HwConfig) -> Dataflow:
    """Lower every hardware node in each folding it may take, then fold to the device (fold.py)."""
    namer = Namer()
    quant_in = next(n for n in graph.nodes if n.op == Op.QUANTIZE_INPUT)
    streams: dict[str, Stream] = {}
    first = input_stream(graph, quant_in.outputs[0], namer)
    streams[first.tensor] = first
    options: list[list[Layer]] = []
    for n in hardware_nodes(graph):
        if n.op not in HARDWARE_OPS:
            raise HlsgenError(f"node {n.name} ({n.op}): no hardware unit for this op")
        ins = [streams[i] for i in n.inputs if not graph.is_const(i)]
        if n.op in LAYOUT_OPS:
            streams[n.outputs[0]] = relayout(graph, n, ins[0])
            continue
        if n.op in RASTER_INPUT_OPS or (n.op == Op.QREQUANT and len(n.attr("mult")) > 1):
            ins = [_canonical(graph, s, namer, options, streams) for s in ins]
        forms, out = lower_node(graph, n, ins, hw, namer)
        streams[out.tensor] = out
        options.append(forms)
    outs = tuple(streams[n.inputs[0]] for n in graph.nodes if n.op == Op.DEQUANTIZE_OUTPUT)
    lowered = {s.name: s for s in streams.values()}  # every stream unfolded
    ports = (port_format(first, hw.io_bits), tuple(port_format(o, hw.io_bits) for o in outs))
    family = family_of(hw.part)

    def with_converters(picked: tuple[Layer, ...], names: Namer) -> Folded:
        return fold_streams(picked, lowered, *ports, names)

    def glue_of(picked: tuple[Layer, ...]) -> Resources:
        return folded_glue(picked, lowered, with_converters(picked, copy.deepcopy(namer)), family)

    def search(kept: list[list[Layer]]) -> Folding:
        return fold(kept, lowered, lambda picks: glue_of(_picked(kept, picks)), first.pixels, hw)

    folding, (layers, by_name, first, outs) = fold_without_slow_converters(options, search, with_converters, namer)
    depths = fifo_depths(list(layers), by_name)  # margins follow the chosen cycles (hw/fifo.margin)
    return Dataflow(graph.name, hw.top, first, outs, by_name, layers, depths, folding, family)


def folded_glue(picked: tuple[Layer, ...], lowered: dict[str, Stream], folded: Folded, family: Family) -> Resources:
    """What one folding costs beyond its layers' own costs as the search compares them (each at its
    unfolded streams, `lowered`): the FIFO of every stream edge (the output ports' too) as deep and as
    wide as built, the data-width converters, and each layer's cost at the streams' folds instead."""
    layers, streams, _, outs = folded
    depths = {**fifo_depths(list(layers), streams), **{(s.name, ""): output_depth(s, list(layers)) for s in outs}}
    total = glue_resources(depths, {s.name: s.data_bits for s in streams.values()}, family)
    for lay in layers:
        total = total + layer_resources(lay, streams[lay.inputs[0]], streams[lay.output], family)
    for lay in picked:
        total = total - layer_resources(lay, lowered[lay.inputs[0]], lowered[lay.output], family)
    return total


def _picked(options: list[list[Layer]], picks: tuple[int, ...]) -> tuple[Layer, ...]:
    return tuple(forms[i] for forms, i in zip(options, picks, strict=True))


def fold(options: list[list[Layer]], by_name: dict[str, Stream], glue: GlueOf, floor: int,
         hw: HwConfig) -> Folding:
    """Every layer's folding for the device (hlsgen/hw/fold.py), costed by the resource model."""
    return choose_folding([_choices(forms, by_name, hw) for forms in options], glue, floor, hw,
                          [forms[0].node for forms in options])


def _choices(forms: list[Layer], by_name: dict[str, Stream], hw: HwConfig) -> list[Choice]:
    family = family_of(hw.part)
    return [Choice(i, lay.cycles, layer_resources(lay, by_name[lay.inputs[0]], by_name[lay.output], family))
            for i, lay in enumerate(forms)]


def _canonical(graph: Graph, s: Stream, namer: Namer, options: list[list[Layer]],
               streams: dict[str, Stream]) -> Stream:
    """`s` itself when it arrives in the canonical order, else the output of a reorder layer (a frame
    buffer written in arrival order and read in canonical order) inserted in front of the reader:
    a Transpose/Reshape mid-network that the stream order cannot absorb (docs/rtl.md, Reorder)."""
    shape = graph.tensor(s.tensor).shape[1:]
    if len(shape) != 3 or np.array_equal(s.order, canonical_order(shape)):
        return s
    c, h, w = shape
    out = Stream(namer(f"{s.tensor}_reordered"), s.tensor, h * w, c, s.bits, s.signed, h, w, canonical_order(shape))
    position = np.empty(s.order.size, np.int64)
    position[s.order] = np.arange(s.order.size)  # flat index -> position in the arriving stream
    perm = position[out.order]  # output element k is arriving element perm[k]
    options.append([reorder_layer(namer(f"layer_reorder_{s.tensor}"), f"{s.tensor}.reorder", s, out, perm)])
    streams[s.tensor] = out
    return out


def input_stream(graph: Graph, tensor: str, namer: Namer) -> Stream:
    """The network input. Its stream order is chosen so that the first tensor a layer reads arrives
    in the canonical order (pixels raster, channels innermost): an NCHW input streams as NHWC
    pixels; an input that reaches the first layer through layout ops only (tf2onnx's NHWC input ->
    Transpose(0,3,1,2); an NHWC input with one channel -> Reshape to [1, C, H, W]; a flat [1, 490]
    -> Reshape [1, 49, 10, 1] -> Transpose; a 1-D conv's [1, W, C] -> Transpose -> Reshape) streams
    in the order that those ops turn into the canonical one. For these idioms that is the input's
    own memory order, so a DMA can send the buffer as it is."""
    t = graph.tensor(tensor)
    assert t.qtype is not None
    bits, signed = t.qtype.int.bits, t.qtype.int.signed
    chain, target = _layout_chain(graph, tensor)
    shape = graph.tensor(target).shape[1:]
    if len(shape) == 3:
        c, h, w = shape
        return Stream(namer(tensor), tensor, h * w, c, bits, signed, h, w, _order_before(graph, chain, shape))
    size = int(np.prod(t.shape[1:]))
    return Stream(namer(tensor), tensor, 1, size, bits, signed, 1, 1, np.arange(size))


def _layout_chain(graph: Graph, tensor: str) -> tuple[list[Node], str]:
    """The Reshape/Transpose nodes from `tensor` to the first tensor a layer reads (single readers)."""
    chain: list[Node] = []
    while (n := graph.single_consumer(tensor)) is not None and n.op in LAYOUT_OPS:
        chain.append(n)
        tensor = n.outputs[0]
    return chain, tensor


def _order_before(graph: Graph, chain: list[Node], shape: tuple[int, ...]) -> np.ndarray:
    """Flat indices of the chain's input, in the order that makes its output canonical."""
    order = canonical_order(shape)
    for n in reversed(chain):
        if n.op == Op.TRANSPOSE:
            x_shape = graph.tensor(n.inputs[0]).shape[1:]
            perm = [p - 1 for p in n.attr("perm")[1:]]
            x_of_y = np.arange(int(np.prod(x_shape))).reshape(x_shape).transpose(perm).ravel()
            order = x_of_y[order]
    return order


def relayout(graph: Graph, node: Node, src: Stream) -> Stream:
    """Reshape keeps flat indices; Transpose permutes them. The stream itself is unchanged."""
    out = graph.tensor(node.outputs[0])
    order = src.order
    if node.op == Op.TRANSPOSE:
        x_shape = graph.tensor(node.inputs[0]).shape[1:]
        perm = [p - 1 for p in node.attr("perm")[1:]]
        y_from_x = np.empty(int(np.prod(x_shape)), dtype=np.int64)
        y_from_x[np.arange(y_from_x.size).reshape(x_shape).transpose(perm).ravel()] = np.arange(y_from_x.size)
        order = y_from_x[order]
    return Stream(src.name, out.name, src.pixels, src.channels, src.bits, src.signed, src.height, src.width, order)

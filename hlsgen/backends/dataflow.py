"""The hardware view of the integer graph, shared by the HLS and Verilog backends.

Every hardware node of the integer graph becomes one streaming `Layer`; tensors between them become
`Stream`s of pixels in raster order with all channels of a pixel in one beat (channel 0 in the low
bits). Layout ops (Reshape, Transpose) cost nothing: they only change which IR element a stream
position holds (`Stream.order`), which a Gemm absorbs by permuting its weight columns.

Folding: a conv layer computes PE output channels at a time, each from SIMD input channels per cycle
(defaults balance the layers: see `build_dataflow`);
    conv   cycles = out_pixels · ceil(Cout/PE) · Kh·Kw · ceil(Cin_per_group/SIMD)
    dwconv cycles = out_pixels · ceil(C/PE) · Kh·Kw
    gemm   cycles = ceil(Nout/PE) · in_pixels · ceil(Cin/SIMD)
    pools  cycles = max(in_pixels, out_pixels·Kh·Kw);  add/requant: pixels
A network's steady-state cycles per frame are its slowest layer's. Skip FIFO depths come from the
data dependencies (see `skip_depth`), so residual blocks cannot deadlock under any stall pattern.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlsgen.api import host_tail_nodes
from hlsgen.backends.names import Namer
from hlsgen.config_hw import HwConfig
from hlsgen.errors import HlsgenError
from hlsgen.ir import Graph, Node

LAYOUT_OPS = ("Reshape", "Transpose")
FIFO_MARGIN = 2


@dataclass(frozen=True, eq=False)
class Stream:
    name: str  # identifier in generated code
    tensor: str  # IR tensor
    pixels: int
    channels: int
    bits: int
    signed: bool
    height: int = 1
    width: int = 1
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # stream pos -> IR flat index

    @property
    def beat_bits(self) -> int:
        """TDATA width: channels · bits, rounded up to whole bytes (AXI-Stream)."""
        return 8 * math.ceil(self.channels * self.bits / 8)


@dataclass(frozen=True, eq=False)
class Layer:
    name: str
    node: str  # IR node name
    kind: str  # conv | dwconv | gemm | maxpool | avgpool | add | requant | lut | reorder
    inputs: tuple[str, ...]  # stream names; a residual conv or an add has a second one
    output: str
    pe: int
    simd: int
    params: Mapping[str, Any]  # geometry and requant scalars
    arrays: Mapping[str, np.ndarray]  # weights [Cout, Kh, Kw, Cin/g] or [Nout, K]; bias, mult, shift, ...
    cycles: int
    macs: int


@dataclass(frozen=True, eq=False)
class Dataflow:
    name: str
    top: str
    input: Stream
    outputs: tuple[Stream, ...]
    streams: Mapping[str, Stream]
    layers: tuple[Layer, ...]
    fifo_depth: Mapping[tuple[str, str], int]  # (stream, consumer layer) -> depth in beats

    @property
    def cycles_per_frame(self) -> int:
        return max([self.input.pixels] + [lay.cycles for lay in self.layers])

    @property
    def bottleneck(self) -> str:
        return max(self.layers, key=lambda lay: lay.cycles).name

    def consumers(self, stream: str) -> list[Layer]:
        return [lay for lay in self.layers if stream in lay.inputs]


def build_dataflow(graph: Graph, hw: HwConfig) -> Dataflow:
    """Two rounds: the most parallel default folds give the slowest layer's cycles T; then every
    layer whose folds hlsgen chooses takes the fewest multipliers that still meet T (balanced)."""
    fastest = _build(graph, hw, None)
    return _build(graph, hw, fastest.cycles_per_frame)


def _build(graph: Graph, hw: HwConfig, target: int | None) -> Dataflow:
    from hlsgen.backends.dataflow_layers import lower_node

    namer = Namer()
    tail = host_tail_nodes(graph)
    quant_in = next(n for n in graph.nodes if n.op == "QuantizeInput")
    host_head = {n.name for n in graph.nodes[:graph.nodes.index(quant_in)]}  # float preprocessing
    streams: dict[str, Stream] = {}
    first = input_stream(graph, quant_in.outputs[0], namer)
    streams[first.tensor] = first
    layers: list[Layer] = []
    for n in graph.nodes:
        if n.op in ("QuantizeInput", "DequantizeOutput") or n.name in tail or n.name in host_head:
            continue
        if n.op not in _HARDWARE:
            raise HlsgenError(f"node {n.name} ({n.op}): no hardware unit for this op")
        ins = [streams[i] for i in n.inputs if not graph.is_const(i)]
        if n.op in LAYOUT_OPS:
            streams[n.outputs[0]] = relayout(graph, n, ins[0])
            continue
        if n.op in _CANONICAL_INPUT or (n.op == "QRequant" and len(n.attr("mult")) > 1):
            ins = [_canonical(graph, s, namer, layers, streams) for s in ins]
        layer, out = lower_node(graph, n, ins, hw, namer, target)
        streams[out.tensor] = out
        layers.append(layer)
    outs = tuple(streams[n.inputs[0]] for n in graph.nodes if n.op == "DequantizeOutput")
    by_name = {s.name: s for s in streams.values()}
    depths = fifo_depths(layers, by_name)
    return Dataflow(graph.name, hw.top, first, outs, by_name, tuple(layers), depths)


_HARDWARE = ("QConv", "QGemm", "QAdd", "QMaxPool", "QAvgPool", "QRequant", "QLut", "Reshape", "Transpose")
_CANONICAL_INPUT = ("QConv", "QMaxPool", "QAvgPool")  # read pixels in raster order, channels innermost


def _canonical(graph: Graph, s: Stream, namer: Namer, layers: list[Layer], streams: dict[str, Stream]) -> Stream:
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
    params = {"in_pixels": s.pixels, "in_c": s.channels, "out_pixels": out.pixels, "out_c": c,
              "elements": int(perm.size), "in_bits": s.bits, "in_signed": s.signed, "out_bits": s.bits,
              "out_signed": s.signed}
    layers.append(Layer(namer(f"layer_reorder_{s.tensor}"), f"{s.tensor}.reorder", "reorder", (s.name,), out.name,
                        1, 1, params, {"perm": perm}, s.pixels + int(perm.size), 0))
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
        if n.op == "Transpose":
            x_shape = graph.tensor(n.inputs[0]).shape[1:]
            perm = [p - 1 for p in n.attr("perm")[1:]]
            x_of_y = np.arange(int(np.prod(x_shape))).reshape(x_shape).transpose(perm).ravel()
            order = x_of_y[order]
    return order


def canonical_order(shape: tuple[int, ...]) -> np.ndarray:
    """Stream order of an NCHW tensor [C, H, W] (or a dense [K]): pixels raster, channels innermost."""
    if len(shape) == 3:
        c, h, w = shape
        return np.arange(c * h * w).reshape(c, h, w).transpose(1, 2, 0).ravel()
    return np.arange(int(np.prod(shape)))


def relayout(graph: Graph, node: Node, src: Stream) -> Stream:
    """Reshape keeps flat indices; Transpose permutes them. The stream itself is unchanged."""
    out = graph.tensor(node.outputs[0])
    order = src.order
    if node.op == "Transpose":
        x_shape = graph.tensor(node.inputs[0]).shape[1:]
        perm = [p - 1 for p in node.attr("perm")[1:]]
        y_from_x = np.empty(int(np.prod(x_shape)), dtype=np.int64)
        y_from_x[np.arange(y_from_x.size).reshape(x_shape).transpose(perm).ravel()] = np.arange(y_from_x.size)
        order = y_from_x[order]
    return Stream(src.name, out.name, src.pixels, src.channels, src.bits, src.signed, src.height, src.width, order)


def require_canonical(graph: Graph, node: Node, stream: Stream) -> None:
    shape = graph.tensor(stream.tensor).shape[1:]
    if stream.order.size != int(np.prod(shape)) or not np.array_equal(stream.order, canonical_order(shape)):
        raise HlsgenError(f"node {node.name}: its input {stream.tensor} arrives in a transposed layout; "
                          "hardware supports layout changes only at the input or before a Gemm")


# ---- FIFO sizing ---------------------------------------------------------------------------------
def fifo_depths(layers: list[Layer], by_name: Mapping[str, Stream]) -> dict[tuple[str, str], int]:
    """Depth of every stream edge: FIFO_MARGIN, plus for each input of a join (residual conv, add)
    the lead it can build up over the other input (conservative: ties in the dependency model count).
    A residual conv's output i waits for its main-input *window* (up to input pixel window[i]),
    which its own line buffer holds; only what arrives beyond that needs the FIFO."""
    from hlsgen.backends.dataflow_layers import last_input_pixel

    need = input_needed(layers, by_name)
    depths: dict[tuple[str, str], int] = {}
    for lay in layers:
        for s in lay.inputs:
            depths[(s, lay.name)] = FIFO_MARGIN
        if len(lay.inputs) == 2:
            main, skip = lay.inputs
            window = last_input_pixel(lay, by_name[main], by_name[lay.output])
            main_ready = need[main][window]  # output pixel i can start once this much input arrived
            skip_d = FIFO_MARGIN + skip_depth(main_ready, need[skip])
            produced = np.searchsorted(np.sort(need[main]), need[skip], side="right")
            main_d = FIFO_MARGIN + int(max(0, np.max(produced - (window + 1))))
            # conv(x) + x reads one stream twice: its (stream, layer) depth must serve both edges
            depths[(skip, lay.name)] = max(skip_d, main_d) if skip == main else skip_d
            depths[(main, lay.name)] = max(skip_d, main_d) if skip == main else main_d
    return depths


def skip_depth(main_need: np.ndarray, skip_need: np.ndarray) -> int:
    """Beats the skip input must hold: when join output i waits for main pixel i (available once the
    network input reached main_need[i]), every skip pixel available by then is produced; the join has
    consumed i of them. Depth = max_i #{j: skip_need[j] <= main_need[i]} - i."""
    produced = np.searchsorted(np.sort(skip_need), main_need, side="right")
    return int(max(0, np.max(produced - np.arange(main_need.size))))


def input_needed(layers: list[Layer], by_name: Mapping[str, Stream]) -> dict[str, np.ndarray]:
    """For every stream pixel, how many network-input pixels must have entered before it can exist
    (pure data dependencies, layers infinitely fast)."""
    from hlsgen.backends.dataflow_layers import last_input_pixel

    first = next(iter(by_name.values()))
    need: dict[str, np.ndarray] = {first.name: np.arange(1, first.pixels + 1)}
    for lay in layers:
        src = need[lay.inputs[0]]
        out = last_input_pixel(lay, by_name[lay.inputs[0]], by_name[lay.output])
        dep = src[out]
        for extra in lay.inputs[1:]:
            dep = np.maximum(dep, need[extra][np.minimum(np.arange(dep.size), need[extra].size - 1)])
        need[lay.output] = dep
    return need

"""The hardware layer kinds, one module per unit: what each kind lowers from, costs and waits for.

    mvu      conv, dwconv, gemm   hg_mvu      mvu.h, dwconv.h
    pool     maxpool, avgpool     hg_pool     pool.h
    eltwise  add, requant         hg_eltwise  eltwise.h
    lut      lut                  hg_lut      eltwise.h (lut_layer)
    reorder  reorder              hg_reorder  reorder.h
    convert  convert              hg_split, hg_join  dwc.h (inserted between folds, hw/stream_folds.py)
    channels concat, slice        hg_concat, hg_slice  channels.h (hg_*_beats: folded)
    resize   upsample             hg_upsample resize.h

Every module has OPS (the integer IR ops it lowers), KINDS, and `lower`, `cycles`, `options` (its
foldings) and `last_input_pixel` (its data dependencies, for hw/fifo.py); `MODULES` maps each Kind
to its module, and `lower_node` turns one IR node into its Layer in every folding it may take.
The resource model (hw/resources.py) and both backends dispatch on the same Kind.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from hlsgen.config.hw import HwConfig
from hlsgen.hw.layers import channels, convert, eltwise, lut, mvu, pool, reorder, resize
from hlsgen.hw.model import Kind, Layer, Stream, canonical_order
from hlsgen.ir import Graph, Node, Op
from hlsgen.ir.ops import ELEMENTWISE_INT_OPS
from hlsgen.support.names import Namer

UNITS: tuple[ModuleType, ...] = (mvu, pool, eltwise, lut, reorder, convert, channels, resize)
MODULES: dict[Kind, ModuleType] = {kind: m for m in UNITS for kind in m.KINDS}
LOWERING: dict[Op, ModuleType] = {op: m for m in UNITS for op in m.OPS}


def lower_node(graph: Graph, n: Node, ins: list[Stream], hw: HwConfig, namer: Namer) -> tuple[list[Layer], Stream]:
    """The layer for node `n` in every folding it may take (hlsgen/hw/fold.py picks one), and its output."""
    out = output_stream(graph, n, ins[0], namer)
    low = LOWERING[n.op].lower(graph, n, ins, out)
    layer = Layer(namer("layer_" + n.name), n.name, low.kind, tuple(s.name for s in ins), out.name, 1, 1,
                  low.params, low.arrays, 0, low.macs)
    forms = [layer.folded(pe, simd) for pe, simd in parallelism_options(layer, hw)]
    return [f.with_cycles(int(cycles(f, ins[0], out))) for f in forms], out


def reads_window_fold_major(layer: Layer, x: Stream) -> bool:
    """The unit takes its window one fold of every tap at a time (common.fold_major_window): a
    depthwise conv or a windowed max pool on pixels wider than WIDEST_BEAT."""
    return mvu.reads_fold_major(layer, x) or pool.reads_fold_major(layer, x)


def output_stream(graph: Graph, n: Node, src: Stream, namer: Namer) -> Stream:
    t = graph.tensor(n.outputs[0])
    assert t.qtype is not None
    bits, signed = t.qtype.int.bits, t.qtype.int.signed
    shape = t.shape[1:]
    if n.op in ELEMENTWISE_INT_OPS:  # same layout as the input
        return Stream(namer(t.name), t.name, src.pixels, src.channels, bits, signed, src.height, src.width, src.order)
    if len(shape) == 3:
        c, h, w = shape
        return Stream(namer(t.name), t.name, h * w, c, bits, signed, h, w, canonical_order(shape))
    size = int(np.prod(shape))
    return Stream(namer(t.name), t.name, 1, size, bits, signed, 1, 1, np.arange(size))


def parallelism_options(layer: Layer, hw: HwConfig) -> list[tuple[int, int]]:
    """Candidate (PE, SIMD) pairs of a layer, fewest multipliers first (its kind's `options`)."""
    return list(MODULES[layer.kind].options(layer, hw))


def cycles(layer: Layer, x: Stream, out: Stream) -> int:
    """Cycles per frame of a layer at its folding."""
    return int(MODULES[layer.kind].cycles(layer, x, out))


def last_input_pixel(layer: Layer, x: Stream, out: Stream) -> np.ndarray:
    """For each output pixel, the index of the last input pixel it depends on (raster order)."""
    return np.asarray(MODULES[layer.kind].last_input_pixel(layer, x, out))


def capped_defaults(layer: Layer, hw: HwConfig) -> list[tuple[str, int, int]]:
    """(key, asked, used) for each `hw.pe`/`hw.simd` default a matrix-vector layer caps at its channels."""
    return mvu.capped_defaults(layer, hw) if layer.kind in mvu.KINDS else []

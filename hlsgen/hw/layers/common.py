"""What the layer kinds share: reading a node's window and requant step, lane counts, dependencies.

Each hw/layers/ module lowers its IR ops to `Lowered` records; hw/layers/__init__.py makes Layers of
them in every folding they may take.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hlsgen.config.hw import HwConfig
from hlsgen.devices.families import Family
from hlsgen.errors import HlsgenError
from hlsgen.hw.convert import WIDEST_BEAT
from hlsgen.hw.cost import NONE, RequantShape, Resources, memory
from hlsgen.hw.model import Kind, Layer, Stream, canonical_order
from hlsgen.hw.params import LayerParams, Requant, Window
from hlsgen.ir import Graph, Node
from hlsgen.numerics import signed_bits_for


@dataclass(frozen=True)
class Lowered:
    """One IR node as a hardware layer, before its folding: kind, typed parameters, tables, MACs."""

    kind: Kind
    params: LayerParams
    arrays: dict[str, np.ndarray]
    macs: int = 0


# ---- reading the node ------------------------------------------------------------------------------
def window_of(graph: Graph, n: Node, x: Stream, out: Stream) -> Window:
    """The node's sliding window over its (canonical) input stream."""
    require_canonical(graph, n, x)
    kh, kw = tuple(n.attr("kernel") or graph.tensor(n.inputs[1]).shape[2:])
    sh, sw = n.attr("strides")
    t, left, b, r = n.attr("pads")
    dh, dw = n.attr("dilations") or (1, 1)
    return Window((kh, kw), (sh, sw), (t, left, b, r), (dh, dw), x.height, x.width, x.channels,
                  out.height, out.width, out.channels)


def requant_of(n: Node) -> Requant:
    return Requant(int(n.attr("zp")), int(n.attr("lo")), int(n.attr("hi")), n.attr("rounding"))


def int_arrays(n: Node, *keys: str) -> dict[str, np.ndarray]:
    """The node's integer attributes `keys` that are set, as int64 arrays."""
    return {k: np.asarray(n.attr(k), dtype=np.int64) for k in keys if n.attr(k) is not None}


def require_canonical(graph: Graph, node: Node, stream: Stream) -> None:
    shape = graph.tensor(stream.tensor).shape[1:]
    if stream.order.size != int(np.prod(shape)) or not np.array_equal(stream.order, canonical_order(shape)):
        raise HlsgenError(f"node {node.name}: its input {stream.tensor} arrives in a transposed layout; "
                          "hardware supports layout changes only at the input or before a Gemm")


# ---- folding -------------------------------------------------------------------------------------
FINE_FOLDS = 32  # lane counts for every fold count up to this many (non-divisors of the channels)


def lane_counts(n: int) -> list[int]:
    """Lane counts worth considering for n channels: every divisor of n (no padding lane), and for
    each fold count k <= FINE_FOLDS the fewest lanes that take n channels in k folds, ceil(n / k)
    (padding lanes in the last fold, but a rate between two divisors: 640 channels in 7 folds of 92
    where the divisors offer 8 folds of 80 or 5 of 128)."""
    fine = {math.ceil(n / k) for k in range(1, min(n, FINE_FOLDS) + 1)}
    return sorted(fine | {d for d in range(1, n + 1) if n % d == 0})


def check_override(node: str, key: str, value: int | None, channels: int, what: str) -> None:
    if value and value > channels:
        raise HlsgenError(f"hw.layers.{node}.{key}: {value} is more than the layer's {channels} {what} "
                          f"(at most {channels})")


def lane_options(layer: Layer, channels: int, hw: HwConfig) -> list[tuple[int, int]]:
    """A layer that folds `channels` over PE requant lanes (SIMD 1): only `hw.layers` sets its PE
    (hw.pe/simd are for matrix-vector layers); else every lane count."""
    over = hw.layers.get(layer.node)
    lanes = over.pe if over and over.pe else None
    check_override(layer.node, "pe", lanes, channels, "channels")
    return [(lanes, 1)] if lanes else [(d, 1) for d in lane_counts(channels)]


def one_form(layer: Layer, hw: HwConfig) -> list[tuple[int, int]]:
    """A layer with a single form: one pixel per step, no folding."""
    return [(1, 1)]


# ---- stream folds (hw/stream_folds.py) ----------------------------------------------------------------
def whole_pixel_out(layer: Layer, x: Stream, out: Stream) -> tuple[int, ...]:
    """The folds a unit can write, best first: here only whole pixels (one pixel per beat)."""
    return (out.channels,)


def whole_pixel_in(layer: Layer, index: int, s: Stream) -> tuple[int, ...]:
    """The folds a unit can read on input `index` (stream `s`): here only whole pixels."""
    return (s.channels,)


def widest_fold(x: Stream) -> int:
    """Channels a beat for a unit of one fixed fold: the whole pixel, or, where a whole pixel is wider
    than WIDEST_BEAT, as many channels as WIDEST_BEAT holds (the last beat of a pixel zero-padded)."""
    return min(x.channels, max(1, WIDEST_BEAT // x.bits))


def is_wide(x: Stream) -> bool:
    """A whole pixel of `x` is wider than WIDEST_BEAT: it cannot be one beat."""
    return x.channels * x.bits > WIDEST_BEAT


def lane_folds(channels: int, lanes: int) -> tuple[int, ...]:
    """A unit of `lanes` lanes over `channels` channels writes (or reads) a beat of its lanes per fold,
    or the whole pixel."""
    return (lanes, channels) if lanes < channels else (channels,)


# ---- dependencies (hw/fifo.py) -------------------------------------------------------------------------
def window_last_pixel(w: Window, out: Stream) -> np.ndarray:
    """For each output pixel of a sliding window, the index of the last input pixel it reads."""
    oh, ow = np.divmod(np.arange(out.pixels), w.out_w)
    (kh, kw), (sh, sw), (dh, dw) = w.kernel, w.strides, w.dilations
    r = np.clip(oh * sh - w.pads[0] + (kh - 1) * dh, 0, w.in_h - 1)
    c = np.clip(ow * sw - w.pads[1] + (kw - 1) * dw, 0, w.in_w - 1)
    return r * w.in_w + c


def whole_frame(layer: Layer, x: Stream, out: Stream) -> np.ndarray:
    """Every output waits for the whole input frame."""
    return np.full(out.pixels, x.pixels - 1)


def same_pixel(layer: Layer, x: Stream, out: Stream) -> np.ndarray:
    """Output pixel i needs input pixel i (elementwise)."""
    return np.arange(out.pixels)


# ---- resources (hw/resources.py) ------------------------------------------------------------------------
def window_rows(w: Window) -> int:
    """Image rows a sliding-window buffer holds: the window's span plus its stride (K + S rows)."""
    return int(w.dilations[0] * (w.kernel[0] - 1) + 1 + w.strides[0])


def window_buffer(rows: int, x: Stream, family: Family) -> Resources:
    """The line buffer of `rows` image rows of the input stream's beats (hg_window, sliding_window.h)."""
    return memory(rows * x.width * x.folds, x.data_bits, family)


def beat_window(w: Window, folds: int) -> Window:
    """The window over a stream of `folds` beats a pixel, as the generator sees it: an image `folds`
    times as wide whose window is `folds` times as wide, with strides and left/right padding in beats.
    Its windows are the same (out_h x out_w) and a tap's folds are consecutive beats; it needs
    dilation 1 along the width (or a kernel one column wide)."""
    if folds == 1:
        return w
    (kh, kw), (sh, sw), (dh, dw) = w.kernel, w.strides, w.dilations
    if dw != 1 and kw != 1:
        raise HlsgenError(f"a window dilated {dw} along the width reads whole pixels, not {folds} beats a pixel")
    t, left, b, r = w.pads
    return Window((kh, kw * folds), (sh, sw * folds), (t, left * folds, b, r * folds), (dh, 1), w.in_h,
                  w.in_w * folds, w.in_c, w.out_h, w.out_w, w.out_c)


def fold_major_window(w: Window, folds: int) -> Window:
    """The window over a stream of `folds` beats a pixel for a unit that takes one fold's taps at a
    time (a depthwise conv reading PE channels a beat): in beats, the pixel window dilated by `folds`
    along the width, emitted `folds` times per output pixel, the f-th time shifted by f beats (fold f
    of every tap: HLS TAP_FOLDS, hg_window REPEAT with REP_STEP 1). Same windows (out_h x out_w)."""
    (kh, kw), (sh, sw), (dh, dw) = w.kernel, w.strides, w.dilations
    t, left, b, r = w.pads
    return Window((kh, kw), (sh, sw * folds), (t, left * folds, b, r * folds), (dh, dw * folds), w.in_h,
                  w.in_w * folds, w.in_c, w.out_h, w.out_w, w.out_c)


def no_requant(layer: Layer, x: Stream) -> RequantShape | None:
    return None


def no_features(layer: Layer, x: Stream, out: Stream) -> dict[str, float]:
    return {}


def no_macs(layer: Layer, x: Stream, family: Family) -> int:
    return 0


def no_memories(layer: Layer, x: Stream, out: Stream, family: Family) -> Resources:
    return NONE


def array_mult_bits(layer: Layer, *keys: str) -> int:
    """Bits of the widest requant multiplier among the layer's tables `keys`."""
    a = layer.arrays
    return signed_bits_for(max((int(abs(v)) for k in keys if k in a for v in np.asarray(a[k]).reshape(-1)),
                               default=1))

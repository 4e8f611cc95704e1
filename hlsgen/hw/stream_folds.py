"""Stream folds: how many channels each stream carries per beat, and the converters between them.

Each unit kind (hw/layers/) tells the folds it can write (`out_folds`, best first; the whole pixel is
always among them) and read on each input (`in_folds`). A stream takes the first fold its producer can
write that every reader can read, so no converter is needed (a matrix-vector layer feeding an element-
wise one streams a beat of its requant units per fold, where a window generator behind it gets whole
pixels, assembled by the producer as before). Where no such fold exists, the stream carries whole
pixels; if a whole pixel is wider than WIDEST_BEAT bits, it carries the producer's first fold instead,
and every reader that cannot read it gets a converter (hw/layers/convert.py) in front of it, one per
(stream, fold) however many readers want that fold. An add reads both inputs at one fold. The network
input arrives and the outputs leave as whole pixels. Runs after the folding search, so every unit's
PE, SIMD and requant units are known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from hlsgen.hw.convert import WIDEST_BEAT, fold_change
from hlsgen.hw.layers import MODULES
from hlsgen.hw.layers.convert import converter
from hlsgen.hw.model import Layer, Stream
from hlsgen.support.names import Namer

Folded = tuple[tuple[Layer, ...], dict[str, Stream], Stream, tuple[Stream, ...]]  # layers, streams, input, outputs


def fold_streams(layers: tuple[Layer, ...], streams: Mapping[str, Stream], first: Stream,
                 outputs: tuple[Stream, ...], namer: Namer) -> Folded:
    """Layers with converters inserted, every stream in its format, the input and the outputs. `first`
    and `outputs` come in the format of their ports (hw/ports.py)."""
    folded = dict(streams)  # by name; a layout op's output keeps its source's name (hw/dataflow.relayout)
    folded[first.name] = _formatted(streams[first.name], first)
    producers = {lay.output: lay for lay in layers}
    for name in [lay.output for lay in layers]:
        lay = producers[name]
        can = MODULES[lay.kind].out_folds(lay, folded[lay.inputs[0]], streams[name])
        folded[name] = replace(streams[name], fold=_choose(can, _readers(name, layers, streams, outputs),
                                                          streams[name].bits))
    made: dict[tuple[str, int, int], Stream] = {}  # (stream, fold, pack) -> converted stream
    slowest = max((lay.cycles for lay in layers), default=0)  # a converter within it costs no throughput
    result: list[Layer] = []

    def convert(s: Stream, fold: int, pack: int) -> Stream:
        """`s` through the converters that take it to `fold` channels (or `pack` pixels) a beat."""
        for f, k in _path(s, fold, pack, slowest):
            if (s.name, f, k) not in made:
                out = s.refolded(namer(f"{s.name}_p{k}" if k > 1 else f"{s.name}_f{f}"), f, k)
                result.append(converter(namer(f"layer_convert_{out.name}"), s, out))
                folded[out.name] = made[(s.name, f, k)] = out
            s = made[(s.name, f, k)]
        return s

    for lay in layers:
        arriving = [folded[s] for s in lay.inputs]
        wanted = [_read_fold(s, MODULES[lay.kind].in_folds(lay, i, s)) for i, s in enumerate(arriving)]
        if len(set(wanted)) > 1 and getattr(MODULES[lay.kind], "INPUTS_ALIKE", False):  # an add: both whole
            wanted = [s.channels for s in arriving]
        ins = [convert(s, f, 1) for s, f in zip(arriving, wanted, strict=True)]
        result.append(replace(lay, inputs=tuple(s.name for s in ins)))
    outs = []
    for port in outputs:
        s = convert(folded[port.name], port.fold, port.pack)
        folded[s.name] = _formatted(s, port)  # the port's TDATA width (zero bits above the codes)
        outs.append(folded[s.name])
    return tuple(result), folded, first, tuple(outs)


def _read_fold(s: Stream, can_read: tuple[int, ...]) -> int:
    """The fold a reader takes `s` at, among those whose beats fit WIDEST_BEAT: as it arrives (port beats
    unpacked to whole pixels) if it can, else the first that one converter reaches, else the first."""
    fits = [f for f in can_read if f * s.bits <= WIDEST_BEAT] or list(can_read)
    at = s.channels if s.pack > 1 else s.fold
    if at in fits:
        return at
    return next((f for f in fits if f % at == 0 or at % f == 0), fits[0])


def _formatted(s: Stream, port: Stream) -> Stream:
    return replace(s, fold=port.fold, pack=port.pack, tdata=port.tdata)


def _path(s: Stream, fold: int, pack: int, slowest: int) -> list[tuple[int, int]]:
    """The formats (fold, pack) a stream goes through from `s` to (fold, pack), one converter each:
    port beats to whole pixels, a fold change (hw/convert.fold_change: A -> B directly where one
    divides the other, else through gcd(A, B), or lcm(A, B) where the gcd path would be slower than the
    slowest layer), whole pixels to port beats."""
    steps: list[tuple[int, int]] = []
    at = s.fold
    if s.pack > 1:
        steps.append((s.channels, 1))
    target = s.channels if pack > 1 else fold
    within = slowest // max(s.pixels, 1)  # cycles a pixel the slowest layer allows
    steps += [(step.out_bits // s.bits, 1) for step in fold_change(s.channels, s.bits, at, target, within)]
    if pack > 1:
        steps.append((s.channels, pack))
    return steps


def _readers(name: str, layers: tuple[Layer, ...], streams: Mapping[str, Stream],
             outputs: tuple[Stream, ...]) -> list[tuple[int, ...]]:
    """The folds each reader of stream `name` can take."""
    s = streams[name]
    can = [MODULES[lay.kind].in_folds(lay, i, s) for lay in layers for i, n in enumerate(lay.inputs) if n == name]
    return can + [(o.fold if o.pack == 1 else s.channels,) for o in outputs if o.name == name]  # a port's fold


def _choose(can_write: tuple[int, ...], readers: list[tuple[int, ...]], bits: int) -> int:
    """The first fold every reader takes (within WIDEST_BEAT), else whole pixels if they fit, else the
    producer's first."""
    common = [f for f in can_write if all(f in r for r in readers) and f * bits <= WIDEST_BEAT]
    if common:
        return common[0]
    whole = max(can_write)
    return can_write[0] if whole * bits > WIDEST_BEAT else whole

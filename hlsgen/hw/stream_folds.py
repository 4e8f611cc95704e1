"""Stream folds: how many channels each stream carries per beat, and the converters between them.

A unit states, through its kind's `stream_folds` hook (hw/layers/), the fold it reads on each input,
given the folds that arrive, and the fold it writes. A stream takes its producer's fold (the network
input: the fold of its port); where a reader wants another fold, a converter layer (hw/layers/
convert.py) is inserted in front of it, one per (stream, fold) however many readers want that fold.
The network outputs leave at the fold of their ports. Runs after the folding search, so every unit's
PE and SIMD are known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from hlsgen.hw.layers import MODULES
from hlsgen.hw.layers.convert import converter
from hlsgen.hw.model import Layer, Stream
from hlsgen.support.names import Namer


def fold_streams(layers: tuple[Layer, ...], streams: Mapping[str, Stream], first: Stream,
                 outputs: tuple[Stream, ...], namer: Namer,
                 ) -> tuple[tuple[Layer, ...], dict[str, Stream], Stream, tuple[Stream, ...]]:
    """Layers with converters inserted, every stream at its fold, the input and the outputs."""
    folded = dict(streams)  # by name; a layout op's output keeps its source's name (hw/dataflow.relayout)
    made: dict[tuple[str, int], Stream] = {}  # (stream, fold) -> converted stream
    result: list[Layer] = []

    def at_fold(s: Stream, fold: int, reader: str) -> Stream:
        if s.fold == fold:
            return s
        if (s.name, fold) not in made:
            out = s.refolded(fold, namer(f"{s.name}_f{fold}"))
            result.append(converter(namer(f"layer_convert_{s.name}_f{fold}"), reader, s, out))
            folded[out.name] = made[(s.name, fold)] = out
        return made[(s.name, fold)]

    for lay in layers:
        arriving = tuple(folded[s] for s in lay.inputs)
        in_folds, out_fold = MODULES[lay.kind].stream_folds(lay, arriving, streams[lay.output])
        ins = tuple(at_fold(s, f, lay.node) for s, f in zip(arriving, in_folds, strict=True))
        folded[lay.output] = replace(streams[lay.output], fold=out_fold)
        result.append(replace(lay, inputs=tuple(s.name for s in ins)))
    outs = tuple(at_fold(folded[o.name], o.fold, "") for o in outputs)
    return tuple(result), folded, first, outs

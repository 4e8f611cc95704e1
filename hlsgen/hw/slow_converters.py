"""Converter-aware folding: no data-width converter is the bottleneck where another folding avoids it.

The folding search (fold.py) costs every layer on its own; the converters the stream folds then need
(stream_folds.py) are not in it. Most cost nothing in throughput, but a fold change between two folds
that share no large factor goes through their gcd, one sub-beat a cycle (hw/convert.fold_change): a
conv of 544 channels at PE 37 into a reader of 512 channels a beat converts through 1 channel, 544
cycles a pixel where the conv takes 15. So after each search, every chain of converters in front of a
reader that takes more cycles a frame than the design's T (`Folding.cycles`) is fixed on one side:
the producer keeps only its foldings whose chain into this reader (at the reader's current folding)
fits T, else the reader keeps only those whose chain from the producer fits; the search runs again
on what is left, until no chain is slow or none can be fixed (then the slow chain stays, and the
report's bottleneck names it). Each round removes foldings, so the loop ends; a design with no slow
converter is searched once, as before.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from hlsgen.hw.fold import Folding
from hlsgen.hw.model import Kind, Layer
from hlsgen.hw.stream_folds import Folded
from hlsgen.support.names import Namer

FoldStreams = Callable[[tuple[Layer, ...], Namer], Folded]  # stream_folds.fold_streams of the picked layers
Search = Callable[[list[list[Layer]]], Folding]


@dataclass(frozen=True)
class Chain:
    """The converters in front of input `index` of layer `reader`: from stream `source` (the output
    of layer `producer`, or "" for the network input), `cycles` a frame (their slowest)."""

    source: str
    producer: str
    reader: str
    cycles: int


def converter_chains(layers: tuple[Layer, ...]) -> list[Chain]:
    """Every chain of converters that ends at a layer's input (a port's converters are not a choice)."""
    by_output = {lay.output: lay for lay in layers}
    chains = []
    for lay in layers:
        if lay.kind == Kind.CONVERT:
            continue
        for name in lay.inputs:
            cycles, at = 0, by_output.get(name)
            while at is not None and at.kind == Kind.CONVERT:
                cycles, name = max(cycles, at.cycles), at.inputs[0]
                at = by_output.get(name)
            if cycles:
                chains.append(Chain(name, at.name if at else "", lay.name, cycles))
    return chains


def fold_without_slow_converters(options: list[list[Layer]], search: Search, fold_streams: FoldStreams,
                                 namer: Namer) -> tuple[Folding, Folded]:
    """The folding (over what is left of `options`) and its layers with converters, streams and ports."""
    kept = [list(forms) for forms in options]
    fixed: set[tuple[str, str]] = set()  # chains no folding speeds up
    while True:
        folding = search(kept)
        picked = tuple(forms[i] for forms, i in zip(kept, folding.picks, strict=True))
        chains = converter_chains(fold_streams(picked, copy.deepcopy(namer))[0])
        slow = [c for c in chains if c.cycles > folding.cycles and (c.source, c.reader) not in fixed]
        if not slow:
            return folding, fold_streams(picked, namer)
        for chain in slow:
            if not _keep_fast(kept, picked, chain, folding.cycles, fold_streams, namer):
                fixed.add((chain.source, chain.reader))


def _keep_fast(kept: list[list[Layer]], picked: tuple[Layer, ...], chain: Chain, limit: int,
               fold_streams: FoldStreams, namer: Namer) -> bool:
    """Narrow the producer's foldings (else the reader's) to those whose chain is no slower than
    `limit` or than the folding itself, else to those of the fastest chain if it beats this one;
    False if neither side has such foldings."""
    index = {lay.name: k for k, lay in enumerate(picked)}
    for side in (chain.producer, chain.reader):
        if side not in index:  # the network input
            continue
        k = index[side]
        cycles = [_chain_cycles(picked, k, form, chain, fold_streams, namer) for form in kept[k]]
        fast = [form for form, c in zip(kept[k], cycles, strict=True) if c <= max(limit, form.cycles)]
        if not fast and min(cycles) < chain.cycles:
            fast = [form for form, c in zip(kept[k], cycles, strict=True) if c == min(cycles)]
        if fast and len(fast) < len(kept[k]):
            kept[k] = fast
            return True
    return False


def _chain_cycles(picked: tuple[Layer, ...], k: int, form: Layer, chain: Chain, fold_streams: FoldStreams,
                  namer: Namer) -> int:
    """The cycles of `chain`'s converters with layer k in `form` (0: none needed)."""
    trial = picked[:k] + (form,) + picked[k + 1:]
    layers = fold_streams(trial, copy.deepcopy(namer))[0]
    return max((c.cycles for c in converter_chains(layers) if (c.source, c.reader) == (chain.source, chain.reader)),
               default=0)

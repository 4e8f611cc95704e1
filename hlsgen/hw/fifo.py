"""FIFO depths of the dataflow's stream edges, from data dependencies (see `fifo_depths`) and, for a
join's skip input, from the steady-state timing of the two branches (`timed_skip_depth`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from hlsgen.hw.layers import MODULES, last_input_pixel
from hlsgen.hw.model import Layer, Stream

FIFO_MARGIN = 2  # full throughput: a push and a pop in the same cycle
SLICE_DEPTH = 1  # a register slice (hg_fifo DEPTH 1): one beat every other cycle, no memory
STAGE_LATENCY = 4  # cycles a beat spends in one layer of a branch beyond its data dependencies (FIFO, registers)
UNIT_LATENCY = 21  # cycles a unit's pipeline adds to a pixel in the timed lead model (hg_mvu's, the deepest, at
# SIMD <= 2; a kind's `extra_latency` adds hg_mvu's adder-tree stages). 12 before hg_requant went from 2 to 5
# stages, 15 before hg_mvu registered each multiplier's operands twice and its product once more (+3) and hg_requant
# took 6 stages (+1), then 7 (+1), and hg_window read its line buffer in two stages (+1)


def fifo_depths(layers: list[Layer], by_name: Mapping[str, Stream]) -> dict[tuple[str, str], int]:
    """Depth in beats of every stream edge: its `margin`, plus for each input of a join (residual conv,
    add, concat; `join_depths` for a concat of 3+ inputs) the lead in pixels it can build up over the
    other input (conservative: ties in the dependency model count), times the stream's beats per pixel.
    A residual conv's output i waits for its main-input *window* (up to input pixel window[i]),
    which its own line buffer holds; only what arrives beyond that needs the FIFO."""

    need = input_needed(layers, by_name)
    producers = {lay.output: lay for lay in layers}
    depths: dict[tuple[str, str], int] = {}
    for lay in layers:
        for s in lay.inputs:
            depths[(s, lay.name)] = margin(by_name[s], producers.get(s), lay)
        if len(lay.inputs) == 2:
            main, skip = lay.inputs
            window = last_input_pixel(lay, by_name[main], by_name[lay.output])
            main_ready = need[main][window]  # output pixel i can start once this much input arrived
            # the leads are in pixels; a folded stream holds its folds' beats of each
            main_t, skip_t = timed_leads(lay, layers, by_name) if np.array_equal(window, np.arange(window.size)) \
                else (0, 0)  # an elementwise join; a residual conv's line buffer holds its lead
            skip_d = FIFO_MARGIN + max(skip_depth(main_ready, need[skip]), skip_t) * by_name[skip].folds
            produced = np.searchsorted(np.sort(need[main]), need[skip], side="right")
            main_lead = max(int(max(0, np.max(produced - (window + 1)))), main_t)
            main_d = FIFO_MARGIN + main_lead * by_name[main].folds
            # conv(x) + x reads one stream twice: its (stream, layer) depth must serve both edges
            depths[(skip, lay.name)] = max(skip_d, main_d) if skip == main else skip_d
            depths[(main, lay.name)] = max(skip_d, main_d) if skip == main else main_d
        elif len(lay.inputs) > 2:
            for (s, _), d in join_depths(lay, need, by_name).items():
                depths[(s, lay.name)] = max(depths[(s, lay.name)], d) if (s, lay.name) in depths else d
        if getattr(MODULES[lay.kind], "reads_inputs_in_turn", lambda _: False)(lay):
            for s in lay.inputs:  # while the join reads the other inputs' beats of a pixel
                depths[(s, lay.name)] += by_name[s].folds
    return _with_latency_slack(layers, by_name, depths)


def _with_latency_slack(layers: list[Layer], by_name: Mapping[str, Stream],
                        depths: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """The inputs of a join whose unit asks for it (`JOIN_LATENCY_SLACK`: a concat) also hold what
    arrives while the other inputs' branches are still in their pipelines: the branches' difference in
    layers times STAGE_LATENCY cycles, at the stream's rate in the network's period (beats a cycle).
    The data-dependency leads above treat layers as infinitely fast, which a join of branches running
    at one pixel a cycle would feel (concat(x, slice(x)): 60 cycles a frame instead of 36 without it).
    The add keeps its depths (its designs unchanged)."""
    stages = pipeline_stages(layers, by_name)
    period = max([lay.cycles for lay in layers] + [1])
    for lay in layers:
        if len(lay.inputs) < 2 or not getattr(MODULES[lay.kind], "JOIN_LATENCY_SLACK", False):
            continue
        longest = max(stages[s] for s in lay.inputs)
        for s in lay.inputs:
            lag = (longest - stages[s]) * STAGE_LATENCY * by_name[s].beats / period
            depths[(s, lay.name)] += int(np.ceil(lag))
    return depths


def pipeline_stages(layers: list[Layer], by_name: Mapping[str, Stream]) -> dict[str, int]:
    """For every stream, the layers between the network input and it along its longest path."""
    stages = dict.fromkeys(by_name, 0)
    for lay in layers:
        stages[lay.output] = 1 + max(stages[s] for s in lay.inputs)
    return stages


def join_depths(lay: Layer, need: Mapping[str, np.ndarray], by_name: Mapping[str, Stream]
                ) -> dict[tuple[str, int], int]:
    """A join of 3+ inputs that needs pixel i of each for its output pixel i (a concat): output i can
    start once every input's pixel i exists; input k must hold the pixels its branch has produced by
    then that the join has not taken yet (skip_depth against that start), times its beats a pixel."""
    ready = np.max([need[s] for s in lay.inputs], axis=0)  # its inputs have the same pixels
    return {(s, k): FIFO_MARGIN + skip_depth(ready, need[s]) * by_name[s].folds for k, s in enumerate(lay.inputs)}


def output_depth(stream: Stream, layers: list[Layer]) -> int:
    """Depth of the FIFO in front of the network output port that carries `stream`."""
    return margin(stream, next((lay for lay in layers if lay.output == stream.name), None), None)


def margin(stream: Stream, producer: Layer | None, consumer: Layer | None) -> int:
    """The depth an edge needs for rate alone. A stream of one beat per frame (a dense vector) between
    units that each take two cycles or more per frame never sees two beats in consecutive cycles, so
    a register slice carries it at full rate; every other edge gets FIFO_MARGIN beats. `producer` is
    None for the network input (one beat per frame arrives at most every frame period), `consumer`
    None for the network output (the sink may take a beat every cycle)."""
    slow_ends = all(end is None or end.cycles >= 2 for end in (producer, consumer))
    if stream.beats == 1 and slow_ends and (producer is not None or consumer is not None):
        return SLICE_DEPTH
    return FIFO_MARGIN


def skip_depth(main_need: np.ndarray, skip_need: np.ndarray) -> int:
    """Beats the skip input must hold: when join output i waits for main pixel i (available once the
    network input reached main_need[i]), every skip pixel available by then is produced; the join has
    consumed i of them. Depth = max_i #{j: skip_need[j] <= main_need[i]} - i."""
    produced = np.searchsorted(np.sort(skip_need), main_need, side="right")
    return int(max(0, np.max(produced - np.arange(main_need.size))))


def timed_leads(join: Layer, layers: list[Layer], by_name: Mapping[str, Stream]) -> tuple[int, int]:
    """Pixels each input (main, skip) of a join must hold in the steady state, where the data-dependency
    count (layers infinitely fast) is not enough: a branch through slow layers on a smaller image (a
    U-Net's pool -> conv -> upsample) lags the other by more than its dependencies while the other
    streams on, into the next frame. Pixels are ready at `ready_times`, frame after frame one period
    apart; the join takes its output i's inputs once both are ready, no faster than its own rate;
    an input holds the pixels ready and not yet taken."""
    main, skip = join.inputs
    period = max([next(iter(by_name.values())).beats] + [lay.cycles for lay in layers])
    t = ready_times(layers, by_name, period)
    out = by_name[join.output]
    window = last_input_pixel(join, by_name[main], out)
    taken = _paced(np.maximum(t[main][window], t[skip][:window.size]), join.cycles / out.pixels)
    return _held(t[main], taken, window + 1, period), _held(t[skip], taken, np.arange(1, taken.size + 1), period)


def _held(ready: np.ndarray, taken: np.ndarray, consumed: np.ndarray, period: int) -> int:
    """Most pixels of a stream ready (this frame's and the next ones', a period apart) and not yet
    consumed, at the times `taken` when its reader has consumed `consumed` of them."""
    frames = 1 + int(max(0.0, float(taken[-1] - ready[0])) // period) if period else 1
    every = np.sort(np.concatenate([ready + k * period for k in range(frames + 1)]))
    return int(max(0, np.max(np.searchsorted(every, taken, side="right") - consumed)))


def _paced(dep: np.ndarray, step: float) -> np.ndarray:
    """Times of a unit emitting item i at dep[i] at the earliest, `step` cycles after item i - 1:
    t[i] = max(dep[i], t[i-1] + step) = step·i + max_{j<=i}(dep[j] − step·j)."""
    k = np.arange(dep.size) * step
    return np.maximum.accumulate(dep - k) + k


def ready_times(layers: list[Layer], by_name: Mapping[str, Stream], period: int) -> dict[str, np.ndarray]:
    """For every stream pixel, the cycle it is ready in the steady state: the network input arrives
    at the network's rate (period / pixels a pixel); each layer emits its pixels at its own rate
    (cycles / output pixels) at the fastest, each one a step and its pipeline's `unit_latency` after the
    input pixels it depends on."""
    first = next(iter(by_name.values()))
    t: dict[str, np.ndarray] = {first.name: np.arange(1, first.pixels + 1) * (period / first.pixels)}
    for lay in layers:
        out = by_name[lay.output]
        dep = t[lay.inputs[0]][last_input_pixel(lay, by_name[lay.inputs[0]], out)]
        for extra in lay.inputs[1:]:
            dep = np.maximum(dep, t[extra][np.minimum(np.arange(dep.size), t[extra].size - 1)])
        step = lay.cycles / out.pixels
        t[lay.output] = _paced(dep + step + unit_latency(lay), step)
    return t


def unit_latency(lay: Layer) -> int:
    """Cycles the layer's unit adds to a pixel: UNIT_LATENCY, plus its kind's `extra_latency` if any
    (hg_mvu's adder tree grows with SIMD)."""
    extra = getattr(MODULES[lay.kind], "extra_latency", None)
    return UNIT_LATENCY + (int(extra(lay)) if extra is not None else 0)


def input_needed(layers: list[Layer], by_name: Mapping[str, Stream]) -> dict[str, np.ndarray]:
    """For every stream pixel, how many network-input pixels must have entered before it can exist
    (pure data dependencies, layers infinitely fast)."""

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

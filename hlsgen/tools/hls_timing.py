"""A process-level timed model of the generated HLS dataflow (no Vitis needed): cycles per frame.

Every kernel call of the generated top function (hlsgen.backends.hls.hls_context: the same calls,
streams and FIFO depths that top.cpp gets) becomes a process with the schedule of its kernel's
pipelined loop, as written in templates/hls/kernels/*.h:

    iters      trip count of the II=1 loop per frame (one call of the top function)
    ops        for each iteration that touches a stream: the streams it reads and writes
    depth      pipeline depth: cycles to drain the loop at the end of a frame (a new call
               starts only after the previous call's pipeline is empty); 0 models `rewind`

Semantics (Vitis's blocking hls::stream in an II=1 pipeline): iteration i issues one cycle after
iteration i-1 at the earliest; it issues only when every stream it reads holds a beat written in an
earlier cycle and every stream it writes has a free slot (FIFO of the declared depth, a slot freed
by a read in an earlier cycle); otherwise the whole loop stalls (in-order, no skipping). The network
input is an AXI-Stream source offering a beat every cycle; outputs are always ready.

The simulation is event driven (only iterations with stream accesses are events), so a ResNet-8
frame (~74k cycles) runs in about a second. `time_network` returns, per frame, the cycle its last
output beat left, and per process its iterations and the interval between its frame ends.
Not modelled: II > 1 from a synthesis failure, clock frequency, AXI side channels; the
line-buffer and ROM reads are assumed single-cycle (as their BIND_STORAGE pragmas ask).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlsgen.backends.hls import GEOMETRY, hls_context
from hlsgen.backends.hls_layers import WindowCounters, window_schedule
from hlsgen.config.hw import HwConfig
from hlsgen.hw.model import Dataflow

MVU_KERNELS = ("conv_mvu", "conv_mvu_residual", "dense", "dwconv_mvu", "dwconv_mvu_residual", "mvu_shared",
               "mvu_shared_residual")
DEPTH = {"mvu": 12, "window": 3, "pool": 3, "requant": 8, "fork": 1, "reorder": 3, "lut": 2, "convert": 1,
         "channels": 1, "upsample": 2}


@dataclass
class Process:
    name: str  # kernel call, e.g. conv_mvu<cfg_layer_conv_2_node>
    layer: str  # the layer it belongs to ("" for forks and ports)
    iters: int
    ops: list[tuple[int, tuple[str, ...], tuple[str, ...]]]  # (iteration, reads, writes), sorted
    depth: int = 0
    window: dict[str, int] | None = None  # a sliding-window generator: its geometry (dynamic schedule)
    ports: tuple[str, str] = ("", "")  # the generator's input and window streams
    # simulation state
    frame: int = 0
    k: int = 0
    frame_start: int = 0
    frame_ends: list[int] = field(default_factory=list)
    stalls: dict[str, int] = field(default_factory=dict)  # cycles stalled per (stream, full/empty)
    due: int = 0  # the cycle the current iteration was due
    blocked_on: str = ""


@dataclass
class Fifo:
    depth: int
    writes: list[int] = field(default_factory=list)  # cycle of every write, in order
    reads: list[int] = field(default_factory=list)
    waiters: set[int] = field(default_factory=set)

    def can_read(self, t: int) -> bool:
        return bisect_left(self.writes, t) > len(self.reads)

    def can_write(self, t: int) -> bool:
        return len(self.writes) - bisect_left(self.reads, t) < self.depth

    def last_event(self) -> int:
        return max(self.writes[-1] if self.writes else -1, self.reads[-1] if self.reads else -1)


@dataclass
class Timing:
    frame_done: list[int]  # cycle at which each frame's last output beat was written
    processes: list[Process]
    cycles_per_frame: int  # steady state: the interval between the last two frames
    model_cycles: int  # Dataflow.cycles_per_frame

    def per_layer(self) -> dict[str, int]:
        """Each layer's slowest process: its loop's cycles per frame (iterations + pipeline drain)."""
        out: dict[str, int] = {}
        for p in self.processes:
            if p.layer:
                out[p.layer] = max(out.get(p.layer, 0), p.iters + p.depth)
        return out


def _every(n: int, period: int, phase: int) -> np.ndarray:
    return np.arange(phase, n, period)


def _ops(iters: int, accesses: list[tuple[str, str, np.ndarray]]) -> list[tuple[int, tuple[str, ...], tuple[str, ...]]]:
    """accesses: (kind 'r'/'w', stream, iteration indices) -> the sorted op list."""
    at: dict[int, tuple[list[str], list[str]]] = {}
    for kind, var, idx in accesses:
        for i in idx.tolist():
            entry = at.setdefault(i, ([], []))
            entry[0 if kind == "r" else 1].append(var)
    return [(i, tuple(r), tuple(w)) for i, (r, w) in sorted(at.items())]


def _consts(code: Any) -> dict[str, int]:
    return {c["name"]: c["value"] for c in code.consts}


def kernel_processes(func: str, k: dict[str, int], args: list[str], layer: str) -> list[Process]:
    """The processes of one kernel call: its loop's trip count and stream accesses per iteration,
    exactly as the kernel's loop counters decide them."""
    if func == "fork2":
        n = int(k["BEATS"])
        idx = np.arange(n)
        return [Process(f"fork2({args[0]})", "", n, _ops(n, [("r", args[0], idx), ("w", args[1], idx),
                                                              ("w", args[2], idx)]), DEPTH["fork"])]
    if func == "axis_last":  # hw.tlast: copies each output beat and sets TLAST, II=1
        n = int(k["BEATS"])
        idx = np.arange(n)
        return [Process(f"axis_last({args[1]})", "", n, _ops(n, [("r", args[0], idx), ("w", args[1], idx)]),
                        DEPTH["fork"])]
    if func == "sliding_window":
        geo = {g: k[g] for g in GEOMETRY}
        reads, _ = window_schedule(geo)
        return [Process(f"sliding_window({layer})", layer, reads.size, [(0, (), ())], DEPTH["window"], geo,
                        (args[0], args[1]))]
    if func in MVU_KERNELS:
        nf, taps, sf = k["FOLD_O"], k["TAPS"], k["FOLD_I"]
        per_px = nf * taps * sf
        n = k["OUT_PIXELS"] * per_px
        i = np.arange(n)
        within = i % per_px
        folded_in = k["IN_FOLD"] < k["CIN"]  # one beat per step of the first output fold
        reads = np.flatnonzero(within < taps * sf)[::1 if folded_in else sf]
        if folded_in and k["GROUPS"] == k["COUT"] and k["CIN_G"] == 1:
            reads = i  # a depthwise conv reading PE channels a beat: one beat every step (fold-major window)
        acc = [("r", args[0], reads)]
        if func.endswith("_residual"):  # a skip beat on the first step of every SKIP_FOLDS-th fold
            fold_of = within // (taps * sf)
            acc.append(("r", args[1], np.flatnonzero((within % (taps * sf) == 0) & (fold_of % k["SKIP_FOLDS"] == 0))))
        if not func.startswith("mvu_shared"):
            beat = taps * sf * k["OUT_GROUP"]  # steps per output beat
            acc.append(("w", args[-1], _every(n, beat, beat - 1)))
            return [Process(f"{func}({layer})", layer, n, _ops(n, acc), DEPTH["mvu"])]
        # time-shared requant units: a hand-off beat per fold, PE/RQ requant cycles per fold
        hand, qf, rows = f"{layer}.hand", k["PE"] // k["RQ"], k["RQ_FOLD"]
        acc.append(("w", hand, _every(n, taps * sf, taps * sf - 1)))
        m = k["OUT_PIXELS"] * rows
        return [Process(f"mvu_core({layer})", layer, n, _ops(n, acc), DEPTH["mvu"]),
                Process(f"mvu_requant({layer})", layer, m,
                        _ops(m, [("r", hand, _every(m, qf, 0)),
                                 ("w", args[-1], _every(m, k["OUT_GROUP"], k["OUT_GROUP"] - 1))]),
                        DEPTH["requant"])]
    if func in ("maxpool", "global_maxpool"):
        taps, px = (k["TAPS"], k["OUT_PIXELS"] * k["TAP_FOLDS"]) if func == "maxpool" else (k["IN_PIXELS"], 1)
        n = taps * px
        return [Process(f"{func}({layer})", layer, n, _ops(n, [("r", args[0], np.arange(n)),
                                                               ("w", args[1], _every(n, taps, taps - 1))]),
                        DEPTH["pool"])]
    if func in ("avgpool", "global_avgpool"):
        taps, px = (k["TAPS"], k["OUT_PIXELS"] * k["TAP_FOLDS"]) if func == "avgpool" else (k["IN_PIXELS"], 1)
        n, fold = taps * px, k["FOLD"]
        sums = f"{layer}.sums"
        return [Process(f"window_sums({layer})", layer, n,
                        _ops(n, [("r", args[0], np.arange(n)), ("w", sums, _every(n, taps, taps - 1))]), DEPTH["pool"]),
                Process(f"requant_lanes({layer})", layer, px * fold,
                        _ops(px * fold, [("r", sums, _every(px * fold, fold, 0)),
                                         ("w", args[1], _every(px * fold, k["OUT_GROUP"], k["OUT_GROUP"] - 1))]),
                        DEPTH["requant"])]
    if func in ("global_avgpool_folded", "global_maxpool_folded"):  # a beat a cycle; the last pixel's
        fold = k["FOLD"] if func == "global_avgpool_folded" else k["FOLDS"]  # folds leave as they are read
        n, go = k["IN_PIXELS"] * fold, k.get("OUT_GROUP", 1)
        last = np.arange(n - fold, n)
        return [Process(f"{func}({layer})", layer, n, _ops(n, [("r", args[0], np.arange(n)),
                                                               ("w", args[1], last[go - 1::go])]), DEPTH["pool"])]
    if func in ("add_layer", "requant_layer"):
        n, gi, go = k["PIXELS"] * k["FOLD"], k["IN_GROUP"], k["OUT_GROUP"]  # folds per input / output beat
        ins = args[:2] if func == "add_layer" else args[:1]
        acc = [("r", s, _every(n, gi, 0)) for s in ins] + [("w", args[len(ins)], _every(n, go, go - 1))]
        return [Process(f"{func}({layer})", layer, n, _ops(n, acc), DEPTH["requant"])]
    if func == "lut_layer":
        n = k["PIXELS"] * k["FOLDS"]  # a beat a cycle, FOLDS beats a pixel
        every = np.arange(n)
        ops = _ops(n, [("r", args[0], every), ("w", args[1], every)])
        return [Process(f"lut({layer})", layer, n, ops, DEPTH["lut"])]
    if func == "concat_layer":  # channels.h: a beat of every input and one output beat per pixel
        n, every = k["PIXELS"], np.arange(k["PIXELS"])
        ops = _ops(n, [("r", s, every) for s in args[:k["INPUTS"]]] + [("w", args[k["INPUTS"]], every)])
        return [Process(f"concat({layer})", layer, n, ops, DEPTH["channels"])]
    if func == "slice_layer":
        n, every = k["PIXELS"], np.arange(k["PIXELS"])
        return [Process(f"slice({layer})", layer, n, _ops(n, [("r", args[0], every), ("w", args[1], every)]),
                        DEPTH["channels"])]
    if func == "concat_folded":  # a beat a cycle, input k's beats of a pixel in turn
        n, j = k["PIXELS"] * k["BEATS"], np.arange(k["PIXELS"] * k["BEATS"]) % k["BEATS"]
        bounds = [0] + [k[f"END_{i}"] for i in range(k["INPUTS"] - 1)] + [k["BEATS"]]
        ops = _ops(n, [("r", s, np.flatnonzero((j >= lo) & (j < hi)))
                       for s, lo, hi in zip(args[:k["INPUTS"]], bounds[:-1], bounds[1:], strict=True)]
                   + [("w", args[k["INPUTS"]], np.arange(n))])
        return [Process(f"concat({layer})", layer, n, ops, DEPTH["channels"])]
    if func == "slice_folded":  # every beat read, those of [FIRST, LAST] written
        n, j = k["PIXELS"] * k["IN_BEATS"], np.arange(k["PIXELS"] * k["IN_BEATS"]) % k["IN_BEATS"]
        kept = np.flatnonzero((j >= k["FIRST"]) & (j <= k["LAST"]))
        return [Process(f"slice({layer})", layer, n, _ops(n, [("r", args[0], np.arange(n)), ("w", args[1], kept)]),
                        DEPTH["channels"])]
    if func == "reorder_layer":
        n_in, n_el, oc, pc = k["IN_PIXELS"], k["ELEMENTS"], k["OUT_C"], k["OUT_PC"]
        frame = f"{layer}.frame"  # the ping-pong buffer: a token a frame, the bank being read not counted
        within = np.arange(n_el) % pc  # a beat ends at its last lane or its pixel's last code
        writes = np.flatnonzero((within % oc == oc - 1) | (within == pc - 1))
        return [Process(f"reorder_write({layer})", layer, n_in,
                        _ops(n_in, [("r", args[0], np.arange(n_in)), ("w", frame, np.array([n_in - 1]))]),
                        DEPTH["reorder"]),
                Process(f"reorder_read({layer})", layer, n_el,
                        _ops(n_el, [("r", frame, np.array([0])), ("w", args[1], writes)]), DEPTH["reorder"])]
    if func == "upsample":  # resize.h: one output beat an iteration; a pixel's beats read at its first copy across
        folds, fw = k["FOLDS"], k["FW"]
        n, row = k["IN_H"] * k["FH"] * k["IN_W"] * fw * folds, k["IN_W"] * fw * folds
        every = np.arange(n)
        reads = every[(every % (fw * folds) < folds) & ((every // row) % k["FH"] == 0)]
        return [Process(f"upsample({layer})", layer, n, _ops(n, [("r", args[0], reads), ("w", args[1], every)]),
                        DEPTH["upsample"])]
    if func in ("split", "join"):  # dwc.h: one sub-beat per iteration, S of a group, GROUPS groups
        w, sub, kk, groups = (k[n] for n in ("W", "S", "K", "GROUPS"))
        n = sub * groups
        wide = np.flatnonzero((np.arange(n) % sub) % kk == 0)  # the first sub-beat of each wide beat
        ends = np.flatnonzero(((np.arange(n) % sub) % kk == kk - 1) | (np.arange(n) % sub == sub - 1))
        every = np.arange(n)
        moves = [("r", args[0], wide), ("w", args[1], every)] if func == "split" else \
            [("r", args[0], every), ("w", args[1], ends)]
        return [Process(f"{func}<{w},{sub},{kk}>({layer})", layer, n, _ops(n, moves), DEPTH["convert"])]
    raise ValueError(f"no timing model for kernel {func}")


def network_processes(df: Dataflow, hw: HwConfig) -> tuple[list[Process], dict[str, Fifo]]:
    """Processes and FIFOs of the generated top function (plus the input source and output sinks)."""
    ctx = hls_context(df, hw)
    fifos = {s["var"]: Fifo(int(s["depth"])) for s in ctx["streams"]}
    fifos["in"] = Fifo(2)  # the AXI-Stream input: a register slice, one beat per cycle
    for o in ctx["outputs"]:
        fifos[o["port"]] = Fifo(2)
    consts = {code.cfg: (code.name, _consts(code)) for code in ctx["layers"]}
    procs: list[Process] = []
    n_in = ctx["input"]["beats"]
    procs.append(Process("source(in)", "", n_in, _ops(n_in, [("w", "in", np.arange(n_in))])))
    for call in ctx["calls"]:
        if call["func"] in ("fork2", "axis_last"):
            procs += kernel_processes(call["func"], {"BEATS": int(call["targs"][0])}, call["args"], "")
            continue
        if call["func"] in ("split", "join"):
            w, sub, kk, groups = (int(v) for v in call["targs"][:4])
            procs += kernel_processes(call["func"], {"W": w, "S": sub, "K": kk, "GROUPS": groups}, call["args"],
                                      call["layer"])
            continue
        layer, k = consts[call["targs"][0]]
        args = [a for a in call["args"] if a in fifos]
        if call["func"] in ("avgpool", "global_avgpool"):
            fifos[f"{layer}.sums"] = Fifo(2)
        if call["func"].startswith("mvu_shared"):
            fifos[f"{layer}.hand"] = Fifo(2)
        if call["func"] == "reorder_layer":
            fifos[f"{layer}.frame"] = Fifo(1)
        procs += kernel_processes(call["func"], k, args, layer)
    for o in ctx["outputs"]:
        n = o["beats"]
        procs.append(Process(f"sink({o['port']})", "", n, _ops(n, [("r", o["port"], np.arange(n))])))
    return procs, fifos


def simulate(procs: list[Process], fifos: dict[str, Fifo], frames: int) -> None:
    """Run every process for `frames` frames (event driven); fills Process.frame_ends."""
    heap = [(p.ops[0][0], pid) for pid, p in enumerate(procs)]
    heapq.heapify(heap)
    counters = {pid: WindowCounters(p.window) for pid, p in enumerate(procs) if p.window}
    while heap:
        t, pid = heapq.heappop(heap)
        p = procs[pid]
        if p.window:
            _window_step(t, pid, p, counters, fifos, heap, frames)
            continue
        it, reads, writes = p.ops[p.k]
        names = [f"{s} empty" for s in reads if not fifos[s].can_read(t)] + \
                [f"{s} full" for s in writes if not fifos[s].can_write(t)]
        blocked = [fifos[n.rsplit(" ", 1)[0]] for n in names]
        if blocked:
            if not p.blocked_on:
                p.blocked_on, p.due = names[0], t
            if any(f.last_event() >= t for f in blocked):
                heapq.heappush(heap, (t + 1, pid))  # the other side acted this cycle: retry next cycle
            else:
                for f in blocked:
                    f.waiters.add(pid)
            continue
        if p.blocked_on:
            p.stalls[p.blocked_on] = p.stalls.get(p.blocked_on, 0) + t - p.due
            p.blocked_on = ""
        for s in reads:
            fifos[s].reads.append(t)
        for s in writes:
            fifos[s].writes.append(t)
        for s in reads + writes:
            for w in fifos[s].waiters:
                heapq.heappush(heap, (t + 1, w))
            fifos[s].waiters.clear()
        p.k += 1
        if p.k < len(p.ops):
            heapq.heappush(heap, (t + p.ops[p.k][0] - it, pid))
            continue
        end = t + (p.iters - it) + p.depth  # the loop's remaining iterations, then the pipeline drains
        p.frame_ends.append(end)
        p.frame += 1
        p.k = 0
        if p.frame < frames:
            heapq.heappush(heap, (end + p.ops[0][0], pid))
    stuck = [p for p in procs if p.frame < frames]
    if stuck:
        raise RuntimeError("timed model deadlocked: " + "; ".join(_state(p, fifos) for p in stuck[:8]))


def _window_step(t: int, pid: int, p: Process, counters: dict[int, WindowCounters], fifos: dict[str, Fifo],
                 heap: list[tuple[int, int]], frames: int) -> None:
    """One cycle of a sliding-window generator: read if a pixel waits and a row is free, emit if the
    window is buffered and the window FIFO has room (sliding_window.h, the same counters)."""
    w = counters[pid]
    src, dst = fifos[p.ports[0]], fifos[p.ports[1]]
    ready, room = w.ready(), w.room()
    emit, read = ready and dst.can_write(t), room and src.can_read(t)
    if not (emit or read):
        waits = ([dst] if ready else []) + ([src] if room else [])
        if any(f.last_event() >= t for f in waits):
            heapq.heappush(heap, (t + 1, pid))
        else:
            for f in waits:
                f.waiters.add(pid)
        return
    for f, done in ((dst, emit), (src, read)):
        if done:
            (f.writes if f is dst else f.reads).append(t)
            for other in f.waiters:
                heapq.heappush(heap, (t + 1, other))
            f.waiters.clear()
    if emit:
        w.emit()
    if read:
        w.read()
    if not w.done():
        heapq.heappush(heap, (t + 1, pid))
        return
    end = t + 1 + p.depth
    p.frame_ends.append(end)
    p.frame += 1
    counters[pid] = WindowCounters(p.window or {})
    if p.frame < frames:
        heapq.heappush(heap, (end, pid))


def _state(p: Process, fifos: dict[str, Fifo]) -> str:
    if p.window:
        return f"{p.name} frame {p.frame} (generator)"
    it, reads, writes = p.ops[p.k]
    def fill(s: str) -> str:
        f = fifos[s]
        return f"{s} {len(f.writes) - len(f.reads)}/{f.depth}"
    return (f"{p.name} frame {p.frame} iteration {it} reads [{', '.join(fill(s) for s in reads)}] "
            f"writes [{', '.join(fill(s) for s in writes)}]")


def time_network(df: Dataflow, hw: HwConfig, frames: int = 4, drain: bool = True,
                 stall_seed: int | None = None, stall_p: float = 0.5) -> Timing:
    """Simulate `frames` frames of the generated dataflow. drain=False models rewinding pipelines
    (no drain between frames). With `stall_seed`, the input offers and the outputs accept a beat
    only on random cycles (each cycle idle with probability stall_p): a deadlock check under
    back-pressure (raises RuntimeError naming the stuck processes)."""
    procs, fifos = network_processes(df, hw)
    if not drain:
        for p in procs:
            p.depth = 0
    if stall_seed is not None:
        rng = np.random.default_rng(stall_seed)
        for p in procs:
            if p.name.startswith(("source(", "sink(")):
                at = np.cumsum(1 + rng.geometric(1 - stall_p, len(p.ops)) - 1)
                p.ops = [(int(i), r, w) for i, (_, r, w) in zip(at, p.ops, strict=True)]
                p.iters = int(at[-1]) + 1
    simulate(procs, fifos, frames)
    sinks = [p for p in procs if p.name.startswith("sink(")]
    done = [max(p.frame_ends[f] for p in sinks) for f in range(frames)]
    return Timing(done, procs, done[-1] - done[-2] if frames > 1 else done[0], df.cycles_per_frame)


def report(t: Timing) -> str:
    """A table: each layer's loop cycles/frame vs the cycle model, and the network's interval."""
    lines = [f"{'process':58} {'iters':>8} {'depth':>5} {'frame interval':>14}"]
    for p in t.processes:
        ends = p.frame_ends
        interval = ends[-1] - ends[-2] if len(ends) > 1 else ends[0]
        lines.append(f"{p.name:58} {p.iters:8d} {p.depth:5d} {interval:14d}")
    ratio = t.cycles_per_frame / t.model_cycles
    lines.append(f"network: {t.cycles_per_frame} cycles/frame in steady state (frames done at {t.frame_done}); "
                 f"cycle model {t.model_cycles} ({ratio:.4f}x); first frame latency {t.frame_done[0]}")
    return "\n".join(lines)


def layer_model_cycles(df: Dataflow) -> dict[str, int]:
    return {lay.name: lay.cycles for lay in df.layers}


__all__ = ["Process", "Fifo", "Timing", "kernel_processes", "network_processes", "simulate", "time_network",
           "report", "layer_model_cycles"]

"""The Vitis/Vivado HLS backend: OUT/hls/, a C++ project of the dataflow plus its C-sim testbench.

    OUT/hls/
      src/top.cpp, top.h      the DATAFLOW top function: stream declarations, one kernel call per layer
      src/params.h            one config struct per layer (geometry, folds, widths, requant scalars)
      src/weights.h           the constant tables (weights, biases, multipliers, shifts)
      src/kernels/*.h         hand-written kernels, copied from templates/hls/kernels/
      src/hlsgen_axis.h       with hw.tlast: the output beat with TLAST/TKEEP/TSTRB (templates/hls/axis/)
      tb/                     C-sim testbench (testbench/csim/ plus the generated tb_glue.h)
      hls_config.cfg          Vitis unified flow (v++ -c --mode hls, vitis-run --mode hls)
      run_hls.tcl             Tcl flow (vitis-run --mode hls --tcl, vitis_hls -f, vivado_hls -f)
      README.md               the commands to type for csim, csynth, cosim and export

Test vectors: both scripts add ../vectors as a test-bench file (`tb.file`, `add_files -tb`), which the tool
copies beside the simulation binary, and pass its name to the testbench (`csim.argv`/`cosim.argv`,
`csim_design -argv`/`cosim_design -argv`); `hlsgen csim` passes the absolute path.

Wiring: every stream edge (stream, reading layer) is one hls::stream with the depth the dataflow
computed for it (skip FIFOs included). A stream read by several layers (or by a layer and a top
output) is written once and duplicated by a chain of fork2 calls, one output per reader.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hlsgen.backends.hls_layers import LayerCode, layer_code, window_beats, window_schedule
from hlsgen.backends.render import TEMPLATES, TESTBENCH, copy_tree, render
from hlsgen.config.hw import HwConfig
from hlsgen.errors import HlsgenError
from hlsgen.hw.convert import WIDEST_BEAT
from hlsgen.hw.fifo import FIFO_MARGIN
from hlsgen.hw.model import Dataflow, Layer, Stream
from hlsgen.support.names import Namer

GENERATED = {"src/top.cpp": "top.cpp.j2", "src/top.h": "top.h.j2", "src/params.h": "params.h.j2",
             "src/weights.h": "weights.h.j2", "tb/tb_glue.h": "tb_glue.h.j2", "hls_config.cfg": "hls_config.cfg.j2",
             "run_hls.tcl": "run_hls.tcl.j2", "README.md": "README.md.j2"}


def write_hls(df: Dataflow, hw: HwConfig, out: Path) -> None:
    """Write OUT/hls (the caller checks hw.hls.enabled)."""
    ctx = hls_context(df, hw)
    folder = out / "hls"
    copy_tree(TEMPLATES / "hls" / "kernels", folder / "src" / "kernels")
    copy_tree(TESTBENCH / "csim", folder / "tb")
    if hw.tlast:
        copy_tree(TEMPLATES / "hls" / "axis", folder / "src")
    for target, template in GENERATED.items():
        path = folder / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(f"hls/{template}", **ctx))


@dataclass
class Wiring:
    """Stream variables of the top function and the fork calls that feed them."""

    decls: list[dict[str, Any]] = field(default_factory=list)  # internal streams: var, bits, depth, note
    writes: dict[str, str] = field(default_factory=dict)  # stream -> variable its producer writes
    reads: dict[tuple[str, str, int], str] = field(default_factory=dict)  # (stream, layer, input) -> var
    forks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # stream -> fork2 calls
    names: Namer = field(default_factory=lambda: Namer())  # unique variable names ("s_..." only)
    ports: dict[str, str] = field(default_factory=dict)  # output port -> variable its stream is written to

    def declare(self, var: str, stream: Stream, depth: int, note: str, bits: int = 0) -> str:
        """A new internal stream (its name made unique) of the stream's beats, or of `bits`-bit ones;
        returns the variable name."""
        var = self.names(f"{var}#{len(self.decls)}") if var in self.names.taken else self.names(var)
        self.decls.append({"var": var, "bits": bits or stream.beat_bits, "depth": depth, "note": note})
        return var


def port_names(df: Dataflow) -> list[str]:
    return ["out"] if len(df.outputs) == 1 else [f"out_{k}" for k in range(len(df.outputs))]


def axis_var(port: str) -> str:
    """With hw.tlast: the internal stream a network output is written to before `axis_last` adds TLAST."""
    return f"s_{port}_axis"


def wire(df: Dataflow, depths: Mapping[tuple[str, str], int] | None = None, tlast: bool = False) -> Wiring:
    """Streams and forks of the top function; `depths` (default: the dataflow's) per stream edge.
    `tlast`: each output port is fed by an `axis_last` call from an internal stream (axis_var)."""
    w = Wiring()
    depths = df.fifo_depth if depths is None else depths
    ports = port_names(df)
    for p, o in zip(ports, df.outputs, strict=True):
        w.ports[p] = w.declare(axis_var(p), o, FIFO_MARGIN, f"{o.name} -> {p} (TLAST)") if tlast else p
    for s in [df.input.name] + [lay.output for lay in df.layers]:
        stream = df.streams[s]
        sinks: list[tuple[str, Any]] = [("layer", (lay.name, i)) for lay in df.layers
                                        for i, name in enumerate(lay.inputs) if name == s]
        sinks += [("port", p) for p, o in zip(ports, df.outputs, strict=True) if o.name == s]
        if not sinks:
            raise HlsgenError(f"stream {s} has no reader")
        vars_ = [_sink_var(w, df, depths, stream, kind, sink, len(sinks) > 1, k)
                 for k, (kind, sink) in enumerate(sinks)]
        if len(vars_) == 1:
            w.writes[s] = vars_[0]
            continue
        src = "in" if s == df.input.name else w.declare(f"s_{s}", stream, FIFO_MARGIN, f"{s}, before the fork")
        w.writes[s] = src
        w.forks[s] = _fork_chain(w, stream, src, vars_)
    return w


def _sink_var(w: Wiring, df: Dataflow, depths: Mapping[tuple[str, str], int], stream: Stream, kind: str, sink: Any,
              forked: bool, k: int) -> str:
    if kind == "port":
        return w.ports[sink]
    layer, index = sink
    if stream.name == df.input.name and not forked:
        var = "in"
    else:
        var = w.declare(f"s_{stream.name}_{k}" if forked else f"s_{stream.name}", stream,
                        depths[(stream.name, layer)], f"{stream.name} -> {layer}")
    w.reads[(stream.name, layer, index)] = var
    return var


def _fork_chain(w: Wiring, stream: Stream, src: str, sinks: list[str]) -> list[dict[str, Any]]:
    calls = []
    for k, sink in enumerate(sinks[:-1]):
        last = k == len(sinks) - 2
        rest = sinks[-1] if last else w.declare(f"s_{stream.name}_fork{k + 1}", stream, FIFO_MARGIN,
                                                f"{stream.name}, between forks")
        calls.append({"func": "fork2", "targs": [str(stream.beats)], "args": [src, sink, rest]})
        src = rest
    return calls


def layer_calls(code: LayerCode, df: Dataflow, w: Wiring, name: str) -> list[dict[str, Any]]:
    """The kernel calls of one layer (sliding window, then the kernel), its tap, then its forks."""
    layer = next(lay for lay in df.layers if lay.name == name)
    ins = [w.reads[(s, name, i)] for i, s in enumerate(layer.inputs)]
    calls: list[dict[str, Any]] = []
    if code.window:
        win = w.declare(f"s_{name}_window", df.streams[layer.inputs[0]], window_fifo_depth(code, layer),
                        f"{name}: window taps")
        calls.append({"func": "sliding_window", "targs": [code.cfg], "args": [ins[0], win]})
        ins[0] = win
    dest = w.writes[layer.output]
    tap = {"var": dest, "name": layer.output, "beats": df.streams[layer.output].beats}
    if code.steps:
        calls += converter_calls(code, df, layer, w, ins[0], dest)
        calls[-1]["tap"] = tap
    else:
        calls.append({"func": code.kernel, "targs": [code.cfg], "args": [*ins, dest, *code.tables], "tap": tap})
    return calls + w.forks.get(layer.output, [])


def converter_calls(code: LayerCode, df: Dataflow, layer: Layer, w: Wiring, src: str, dest: str,
                    ) -> list[dict[str, Any]]:
    """A converter's split and join (kernels/dwc.h), one frame of pixels a call, joined by a stream of
    one sub-beat per beat."""
    x, out = df.streams[layer.inputs[0]], df.streams[layer.output]
    calls = []
    for i, st in enumerate(code.steps):
        last = i == len(code.steps) - 1
        to = dest if last else w.declare(f"s_{layer.name}_sub", out, FIFO_MARGIN, f"{layer.name}: sub-beats",
                                         bits=st["w"])
        in_bits = x.beat_bits if i == 0 else code.steps[0]["w"]
        out_bits = out.beat_bits if last else st["w"]
        calls.append({"func": st["func"], "targs": [str(v) for v in (st["w"], st["s"], st["k"], st["groups"], in_bits,
                                                                     out_bits)], "args": [src, to],
                      "layer": layer.name})
        src = to
    return calls


def hls_context(df: Dataflow, hw: HwConfig) -> dict[str, Any]:
    if not df.layers or any(o.name == df.input.name for o in df.outputs):
        raise HlsgenError(f"{df.name}: a network output is the network input itself; no hardware to generate")
    codes = [layer_code(df, lay) for lay in df.layers]
    check_beat_widths(df, codes)
    w = wire(df, rate_depths(df, codes), hw.tlast)
    calls = list(w.forks.get(df.input.name, []))
    for code in codes:
        calls += layer_calls(code, df, w, code.name)
    ports = port_names(df)
    if hw.tlast:  # the last process of the dataflow: TLAST on the last beat of every frame
        calls += [{"func": "axis_last", "targs": [str(s.beats), str(s.beat_bits)], "args": [w.ports[p], p]}
                  for p, s in zip(ports, df.outputs, strict=True)]
    outputs = [{"port": p, "type": f"{hw.top}_{p}_t", "stream": s.name, "tensor": s.tensor, "bits": s.bits,
                "signed": int(s.signed), "channels": s.channels, "fold": s.fold, "pack": s.pack, "beats": s.beats,
                "beat_bits": s.beat_bits, "layout": port_layout(s),
                "file": "output.hex" if len(ports) == 1 else f"output_{k}.hex"}
               for k, (p, s) in enumerate(zip(ports, df.outputs, strict=True))]
    return {"name": df.name, "top": hw.top, "hls": hw.hls, "ap_ctrl": f"ap_ctrl_{hw.hls.ap_ctrl}",
            "tlast": hw.tlast, "vivado": hw.hls.tool == "vivado", "vectors": VECTORS,
            "frames": hw.frames, "layers": codes, "calls": calls, "streams": w.decls,
            "input": {"type": f"{hw.top}_in_t", "stream": df.input.name, "tensor": df.input.tensor,
                      "bits": df.input.bits, "signed": int(df.input.signed), "channels": df.input.channels,
                      "fold": df.input.fold, "layout": port_layout(df.input),
                      "beats": df.input.beats, "beat_bits": df.input.beat_bits},
            "outputs": outputs, "ap_int_max_w": MAX_BEAT_BITS, "cycles": df.cycles_per_frame,
            "bottleneck": df.bottleneck, "guard": f"HLSGEN_{hw.top.upper()}_H"}


def port_layout(s: Stream) -> str:
    """What a port beat holds, for OUT/hls/README.md (docs/streams.md)."""
    if s.pack > 1:
        return f"{s.pack} pixels ({s.pack * s.channels} codes; the frame's last beat the rest)"
    if s.fold < s.channels:
        return f"{s.fold} channels of a pixel ({s.folds} beats a pixel, the last zero-padded)"
    return "one pixel"


VECTORS = "vectors"  # the test-bench copy of ../vectors the tools make (tb.file / add_files -tb), passed as argv
MAX_BEAT_BITS = WIDEST_BEAT  # Vitis HLS: the widest ap_uint a stream or a register can hold (AP_INT_MAX_W)


def check_beat_widths(df: Dataflow, codes: list[LayerCode]) -> None:
    """Refuse, at compile time, a stream beat (or an average pool's sums beat) wider than Vitis's
    4096 bits. hw/stream_folds.py folds every stream whose whole pixel is wider, so only a width the
    user forces (hw.io_bits 0 on a wide port) or a sums beat can reach this."""
    for s in [df.input, *df.streams.values()]:
        if s.beat_bits > MAX_BEAT_BITS:
            readers = [lay.name for lay in df.consumers(s.name)] or ["the output port"]
            raise HlsgenError(f"HLS: stream {s.name} (read by {', '.join(readers)}) has {s.beat_bits}-bit beats "
                              f"({s.channels} channels x {s.bits} bits), over Vitis's {MAX_BEAT_BITS}-bit limit "
                              "(hw.hls.enabled: false skips the HLS backend)")
    for code in codes:
        for t in code.types:
            if t["kind"] == "beat" and t["bits"] > MAX_BEAT_BITS:
                raise HlsgenError(f"HLS: layer {code.name}: its {t['name']} beats have {t['bits']} bits, "
                                  f"over Vitis's {MAX_BEAT_BITS}-bit limit "
                                  "(hw.hls.enabled: false skips the HLS backend)")


def rate_depths(df: Dataflow, codes: list[LayerCode]) -> dict[tuple[str, str], int]:
    """FIFO depths sized for rate as well as for deadlock (the deadlock depths are Dataflow.fifo_depth,
    from hlsgen.hw.fifo, unchanged). One call of the top function is one frame, so a sliding-window
    generator reads the next frame only once it has emitted the last window of this one: its `tail`
    (windows emitted after its last read x the unit's cycles per window) is a stretch in which it
    reads nothing. A layer producing its input keeps producing the next frame at the network's rate
    (pixels / cycles per frame: even a fast producer's input arrives at that rate, so its slack does
    not help), so the FIFO in front of the generator gets ceil(tail x pixels / period) beats more;
    the network input is not a layer and simply waits. A residual join's skip FIFO likewise gets the
    skip beats of the next frame that arrive during the join's generator tail. The timed model
    (hlsgen.tools.hls_timing) checks the result against the cycle model."""
    depths = dict(df.fifo_depth)
    period = df.cycles_per_frame
    producers = {lay.output: lay for lay in df.layers}
    for code in codes:
        _first_fold_reads(code, df, depths, producers, period)
        if not code.window:
            continue
        layer = next(lay for lay in df.layers if lay.name == code.name)
        k = {c["name"]: c["value"] for c in code.consts}
        reads, emits = window_schedule({g: k[g] for g in GEOMETRY})
        windows_after = int(emits[np.flatnonzero(reads)[-1] + 1:].sum()) / window_beats(k)
        tail = windows_after * layer.cycles / k["OUT_PIXELS"]
        src = layer.inputs[0]
        if src in producers:  # the network input may simply wait; a layer may not
            depths[(src, layer.name)] += math.ceil(tail * df.streams[src].beats / period)
        if len(layer.inputs) == 2 and layer.inputs[1] != src:
            # a residual join: while its generator finishes this frame, the skip branch streams the
            # next one at the network's rate (its producer may be fast, but the fork feeding it is not)
            skip = layer.inputs[1]
            depths[(skip, layer.name)] += math.ceil(tail * df.streams[skip].beats / period)
    return depths


def _first_fold_reads(code: LayerCode, df: Dataflow, depths: dict[tuple[str, str], int],
                      producers: dict[str, Layer], period: int) -> None:
    """A matrix-vector unit without a window (a gemm, a pointwise conv) reads a pixel's beats in its
    first output fold only and then computes FOLD_O - 1 more folds from its buffer: while
    it does, its producer keeps writing the next pixel at the network's rate. Its FIFO gets those beats
    (ceil(idle steps x input beats / period)), so the producer is not stalled into that stretch. With the
    margin depth alone the timed model ran the corpus vww_96_float__qdq at 723,456 cycles a frame against
    589,824 modelled and unsw_nb15_mlp_w2a2 at 1,704 against 950 (docs/hls.md)."""
    k = {c["name"]: c["value"] for c in code.consts}
    if code.window or "IN_FOLD" not in k or k["FOLD_O"] < 2:  # (IN_FOLD: an MVU's constants)
        return
    layer = next(lay for lay in df.layers if lay.name == code.name)
    src = layer.inputs[0]
    if src in producers:
        idle = (k["FOLD_O"] - 1) * k["TAPS"] * k["FOLD_I"]
        depths[(src, layer.name)] += math.ceil(idle * df.streams[src].beats / period)


def window_fifo_depth(code: LayerCode, layer: Layer) -> int:
    """The FIFO between a sliding-window generator and its unit: whole windows, enough of them that
    the generator, which may emit them ahead, can read the next frame's first rows (its fill: the
    reads before its first tap) while the unit still works on this frame's last windows. One window
    unless the unit spends fewer cycles per window than the fill (e.g. one tap per cycle)."""
    k = {c["name"]: c["value"] for c in code.consts}
    reads, emits = window_schedule({g: k[g] for g in GEOMETRY})
    fill = int(np.argmax(emits))  # read-only iterations before the first tap
    per_window = layer.cycles / k["OUT_PIXELS"]
    return max(FIFO_MARGIN, window_beats(k) * max(1, math.ceil(fill / per_window)))


GEOMETRY = ("IN_H", "IN_W", "K_H", "K_W", "STRIDE_H", "STRIDE_W", "DIL_H", "DIL_W", "PAD_T", "PAD_L", "PAD_B", "PAD_R",
            "OUT_H", "OUT_W", "TAP_FOLDS")

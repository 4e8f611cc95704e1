"""The Verilog backend: writes OUT/rtl/ (synthesizable SystemVerilog subset) and OUT/tb/ (cocotb).

OUT/rtl/
  hg_*.sv              hand-written parameterised modules, copied from templates/verilog/rtl/
  <top>.sv             the generated top (templates/verilog/top.sv.j2): FIFOs, forks, AXI-Stream
                       ports named as Vitis HLS names them (with hw.tlast: out_r_TLAST/TKEEP/TSTRB as
                       for an ap_axiu<W,0,0,0> port), one instance per layer of the module
                       <top>__<layer> (defined below the top in the same file: window + unit), which
                       `hlsgen synth` synthesizes as a top of its own
  <top>_<layer>_w.mem  weight ROMs ($readmemh; the simulator's working directory must hold them)
  files.f              the source list, top last
OUT/tb/                the cocotb testbench (hlsgen/backends/testbench.py)

The templates get plain data: names, widths, depths and `Param` numbers (verilog_values.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hlsgen.backends.render import TEMPLATES, copy_tree, render
from hlsgen.backends.verilog_layers import Unit, unit
from hlsgen.errors import HlsgenError
from hlsgen.hw.fifo import output_depth
from hlsgen.hw.model import Dataflow, Layer, Stream

RTL_TEMPLATES = TEMPLATES / "verilog" / "rtl"
OUTPUT_CONSUMER = "out_r"


def write_rtl(df: Dataflow, out: Path, model: str, tlast: bool = False) -> None:
    """Write OUT/rtl/ for the dataflow `df` (the caller checks hw.rtl.enabled); `tlast` (hw.tlast):
    the output port gets TLAST (last beat of every frame) and TKEEP/TSTRB (all ones)."""
    folder = out / "rtl"
    copied = copy_tree(RTL_TEMPLATES, folder)
    design = design_context(df, model, tlast)
    (folder / f"{df.top}.sv").write_text(render("verilog/top.sv.j2", **design))
    for u in design["units"]:
        if u["mem_file"]:
            (folder / u["mem_file"]).write_text("".join(f"{w}\n" for w in u["mem_words"]))
    files = sorted(p.name for p in copied if p.suffix == ".sv") + [f"{df.top}.sv"]
    (folder / "files.f").write_text(render("verilog/files.f.j2", files=files))


def rtl_files(rtl_dir: Path) -> list[Path]:
    """The sources of a written OUT/rtl/, in files.f order (top last)."""
    names = (rtl_dir / "files.f").read_text().split()
    return [rtl_dir / n for n in names]


def layer_module(top: str, layer: str) -> str:
    """The module that holds one layer's units (window + unit), defined in <top>.sv below the top."""
    return f"{top}__{layer}"


def design_context(df: Dataflow, model: str, tlast: bool = False) -> dict[str, Any]:
    if len(df.outputs) != 1:
        raise HlsgenError(f"{model}: the Verilog backend supports one network output, the model has "
                          f"{len(df.outputs)}; set hw.rtl.enabled: false to skip it")
    out_stream = df.outputs[0]
    streams = [_stream(df, s) for s in _produced(df)]
    out_edge = next(e["name"] for s in streams for e in s["edges"] if e["consumer"] == OUTPUT_CONSUMER)
    edge_of = {(s["name"], e["consumer"], e["index"]): e["name"] for s in streams for e in s["edges"]}
    units = [_unit_context(unit(lay, df, df.top), lay, df, edge_of) for lay in df.layers]
    return {"top": df.top, "model": model, "cycles": df.cycles_per_frame, "bottleneck": df.bottleneck,
            "input": df.input.name, "in_width": _width(df.input), "in_beat": df.input.beat_bits,
            "in_pad": df.input.beat_bits - _width(df.input), "out_beat": out_stream.beat_bits,
            "out_pad": out_stream.beat_bits - _width(out_stream), "out_edge": out_edge,
            "streams": streams, "units": units, "tlast": tlast, "out_beats": out_stream.beats,
            "last_bits": max(1, (out_stream.beats - 1).bit_length())}


def _width(s: Stream) -> int:
    return s.data_bits


def _produced(df: Dataflow) -> list[Stream]:
    return [df.input] + [df.streams[lay.output] for lay in df.layers]


def _stream(df: Dataflow, s: Stream) -> dict[str, Any]:
    # one edge (fork output + FIFO) per input port: a layer reading s twice (conv(x) + x) gets two
    edges = [{"name": f"{s.name}_to_{lay.name}" + ("" if i == 0 else "_skip" if i == 1 else f"_in{i}"),
              "consumer": lay.name, "index": i,
              "depth": df.fifo_depth[(s.name, lay.name)]}
             for lay in df.consumers(s.name) for i, name in enumerate(lay.inputs) if name == s.name]
    if s.name == df.outputs[0].name:
        edges.append({"name": f"{s.name}_to_{OUTPUT_CONSUMER}", "consumer": OUTPUT_CONSUMER, "index": 0,
                      "depth": output_depth(s, list(df.layers))})
    if not edges:
        raise HlsgenError(f"stream {s.name} ({s.tensor}) is computed but never used")
    return {"name": s.name, "width": _width(s), "edges": edges}


def _unit_context(u: Unit, lay: Layer, df: Dataflow, edge_of: dict[tuple[str, str, int], str]) -> dict[str, Any]:
    if u.module in ("hg_concat", "hg_concat_beats"):
        return _concat_context(u, lay, df, edge_of)
    skip = edge_of[(lay.inputs[1], lay.name, 1)] if len(lay.inputs) > 1 else None
    bits = {p.name: p.value for p in u.params if p.name in ("SKB", "BB")}
    # an unused second input: hg_mvu's skip port holds a pixel, hg_eltwise's b port a beat of the input
    lanes = df.streams[lay.output].channels if u.module == "hg_mvu" else df.streams[lay.inputs[0]].fold
    tie = int(bits.get("SKB", bits.get("BB", 0))) * lanes
    return {"name": u.name, "kind": lay.kind, "node": lay.node, "module": u.module, "cycles": lay.cycles,
            "layer_module": layer_module(df.top, u.name), "in_width": _width(df.streams[lay.inputs[0]]),
            "skip_width": _width(df.streams[lay.inputs[1]]) if skip else 0,
            "window": list(u.window), "tap_width": u.tap_width, "params": list(u.params),
            "in_edge": edge_of[(lay.inputs[0], lay.name, 0)], "skip_edge": skip, "output": lay.output,
            "out_width": _width(df.streams[lay.output]), "tie_width": tie, "mem_file": u.mem_file,
            "mem_words": u.mem_words, "in_lanes": 0, "in_edges": []}


def _concat_context(u: Unit, lay: Layer, df: Dataflow, edge_of: dict[tuple[str, str, int], str]) -> dict[str, Any]:
    """hg_concat reads every input edge on one port: data side by side (input 0 lowest), valid and ready
    one bit each (`in_edges`, listed from the highest input down as a Verilog concatenation)."""
    edges = [edge_of[(s, lay.name, i)] for i, s in enumerate(lay.inputs)]
    return {"name": u.name, "kind": lay.kind, "node": lay.node, "module": u.module, "cycles": lay.cycles,
            "layer_module": layer_module(df.top, u.name), "in_width": sum(_width(df.streams[s]) for s in lay.inputs),
            "in_lanes": len(edges), "in_edges": edges[::-1], "skip_edge": None, "skip_width": 0, "window": [],
            "tap_width": 0, "params": list(u.params), "in_edge": edges[0], "output": lay.output,
            "out_width": _width(df.streams[lay.output]), "tie_width": 0, "mem_file": None, "mem_words": ()}

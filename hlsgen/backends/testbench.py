"""OUT/tb/: the testbenches of the generated RTL.

  hlsgen_tb/           static cocotb harness copied from testbench/cocotb/ (driver, monitor, scoreboard,
                       and replay.py, which turns the replay report into result.json entries)
  test_<top>.py        generated cocotb tests (templates/verilog/tb/test_top.py.j2)
  Makefile             cocotb Makefile (templates/verilog/tb/Makefile.j2): `make SIM=verilator|icarus`,
                       and `make replay` / `make replay SIM=icarus` for the SystemVerilog replay
  replay/              the self-checking SystemVerilog replay testbench (no Python per cycle):
                       hg_replay_tb.sv (templates/verilog/tb/replay_tb.sv.j2) and hg_stream_check.sv
                       (static, testbench/replay/)

Both testbenches read the frozen vectors of OUT/vectors/ and never import hlsgen. The replay
testbench is rendered from OUT/vectors/meta.json (written before this backend runs), so its memory
depths and layer streams are those of the vectors; every name in it is a stream identifier (a token).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hlsgen.backends.render import TESTBENCH, copy_tree, render
from hlsgen.hw.model import Dataflow

REPLAY_TOP = "hg_replay_tb"
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
REPLAY_FILES = ("hg_stream_check.sv", f"{REPLAY_TOP}.sv")  # compile order, testbench top last


def write_testbench(df: Dataflow, out: Path, model: str, tlast: bool = False) -> None:
    """`tlast` (hw.tlast): the cocotb tests also check out_r_TLAST/TKEEP/TSTRB on every output beat."""
    folder = out / "tb"
    copy_tree(TESTBENCH / "cocotb", folder)
    context = {"top": df.top, "model": model, "cycles": df.cycles_per_frame, "tlast": tlast,
               "out_beats": df.outputs[0].beats, "out_bytes": df.outputs[0].beat_bits // 8}
    (folder / f"test_{df.top}.py").write_text(render("verilog/tb/test_top.py.j2", **context))
    (folder / "Makefile").write_text(render("verilog/tb/Makefile.j2", **context))
    write_replay(df, out, model)


def write_replay(df: Dataflow, out: Path, model: str) -> None:
    """OUT/tb/replay/: the SystemVerilog replay testbench of the vectors in OUT/vectors/."""
    folder = out / "tb" / "replay"
    copy_tree(TESTBENCH / "replay", folder)
    meta = json.loads((out / "vectors" / "meta.json").read_text())
    (folder / f"{REPLAY_TOP}.sv").write_text(render("verilog/tb/replay_tb.sv.j2", **replay_context(df, meta, model)))


def replay_context(df: Dataflow, meta: dict[str, Any], model: str) -> dict[str, Any]:
    out = meta["outputs"][0]
    return {"top": df.top, "model": model, "cycles": df.cycles_per_frame, "frames": int(meta["frames"]),
            "input": _stream(meta["input"]), "output": dict(_stream(out), file=out["file"]),
            "layers": [dict(_stream(s), name=_layer_stream(s)) for s in meta["layers"]]}


def _layer_stream(m: dict[str, Any]) -> str:
    """The stream identifier of a layer (the testbench reaches dut.<name>_data); its vectors file is
    layers/<name>.hex, as backends/vectors.py writes it."""
    name = str(m["name"])
    if not _IDENT.match(name) or m["file"] != f"layers/{name}.hex":
        raise ValueError(f"vectors/meta.json: layer stream {name[:60]!r} is not an identifier with its file")
    return name


def _stream(m: dict[str, Any]) -> dict[str, Any]:
    width = int(m.get("fold", m["channels"])) * int(m["bits"])  # the stream's data bits inside the RTL
    return {"beats": int(m["beats_per_frame"]), "beat_bits": int(m["beat_bits"]), "pad": int(m["beat_bits"]) - width}


def test_module(top: str) -> str:
    return f"test_{top}"

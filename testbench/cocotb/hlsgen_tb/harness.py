"""One cocotb test body: reset, stream N frames back to back through the DUT, check every output.

Settings come from environment variables (defaults in brackets), so the same generated test module
runs under `hlsgen rtlsim`, under `make` in OUT/tb/, and against Vitis-exported RTL:
  HLSGEN_VECTORS  folder with meta.json and the hex vectors   [../vectors beside the test module]
  HLSGEN_FRAMES   frames to stream (cycling through the stored ones)   [all stored frames]
  HLSGEN_SEED     seed of the random stalls   [1]
  HLSGEN_STALL    probability of a TVALID/TREADY stall per beat in the stall test   [0.3]
  HLSGEN_RESULT   JSON file to add this test's figures to   [none]
  HLSGEN_TRACE_DIR  where the RTL writes trace_<stream>.hex (+hlsgen_trace)   [working directory]
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, Timer

from hlsgen_tb.axis import AxisSink, AxisSource
from hlsgen_tb.scoreboard import Scoreboard, check_layers, first_divergent_layer
from hlsgen_tb.vectors import Vectors, load_vectors


@dataclass(frozen=True)
class Design:
    top: str
    model_cycles: int  # cycle model: steady-state cycles per frame
    tb_dir: str  # folder of the generated test module (default vectors: ../vectors)
    in_port: str = "in_r"
    out_port: str = "out_r"
    period_ns: int = 10


def _settings(design: Design) -> tuple[Vectors, int, int, float]:
    folder = os.environ.get("HLSGEN_VECTORS") or str(Path(design.tb_dir).parent / "vectors")
    vectors = load_vectors(folder)
    frames = int(os.environ.get("HLSGEN_FRAMES") or vectors.frames)
    return vectors, frames, int(os.environ.get("HLSGEN_SEED", "1")), float(os.environ.get("HLSGEN_STALL", "0.3"))


async def reset(dut: Any, clk: Any) -> None:
    dut.ap_rst_n.value = 0
    await ClockCycles(clk, 5)
    dut.ap_rst_n.value = 1
    await ClockCycles(clk, 2)


async def run_frames(dut: Any, design: Design, name: str, stalls: bool) -> None:
    vectors, frames, seed, stall = _settings(design)
    stall = stall if stalls else 0.0
    trace_dir = Path(os.environ.get("HLSGEN_TRACE_DIR", "."))
    for old in trace_dir.glob("trace_*.hex"):
        old.unlink()
    clk = dut.ap_clk
    cocotb.start_soon(Clock(clk, design.period_ns, unit="ns").start())
    rng = random.Random(f"{seed}/{name}")
    src = AxisSource(dut, design.in_port, clk, stall, rng)
    sink = AxisSink(dut, design.out_port, clk, stall, rng)
    getattr(dut, f"{design.in_port}_TVALID").value = 0
    getattr(dut, f"{design.out_port}_TREADY").value = 0
    await reset(dut, clk)
    board = Scoreboard(vectors.output, vectors.beats(vectors.output, frames))
    cocotb.start_soon(src.send(vectors.beats(vectors.input, frames), design.period_ns))
    done = cocotb.start_soon(sink.receive(len(board.expected), design.period_ns, board.check))
    budget = (frames + 2) * design.model_cycles * (6 if stalls else 2) + 20000
    await First(done.complete, Timer(budget * design.period_ns, unit="ns"))
    result = _result(name, design, vectors, frames, seed, stall, src, sink, board)
    result["layers"] = check_layers(vectors, frames, trace_dir)
    result["first_layer"] = first_divergent_layer(result["layers"])
    _save(result)
    assert result["passed"], _failure(result)


def _result(name: str, design: Design, vectors: Vectors, frames: int, seed: int, stall: float,
            src: AxisSource, sink: AxisSink, board: Scoreboard) -> dict[str, Any]:
    per = vectors.output.beats_per_frame
    ends = [sink.cycles[(f + 1) * per - 1] for f in range(len(sink.cycles) // per)]
    diffs = [b - a for a, b in zip(ends, ends[1:], strict=False)]
    steady = diffs[1:] if len(diffs) > 1 else diffs
    return {"test": name, "top": design.top, "passed": board.passed, "frames": frames, "seed": seed,
            "stall": stall, "beats": len(sink.beats), "expected_beats": len(board.expected),
            "mismatches": board.errors, "first_mismatch": asdict(board.first) if board.first else None,
            "describe": board.first.describe() if board.first else None,
            "frame_end_cycles": ends, "cycles_per_frame": sum(steady) / len(steady) if steady else None,
            "latency": ends[0] - src.first_cycle if ends and src.first_cycle is not None else None,
            "model_cycles": design.model_cycles}


def _failure(r: dict[str, Any]) -> str:
    lines = [f"{r['test']}: {r['mismatches']} mismatching output beat(s), {r['beats']} of {r['expected_beats']} "
             "received"]
    if r["describe"]:
        lines.append(f"first divergent output: {r['describe']}")
    if r["first_layer"]:
        lines.append(f"first divergent layer: {r['first_layer']['layer']} ({r['first_layer']['describe']})")
    return "\n".join(lines)


def _save(result: dict[str, Any]) -> None:
    path = os.environ.get("HLSGEN_RESULT")
    if not path:
        return
    p = Path(path)
    data = json.loads(p.read_text()) if p.exists() else {}
    data[result["test"]] = result
    p.write_text(json.dumps(data, indent=2) + "\n")

"""The report of the SystemVerilog replay testbench (replay/hg_replay_tb.sv) as a result entry in the
format the cocotb tests write (harness.py): bit-exactness, first mismatching output word, every
layer's first mismatching beat and the first divergent layer, cycles per frame and first-frame latency.

    python -m hlsgen_tb.replay REPORT [--vectors DIR] [--result FILE] [--name throughput] [--top T]

REPORT is the file the testbench wrote (+hlsgen_report, default replay.txt). The entry is printed as
JSON, or added to FILE under NAME. Exit 0 when every output word matched, 1 on a mismatch or a
timeout, 2 when the report is incomplete (the simulation stopped early). Never imports hlsgen.

Report lines (one word per field): `frames N`, `model_cycles N`, `frame_end CYCLE` per output frame,
`first_in CYCLE`, `stream NAME BEATS ERRORS FIRST_INDEX GOT WANT` for the output then each layer in
network order (GOT/WANT in hex, x/z digits for unknown bits), `end done|timeout CYCLE`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hlsgen_tb.scoreboard import UNKNOWN, first_divergent_layer, first_mismatch
from hlsgen_tb.vectors import StreamInfo, Vectors, load_vectors


class IncompleteReport(ValueError):
    """The report lacks its end line: the simulator stopped before the testbench finished."""


def parse_report(path: str | Path) -> dict[str, Any]:
    rep: dict[str, Any] = {"frame_ends": [], "streams": []}
    for line in Path(path).read_text().splitlines():
        words = line.split()
        if not words:
            continue
        key = words[0]
        if key in ("frames", "model_cycles", "first_in"):
            rep[key] = int(words[1])
        elif key == "frame_end":
            rep["frame_ends"].append(int(words[1]))
        elif key == "stream":
            name, beats, errors, first = words[1], int(words[2]), int(words[3]), int(words[4])
            rep["streams"].append({"name": name, "beats": beats, "errors": errors, "first_index": first,
                                   "got": _hex(words[5]), "want": _hex(words[6])})
        elif key == "end":
            rep["end"], rep["cycles"] = words[1], int(words[2])
    if "end" not in rep or "frames" not in rep:
        raise IncompleteReport(f"{path}: no end line; the simulation stopped before the testbench finished")
    return rep


def _hex(word: str) -> int:
    try:
        return int(word, 16)
    except ValueError:  # x/z digits
        return UNKNOWN


def replay_result(rep: dict[str, Any], vectors: Vectors, name: str = "throughput", top: str = "") -> dict[str, Any]:
    """The result entry of one replay run (keys as harness.run_frames writes them, plus a few)."""
    frames = rep["frames"]
    out_row, layer_rows = rep["streams"][0], rep["streams"][1:]
    if len(layer_rows) != len(vectors.layers):
        raise IncompleteReport(f"report has {len(layer_rows)} layer streams, the vectors {len(vectors.layers)}")
    expected = frames * vectors.output.beats_per_frame
    first = _mismatch(vectors.output, out_row)
    ends = rep["frame_ends"]
    diffs = [b - a for a, b in zip(ends, ends[1:], strict=False)]
    steady = diffs[1:] if len(diffs) > 1 else diffs
    layers = [_layer(s, row, frames) for s, row in zip(vectors.layers, layer_rows, strict=True)]
    first_in = rep.get("first_in", -1)
    return {"test": name, "top": top, "testbench": "sv-replay", "passed": out_row["errors"] == 0
            and out_row["beats"] == expected, "frames": frames, "seed": None, "stall": 0.0,
            "beats": out_row["beats"], "expected_beats": expected, "mismatches": out_row["errors"],
            "first_mismatch": asdict(first) if first else None, "describe": first.describe() if first else None,
            "frame_end_cycles": ends, "cycles_per_frame": sum(steady) / len(steady) if steady else None,
            "latency": ends[0] - first_in if ends and first_in >= 0 else None,
            "model_cycles": rep.get("model_cycles"), "end": rep["end"], "simulated_cycles": rep["cycles"],
            "layers": layers, "first_layer": first_divergent_layer(layers)}


def _mismatch(info: StreamInfo, row: dict[str, Any]) -> Any:
    if row["errors"] == 0:
        return None
    return first_mismatch(info, row["first_index"], row["got"], row["want"])


def _layer(s: StreamInfo, row: dict[str, Any], frames: int) -> dict[str, Any]:
    if row["name"] != s.name:
        raise IncompleteReport(f"report stream {row['name']!r} where the vectors have {s.name!r}")
    m = _mismatch(s, row)
    return {"layer": s.layer, "node": s.node, "stream": s.name, "beats": row["beats"],
            "expected_beats": frames * s.beats_per_frame, "first_mismatch": asdict(m) if m else None,
            "describe": m.describe() if m else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hlsgen_tb.replay", description=__doc__.split("\n\n")[0])
    p.add_argument("report")
    p.add_argument("--vectors", default=str(Path(__file__).resolve().parents[2] / "vectors"))
    p.add_argument("--result", help="JSON file to add the entry to (under --name)")
    p.add_argument("--name", default="throughput")
    p.add_argument("--top", default="")
    args = p.parse_args(argv)
    try:
        entry = replay_result(parse_report(args.report), load_vectors(args.vectors), args.name, args.top)
    except (OSError, ValueError, KeyError, IndexError) as e:
        print(f"hlsgen_tb.replay: {e}", file=sys.stderr)
        return 2
    if args.result:
        path = Path(args.result)
        data = json.loads(path.read_text()) if path.exists() else {}
        data[args.name] = entry
        path.write_text(json.dumps(data, indent=2) + "\n")
    else:
        print(json.dumps(entry, indent=2))
    if not entry["passed"]:
        print(f"{args.name}: {entry['mismatches']} mismatching output beat(s), {entry['beats']} of "
              f"{entry['expected_beats']} received ({entry['end']})", file=sys.stderr)
        if entry["describe"]:
            print(f"first divergent output: {entry['describe']}", file=sys.stderr)
        if entry["first_layer"]:
            print(f"first divergent layer: {entry['first_layer']['layer']} ({entry['first_layer']['describe']})",
                  file=sys.stderr)
    return 0 if entry["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""`hlsgen csim OUT`: C simulation of OUT/hls against OUT/vectors, bit-exact, with g++.

1. Build OUT/hls/src + OUT/hls/tb into one binary (cached per design: hlsgen.tools.csim_build).
2. Run it: the testbench streams every frame through the top function back to back and compares
   every output beat with the golden model's; exit 0 only when all are bit-exact.
3. On a mismatch, build the tap variant (-DHLSGEN_TAP: the top function also writes every layer's
   output stream to a file), run it and compare each layer's stream, in dataflow order, with
   OUT/vectors/layers/*.hex: the first layer that differs is named with frame, pixel and channel.
Build and run times are printed; `run_csim` turns the result into the CLI's exit code.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hlsgen.backends.vectors import check_vectors, read_hex, unpack_beats
from hlsgen.errors import HlsgenError
from hlsgen.support.cache import used
from hlsgen.support.outdir import require_hlsgen_output
from hlsgen.tools.csim_build import Builder, Log
from hlsgen.tools.results import record_csim

# what the hls::stream C-sim models print on a read of an empty stream or data left behind
STREAM_WARNING = re.compile(r"warning.*hls::stream", re.IGNORECASE)


@dataclass(frozen=True)
class Divergence:
    """The first layer whose output stream differs from the golden model's."""

    layer: str
    node: str
    stream: str
    frame: int
    pixel: int
    channel: int | None  # None: the beat is missing (the layer wrote too few)
    expected: int | None
    got: int | None

    def __str__(self) -> str:
        where = f"layer {self.layer} (node {self.node}, stream {self.stream}): frame {self.frame} pixel {self.pixel}"
        if self.channel is None:
            return f"{where}: beat missing (the layer wrote fewer beats than the golden model)"
        return f"{where} channel {self.channel}: expected {self.expected}, got {self.got}"


@dataclass(frozen=True)
class CsimResult:
    passed: bool
    build_seconds: float
    run_seconds: float
    cached: bool
    output: str  # the testbench's stdout
    divergence: Divergence | None = None


def csim(out_dir: str | Path, layers: bool = False, localize: bool = True, log: Log = print) -> CsimResult:
    """Build and run the C simulation of a folder written by `hlsgen compile`.

    `layers`: build the tap variant right away and compare every layer's stream, not only the
    outputs (one build instead of two when every intermediate should be checked anyway).
    `localize`: on an output mismatch (without `layers`), build the tap variant to name the layer.
    """
    out = Path(out_dir).resolve()
    hls, vectors = _check_folder(out)
    builder = Builder(hls, log)
    build = builder.build(tap=layers)
    used(build.binary.parent)  # LRU-bounded build caches (hlsgen.support.cache)
    code, text, run_s, divergence = _run_tb(build.binary, vectors, layers, log)
    warned = STREAM_WARNING.search(text) is not None
    passed = code == 0 and not warned and divergence is None
    if code == 0 and warned:
        log("FAIL: hls::stream warnings (a layer read an empty stream or left data behind)")
    if not passed and divergence is None and localize and not layers:
        log("localizing: rebuilding with -DHLSGEN_TAP")
        divergence = _run_tb(builder.build(tap=True).binary, vectors, True, log)[3]
    return CsimResult(passed, build.seconds, run_s, build.cached, text, divergence)


def _run_tb(binary: Path, vectors: Path, tap: bool, log: Log) -> tuple[int, str, float, Divergence | None]:
    """Run a testbench binary (with taps into a temporary folder); the exit code, its output, the
    run time and, with taps, the first divergent layer."""
    with tempfile.TemporaryDirectory(prefix="hlsgen-taps-") as taps:
        env = {**os.environ, "HLSGEN_TAP_DIR": taps} if tap else None
        start = time.perf_counter()
        code, text = _run([str(binary), str(vectors)], log, env)
        run_s = time.perf_counter() - start
        log(f"run: {run_s:.2f} s")
        if code not in (0, 1):
            raise HlsgenError(f"C simulation of {vectors.parent} could not run (exit {code}): {_reason(text)}")
        divergence = _first_divergent_layer(vectors, Path(taps)) if tap else None
    return code, text, run_s, divergence


def _reason(text: str) -> str:
    """The testbench's own error line (it names the vector file), else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "ERROR" in line or "error" in line]
    return (errors[0] if errors else lines[-1] if lines else "no output")[:500]


def run_csim(out_dir: str | Path, layers: bool = False) -> int:
    """The `hlsgen csim` command: 0 when every output is bit-exact, 1 otherwise."""
    r = csim(out_dir, layers=layers)
    record_csim(out_dir, r.passed, r.build_seconds, r.run_seconds, r.divergence, layers)
    verdict = "PASS" if r.passed else "FAIL"
    build = "cached" if r.cached else f"{r.build_seconds:.1f} s"
    print(f"csim {verdict}: build {build}, run {r.run_seconds:.2f} s")
    if r.divergence is not None:
        print(f"first divergent layer: {r.divergence}")
    return 0 if r.passed else 1


def _check_folder(out: Path) -> tuple[Path, Path]:
    require_hlsgen_output(out, f"write one with `hlsgen compile ... -o {out}`")
    hls, vectors = out / "hls", out / "vectors"
    if not (hls / "src" / "top.cpp").is_file() or not (hls / "tb" / "tb_main.cpp").is_file():
        raise HlsgenError(f"{out}: no HLS project in {hls} (was it compiled with hw.hls.enabled: false?)")
    if not (vectors / "meta.json").is_file():
        raise HlsgenError(f"{out}: no test vectors in {vectors}")
    meta = check_vectors(vectors)  # meta.json and every .hex file, before anything is built
    for i, entry in enumerate(meta["layers"]):
        missing = [k for k, t in _LAYER_KEYS.items() if not isinstance(entry.get(k), t)]
        if missing:
            raise HlsgenError(f"{vectors / 'meta.json'}: layers[{i}] lacks {', '.join(missing)} (not as "
                              "`hlsgen compile` writes it)")
    return hls, vectors


_LAYER_KEYS: dict[str, type | tuple[type, ...]] = {
    "name": str, "file": str, "layer": str, "node": str, "beats_per_frame": int, "channels": int, "bits": int,
    "signed": (bool, int)}


def _run(argv: list[str], log: Log, env: dict[str, str] | None) -> tuple[int, str]:
    log("$ " + shlex.join(argv))
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    text = p.stdout + p.stderr
    for line in text.splitlines():
        log(f"  {line}")
    return p.returncode, text


def _first_divergent_layer(vectors: Path, taps: Path) -> Divergence | None:
    """Compare every tapped layer stream, in dataflow order, with the golden one."""
    meta = json.loads((vectors / "meta.json").read_text())
    for entry in meta["layers"]:
        found = _first_difference(entry, vectors / entry["file"], taps / f"{entry['name']}.hex")
        if found is not None:
            return found
    return None


def _first_difference(entry: dict[str, Any], golden: Path, tapped: Path) -> Divergence | None:
    want = read_hex(golden)
    got = read_hex(tapped) if tapped.is_file() else []
    beats, fold = entry["beats_per_frame"], entry.get("fold", entry["channels"]) * entry.get("pack", 1)
    folds = -(-entry["channels"] // fold)  # a port's beat of `pack` pixels counts as one fold
    names = (entry["layer"], entry["node"], entry["name"])
    for i, expected in enumerate(want):
        pixel, f = divmod(i % beats, folds)
        if i >= len(got):
            return Divergence(*names, i // beats, pixel, None, None, None)
        if got[i] != expected:
            args = (fold, entry["bits"], entry["signed"])
            e, g = unpack_beats([expected], *args)[0], unpack_beats([got[i]], *args)[0]
            channels = [c for c in range(len(e)) if e[c] != g[c]]
            c = channels[0] if channels else 0
            return Divergence(*names, i // beats, pixel, f * fold + c, int(e[c]), int(g[c]))
    return None

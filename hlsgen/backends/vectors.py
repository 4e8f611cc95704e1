"""Test vectors: golden inputs and outputs of N frames in stream order, written by `hlsgen compile`.

OUT/vectors/
  meta.json            frames, and per stream: name, tensor, beats_per_frame, channels, bits, signed, beat_bits
  input.hex            the network input, one beat per line (frames back to back)
  output.hex           the network output (output_<k>.hex when there are several)
  layers/<stream>.hex  every layer's output stream, to find the first divergent layer
A beat holds `fold` channels of one pixel (all of them unless the stream is folded; the ceil(channels/fold)
beats of a pixel are consecutive, the last one zero-padded): channel f·fold + c of the pixel's beat f
(two's complement, `bits` wide) sits at bits [c·bits, (c+1)·bits); a line is the beat in hex, most
significant digit first, beat_bits/4 digits. A port (hw.io_bits) wider than a pixel packs `pack` whole
pixels a beat (pixel j of the beat in bits [j·channels·bits, ...)), the frame's last beat zero-padded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hlsgen.hw.model import Dataflow, Stream


def stream_codes(values: np.ndarray, stream: Stream) -> np.ndarray:
    """IR-layout codes of a batch [N, ...] -> [N, pixels, channels] in stream order."""
    flat = np.asarray(values, dtype=np.int64).reshape(len(values), -1)
    return flat[:, stream.order].reshape(len(values), stream.pixels, stream.channels)


def beat_codes(codes: np.ndarray, stream: Stream) -> np.ndarray:
    """[N, pixels, channels] codes -> [N, beats, codes a beat]: each pixel's channel folds, the last
    zero-padded; or (a port) `pack` whole pixels a beat, the frame's last beat zero-padded."""
    n = len(codes)
    rows = -(-stream.pixels // stream.pack) * stream.pack  # whole beats of `pack` pixels
    padded = np.zeros((n, rows, stream.folds * stream.fold), dtype=np.int64)
    padded[:, :stream.pixels, :stream.channels] = codes
    return padded.reshape(n, stream.beats, stream.fold * stream.pack)


def pack_beats(codes: np.ndarray, bits: int) -> list[int]:
    """[..., channels] codes -> one integer per beat (channel 0 in the low bits)."""
    mask = (1 << bits) - 1
    rows = np.asarray(codes, dtype=np.int64).reshape(-1, codes.shape[-1])
    return [sum((int(v) & mask) << (c * bits) for c, v in enumerate(row)) for row in rows]


def unpack_beats(beats: list[int], channels: int, bits: int, signed: bool) -> np.ndarray:
    """Inverse of pack_beats: [beats, channels] codes."""
    mask, sign = (1 << bits) - 1, 1 << (bits - 1)
    out = np.empty((len(beats), channels), dtype=np.int64)
    for i, beat in enumerate(beats):
        for c in range(channels):
            v = (beat >> (c * bits)) & mask
            out[i, c] = v - (1 << bits) if signed and v & sign else v
    return out


def hex_lines(beats: list[int], beat_bits: int) -> str:
    digits = beat_bits // 4
    return "".join(f"{b:0{digits}x}\n" for b in beats)


def stream_meta(s: Stream) -> dict[str, Any]:
    return {"name": s.name, "tensor": s.tensor, "beats_per_frame": s.beats, "channels": s.channels,
            "fold": s.fold, "pack": s.pack, "bits": s.bits, "signed": s.signed, "beat_bits": s.beat_bits}


def write_vectors(folder: Path, df: Dataflow, values: Mapping[str, np.ndarray], frames: int) -> None:
    """`values`: golden intermediates (IR tensors by name) of at least `frames` inputs."""
    folder.mkdir(parents=True)
    (folder / "layers").mkdir()

    def dump(path: Path, s: Stream) -> None:
        codes = beat_codes(stream_codes(values[s.tensor][:frames], s), s)
        path.write_text(hex_lines(pack_beats(codes, s.bits), s.beat_bits))

    dump(folder / "input.hex", df.input)
    names = ["output.hex"] if len(df.outputs) == 1 else [f"output_{k}.hex" for k in range(len(df.outputs))]
    for name, s in zip(names, df.outputs, strict=True):
        dump(folder / name, s)
    for layer in df.layers:
        dump(folder / "layers" / f"{layer.output}.hex", df.streams[layer.output])
    meta = {"frames": frames, "input": stream_meta(df.input),
            "outputs": [dict(stream_meta(s), file=f) for s, f in zip(df.outputs, names, strict=True)],
            "layers": [dict(stream_meta(df.streams[lay.output]), layer=lay.name, node=lay.node,
                            file=f"layers/{lay.output}.hex") for lay in df.layers]}
    (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")


def read_hex(path: Path) -> list[int]:
    return [int(line, 16) for line in path.read_text().split()]


def check_vectors(folder: Path) -> dict[str, Any]:
    """meta.json and every .hex file it names, checked before a simulation uses them: the right
    number of lines, each with beat_bits/4 hex digits. Returns meta; HlsgenError names the file."""
    from hlsgen.errors import HlsgenError

    meta_path = folder / "meta.json"
    try:
        meta = json.loads(meta_path.read_text())
        streams = [(folder / "input.hex", meta["input"])]
        streams += [(folder / o["file"], o) for o in meta["outputs"]]
        streams += [(folder / lay["file"], lay) for lay in meta["layers"]]
        frames = int(meta["frames"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise HlsgenError(f"{meta_path}: not a test-vector description written by hlsgen compile ({e})") from None
    for path, s in streams:
        _check_hex(path, frames * int(s["beats_per_frame"]), int(s["beat_bits"]) // 4)
    return meta


def _check_hex(path: Path, lines: int, digits: int) -> None:
    from hlsgen.errors import HlsgenError

    try:
        words = path.read_text().split()
    except OSError as e:
        raise HlsgenError(f"{path}: cannot read test vectors ({e.strerror})") from None
    if len(words) != lines:
        raise HlsgenError(f"{path}: {len(words)} beats, expected {lines}")
    bad = next((i for i, w in enumerate(words) if len(w) != digits or not _is_hex(w)), None)
    if bad is not None:
        raise HlsgenError(f"{path}: line {bad + 1} is not a {digits}-digit hex beat: {words[bad][:40]!r}")


def _is_hex(word: str) -> bool:
    try:
        int(word, 16)
    except ValueError:
        return False
    return True

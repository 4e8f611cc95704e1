"""hlsgen::split / hlsgen::join (templates/hls/kernels/dwc.h) in C simulation against hlsgen.hw.convert.

One g++ compile of a small driver that runs 7 splits, 7 joins (K == 1, S == 1, S < K, S a multiple of
K, S not a multiple, K == 2, 100-bit beats) and one fold change through both (7 channels of 3 bits,
fold 4 -> 6 via fold 2), each for two calls (frames) of GROUPS groups, on beats read from a file; it
writes every output beat. Stream elements are wider than the data (byte rounding): the inputs carry
random bits there (and splits random padding), which must be ignored; the outputs must be zero there.
Every output beat must equal the Python reference; negative control: the same output disagrees with
the reference of a neighbouring configuration (WRONG) and with one beat corrupted.
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from hlsgen.backends.render import TEMPLATES
from hlsgen.hw.convert import Convert, ConvertKind, apply, fold_beats, fold_change
from hlsgen.tools.csim_build import BASE_FLAGS, WARNINGS, compiler, header_dir

FRAMES = 2  # calls of each kernel


@dataclass(frozen=True)
class Case:
    name: str
    chain: tuple[Convert, ...]
    groups: int  # per call
    in_bits: int  # stream element widths (>= the data's)
    out_bits: int
    wrong: tuple[Convert, ...]  # the negative control's reference


def _case(name: str, kind: ConvertKind, w: int, s: int, k: int, groups: int, in_bits: int, out_bits: int,
          wrong_s: int, wrong_k: int) -> Case:
    return Case(name, (Convert(kind, w, s, k),), groups, in_bits, out_bits, (Convert(kind, w, wrong_s, wrong_k),))


CASES = [
    _case("s1", "split", 5, 3, 1, 6, 8, 8, 3, 2), _case("s2", "split", 4, 1, 3, 24, 16, 8, 2, 3),
    _case("s3", "split", 3, 2, 4, 6, 16, 8, 3, 4), _case("s4", "split", 8, 6, 3, 6, 24, 8, 6, 2),
    _case("s5", "split", 6, 7, 3, 6, 24, 8, 7, 4), _case("s6", "split", 7, 5, 2, 6, 16, 8, 5, 3),
    _case("s7", "split", 20, 7, 5, 6, 104, 24, 7, 4),
    _case("j1", "join", 5, 3, 1, 6, 8, 8, 3, 2), _case("j2", "join", 4, 1, 3, 24, 8, 16, 2, 3),
    _case("j3", "join", 3, 2, 4, 6, 8, 16, 2, 1), _case("j4", "join", 8, 6, 3, 6, 8, 24, 6, 2),
    _case("j5", "join", 6, 7, 3, 6, 8, 24, 7, 4), _case("j6", "join", 7, 5, 2, 6, 8, 16, 5, 3),
    _case("j7", "join", 20, 7, 5, 6, 24, 104, 7, 4),
    Case("c", fold_change(7, 3, 4, 6), 5, 16, 24, (Convert("split", 6, 4, 2), Convert("join", 6, 4, 2))),
]
MID_BITS = 8  # the fold change's intermediate stream (6-bit sub-beats)

DRIVER = r"""
#include <cstdio>
#include <cstring>
#include "kernels/hlsgen_kernels.h"  // all kernels: dwc.h clashes with none

// A beat as hexadecimal digits, most significant first.
template <int N>
ap_uint<N> read_beat(FILE* f) {
    char text[128];
    ap_uint<N> v = 0;
    if (std::fscanf(f, "%127s", text) != 1) return v;
    for (const char* p = text; *p; p++) {
        const int d = *p <= '9' ? *p - '0' : *p - 'a' + 10;
        v = (v << 4) | ap_uint<N>(d);
    }
    return v;
}

template <int N>
void write_beat(FILE* f, const ap_uint<N>& v) {
    const int D = (N + 3) / 4;
    const ap_uint<4 * D> x = v;
    for (int i = D - 1; i >= 0; i--) std::fprintf(f, "%x", (unsigned)x.range(4 * i + 3, 4 * i).to_uint());
    std::fprintf(f, "\n");
}

template <int IN_BITS, int OUT_BITS>
struct Io {
    hls::stream<ap_uint<IN_BITS> > in;
    hls::stream<ap_uint<OUT_BITS> > out;
    void feed(FILE* f, int beats) { for (int i = 0; i < beats; i++) in.write(read_beat<IN_BITS>(f)); }
    int drain(FILE* f) {  // the output beats; returns 1 if an input beat was left unread
        while (!out.empty()) write_beat(f, out.read());
        return in.empty() ? 0 : 1;
    }
};

template <int W, int S, int K, int GROUPS, int IN_BITS, int OUT_BITS>
int run_split(FILE* in, FILE* out, const char* name) {
    std::fprintf(out, "# %s\n", name);
    Io<IN_BITS, OUT_BITS> io;
    int bad = 0;
    for (int f = 0; f < FRAMES; f++) {
        io.feed(in, (S + K - 1) / K * GROUPS);
        hlsgen::split<W, S, K, GROUPS, IN_BITS, OUT_BITS>(io.in, io.out);
        bad += io.drain(out);
    }
    return bad;
}

template <int W, int S, int K, int GROUPS, int IN_BITS, int OUT_BITS>
int run_join(FILE* in, FILE* out, const char* name) {
    std::fprintf(out, "# %s\n", name);
    Io<IN_BITS, OUT_BITS> io;
    int bad = 0;
    for (int f = 0; f < FRAMES; f++) {
        io.feed(in, S * GROUPS);
        hlsgen::join<W, S, K, GROUPS, IN_BITS, OUT_BITS>(io.in, io.out);
        bad += io.drain(out);
    }
    return bad;
}

int run_fold_change(FILE* in, FILE* out) {  // 7 channels of 3 bits, fold 4 -> 6 through fold 2
    std::fprintf(out, "# c\n");
    Io<16, 24> io;
    hls::stream<ap_uint<MID_BITS> > mid;
    int bad = 0;
    for (int f = 0; f < FRAMES; f++) {
        io.feed(in, 2 * C_PIXELS);
        hlsgen::split<6, 4, 2, C_PIXELS, 16, MID_BITS>(io.in, mid);
        hlsgen::join<6, 4, 3, C_PIXELS, MID_BITS, 24>(mid, io.out);
        bad += io.drain(out) + (mid.empty() ? 0 : 1);
    }
    return bad;
}

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    FILE* in = std::fopen(argv[1], "r");
    FILE* out = std::fopen(argv[2], "w");
    if (!in || !out) return 2;
    int bad = 0;
CALLS
    bad += run_fold_change(in, out);
    std::fclose(in);
    std::fclose(out);
    std::printf("%d kernels left input unread\n", bad);
    return bad != 0;
}
"""


def _program() -> str:
    calls = []
    for c in CASES[:-1]:
        (x,) = c.chain
        calls.append(f'    bad += run_{x.kind}<{x.w}, {x.s}, {x.k}, {c.groups}, {c.in_bits}, {c.out_bits}>'
                     f'(in, out, "{c.name}");')
    consts = f"#define FRAMES {FRAMES}\n#define C_PIXELS {CASES[-1].groups}\n#define MID_BITS {MID_BITS}\n"
    return consts + DRIVER.replace("CALLS", "\n".join(calls))


def stimulus(c: Case, seed: int = 11) -> list[int]:
    """Input beats of all FRAMES calls: random bits everywhere, but the fold change's input is the fold-4
    packing of random codes (zero padding), with random bits only above its 12 data bits."""
    rng = random.Random(f"{seed}/{c.name}")
    groups = c.groups * FRAMES
    if c.name != "c":
        return [rng.getrandbits(c.in_bits) for _ in range(c.chain[0].beats_in(groups))]
    codes = np.random.default_rng(seed).integers(-4, 4, (groups, 7), dtype=np.int64)
    return [v | rng.getrandbits(4) << 12 for v in fold_beats(codes, 3, 4)]


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("csim_convert")
    (folder / "driver.cpp").write_text(_program())
    exe = folder / "driver"
    argv = [compiler(), *BASE_FLAGS, *WARNINGS, "-Werror", "-isystem", str(header_dir()),
            "-I", str(TEMPLATES / "hls"), str(folder / "driver.cpp"), "-o", str(exe)]
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    return exe


def _run(exe: Path, tmp_path: Path) -> dict[str, list[int]]:
    beats = {c.name: stimulus(c) for c in CASES}
    digits = {c.name: -(-c.in_bits // 4) for c in CASES}
    (tmp_path / "in.txt").write_text("".join(f"{v:0{digits[n]}x}\n" for n in beats for v in beats[n]))
    r = subprocess.run([str(exe), str(tmp_path / "in.txt"), str(tmp_path / "out.txt")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    got: dict[str, list[int]] = {}
    for line in (tmp_path / "out.txt").read_text().splitlines():
        if line.startswith("# "):
            got[line[2:]] = []
        else:
            got[list(got)[-1]].append(int(line, 16))
    return got


def test_kernels_match_reference(driver: Path, tmp_path: Path) -> None:
    got = _run(driver, tmp_path)
    assert list(got) == [c.name for c in CASES]
    for c in CASES:
        beats = stimulus(c)
        want = apply(beats, c.chain)
        assert len(want) == c.chain[-1].beats_out(c.groups * FRAMES)
        assert got[c.name] == want, (c.name, c.chain)
        assert all(v < 1 << c.chain[-1].out_bits for v in got[c.name])  # stream bits above the data: zero
        # negative controls: a neighbouring configuration's reference, and one corrupted beat, disagree
        assert got[c.name] != apply(beats, c.wrong), (c.name, c.wrong)
        corrupt = list(got[c.name])
        corrupt[len(corrupt) // 2] ^= 1
        assert corrupt != want
    codes = np.random.default_rng(11).integers(-4, 4, (CASES[-1].groups * FRAMES, 7), dtype=np.int64)
    assert got["c"] == fold_beats(codes, 3, 6)  # the fold change, end to end


def test_cases_cover_the_edge_cases() -> None:
    prims = [x for c in CASES for x in c.chain]
    for kind in ("split", "join"):
        mine = [x for x in prims if x.kind == kind]
        assert any(x.k == 1 for x in mine) and any(x.s == 1 for x in mine) and any(x.s < x.k for x in mine)
        assert any(x.s % x.k == 0 and x.s > x.k for x in mine) and any(x.s % x.k and x.s > x.k for x in mine)
    for c in CASES:  # element widths: byte multiples, wider than the data somewhere
        assert c.in_bits % 8 == 0 and c.in_bits >= c.chain[0].in_bits and c.out_bits >= c.chain[-1].out_bits
    assert any(c.in_bits > c.chain[0].in_bits for c in CASES) and any(c.out_bits > c.chain[-1].out_bits
                                                                       for c in CASES)

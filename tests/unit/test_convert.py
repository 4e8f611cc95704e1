"""The width converters' Python reference (hlsgen/hw/convert.py): split/join, fold changes, packing.

Every check compares integers with equality; the negative controls show each check can fail: a fold
change with a wrong K, a split that keeps the padding, a producer with garbage in its padding, a
reversed sub-beat order.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from hlsgen.hw.convert import Convert, apply, fold_beats, fold_change, join_beats, split_beats, unfold_beats

RNG = np.random.default_rng(20)
PRIMITIVES = [Convert(kind, w, s, k) for kind in ("split", "join")
              for w, s, k in [(5, 3, 1), (4, 1, 3), (3, 2, 4), (8, 6, 3), (6, 7, 3), (7, 5, 2), (2, 5, 5), (1, 9, 4)]]


def _codes(pixels: int, channels: int, bits: int, signed: bool = True) -> np.ndarray:
    lo, hi = (-(1 << (bits - 1)), 1 << (bits - 1)) if signed else (0, 1 << bits)
    return RNG.integers(lo, hi, (pixels, channels), dtype=np.int64)


def _random_beats(n: int, bits: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(bits) for _ in range(n)]


def _inverse(c: Convert) -> Convert:
    return Convert("join" if c.kind == "split" else "split", c.w, c.s, c.k)


def _zero_padding(beats: list[int], c: Convert) -> list[int]:
    """Wide beats as a join makes them: the last beat of each group zero above its L sub-beats."""
    g, keep = c.wide_beats, (1 << (c.last_subs * c.w)) - 1
    return [v & keep if i % g == g - 1 else v for i, v in enumerate(beats)]


@pytest.mark.parametrize("c", PRIMITIVES, ids=str)
def test_split_join_are_inverse(c: Convert) -> None:
    groups = 7
    beats = _random_beats(c.beats_in(groups), c.in_bits, seed=c.w * 100 + c.s * 10 + c.k)
    out = apply(beats, [c])
    assert len(out) == c.beats_out(groups) and all(0 <= v < 1 << c.out_bits for v in out)
    back = apply(out, [_inverse(c)])
    if c.kind == "join":  # split(join(x)) == x
        assert back == beats
    else:  # join(split(x)) == x with the dropped padding zeroed
        assert back == _zero_padding(beats, c)
        assert (back == beats) == (c.last_subs == c.k)  # differs exactly when padding was dropped


def test_split_join_layout_by_hand() -> None:
    # split(W=4, S=5, K=2): groups of 3 beats holding 2, 2, 1 nibbles; the top nibble of the third dropped
    c = Convert("split", 4, 5, 2)
    assert (c.wide_beats, c.last_subs, c.in_bits, c.out_bits) == (3, 1, 8, 4)
    assert split_beats([0x21, 0x43, 0xF5], c) == [1, 2, 3, 4, 5]
    assert join_beats([1, 2, 3, 4, 5], _inverse(c)) == [0x21, 0x43, 0x05]
    # S < K: one wide beat per group, L = S
    assert split_beats([0x4321, 0x8765], Convert("split", 4, 3, 4)) == [1, 2, 3, 5, 6, 7]
    assert join_beats([1, 2, 3, 5, 6, 7], Convert("join", 4, 3, 4)) == [0x321, 0x765]
    # K == 1: pass-through (bits above W ignored by the join)
    assert split_beats([9, 10, 11], Convert("split", 4, 3, 1)) == [9, 10, 11]
    assert join_beats([0x19, 10, 11], Convert("join", 4, 3, 1)) == [9, 10, 11]


def test_counts_and_cycles() -> None:
    for c in PRIMITIVES:
        g = math.ceil(c.s / c.k)
        assert c.wide_beats == g and c.last_subs == c.s - (g - 1) * c.k and 1 <= c.last_subs <= c.k
        wide, narrow = c.k * c.w, c.w
        assert (c.in_bits, c.out_bits) == ((wide, narrow) if c.kind == "split" else (narrow, wide))
        for groups in (0, 1, 5):
            assert c.cycles(groups) == c.s * groups
            assert (c.beats_in(groups), c.beats_out(groups)) == (
                (g * groups, c.s * groups) if c.kind == "split" else (c.s * groups, g * groups))
    assert Convert("split", 8, 6, 3).cycles(10) == 60 and Convert("join", 8, 7, 3).beats_out(2) == 6


def _fold_cases() -> list[tuple[int, int, int, int]]:
    cases = [(c, a, b, bits) for c in range(1, 10) for a in range(1, c + 1) for b in range(1, c + 1)
             for bits in (1, 3)]
    cases += [(c, a, b, 8) for c in (12, 16, 17) for a, b in itertools.permutations((1, 2, 3, 4, 6, 8, 12), 2)]
    return cases + [(1, 1, 1, 8), (20, 20, 1, 8), (20, 1, 20, 8), (24, 16, 12, 5), (7, 4, 6, 3)]


def test_fold_change_is_exact_with_padding() -> None:
    kinds = set()
    for channels, a, b, bits in _fold_cases():
        codes = _codes(5, channels, bits)
        chain = fold_change(channels, bits, a, b)
        kinds.add(tuple(x.kind for x in chain))
        src, want = fold_beats(codes, bits, a), fold_beats(codes, bits, b)
        assert apply(src, chain) == want, (channels, a, b, bits)
        assert len(chain) == (0 if a == b else 1 if a % b == 0 or b % a == 0 else 2)
        if chain:  # one group per pixel; the chain's ends have the folds' widths
            assert chain[0].beats_in(5) == len(src) and chain[-1].beats_out(5) == len(want)
            assert chain[0].in_bits == a * bits and chain[-1].out_bits == b * bits
            through_gcd = math.ceil(channels / math.gcd(a, b))
            cycles = [x.cycles(5) // 5 for x in chain]
            if [x.kind for x in chain] == ["join", "split"]:  # through lcm(a, b): only where faster
                assert cycles == [math.ceil(channels / a), math.ceil(channels / b)] and max(cycles) < through_gcd
                assert math.lcm(a, b) <= channels
            else:
                assert cycles == [through_gcd] * len(chain)
    assert kinds == {(), ("split",), ("join",), ("split", "join"), ("join", "split")}


def test_fold_change_shapes() -> None:
    assert fold_change(8, 4, 4, 4) == ()
    assert fold_change(7, 4, 6, 2) == (Convert("split", 8, 4, 3),)
    assert fold_change(7, 4, 2, 6) == (Convert("join", 8, 4, 3),)
    assert fold_change(7, 3, 4, 6) == (Convert("split", 6, 4, 2), Convert("join", 6, 4, 3))
    assert fold_change(5, 8, 3, 2) == (Convert("split", 8, 5, 3), Convert("join", 8, 5, 2))  # lcm 6 > 5 channels
    assert fold_change(12, 8, 3, 2) == (Convert("join", 24, 4, 2), Convert("split", 16, 6, 3))  # through 6
    assert fold_change(640, 8, 34, 5) == (Convert("join", 272, 19, 5), Convert("split", 40, 128, 34))
    assert fold_change(640, 8, 512, 3)[0].kind == "split"  # lcm 1,536 x 8 bits is over 4,096: through gcd 1
    assert fold_change(640, 8, 34, 5, within=640)[0].kind == "split"  # the gcd path keeps up: kept (narrower)
    assert fold_change(640, 8, 34, 5, within=639)[0].kind == "join"
    assert fold_change(1, 8, 1, 1) == ()


@pytest.mark.parametrize("channels,bits,a,b", [(4, 8, 0, 2), (4, 8, 2, 5), (4, 8, -1, 1), (4, 8, 1, 0),
                                               (0, 8, 1, 1), (4, 0, 2, 1)])
def test_fold_change_refuses(channels: int, bits: int, a: int, b: int) -> None:
    with pytest.raises(ValueError):
        fold_change(channels, bits, a, b)


def test_value_errors() -> None:
    for bad in [("split", 0, 1, 1), ("join", 1, 0, 1), ("split", 1, 1, 0), ("both", 1, 1, 1), ("join", 2.0, 1, 1)]:
        with pytest.raises(ValueError):
            Convert(*bad)  # type: ignore[arg-type]
    s, j = Convert("split", 4, 5, 2), Convert("join", 4, 5, 2)
    with pytest.raises(ValueError, match="whole number"):
        split_beats([1, 2], s)  # 3 beats per group
    with pytest.raises(ValueError, match="whole number"):
        join_beats([1, 2, 3, 4], j)  # 5 sub-beats per group
    with pytest.raises(ValueError):
        split_beats([1, 2, 3], j)
    with pytest.raises(ValueError):
        join_beats([1, 2, 3, 4, 5], s)
    with pytest.raises(ValueError, match="negative"):
        split_beats([1, -2, 3], s)
    with pytest.raises(ValueError):
        fold_beats(np.zeros((2, 4), np.int64), 8, 5)
    with pytest.raises(ValueError):
        fold_beats(np.zeros(4, np.int64), 8, 2)
    with pytest.raises(ValueError, match="whole number"):
        unfold_beats([1, 2, 3], 4, 8, True, 2)
    with pytest.raises(ValueError):
        unfold_beats([1, 2], 4, 64, False, 2)


def test_fold_beats_layout() -> None:
    codes = np.array([[1, -1, 2, -2, 3], [-8, 7, 0, 5, -3]], np.int64)
    # 4-bit two's complement, fold 2: beats (c0|c1<<4), (c2|c3<<4), (c4) per pixel
    assert fold_beats(codes, 4, 2) == [0xF1, 0xE2, 0x3, 0x78, 0x50, 0xD]
    assert fold_beats(codes, 4, 5) == [0x3E2F1, 0xD5078]
    assert fold_beats(codes, 4, 1) == [1, 15, 2, 14, 3, 8, 7, 0, 5, 13]


@pytest.mark.parametrize("signed", [True, False])
def test_unfold_inverts_fold(signed: bool) -> None:
    for channels, fold, bits in [(1, 1, 8), (5, 2, 4), (7, 7, 3), (16, 3, 8), (9, 4, 1), (6, 4, 16), (3, 2, 63)]:
        codes = _codes(6, channels, bits, signed)
        beats = fold_beats(codes, bits, fold)
        assert len(beats) == 6 * math.ceil(channels / fold)
        got = unfold_beats(beats, channels, bits, signed, fold)
        assert got.dtype == np.int64 and got.shape == codes.shape and np.array_equal(got, codes)
    # extremes of the signed range survive; read with the other signedness they do not (control)
    ext = np.array([[-128, 127, -1, 0]], np.int64)
    assert np.array_equal(unfold_beats(fold_beats(ext, 8, 3), 4, 8, True, 3), ext)
    assert not np.array_equal(unfold_beats(fold_beats(ext, 8, 3), 4, 8, False, 3), ext)


# ---- negative controls: the equality checks above can fail -----------------------------------------------
def test_negative_control_wrong_k() -> None:
    codes = _codes(4, 7, 3)
    (good,) = fold_change(7, 3, 6, 2)  # split(W=6, S=4, K=3)
    wrong = Convert("split", good.w, good.s, good.k - 1)  # reads the fold-6 beats as fold-4 beats
    src, want = fold_beats(codes, 3, 6), fold_beats(codes, 3, 2)
    assert apply(src, [good]) == want
    got = apply(src, [wrong])
    assert len(got) == len(want) and got != want


def test_negative_control_padding_matters() -> None:
    """A producer with garbage in its padding, a split that keeps the padding sub-beats, and a packing
    without per-pixel padding each break the equality of the fold change."""
    codes = _codes(5, 7, 3)
    chain = fold_change(7, 3, 4, 6)  # through fold 2: the last sub-beat holds channel 6 and one pad code
    src, want = fold_beats(codes, 3, 4), fold_beats(codes, 3, 6)
    assert apply(src, chain) == want
    dirty = [v | (0b111 << 9) if i % 2 == 1 else v for i, v in enumerate(src)]  # the pad code of beat 2 set
    assert dirty != src and apply(dirty, chain) != want

    (s,) = fold_change(5, 3, 4, 2)  # split(W=6, S=3, K=2): the 4th sub-beat of each pixel is padding
    src, want = fold_beats(codes[:, :5], 3, 4), fold_beats(codes[:, :5], 3, 2)
    keep_all = [(v >> (j * s.w)) & 63 for v in src for j in range(s.k)]
    assert split_beats(src, s) == want and keep_all != want

    flat = [int(v) & 7 for v in codes[:, :5].ravel()]  # the channels of all pixels back to back, fold 2
    unpadded = [flat[i] | (flat[i + 1] << 3 if i + 1 < len(flat) else 0) for i in range(0, len(flat), 2)]
    assert unpadded != want


def test_negative_control_sub_beat_order() -> None:
    c = Convert("split", 4, 5, 2)
    beats = _random_beats(c.beats_in(9), c.in_bits, seed=3)
    msb_first = [(v >> ((c.k - 1 - j) * c.w)) & 15 for v in beats for j in range(c.k)]
    got = split_beats(beats, c)
    assert len(got) == 45 and got != msb_first[:len(got)]

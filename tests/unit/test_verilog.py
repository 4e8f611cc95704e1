"""The Verilog backend without a simulator: packing, ROM layout, ports, file set, determinism."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))
import rtl_nets  # noqa: E402

from hlsgen.backends.vectors import pack_beats  # noqa: E402
from hlsgen.backends.verilog_values import hex_words, vector  # noqa: E402
from hlsgen.hw.dataflow import build_dataflow  # noqa: E402
from hlsgen.hw.params import MvuParams  # noqa: E402
from hlsgen.pipeline import compile_model  # noqa: E402


def test_hex_words_match_the_stream_packing() -> None:
    rng = np.random.default_rng(0)
    for bits in (3, 4, 6, 8, 13):
        codes = rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), (20, 7))
        assert [int(w, 16) for w in hex_words(codes, bits)] == pack_beats(codes, bits)
    assert vector("V", [-1, 2], 4).value == "2f" and vector("V", [-1, 2], 4).width == 8


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, folds = rtl_nets.grid_net()
    return rtl_nets.compile_to(tmp_path_factory.mktemp("g"), model, hw={"layers": folds, "top": "my_net"})


def test_top_ports_match_vitis_hls(grid: Path) -> None:
    top = (grid / "rtl" / "my_net.sv").read_text()
    header = top[top.index("module my_net ("):top.index(");")]
    ports = re.findall(r"(input|output)\s+logic\s+(?:\[(\d+):0\]\s+)?(\w+)", header)
    assert [(d, p) for d, _, p in ports] == [
        ("input", "ap_clk"), ("input", "ap_rst_n"), ("input", "in_r_TDATA"), ("input", "in_r_TVALID"),
        ("output", "in_r_TREADY"), ("output", "out_r_TDATA"), ("output", "out_r_TVALID"), ("input", "out_r_TREADY")]
    widths = {p: int(w) + 1 for _, w, p in ports if w}
    assert widths == {"in_r_TDATA": 64, "out_r_TDATA": 64}  # hw.io_bits (5 x 8 and 10 x 8 bits a pixel)


def test_file_list_and_testbench(grid: Path) -> None:
    files = (grid / "rtl" / "files.f").read_text().split()
    assert files[-1] == "my_net.sv" and all((grid / "rtl" / f).exists() for f in files)
    assert {"hg_window.sv", "hg_mvu.sv", "hg_pool.sv", "hg_fifo.sv", "hg_fork.sv"} <= set(files)
    tb = grid / "tb"
    assert (tb / "test_my_net.py").exists() and (tb / "hlsgen_tb" / "harness.py").exists()
    assert "TOPLEVEL ?= my_net" in (tb / "Makefile").read_text()
    for py in tb.rglob("*.py"):
        assert not re.search(r"^\s*(import|from) hlsgen[\s.]", py.read_text(), re.M), py


def test_rom_words_decode_to_the_layer_weights(grid: Path) -> None:
    """Word (nf*KK + tap)*SF + sf, lane (pe, s) holds weight [nf*PE + pe, tap, sf*SIMD + s]."""
    _check_rom(grid, "conv_3_node", "my_net")  # PE 4 of 6, SIMD 2 of 5


def test_grouped_conv_rom_holds_only_its_group_channels(tmp_path: Path) -> None:
    """Grouped conv: weights [Cout, Kh, Kw, Cin/group], SF = ceil(Cin/group / SIMD); GROUP reaches hg_mvu."""
    model, folds = rtl_nets.grouped_net()
    out = rtl_nets.compile_to(tmp_path, model, hw={"layers": folds, "top": "my_net"})
    top = (out / "rtl" / "my_net.sv").read_text()
    assert top.count(".GROUP(2)") == 2 and top.count(".GROUP(4)") == 1
    # group 2 (PE 4, SIMD 2 of 4), group 4 (PE 5 of 12, SIMD 2), group 2 (PE 3, SIMD 4 of 6)
    for node, group in zip(folds, (2, 4, 2), strict=True):
        _check_rom(out, node, "my_net", group)


def _check_rom(out: Path, node: str, top: str, group: int = 1) -> None:
    c = compile_model(out.parent / "model.onnx", out.parent / "config.yaml", out.parent / "calib.npy")
    df = build_dataflow(c.graph, c.config.hw)
    lay = next(lay for lay in df.layers if lay.node == node)
    assert isinstance(lay.params, MvuParams) and lay.params.group == group
    w = lay.arrays["weights"]
    grid = out
    cout, kh, kw, cin = w.shape
    pe, simd, bits = lay.pe, lay.simd, lay.params.weight_bits
    nf, sf, kk = math.ceil(cout / pe), math.ceil(cin / simd), kh * kw
    assert cin * group == df.streams[lay.inputs[0]].channels
    words = [int(x, 16) for x in (grid / "rtl" / f"{top}_{lay.name}_w.mem").read_text().split()]
    assert len(words) == nf * kk * sf
    for o in range(cout):
        for tap in range(kk):
            for i in range(cin):
                word = words[((o // pe) * kk + tap) * sf + i // simd]
                lane = (o % pe) * simd + i % simd
                v = (word >> (lane * bits)) & ((1 << bits) - 1)
                assert v - ((v >> (bits - 1)) << bits) == w[o, tap // kw, tap % kw, i]


def test_output_is_deterministic(grid: Path, tmp_path: Path) -> None:
    model, folds = rtl_nets.grid_net()
    again = rtl_nets.compile_to(tmp_path, model, hw={"layers": folds, "top": "my_net"})
    for sub in ("rtl", "tb"):
        first = {p.relative_to(grid): p.read_bytes() for p in sorted((grid / sub).rglob("*")) if p.is_file()}
        second = {p.relative_to(again): p.read_bytes() for p in sorted((again / sub).rglob("*")) if p.is_file()}
        assert first == second


def test_rtl_can_be_switched_off(tmp_path: Path) -> None:
    model, _ = rtl_nets.grid_net()
    out = rtl_nets.compile_to(tmp_path, model, hw={"rtl": {"enabled": False}})
    assert not (out / "rtl").exists() and not (out / "tb").exists() and (out / "vectors").exists()

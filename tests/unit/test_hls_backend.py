"""The HLS backend's output (OUT/hls) without a compiler: files, top function, pragmas, FIFO depths,
table layouts, configuration, determinism; and the C-sim runner's input errors."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import model_zoo as zoo
import numpy as np
import onnx
import pytest

from hlsgen.backends.hls import rate_depths as hls_rate_depths
from hlsgen.backends.hls_layers import layer_code
from hlsgen.backends.render import TEMPLATES, TESTBENCH
from hlsgen.cli import main
from hlsgen.config.compile import config_from_dict
from hlsgen.errors import HlsgenError
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.model import Dataflow
from hlsgen.hw.params import MvuParams
from hlsgen.pipeline import compile_model
from hlsgen.report.output import write_compilation
from hlsgen.support.outdir import MARKER
from hlsgen.tools import csim_build
from hlsgen.tools.csim import run_csim

FOLDS_NET = """
name: folds
input: {name: x, shape: [6, 5, 5]}
layers:
  - {name: g, op: conv, filters: 8, kernel: 3, groups: 2, padding: same, activation: relu}
  - {name: f, op: flatten}
  - {name: d, op: dense, units: 7}
"""


def _compile(tmp_path: Path, hw: dict[str, Any] | None = None, name: str = "out") -> tuple[Path, Dataflow]:
    m = zoo.resnet_tiny()
    onnx.save(m, tmp_path / "m.onnx")
    c = compile_model(tmp_path / "m.onnx", config_from_dict({"hw": hw or {}}, "test"), zoo.random_inputs(m, 8, seed=1))
    out, _ = write_compilation(c, tmp_path / name)
    return out, build_dataflow(c.graph, c.config.hw)


@pytest.fixture(scope="module")
def resnet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Dataflow]:
    return _compile(tmp_path_factory.mktemp("hls"))


def test_project_files(resnet: tuple[Path, Dataflow]) -> None:
    hls = resnet[0] / "hls"
    files = {p.relative_to(hls).as_posix() for p in hls.rglob("*") if p.is_file()}
    kernels = {f"src/kernels/{p.name}" for p in (TEMPLATES / "hls" / "kernels").iterdir()}
    tb = {f"tb/{p.name}" for p in (TESTBENCH / "csim").iterdir()}
    generated = {"src/top.cpp", "src/top.h", "src/params.h", "src/weights.h", "tb/tb_glue.h", "hls_config.cfg",
                 "run_hls.tcl", "README.md"}
    assert files == kernels | tb | generated
    for k in kernels:  # copied verbatim
        assert (hls / k).read_bytes() == (TEMPLATES / "hls" / "kernels" / Path(k).name).read_bytes()


def test_top_function_interface(resnet: tuple[Path, Dataflow]) -> None:
    out, df = resnet
    top_h, top = (out / "hls" / "src" / "top.h").read_text(), (out / "hls" / "src" / "top.cpp").read_text()
    assert "void hlsgen_top(hls::stream<hlsgen_top_in_t>& in, hls::stream<hlsgen_top_out_t>& out);" in top_h
    assert f"typedef ap_uint<{df.input.beat_bits}> hlsgen_top_in_t;" in top_h
    assert f"typedef ap_uint<{df.outputs[0].beat_bits}> hlsgen_top_out_t;" in top_h
    for pragma in ("INTERFACE axis port=in", "INTERFACE axis port=out", "INTERFACE ap_ctrl_none port=return",
                   "DATAFLOW"):
        assert f"#pragma HLS {pragma}\n" in top
    assert "PIPELINE II=1" in (out / "hls" / "src" / "kernels" / "mvu.h").read_text()


def test_fifo_depths_are_the_dataflow_ones(resnet: tuple[Path, Dataflow]) -> None:
    """Every edge gets the dataflow's deadlock depth, plus, in front of a sliding-window generator
    or a windowless MVU of several output folds, the rate depth (hls.rate_depths: the generator's
    end-of-frame tail, the MVU's idle folds); nothing else changes."""
    out, df = resnet
    top = (out / "hls" / "src" / "top.cpp").read_text()
    decl = re.findall(r"> (\w+)\(\"\w+\"\);  // (\w+) -> (\w+)\n#pragma HLS STREAM variable=(\w+) depth=(\d+)", top)
    edges = {(stream, layer): int(depth) for var, stream, layer, var2, depth in decl if var == var2}
    edges.update({(df.input.name, df.layers[0].name): df.fifo_depth[(df.input.name, df.layers[0].name)]})
    codes = [layer_code(df, lay) for lay in df.layers]
    assert edges == hls_rate_depths(df, codes)
    consts = {code.name: {c["name"]: c["value"] for c in code.consts} for code in codes}
    first_fold = {n for n, k in consts.items() if "IN_FOLD" in k and k["FOLD_O"] > 1}
    windowed = {code.name for code in codes if code.window} | first_fold
    for edge, depth in df.fifo_depth.items():
        assert edges[edge] >= depth
        if edge[1] not in windowed:
            assert edges[edge] == depth
    assert any(edges[e] > d for e, d in df.fifo_depth.items())  # the ResNet's 32x32 generators need more
    assert max(edges.values()) > 2  # skip FIFOs are deeper than the default
    assert top.count("hlsgen::fork2<") == 2  # the two residual forks


def test_hw_configuration(tmp_path: Path) -> None:
    hw = {"top": "my_net", "hls": {"ap_ctrl": "hs", "part": "xcu250-figd2104-2L-e", "clock_ns": 4.0}}
    out, _ = _compile(tmp_path, hw)
    hls = out / "hls"
    top = (hls / "src" / "top.cpp").read_text()
    assert "void my_net(hls::stream<my_net_in_t>& in, hls::stream<my_net_out_t>& out)" in top
    assert "#pragma HLS INTERFACE ap_ctrl_hs port=return" in top and "ap_ctrl_none" not in top
    cfg, tcl = (hls / "hls_config.cfg").read_text(), (hls / "run_hls.tcl").read_text()
    assert "part=xcu250-figd2104-2L-e\n" in cfg and "clock=4.0ns\n" in cfg and "syn.top=my_net\n" in cfg
    for line in ("set_top my_net", "set_part xcu250-figd2104-2L-e", "create_clock -period 4.0 -name default",
                 "open_project -reset", "open_solution -reset", "add_files -tb", "csim_design", "csynth_design",
                 "cosim_design", "export_design"):
        assert line in tcl


def test_hls_disabled(tmp_path: Path) -> None:
    out, _ = _compile(tmp_path, {"hls": {"enabled": False}})
    assert not (out / "hls").exists() and (out / "vectors" / "meta.json").is_file()
    with pytest.raises(HlsgenError, match="hw.hls.enabled"):
        run_csim(out)


def test_output_is_deterministic(tmp_path: Path) -> None:
    a, _ = _compile(tmp_path, name="a")
    b, _ = _compile(tmp_path, name="b")
    files = sorted(p.relative_to(a) for p in (a / "hls").rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(b) for p in (b / "hls").rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_weight_tables_follow_the_kernel_layout(tmp_path: Path) -> None:
    """Ragged folds (PE, SIMD not dividing the channels) and groups: every weight sits in the ROM of
    PE lane p, word (fo, t, fi), element s (column word*SIMD + s), and all padding lanes are zero."""
    (tmp_path / "m.yaml").write_text(FOLDS_NET)
    cfg = config_from_dict({"hw": {"layers": {"g": {"pe": 3, "simd": 2}, "d": {"pe": 3, "simd": 8}}}}, "t")
    c = compile_model(tmp_path / "m.yaml", cfg)
    df = build_dataflow(c.graph, c.config.hw)
    for layer in df.layers:
        code = layer_code(df, layer)
        words = np.array(next(a for a in code.arrays if a["name"].endswith("_w"))["rows"])
        w = layer.arrays["weights"]
        cout, cin_g = w.shape[0], w.shape[-1]
        p = layer.params
        assert isinstance(p, MvuParams)
        taps = int(np.prod(w.shape[1:-1])) if layer.kind == "conv" else p.in_pixels
        w = w.reshape(cout, taps, -1 if layer.kind == "conv" else p.in_c)
        cin_g = w.shape[2]
        fold_i = -(-cin_g // layer.simd)
        seen = np.zeros(words.shape, bool)
        for o in range(cout):
            for t in range(taps):
                for k in range(cin_g):
                    fo, p, fi, s = o // layer.pe, o % layer.pe, k // layer.simd, k % layer.simd
                    idx = (p, ((fo * taps + t) * fold_i + fi) * layer.simd + s)
                    assert words[idx] == w[o, t, k]
                    seen[idx] = True
        assert not words[~seen].any()
        assert layer.pe == 3 and (cout % 3 or cin_g % layer.simd)


def test_csim_input_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["csim", str(tmp_path / "missing")]) == 2
    with pytest.raises(HlsgenError, match="no such folder"):
        run_csim(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(HlsgenError, match="not a folder written by `hlsgen compile`"):
        run_csim(tmp_path / "empty")
    (tmp_path / "empty" / MARKER).write_text("")
    with pytest.raises(HlsgenError, match="no HLS project"):
        run_csim(tmp_path / "empty")
    monkeypatch.setenv("CXX", "no-such-compiler-xyz")
    with pytest.raises(HlsgenError, match="no-such-compiler-xyz"):
        csim_build.compiler()


def test_header_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vitis = tmp_path / "vitis"
    (vitis / "include").mkdir(parents=True)
    (vitis / "include" / "ap_int.h").write_text("")
    monkeypatch.setenv("XILINX_HLS", str(vitis))
    assert csim_build.header_dir() == vitis / "include"
    monkeypatch.delenv("XILINX_HLS")
    assert (csim_build.header_dir() / "hls_stream.h").is_file()  # the hls4ml copy
    monkeypatch.setenv("XILINX_HLS", str(tmp_path / "nothing"))
    monkeypatch.setattr(csim_build.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(HlsgenError, match=r"XILINX_HLS.*hls4ml") as e:
        csim_build.header_dir()
    assert "nothing" in str(e.value)

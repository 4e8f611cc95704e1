"""C simulation (g++) of the HLS output, op by op: every kernel, fusion and edge case, bit-exact.

The op cases are grouped into few designs so that each is compiled once:
  ops_int8  a 14-layer net (below) with int8 asymmetric activations, round half even, percentile
            calibration (so activations saturate at both ends)
  ops_mixed the same net with uint8 activations, round half up, 4/6/8-bit weights and 4/6/8-bit
            activations, and PE/SIMD folds that do not divide the channel counts
  ties_*    a hand-made QDQ model whose scales are powers of two, so that most requant results are
            exact ties: half_even and half_up must differ, and C-sim must match each
Every layer's stream is compared (csim with layers=True), not only the outputs. The negative
controls (a corrupted table or rounding mode must fail, naming its layer) are in test_csim_negative.
"""

from __future__ import annotations

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from hlsgen.backends.hls_lint import lint_hls
from hlsgen.backends.vectors import read_hex, unpack_beats
from hlsgen.config.compile import config_from_dict
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.model import Dataflow, Kind
from hlsgen.hw.params import MvuParams, requant_step, sliding_window
from hlsgen.pipeline import Compilation, compile_model
from hlsgen.report.output import write_compilation
from hlsgen.tools.csim import CsimResult, csim
from hlsgen.tools.csim_build import BASE_FLAGS, compiler, header_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from onnx_builders import init, model, node, vi  # noqa: E402

OPS_NET = """
name: ops_net
input: {name: x, shape: [4, 12, 12]}
seed: 3
calibration: {samples: 16, distribution: normal, seed: 2}
layers:
  - {name: c1, op: conv, filters: 8, kernel: 3, padding: same, activation: relu6}          # pad, ReLU6
  - {name: c2, op: conv, filters: 8, kernel: 3, padding: same, dilation: 2,
     activation: leaky_relu, alpha: 0.1}                                                    # dilation, leaky
  - {name: c3, op: conv, filters: 8, kernel: 3, padding: same, groups: 2}                   # grouped
  - {name: res, op: add, inputs: [c3, c1], activation: leaky_relu, alpha: 0.2}              # residual + requant
  - {name: dw, op: conv, filters: 8, kernel: 3, stride: 2, padding: same, groups: 8,
     activation: relu}                                                                      # depthwise s2 SAME_UPPER
  - {name: pw, op: conv, filters: 12, kernel: 1, activation: relu}                          # pointwise
  - {name: a1, op: conv, filters: 12, kernel: 1, activation: relu}
  - {name: a2, op: conv, filters: 12, kernel: [3, 1], padding: [1, 0, 1, 0], inputs: [pw],
     activation: relu}                                                                      # non-square kernel
  - {name: sum, op: add, inputs: [a1, a2]}                                                  # standalone add
  - {name: sum2, op: add, inputs: [sum, pw]}                                                # pw: 3 readers
  - {name: mp, op: maxpool, kernel: 3, stride: 2, padding: 1}                               # padded max pool
  - {name: ap, op: avgpool, kernel: 2, stride: 1}
  - {name: f, op: flatten}
  - {name: fc1, op: dense, units: 16, activation: relu}                                     # 4-pixel input
  - {name: fc2, op: dense, units: 10, bias: false}                                          # no bias
"""

WIDE_NET = """
name: wide
input: {name: x, shape: [8, 4, 4]}
layers:
  - {name: c1, op: conv, filters: 160, kernel: 1, activation: relu}   # 1280-bit beats: AP_INT_MAX_W
  - {name: c2, op: conv, filters: 8, kernel: 3, padding: same}
  - {name: ap, op: avgpool, kernel: 3, stride: 1, padding: 1, count_include_pad: true}  # padded average
  - {name: gmp, op: maxpool, kernel: 4}                                                 # global max
"""

CONFIGS: dict[str, dict[str, Any]] = {
    "ops_int8": {"quant": {"calibration": "percentile", "percentile": 99.0}},
    "ops_mixed": {"quant": {"rounding": "half_up", "act_signed": False, "weight_bits": 4,
                            "calibration": "percentile", "percentile": 99.0},
                  "layers": {"c2": {"act_bits": 6}, "dw": {"weight_bits": 6}, "pw": {"act_bits": 4},
                             "fc1": {"weight_bits": 8, "act_bits": 6}},
                  "hw": {"layers": {"c2": {"pe": 3, "simd": 3}, "c3": {"pe": 3, "simd": 3}, "dw": {"pe": 3},
                                    "fc1": {"pe": 5, "simd": 7}}}},
}


def build(folder: Path, model_path: Path, config: dict[str, Any],
          calib: Path | None = None) -> tuple[Path, Dataflow, Compilation]:
    c = compile_model(model_path, config_from_dict(config, "test"), calib)
    out, _ = write_compilation(c, folder)
    return out, build_dataflow(c.graph, c.config.hw), c


def tie_model() -> onnx.ModelProto:
    """QDQ model whose every requant ratio is 1/2 or 1/4: residual conv, conv + ReLU6 (its clip at 6
    lies inside the int8 range: a lowered HI), x + x add, avg pool."""
    rng = np.random.default_rng(7)
    c = 4

    def qdq(x: str, scale: str, out: str) -> list[onnx.NodeProto]:
        return [node("QuantizeLinear", [x, scale, "z8"], [out + "_q"], name="q_" + out),
                node("DequantizeLinear", [out + "_q", scale, "z8"], [out], name="dq_" + out)]

    nodes = [*qdq("x", "s_x", "xd"),
             node("DequantizeLinear", ["w1q", "s_w", "z_w"], ["w1"], name="dq_w1", axis=0),
             node("DequantizeLinear", ["w2q", "s_w", "z_w"], ["w2"], name="dq_w2", axis=0),
             node("Conv", ["xd", "w1"], ["c1"], name="conv1"), *qdq("c1", "s_c", "c1d"),
             node("Add", ["c1d", "xd"], ["r"], name="res"), *qdq("r", "s_c", "rd"),
             node("Conv", ["rd", "w2"], ["c2c"], name="conv2"),
             node("Clip", ["c2c", "lo6", "hi6"], ["c2"], name="relu6"), *qdq("c2", "s_c", "c2d"),
             node("Add", ["c2d", "c2d"], ["a"], name="twice"), *qdq("a", "s_a", "ad"),
             node("AveragePool", ["ad"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             *qdq("p", "s_a", "y")]
    inits = [init("s_x", 2.0 ** -5), init("z8", 0, np.int8), init("s_w", [0.5] * c), init("z_w", [0] * c, np.int8),
             init("w1q", rng.integers(-7, 8, (c, c, 1, 1)), np.int8),
             init("w2q", rng.integers(-7, 8, (c, c, 1, 1)), np.int8), init("s_c", 2.0 ** -4), init("s_a", 2.0 ** -2),
             init("lo6", 0.0), init("hi6", 6.0)]
    return model(nodes, [vi("x", [1, c, 6, 6])], [vi("y", [1, c, 3, 3])], inits)


def two_outputs_model() -> onnx.ModelProto:
    """conv -> relu is a network output and also feeds a second conv, the other output."""
    rng = np.random.default_rng(0)
    nodes = [node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             node("Relu", ["c1"], ["y1"], name="relu1"), node("Conv", ["y1", "w2"], ["y2"], name="conv2")]
    inits = [init("w1", rng.normal(0, 0.3, (4, 3, 3, 3))), init("w2", rng.normal(0, 0.3, (5, 4, 1, 1)))]
    return model(nodes, [vi("x", [1, 3, 6, 6])], [vi("y1", [1, 4, 6, 6]), vi("y2", [1, 5, 6, 6])], inits)


@pytest.fixture(scope="module")
def designs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Dataflow, CsimResult, Compilation]]:
    """Every design of this module, compiled and C-simulated once (every layer compared)."""
    root = tmp_path_factory.mktemp("csim_ops")
    (root / "ops.yaml").write_text(OPS_NET)
    onnx.save(tie_model(), root / "ties.onnx")
    np.save(root / "calib.npy", np.random.default_rng(1).standard_normal((8, 4, 6, 6)).astype(np.float32) * 2)
    made = {name: build(root / name, root / "ops.yaml", cfg) for name, cfg in CONFIGS.items()}
    onnx.save(two_outputs_model(), root / "two.onnx")
    np.save(root / "calib3.npy", np.random.default_rng(1).standard_normal((8, 3, 6, 6)).astype(np.float32))
    (root / "wide.yaml").write_text(WIDE_NET)
    made["wide_beats"] = build(root / "wide_beats", root / "wide.yaml", {})
    # io_bits 0: the ports carry whole pixels, so y1 is forked straight to its port
    made["two_outputs"] = build(root / "two_outputs", root / "two.onnx",
                                {"hw": {"rtl": {"enabled": False}, "io_bits": 0}}, root / "calib3.npy")
    for rounding in ("half_even", "half_up"):
        made[f"ties_{rounding}"] = build(root / f"ties_{rounding}", root / "ties.onnx",
                                         {"quant": {"rounding": rounding}}, root / "calib.npy")
    with ThreadPoolExecutor(max_workers=2) as pool:  # g++ runs in subprocesses: use both cores
        results = dict(zip(made, pool.map(lambda d: csim(d[0], layers=True), made.values()), strict=True))
    return {name: (out, df, results[name], c) for name, (out, df, c) in made.items()}


@pytest.mark.parametrize("name", ["ops_int8", "ops_mixed", "ties_half_even", "ties_half_up", "two_outputs",
                                  "wide_beats"])
def test_csim_bit_exact_every_layer(designs: dict, name: str) -> None:
    out, df, result, _ = designs[name]
    assert result.divergence is None, str(result.divergence)
    assert result.passed and "PASS" in result.output
    assert lint_hls(out / "hls") == []


def test_two_outputs_fork_to_a_port(designs: dict) -> None:
    out, df, result, _ = designs["two_outputs"]
    top = (out / "hls" / "src" / "top.cpp").read_text()
    assert "hls::stream<hlsgen_top_out_0_t>& out_0, hls::stream<hlsgen_top_out_1_t>& out_1" in top
    assert re.search(r"fork2<36>\(s_y1, s_y1_0, out_0\)", top)
    assert "PASS: 4 frames, 288 output beats" in result.output  # 4 x (36 + 36) beats


HEAVY = {"ops_wide": {"quant": {"act_bits": 16, "act_symmetric": True, "multiplier_bits": 24}},
         "ops_narrow": {"quant": {"weight_bits": 2, "act_bits": 3, "rounding": "half_up", "act_signed": False},
                        "hw": {"pe": 8, "simd": 8, "frames": 8}}}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(HEAVY))
def test_extreme_widths_and_folds(name: str, tmp_path: Path) -> None:
    (tmp_path / "ops.yaml").write_text(OPS_NET)
    out, df, _ = build(tmp_path / "out", tmp_path / "ops.yaml", HEAVY[name])
    assert {s.bits for s in df.streams.values()} == {16 if name == "ops_wide" else 3}
    r = csim(out, layers=True)
    assert r.passed and r.divergence is None, str(r.divergence)
    assert lint_hls(out / "hls") == []


def _features(df: Dataflow) -> set[str]:
    found = set()
    for lay in df.layers:
        p, w = lay.params, sliding_window(lay.params)
        found.add(lay.kind)
        if isinstance(p, MvuParams) and w is not None:
            flags = {"dilation": w.dilations != (1, 1), "stride2": w.strides == (2, 2),
                     "asymmetric_pads": w.pads[0] != w.pads[2], "grouped": 1 < p.group < p.in_c,
                     "pointwise": w.kernel == (1, 1), "residual": p.residual, "relu6": p.act == "clip",
                     "padded": any(w.pads)}
            found |= {f for f, on in flags.items() if on}
        if "mult_neg" in lay.arrays or isinstance(p, MvuParams) and p.epilogue.out.mult_neg is not None:
            found.add("leaky")
        if isinstance(p, MvuParams) and w is None:
            found.add("multi_pixel_gemm" if p.in_pixels > 1 else "gemm")
        if isinstance(p, MvuParams) and (lay.pe > 1 and p.out_c % lay.pe or lay.simd > 1 and p.in_c % lay.simd):
            found.add("ragged_fold")
    return found


def test_designs_cover_every_op_and_edge_case(designs: dict) -> None:
    """The designs above really contain what this module claims to test."""
    int8, mixed = designs["ops_int8"][1], designs["ops_mixed"][1]
    want = {"conv", "dwconv", "gemm", "maxpool", "avgpool", "add", "requant", "dilation", "stride2", "grouped",
            "asymmetric_pads", "pointwise", "residual", "relu6", "leaky", "multi_pixel_gemm", "padded"}
    assert want <= _features(int8)
    assert "ragged_fold" in _features(mixed)
    assert max(len(int8.consumers(s)) for s in int8.streams) == 3  # a 3-way fork (a chain of fork2)
    wide = designs["wide_beats"][1]
    assert max(s.beat_bits for s in wide.streams.values()) > 1024
    assert {lay.kind for lay in wide.layers} == {"conv", "avgpool", "maxpool"}
    last, before = (sliding_window(lay.params) for lay in wide.layers[-1:-3:-1])
    assert last is not None and before is not None and last.kernel == (4, 4) and any(before.pads)
    top = (designs["wide_beats"][0] / "hls" / "src" / "top.cpp").read_text()
    assert "hlsgen::global_maxpool<" in top and "hlsgen::avgpool<" in top
    bits = {(s.bits, s.signed) for s in mixed.streams.values()}
    assert {(4, False), (6, False), (8, False)} <= bits
    weights = {lay.params.weight_bits for lay in mixed.layers if isinstance(lay.params, MvuParams)}
    assert {4, 6, 8} <= weights
    fc2 = designs["ops_int8"][3].float_graph.node("fc2")
    assert fc2.op == "Gemm" and not designs["ops_int8"][3].float_graph.tensor(fc2.inputs[2]).data.any()  # no bias
    zps = [rq.zp for lay in int8.layers if (rq := requant_step(lay.params)) is not None]
    assert any(z not in (0, -128) for z in zps)  # asymmetric zero points


def _codes(out: Path, entry: str) -> np.ndarray:
    import json

    meta = json.loads((out / "vectors" / "meta.json").read_text())
    e = next(x for x in meta["layers"] if x["name"] == entry)
    return unpack_beats(read_hex(out / "vectors" / e["file"]), e["channels"], e["bits"], e["signed"])


def test_saturation_at_both_ends(designs: dict) -> None:
    """Layers without an activation clamp at both ends of their type in the compared vectors."""
    for name in ("ops_int8", "ties_half_even"):
        out, df, _, _ = designs[name]
        plain = [(lay, rq) for lay in df.layers if (rq := requant_step(lay.params)) is not None
                 and getattr(lay.params, "act", "none") == "none"]
        hits = [(int(c.min()) == rq.lo, int(c.max()) == rq.hi) for lay, rq in plain for c in [_codes(out, lay.output)]]
        assert any(lo for lo, _ in hits) and any(hi for _, hi in hits), name


def test_relu6_clips_below_the_type_maximum(designs: dict) -> None:
    out, df, _, _ = designs["ties_half_even"]
    conv2 = [lay for lay in df.layers if lay.kind != Kind.CONVERT][1]
    p = conv2.params
    assert isinstance(p, MvuParams) and p.act == "clip" and p.requant.lo == 0 and p.requant.hi == 96  # 6 / 2^-4
    codes = _codes(out, conv2.output)
    assert int(codes.min()) == 0 and int(codes.max()) == 96 and (codes == 96).sum() > 1


def test_rounding_ties_change_every_layer(designs: dict) -> None:
    """half_even and half_up give different golden streams in every layer (ties are frequent), and
    C-sim matched both (test above)."""
    (even, df, _, _), up = designs["ties_half_even"], designs["ties_half_up"][0]
    layers = sorted(f"{lay.output}.hex" for lay in df.layers if lay.kind != Kind.CONVERT)  # port converters copy
    assert len(layers) == 4 and {p.name for p in (even / "vectors" / "layers").iterdir()} >= set(layers)
    for f in layers:
        assert (even / "vectors" / "layers" / f).read_text() != (up / "vectors" / "layers" / f).read_text(), f


def test_exact_width_tables_compute_the_same(designs: dict, tmp_path: Path) -> None:
    """The synthesis view of the tables (ap_int<bits> elements, -DHLSGEN_EXACT_ROM: what Vitis
    compiles) gives the same outputs as the C-integer view; 4/6-bit weights, ragged folds."""
    hls = designs["ops_mixed"][0] / "hls"
    binary = tmp_path / "exact"
    subprocess.run([compiler(), *BASE_FLAGS, "-DHLSGEN_EXACT_ROM", "-isystem", str(header_dir()),
                    "-Wno-unknown-pragmas", str(hls / "src" / "top.cpp"), str(hls / "tb" / "tb_main.cpp"),
                    "-o", str(binary)], check=True)
    run = subprocess.run([str(binary), str(hls.parent / "vectors")], capture_output=True, text=True)
    assert run.returncode == 0 and "PASS" in run.stdout, run.stdout

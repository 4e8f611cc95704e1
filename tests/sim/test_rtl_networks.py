"""Whole networks through `hlsgen compile` + `hlsgen rtlsim` (Verilator): every output bit-exact
with and without random valid/ready stalls, cycles per frame within 5% of the cycle model, and
negative controls that must be caught with the right layer named.

Each design is built once (rtlsim caches builds by source content); the corrupted-weight control
reuses the build of the design it corrupts, since weights are read at run time ($readmemh).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import model_zoo
import pytest
import rtl_nets
from example_models import make_example

from hlsgen.tools.rtlsim import run_rtlsim

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 0.05


def check_bit_exact(out: Path, sim: str = "verilator", frames: int | None = None) -> dict:
    assert run_rtlsim(out, sim=sim, frames=frames, seed=7) == 0
    res = rtl_nets.results(out, sim)
    assert set(res) == {"throughput", "random_stalls"}
    for r in res.values():
        assert r["passed"] and r["mismatches"] == 0 and r["beats"] == r["expected_beats"] > 0
        assert r["first_layer"] is None and len(r["layers"]) > 0  # every layer trace matched too
    log = rtl_nets.build_log(out, sim)
    assert log.exists() and "%Warning" not in log.read_text()  # the full build is warning-free too
    t = res["throughput"]
    assert abs(t["cycles_per_frame"] / t["model_cycles"] - 1) <= TOLERANCE, t
    return res


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, folds = rtl_nets.grid_net()
    return rtl_nets.compile_to(tmp_path_factory.mktemp("grid8"), model, hw={"layers": folds})


def test_grid_int8_half_even(grid: Path) -> None:
    check_bit_exact(grid)


@pytest.mark.heavy  # the RTL fuzz slice draws 2..8-bit weights, unsigned activations and half_up by default
def test_grid_int4_weights_uint6_acts_half_up(tmp_path: Path) -> None:
    model, folds = rtl_nets.grid_net(seed=1)
    quant = {"weight_bits": 4, "act_bits": 6, "act_signed": False, "rounding": "half_up"}
    check_bit_exact(rtl_nets.compile_to(tmp_path, model, quant, {"layers": folds}))


# heavy: the third grouped conv as the bottleneck (same 648-cycle model as the second) only in `make test-all`
@pytest.mark.parametrize("bottleneck,model_cycles",
                         [(1, 1512), (2, 648), pytest.param(3, 648, marks=pytest.mark.heavy)])
def test_grouped_convs_run_at_the_modelled_speed(bottleneck: int, model_cycles: int, tmp_path: Path) -> None:
    """Grouped convs (group 2 and 4, dividing and non-dividing PE/SIMD) each step through only their
    group's Cin/group channels: bit-exact with random stalls, cycles/frame within 5% of the model with
    each grouped conv in turn the bottleneck (run as dense convs they took `group` times longer)."""
    model, folds = rtl_nets.grouped_net(bottleneck)
    res = check_bit_exact(rtl_nets.compile_to(tmp_path, model, hw={"layers": folds}))
    assert res["throughput"]["model_cycles"] == model_cycles


@pytest.fixture(scope="module")
def two_step(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two-step epilogues (step 1 saturating and rounding on ties; step 2 with a BN bias, a residual
    skip that is the layer's own input, a LeakyReLU): see tests/two_step_model.py."""
    from two_step_model import two_step_model

    return rtl_nets.compile_to(tmp_path_factory.mktemp("two_step"), two_step_model(),
                               hw={"frames": 3})


def test_two_step_network(two_step: Path) -> None:
    check_bit_exact(two_step)


# heavy: the step-1 shift mutant (the clamp mutant is the default negative control of the two-step RTL)
@pytest.mark.parametrize("what", ["clamp", pytest.param("shift", marks=pytest.mark.heavy)])
def test_corrupted_intermediate_step_is_caught(two_step: Path, tmp_path: Path, what: str) -> None:
    """Negative controls: widening step 1's clamp, or one bit more of step-1 shift (the intermediate
    rounding changed), is caught at that layer."""
    out = tmp_path / "out"
    shutil.copytree(two_step, out, ignore=shutil.ignore_patterns("rtlsim"))
    top = out / "rtl" / "hlsgen_top.sv"
    text = top.read_text()
    unit = text.index("u_layer_conv1 (")
    begin = text.rindex("hg_mvu #(", 0, unit)
    block = text[begin:unit]
    if what == "clamp":
        new = block.replace(".MID_LO(-128)", ".MID_LO(-255)").replace(".MID_HI(127)", ".MID_HI(255)")
    else:
        start = block.index("'h", block.index(".SHIFT1(")) + 2
        end = block.index(")", start)
        value = int(block[start:end], 16)
        new = block[:start] + format(value + sum(1 << (5 * i) for i in range(4)), "x").rjust(end - start, "0") \
            + block[end:]
    assert new != block
    top.write_text(text[:begin] + new + text[unit:])
    assert run_rtlsim(out, frames=2, waves=True) == 1
    for r in rtl_nets.results(out).values():
        assert r["first_layer"]["layer"] == "layer_conv1"


# heavy: the zoo MLP (an MLP goes through the RTL by default in test_example[mlp_yaml])
# heavy: dw_separable too (depthwise convs go through the RTL in the fuzz slice, the design is linted in test_rtl_lint)
@pytest.mark.parametrize("name", ["resnet_tiny", pytest.param("dw_separable", marks=pytest.mark.heavy),
                                  pytest.param("mlp", marks=pytest.mark.heavy)])
def test_model_zoo_network(name: str, tmp_path: Path) -> None:
    model = getattr(model_zoo, name)(seed=0)
    check_bit_exact(rtl_nets.compile_to(tmp_path, model, hw={"frames": 3}))


@pytest.mark.parametrize("name,model", [("qdq_cnn", "model.onnx"), ("mlp_yaml", "model.yaml")])
def test_example(name: str, model: str, tmp_path: Path) -> None:
    from hlsgen.cli import main

    folder = make_example(name)
    assert main(["compile", str(folder / model), "-o", str(tmp_path / "out")]) == 0
    check_bit_exact(tmp_path / "out")


def test_corrupted_weight_is_caught_and_layer_named(grid: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(grid, out, ignore=shutil.ignore_patterns("rtlsim"))
    mem = next(out.glob("rtl/*layer_conv_7_node_w.mem"))
    words = mem.read_text().split()
    mid = len(words) // 2
    words[mid] = "".join("0123456789abcdef"[15 - int(d, 16)] for d in words[mid])  # invert every weight bit
    mem.write_text("\n".join(words) + "\n")
    assert run_rtlsim(out, frames=2) == 1
    res = rtl_nets.results(out)
    for r in res.values():
        assert not r["passed"] and r["first_mismatch"] is not None
        assert r["first_layer"]["layer"] == "layer_conv_7_node"
    waves = [p for p in (out / "rtlsim" / "verilator-waves").glob("dump.*") if p.suffix in (".fst", ".vcd")]
    assert waves and waves[0].stat().st_size > 0  # the mismatch was rerun with a waveform


def test_corrupted_multiplier_is_caught_and_layer_named(grid: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(grid, out, ignore=shutil.ignore_patterns("rtlsim"))
    top = out / "rtl" / "hlsgen_top.sv"
    text = top.read_text()
    unit = text.index("u_layer_conv_7_node (")  # the dilated stride-2 conv with LeakyReLU
    start = text.index("'h", text.rindex(".MULT(", 0, unit)) + 2
    end = text.index(")", start)
    text = text[:start] + "0" * (end - start) + text[end:]  # every multiplier 0: all outputs = zp
    top.write_text(text)
    assert run_rtlsim(out, frames=2, waves=True) == 1  # waves now: one build, no rerun
    for r in rtl_nets.results(out).values():
        assert r["first_layer"]["layer"] == "layer_conv_7_node"


def test_unforwarded_line_buffer_write_is_caught(tmp_path: Path) -> None:
    """Negative control of hg_window's write forwarding: a dense layer's window (one pixel) reads
    the pixel the cycle after its push, while the lagging write is putting it into the buffer."""
    from hlsgen.cli import main

    out = tmp_path / "out"
    assert main(["compile", str(make_example("mlp_yaml") / "model.yaml"), "-o", str(out)]) == 0
    sv = out / "rtl" / "hg_window.sv"
    text = sv.read_text()
    old = "fwd_r <= push_d && waddr_d == raddr4;"
    assert old in text
    sv.write_text(text.replace(old, "fwd_r <= 1'b0;"))
    assert run_rtlsim(out, frames=2) == 1
    for r in rtl_nets.results(out).values():
        assert not r["passed"] and r["first_layer"]["layer"] == "layer_fc1"


def test_cli_prints_cycles_and_latency(grid: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "hlsgen.cli", "rtlsim", str(grid), "--frames", "3"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "cycles/frame (model 3,402" in r.stdout and "first-frame latency" in r.stdout
    assert r.stdout.count("bit-exact") == 2


def test_bad_output_folder_is_one_line_error(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "hlsgen.cli", "rtlsim", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and "hlsgen compile" in r.stderr and r.stderr.count("\n") == 1


@pytest.mark.heavy
def test_grid_on_icarus(grid: Path) -> None:
    check_bit_exact(grid, sim="icarus", frames=2)


@pytest.mark.heavy
def test_resnet_cifar_example(tmp_path: Path) -> None:
    folder = make_example("resnet_cifar")
    out = tmp_path / "out"
    from hlsgen.cli import main

    assert main(["compile", str(folder / "model.onnx"), "--calib", str(folder / "calib.npy"), "-c",
                 str(folder / "config.yaml"), "-o", str(out)]) == 0
    check_bit_exact(out, frames=4)

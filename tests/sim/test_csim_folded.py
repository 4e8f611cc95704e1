"""C simulation of folded element-wise layers: add, requant and average pool on PE requant lanes
with ragged folds (PE not dividing the channels), every layer bit-exact against the golden model.
Negative control: one shift of a channel that only the ragged last fold computes, changed in the
generated tables, must fail and be localized to its layer."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from test_csim_ops import OPS_NET, build

from hlsgen.tools.csim import csim

FOLDS = {"hw": {"layers": {"sum": {"pe": 5}, "sum2": {"pe": 12}, "res.leaky_relu": {"pe": 3}, "ap": {"pe": 5}}},
         "quant": {"calibration": "percentile", "percentile": 99.0}}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("csim_folded")
    (root / "ops.yaml").write_text(OPS_NET)
    out, df, _ = build(root / "folded", root / "ops.yaml", FOLDS)
    pes = {lay.node: lay.pe for lay in df.layers}
    assert (pes["sum"], pes["sum2"], pes["res.leaky_relu"], pes["ap"]) == (5, 12, 3, 5)
    return out


def test_folded_layers_bit_exact(project: Path) -> None:
    r = csim(project, layers=True)
    assert r.passed, r.divergence


def test_negative_control_last_fold_shift(project: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(project, bad, ignore=shutil.ignore_patterns("build"))
    weights = bad / "hls" / "src" / "weights.h"
    text = weights.read_text()
    # layer_sum_s is [3][5]: the last row's lanes 0 and 1 are channels 10 and 11
    m = re.search(r"(layer_sum_s\[3\]\[5\] = \{\n(?:    \{[^}]*\},\n){2}    \{)(\d+)", text)
    assert m is not None
    weights.write_text(text[:m.start(2)] + str(int(m.group(2)) + 1) + text[m.end(2):])
    r = csim(bad, layers=True)
    assert not r.passed and r.divergence is not None
    assert r.divergence.layer == "layer_sum" and r.divergence.channel == 10

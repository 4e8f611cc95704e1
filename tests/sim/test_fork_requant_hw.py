"""A tensor quantized differently on two branches (issue 20) in hardware: the producer streams its exact
value, a fork feeds one requant per branch. C simulation and the Verilog are bit-exact on both test
nets of tests/unit/test_fork_requant.py, each with a negative control (a wrong branch multiplier)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from fuzz_check import check_csim, check_rtl_and_its_control  # noqa: E402
from rtl_nets import first_table_entry_scaled  # noqa: E402
from test_fork_requant import _compile, conv_fork_per_channel, sum_fork  # noqa: E402

from hlsgen.report.output import write_compilation  # noqa: E402
from hlsgen.tools.csim import csim  # noqa: E402


@pytest.fixture(scope="module", params=[conv_fork_per_channel, sum_fork], ids=["conv_fork", "sum_fork"])
def forked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = write_compilation(_compile(request.param()), tmp_path_factory.mktemp("fork") / "out")
    return out


def test_fork_csim_bit_exact_and_a_wrong_branch_multiplier_is_caught(forked: Path, tmp_path: Path) -> None:
    check_csim(forked)
    bad = tmp_path / "bad"
    shutil.copytree(forked, bad)
    weights = bad / "hls" / "src" / "weights.h"
    weights.write_text(first_table_entry_scaled(weights.read_text(), "layer_r_fork1_m"))
    assert not csim(bad, layers=True).passed


def test_fork_rtl_bit_exact_and_a_wrong_branch_multiplier_is_caught(forked: Path, tmp_path: Path) -> None:
    def bump(bad: Path) -> None:  # the second branch's channel-0 multiplier (the packed word's low 16 bits) doubled
        top = bad / "rtl" / "hlsgen_top.sv"
        text = top.read_text()
        m = re.search(r"module hlsgen_top__layer_r_fork1 .*?\.A_MULT\(64'h[0-9a-f]*([0-9a-f]{4})\)", text, re.S)
        assert m
        top.write_text(text[:m.start(1)] + f"{int(m.group(1), 16) * 2 & 0xFFFF:04x}" + text[m.end(1):])

    check_rtl_and_its_control(forked, tmp_path, bump)

"""An exact accumulator output (a last MatMul the model does not quantize, issue 20) in hardware: its
19-bit codes are bit-exact in C simulation and in the Verilog, each with a negative control."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import model_zoo
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from fuzz_check import check_csim, check_rtl_and_its_control  # noqa: E402
from test_exact_outputs import _strip_output_quantizer, kws_like_mlp  # noqa: E402

from hlsgen import compile_model  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402
from hlsgen.report.output import write_compilation  # noqa: E402
from hlsgen.tools.csim import csim  # noqa: E402


@pytest.fixture(scope="module")
def exact_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("exact")
    float_model = kws_like_mlp()
    qdq = model_zoo.qdq_quantize(float_model, model_zoo.random_inputs(float_model, 16, seed=1), tmp_dir=root)
    c = compile_model(from_onnx_model(_strip_output_quantizer(qdq), "exact"))
    assert any(note.kind == "exact_output" for note in c.graph.notes)
    out, _ = write_compilation(c, root / "out")
    return out


def test_exact_output_csim_bit_exact_and_a_wrong_bias_is_caught(exact_out: Path, tmp_path: Path) -> None:
    check_csim(exact_out)
    bad = tmp_path / "bad"
    shutil.copytree(exact_out, bad)
    weights = bad / "hls" / "src" / "weights.h"
    text = weights.read_text()
    tables = list(re.finditer(r"_b\[\d+\]\[\d+\] = \{\s*\{(-?\d+)", text))
    m = tables[-1]  # the last layer's bias: its output is the sum itself, so +1 shows
    weights.write_text(text[:m.start(1)] + str(int(m.group(1)) + 1) + text[m.end(1):])
    assert not csim(bad, layers=True).passed


def test_exact_output_rtl_bit_exact_and_a_wrong_weight_is_caught(exact_out: Path, tmp_path: Path) -> None:
    def flip_first_weight_bit(bad: Path) -> None:
        mem = sorted((bad / "rtl").glob("*_w.mem"))[0]  # the last layer's ROM (MatMul_11 < MatMul_2)
        words = mem.read_text().split()
        words[0] = f"{int(words[0], 16) ^ 1:0{len(words[0])}x}"
        mem.write_text("".join(w + "\n" for w in words))

    check_rtl_and_its_control(exact_out, tmp_path, flip_first_weight_bit)

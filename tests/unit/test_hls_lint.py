"""The synthesizable-style check (hlsgen.backends.hls_lint): it passes every generated design and
catches each rule it claims to check. No compiler needed."""

from __future__ import annotations

from pathlib import Path

import model_zoo as zoo
import pytest

from hlsgen.backends.hls_lint import lint_hls
from hlsgen.backends.render import TEMPLATES
from hlsgen.pipeline import compile_model
from hlsgen.report.output import write_compilation

GOOD_TOP = """
#include "kernels/k.h"
void top(hls::stream<ap_uint<8> >& in, hls::stream<ap_uint<8> >& out) {
#pragma HLS INTERFACE axis port=in
#pragma HLS INTERFACE axis port=out
#pragma HLS INTERFACE ap_ctrl_none port=return
#pragma HLS DATAFLOW
    hls::stream<ap_uint<8> > s("s");
#pragma HLS STREAM variable=s depth=2
    copy<4>(in, s);
    copy<4>(s, out);
#ifdef HLSGEN_TAP
    std::vector<int> allowed_in_tap_blocks;
#endif
}
"""
GOOD_KERNEL = """
// comments may say new, delete, float, std::vector
template <int N> void copy(hls::stream<ap_uint<8> >& a, hls::stream<ap_uint<8> >& b) {
    const int HALF = N / 2;
    for (int i = 0; i < HALF * 2; i++) { b.write(a.read()); }
}
"""


def _write(tmp_path: Path, top: str, kernel: str) -> Path:
    (tmp_path / "src" / "kernels").mkdir(parents=True)
    (tmp_path / "src" / "top.cpp").write_text(top)
    (tmp_path / "src" / "kernels" / "k.h").write_text(kernel)
    return tmp_path


def test_clean_sources_pass(tmp_path: Path) -> None:
    assert lint_hls(_write(tmp_path, GOOD_TOP, GOOD_KERNEL)) == []
    assert lint_hls(TEMPLATES / "hls" / "kernels") == []


@pytest.mark.parametrize("where, old, new, message", [
    ("kernel", "b.write(a.read());", "int* p = new int[4]; b.write(a.read()); delete[] p;", "new"),
    ("kernel", "b.write(a.read());", "void* p = malloc(4); b.write(a.read());", "malloc"),
    ("kernel", "const int HALF", "std::vector<int> v; const int HALF", "std::"),
    ("kernel", "b.write(a.read());", "float f = 0; b.write(a.read());", "floating point"),
    ("kernel", "i < HALF * 2", "i < a.size()", "loop bound"),
    ("kernel", "b.write(a.read()); }", "b.write(a.read()); }\n    copy<N>(a, b);", "recursion: copy -> copy"),
    ("kernel", "// comments", "#include <vector>\n//", "#include <vector>"),
    ("kernel", "b.write(a.read());", "b.write(a.read() % i);", "run-time division or modulo by `i`"),
    ("kernel", "b.write(a.read());", "b.write(a.read() / (i + 1));", "run-time division or modulo by `(i + 1)`"),
    ("top", "#pragma HLS INTERFACE axis port=out\n", "", "port out has no INTERFACE"),
    ("top", "#pragma HLS INTERFACE ap_ctrl_none port=return\n", "", "return"),
    ("top", "#pragma HLS DATAFLOW\n", "", "DATAFLOW"),
    ("top", "#pragma HLS STREAM variable=s depth=2\n", "", "stream s has no STREAM depth"),
])
def test_each_rule_is_enforced(tmp_path: Path, where: str, old: str, new: str, message: str) -> None:
    top, kernel = GOOD_TOP, GOOD_KERNEL
    if where == "top":
        assert old in top
        top = top.replace(old, new)
    else:
        assert old in kernel
        kernel = kernel.replace(old, new)
    problems = lint_hls(_write(tmp_path, top, kernel))
    assert any(message in p for p in problems), problems


def test_mutual_recursion_is_found(tmp_path: Path) -> None:
    kernel = GOOD_KERNEL + "void f(int x) { g(x); }\nvoid g(int y) { if (y) f(y - 1); }\n"
    assert lint_hls(_write(tmp_path, GOOD_TOP, kernel)) == ["recursion: f -> g -> f"]


@pytest.mark.parametrize("name", ["resnet_tiny", "dw_separable", "mlp", "nhwc_tf_style"])
def test_generated_designs_are_synthesizable_style(name: str, tmp_path: Path) -> None:
    m = getattr(zoo, name)()
    c = compile_model(_save(m, tmp_path), None, zoo.random_inputs(m, 8, seed=1))
    out, _ = write_compilation(c, tmp_path / "out")
    assert lint_hls(out / "hls") == []


def _save(m: object, folder: Path) -> Path:
    import onnx

    path = folder / "model.onnx"
    onnx.save(m, path)  # type: ignore[arg-type]
    return path

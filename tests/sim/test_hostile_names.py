"""A model is untrusted input: hostile graph, node and tensor names never become code.

The residual test network is renamed so that every name carries a payload aimed at one of the
generated languages (C++ comment/newline/#include, `*/`, Python `\"\"\"`, Verilog `$system`, Tcl
`[exec]`, Make `$(...)`, shell backticks, a trailing backslash, unicode, 500 characters). Then:
  * every generated text file is scanned: no payload survives anywhere (only `?`-escaped text);
  * the HLS C++ compiles and C-simulates bit-exactly, the Verilog passes `verilator --lint-only`,
    the cocotb module parses to the same statements as a design with plain names, and the design
    simulates bit-exactly under cocotb/Verilator;
  * no canary file was created by any of that.
Negative control: the same scan on a file with a raw payload finds it.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path

import model_zoo
import numpy as np
import onnx
import pytest
from rtl_nets import verilator_lint

from hlsgen.backends.render import UnsafeTemplateValue, render
from hlsgen.cli import main

CANARY = "HLSGEN_CANARY"
PAYLOADS = [
    f'\n#include <stdlib.h>\nstatic int pwn = std::system("touch {CANARY}");\n',
    f'"""; __import__("os").system("touch {CANARY}"); """',
    f'\ninitial $system("touch {CANARY}");\n',
    "*/ int pwn; /* ",
    f"\nexec touch {CANARY}\n",
    f"[exec touch {CANARY}]",
    f"$(shell touch {CANARY})",
    f"`touch {CANARY}`",
    "trailing backslash \\",
    "\r\n#error broken\r\n",
    "名前ñ\u2028x",
    "z" * 500,
]
# what appears in a generated file only if a payload escaped its comment, string or line:
# a raw quote, line break or substitution next to the payload's command (escaped text has `?` there)
FORBIDDEN = ['("touch', "$system", "[exec", "$(shell touch", "`touch", "*/ int pwn", "\n#include <stdlib.h>\nstatic",
             "\n#error", "\nexec touch", "\ninitial", '"""; __import__', "名前", "backslash \\\n", "\r"]


def hostile(model: onnx.ModelProto) -> onnx.ModelProto:
    """Rename the graph, every node and every tensor (inputs, outputs, initializers, edges)."""
    g = model.graph
    names = {n for node in g.node for n in (*node.input, *node.output) if n}
    names |= {t.name for t in (*g.input, *g.output, *g.initializer, *g.value_info)}
    new = {n: f"{PAYLOADS[k % len(PAYLOADS)]}{k}" for k, n in enumerate(sorted(names))}
    for node in g.node:
        node.input[:] = [new.get(n, n) for n in node.input]
        node.output[:] = [new.get(n, n) for n in node.output]
    for k, node in enumerate(g.node):
        node.name = f"{PAYLOADS[(k + 3) % len(PAYLOADS)]}node{k}"
    for t in (*g.input, *g.output, *g.initializer, *g.value_info):
        t.name = new[t.name]
    g.name = PAYLOADS[0] + PAYLOADS[1] + PAYLOADS[2]
    return model


PAYLOAD_LINES = ("#include <stdlib.h>", "static int pwn", "initial $system", "exec touch", "#error", '"""; __import__')


def offending_lines(folder: Path) -> list[str]:
    """Code files (hls/, rtl/, tb/) must hold no escaped payload at all; data files (graph dumps,
    reports, JSON) may show a name JSON-quoted but never let it start a line of its own."""
    found = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix not in (".npy", ".o", ".mem")):
        text = f.read_text(errors="replace")
        if f.relative_to(folder).parts[0] in ("hls", "rtl", "tb"):
            found += [f"{f.relative_to(folder)}: {bad!r}" for bad in FORBIDDEN if bad in text]
        found += [f"{f.relative_to(folder)}: line {line!r}" for line in text.splitlines()
                  if line.strip().startswith(PAYLOAD_LINES)]
    return found


@pytest.fixture(scope="module")
def hostile_out(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("hostile")
    model = hostile(model_zoo.resnet_tiny(seed=2))
    onnx.save(model, base / "m.onnx")
    np.save(base / "calib.npy", model_zoo.random_inputs(model, 8, seed=1))
    previous = Path.cwd()
    os.chdir(base)  # a relative `touch` from the compile itself would land here
    try:
        assert main(["compile", "m.onnx", "--calib", "calib.npy", "-o", str(base / "out")]) == 0
    finally:
        os.chdir(previous)
    yield base / "out"
    assert not list(base.rglob(CANARY))


def test_no_payload_survives_in_any_generated_file(hostile_out: Path) -> None:
    assert offending_lines(hostile_out) == []
    generated = list(hostile_out.rglob("*.*"))
    assert len(generated) > 30  # the scan saw the HLS, RTL, testbench and report files


def test_scan_negative_control(hostile_out: Path, tmp_path: Path) -> None:
    (tmp_path / "top.cpp").write_text("// model" + PAYLOADS[0])
    assert offending_lines(tmp_path) != []


def test_hls_compiles_and_simulates(hostile_out: Path) -> None:
    assert main(["csim", str(hostile_out), "--layers"]) == 0
    assert not list(hostile_out.parent.rglob(CANARY))


def test_verilog_lints(hostile_out: Path) -> None:
    r = verilator_lint(hostile_out / "rtl")
    assert r.returncode == 0 and "%Error" not in r.stderr, r.stderr[-3000:]


def test_cocotb_module_has_only_its_own_statements(hostile_out: Path) -> None:
    (module,) = (hostile_out / "tb").glob("test_*.py")
    tree = ast.parse(module.read_text())
    calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert "__import__" not in calls and not any("system" in c for c in calls)
    docstring = ast.get_docstring(tree) or ""
    assert "?" in docstring and '"""' not in docstring


def test_rtl_simulates_and_nothing_executes(hostile_out: Path) -> None:
    assert main(["rtlsim", str(hostile_out), "--frames", "1"]) == 0
    assert not list(hostile_out.parent.rglob(CANARY))


def test_unescaped_free_text_is_refused() -> None:
    """The render guard: a template that interpolates a raw name raises before writing anything."""
    with pytest.raises(UnsafeTemplateValue):
        render("verilog/files.f.j2", files=["ok.sv", "bad\n$system"])
    assert render("verilog/files.f.j2", files=["ok.sv"]).split() == ["ok.sv"]

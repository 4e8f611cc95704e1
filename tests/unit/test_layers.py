"""The package's layers import only downward, and every module imports alone (docs/architecture.md).

LAYERS lists hlsgen's modules bottom up. A module may import (at module level, in a function, or under
TYPE_CHECKING alike) modules of its own layer or of a lower one, never of a higher one; at module level
no two modules import each other, directly or around a cycle. Every module of the package must belong
to a layer, and every module must import in a fresh interpreter on its own (a cycle that only works
when another module was imported first, as `import hlsgen.hw.lower` once did, fails there).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "hlsgen"

LAYERS: list[tuple[str, tuple[str, ...]]] = [  # bottom up: (layer, module prefixes)
    ("support", ("hlsgen.errors", "hlsgen.support")),
    ("ir", ("hlsgen.ir", "hlsgen.numerics")),
    ("config", ("hlsgen.config", "hlsgen.devices")),
    ("model", ("hlsgen.frontend", "hlsgen.passes", "hlsgen.golden", "hlsgen.data")),
    ("pipeline", ("hlsgen.pipeline",)),
    ("hw", ("hlsgen.hw",)),
    ("backends", ("hlsgen.backends",)),
    ("tools", ("hlsgen.tools", "hlsgen.interop")),
    ("report", ("hlsgen.report",)),
    ("top", ("hlsgen", "hlsgen.cli")),
]


def _modules() -> dict[str, Path]:
    found = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        parts = f.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return found


def layer_of(module: str) -> int:
    """The index of the layer whose longest prefix matches `module` (-1: none)."""
    best, length = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > length:
                best, length = i, len(p)
    return best


def _imports(module: str, path: Path) -> tuple[set[str], set[str]]:
    """(module-level imports, all imports) of hlsgen modules; `from hlsgen.x import y` counts as
    hlsgen.x.y when that is a module, else as hlsgen.x."""
    known = _modules()
    top: set[str] = set()
    every: set[str] = set()

    def add(name: str, at_top: bool) -> None:
        if name.split(".")[0] != "hlsgen":
            return
        every.add(name)
        if at_top:
            top.add(name)

    def visit(node: ast.AST, at_top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, at_top)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                for alias in child.names:
                    full = f"{child.module}.{alias.name}"
                    add(full if full in known else child.module, at_top)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.dump(child.test):
                visit(child, False)
            else:
                visit(child, at_top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(ast.parse(path.read_text()), True)
    return top, every


def test_every_module_has_a_layer() -> None:
    assert [m for m in _modules() if layer_of(m) < 0] == []


def test_imports_point_down() -> None:
    upward = []
    for module, path in _modules().items():
        for target in sorted(_imports(module, path)[1]):
            if layer_of(target) > layer_of(module):
                upward.append(f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} "
                              f"({LAYERS[layer_of(target)][0]})")
    assert upward == []


def test_no_module_level_import_cycle() -> None:
    modules = _modules()
    graph = {m: {t for t in _imports(m, p)[0] if t in modules and t != m} for m, p in modules.items()}
    # a package's __init__ importing its own submodules is not a cycle with them
    for m in graph:
        graph[m] = {t for t in graph[m] if not t.startswith(m + ".")}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def walk(m: str, stack: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t] if t in stack else [m, t])
            elif t not in state:
                walk(t, [*stack, t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            walk(m, [m])
    assert cycles == []


def test_the_layer_test_catches_an_upward_import(tmp_path: Path) -> None:
    """Negative control: hw importing the report is found."""
    path = tmp_path / "m.py"
    path.write_text("import numpy\nfrom hlsgen.report.summary import build_report\n\ndef f():\n"
                    "    from hlsgen.cli import main\n")
    top, every = _imports("hlsgen.hw.fake", path)
    assert top == {"hlsgen.report.summary"} and every == {"hlsgen.report.summary", "hlsgen.cli"}
    assert all(layer_of(t) > layer_of("hlsgen.hw.fake") for t in every)


def _import_alone(module: str) -> tuple[str, int, str]:
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    return module, r.returncode, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""


@pytest.mark.parametrize("chunk", range(2))
def test_every_module_imports_alone(chunk: int) -> None:
    modules = sorted(_modules())[chunk::2]
    with ThreadPoolExecutor(max_workers=2) as pool:
        failed = [r for r in pool.map(_import_alone, modules) if r[1] != 0]
    assert failed == []

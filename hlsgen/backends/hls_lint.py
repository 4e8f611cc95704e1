"""Synthesizable-style check of a generated HLS project (OUT/hls/src): the rules Vitis HLS needs.

`lint_hls(folder)` returns one line per problem (empty: clean). It reads the kernels and the
generated glue, with comments, string literals and `#ifdef HLSGEN_TAP` blocks (C-sim only) removed:
  - no dynamic memory (new, delete, malloc, calloc, realloc, free), no std:: anything (containers,
    strings), no float or double, no #include besides ap_int.h, hls_stream.h and the project's own;
  - no recursion: the call graph of the functions defined in the project has no cycle;
  - constant loop bounds: every `for` compares its counter with an expression of literals and
    compile-time constants (UPPER_CASE names: template parameters, config members, const locals);
  - no run-time division or modulo: the right operand of every `/` and `%` is a literal or a
    compile-time constant (loop counters wrap instead; a division by a constant is a multiply);
  - the top function: an INTERFACE pragma for every port and for `return`, DATAFLOW, and a STREAM
    depth pragma for every stream it declares.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

FORBIDDEN = {
    r"\bnew\b": "dynamic allocation (new)", r"\bdelete\b": "dynamic allocation (delete)",
    r"\b(malloc|calloc|realloc|free)\s*\(": "dynamic allocation (malloc family)",
    r"\bstd::": "a std:: facility (containers, strings, streams)", r"\b(float|double)\b": "floating point",
}
ALLOWED_SYSTEM_INCLUDES = ("ap_int.h", "hls_stream.h", "ap_axi_sdata.h")  # the last: hw.tlast
_CONTROL = {"if", "for", "while", "switch", "return", "sizeof", "static_assert"}


def strip_source(text: str) -> str:
    """Remove comments, string/char literals and `#ifdef HLSGEN_TAP ... #endif` blocks."""
    text = re.sub(r"#ifdef HLSGEN_TAP\b.*?#endif", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', '""', text)


def lint_hls(folder: Path) -> list[str]:
    """Problems of OUT/hls/src (the folder given, or its src/ subfolder)."""
    src = folder / "src" if (folder / "src").is_dir() else folder
    files = {p.relative_to(src).as_posix(): strip_source(p.read_text()) for p in sorted(src.rglob("*"))
             if p.suffix in (".h", ".cpp")}
    problems = [f"{name}: {why}" for name, text in files.items() for pattern, why in FORBIDDEN.items()
                if re.search(pattern, text)]
    problems += [f"{name}: #include <{inc}>" for name, text in files.items()
                 for inc in re.findall(r"#include\s*<([^>]+)>", text) if inc not in ALLOWED_SYSTEM_INCLUDES]
    problems += [f"{name}: loop bound `{b}` is not a compile-time constant" for name, text in files.items()
                 for b in loop_bounds(text) if not constant_expression(b)]
    problems += [f"{name}: run-time division or modulo by `{d}`" for name, text in files.items()
                 for d in divisors(text) if not constant_expression(d)]
    problems += [f"recursion: {' -> '.join(cycle)}" for cycle in call_cycles(files.values())]
    if "top.cpp" in files:
        problems += top_problems(files["top.cpp"])
    return problems


def loop_bounds(text: str) -> list[str]:
    """The right-hand sides of the conditions of every `for (init; i < bound; step)`."""
    out = []
    for cond in re.findall(r"\bfor\s*\([^;]*;([^;]*);", text):
        m = re.match(r"\s*\w+\s*(<=|<|>=|>|!=)\s*(.+?)\s*$", cond)
        out.append(m.group(2) if m else cond.strip())
    return out


def divisors(text: str) -> list[str]:
    """The right operands of `/` and `%` (a name, a literal or a parenthesized expression)."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return [m.group(1) for m in re.finditer(r"[%/]\s*(\([^()]*\)|[\w:]+)", code)]


def constant_expression(expr: str) -> bool:
    names = re.findall(r"[A-Za-z_][\w:]*", expr)
    return all(n.split("::")[-1].isupper() for n in names) and bool(re.fullmatch(r"[\w:\s+\-*/%()]+", expr))


def functions(text: str) -> dict[str, str]:
    """Function definitions (name -> body) found by brace matching outside any function body."""
    found: dict[str, str] = {}
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(([^;{}()]|\([^()]*\))*\)\s*(const\s*)?\{", text):
        name = m.group(1)
        if name in _CONTROL or _depth(text, m.start()) > _namespace_depth(text, m.start()):
            continue
        start = m.end() - 1
        found[name] = text[start:_matching_brace(text, start) + 1]
    return found


def _depth(text: str, pos: int) -> int:
    return text.count("{", 0, pos) - text.count("}", 0, pos)


def _namespace_depth(text: str, pos: int) -> int:
    """Braces opened by namespaces / extern blocks (still open at pos)."""
    return sum(1 for m in re.finditer(r"\bnamespace\s*\w*\s*\{", text[:pos])
               if _matching_brace(text, m.end() - 1) > pos)


def _matching_brace(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return len(text) - 1


def call_cycles(texts: Iterable[str]) -> list[list[str]]:
    defs: dict[str, str] = {}
    for text in texts:
        defs.update(functions(text))
    calls = {f: {g for g in defs if re.search(rf"\b{g}\s*(<[^;(]*>)?\s*\(", body)} for f, body in defs.items()}
    cycles = []
    for start in sorted(calls):
        path = _cycle_from(start, calls, [start])
        if path and path[0] == min(path[:-1]):
            cycles.append(path)
    return cycles


def _cycle_from(node: str, calls: dict[str, set[str]], path: list[str]) -> list[str] | None:
    for nxt in sorted(calls[node]):
        if nxt == path[0]:
            return [*path, nxt]
        if nxt not in path:
            found = _cycle_from(nxt, calls, [*path, nxt])
            if found:
                return found
    return None


def top_problems(top: str) -> list[str]:
    m = re.search(r"\bvoid\s+(\w+)\s*\(([^)]*)\)\s*\{", top)
    if m is None:
        return ["top.cpp: no top function definition"]
    ports = re.findall(r"&\s*(\w+)\s*(?:,|$)", m.group(2))
    pragmas = re.findall(r"#pragma HLS INTERFACE\s+(\w+)\s+port=(\w+)", top)
    problems = [f"top.cpp: port {p} has no INTERFACE pragma" for p in ports if p not in {q for _, q in pragmas}]
    if "return" not in {q for _, q in pragmas}:
        problems.append("top.cpp: no ap_ctrl INTERFACE pragma for return")
    if "#pragma HLS DATAFLOW" not in top:
        problems.append("top.cpp: no DATAFLOW pragma")
    depths = set(re.findall(r"#pragma HLS STREAM variable=(\w+) depth=\d+", top))
    problems += [f"top.cpp: stream {s} has no STREAM depth pragma"
                 for s in re.findall(r"hls::stream<[^;]*>\s+(\w+)\s*\(", top) if s not in depths]
    return problems

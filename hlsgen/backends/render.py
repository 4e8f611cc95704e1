"""The one Jinja environment: templates under templates/, StrictUndefined, deterministic output.

A file ending in `.j2` is rendered (the name loses `.j2`); every other file is copied verbatim.
Python builds no C++ or Verilog strings: templates get plain data (numbers, names, lists).

One escaping rule guards every generated file (C++, Verilog, Tcl, cfg, Makefile, Python, Markdown):
a string reaches a template only as
  * a token: identifiers, numbers and type lists, `[A-Za-z0-9_.,:<> +-]` (the `finalize` hook checks
    every `{{ ... }}` and raises UnsafeTemplateValue otherwise), or
  * free text through the `text` filter, which keeps only `[A-Za-z0-9_ .,:;+=()/@%>-]` (no line break,
    quote, backslash, `*`, `#`, `$`, brackets or braces: nothing can end a comment, a string or a
    docstring, continue a line, or start a Tcl/Make/shell substitution) and caps the length.
Model and config names are free text; the identifiers made from them come from backends/names.py.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import jinja2


def _locate(folder: str) -> Path:
    """templates/ and testbench/ sit beside hlsgen/ in a checkout and inside it in a wheel."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / folder, package.parent / folder):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"hlsgen installation lacks its {folder}/ folder")


TEMPLATES = _locate("templates")
TESTBENCH = _locate("testbench")

TEXT_LIMIT = 120
_TOKEN = re.compile(r"[A-Za-z0-9_.,:<> +\-]*\Z")
_TEXT_UNSAFE = re.compile(r"[^A-Za-z0-9_ .,:;+=()/@%>\-]")
_LITERALS = frozenset("{}")  # `{{ "{" }}` in weights.h.j2


class UnsafeTemplateValue(ValueError):
    """A template interpolated a string that is neither a token nor passed through `text`: a bug in
    hlsgen (never the user's fault), caught before anything is written."""


class Text(str):
    """A string that went through the `text` filter."""


def text(value: object) -> Text:
    """Free text (a model, node or tensor name) made safe for a comment or string in any language."""
    s = _TEXT_UNSAFE.sub("?", str(value))
    return Text(s if len(s) <= TEXT_LIMIT else s[:TEXT_LIMIT - 3] + "...")


def _finalize(value: object) -> object:
    if isinstance(value, str) and not isinstance(value, Text) and value not in _LITERALS \
            and not _TOKEN.match(value):
        raise UnsafeTemplateValue(f"template value {value[:80]!r} is not a token; pass free text through | text")
    return value


_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(TEMPLATES)),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
    finalize=_finalize,
)
_ENV.filters["text"] = text


def render(template: str, **context: Any) -> str:
    """Render templates/<template> (a path relative to templates/)."""
    return _ENV.get_template(template).render(**context)


def copy_tree(src: Path, dst: Path) -> list[Path]:
    """Copy the verbatim files of a folder (skipping *.j2), sorted; returns the copied paths."""
    copied = []
    for f in sorted(p for p in src.rglob("*") if p.is_file() and p.suffix != ".j2" and "__pycache__" not in p.parts):
        target = dst / f.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
        copied.append(target)
    return copied

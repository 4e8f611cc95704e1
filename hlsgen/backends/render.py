"""The one Jinja environment: templates under templates/, StrictUndefined, deterministic output.

A file ending in `.j2` is rendered (the name loses `.j2`); every other file is copied verbatim.
Python builds no C++ or Verilog strings: templates get plain data (numbers, names, lists).
"""

from __future__ import annotations

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

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(TEMPLATES)),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
)


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

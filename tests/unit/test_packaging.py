"""pyproject.toml ships every folder of templates/ and testbench/ as a listed package: a folder left
out is a setuptools warning on every install (`make demo` printed ~90 of them) and, with another
backend, files missing from the wheel."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_every_shipped_folder_is_a_listed_package() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setup["packages"])
    wanted = set()
    for package, folder in setup["package-dir"].items():
        for d in [ROOT / folder, *sorted(p for p in (ROOT / folder).rglob("*") if p.is_dir())]:
            if d.name != "__pycache__" and any(f.is_file() for f in d.iterdir()):
                wanted.add(".".join([package, *d.relative_to(ROOT / folder).parts]))
    assert wanted - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    python_packages = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "hlsgen").rglob("__init__.py")}
    assert python_packages - listed == set()

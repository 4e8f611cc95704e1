"""Identifiers for generated C++ and Verilog: sanitized, unique, never a keyword, deterministic."""

from __future__ import annotations

import re

from hlsgen.support.identifiers import RESERVED, RESERVED_PREFIXES


class Namer:
    """Maps source names to unique identifiers, the same way every time for the same sequence."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.given: dict[str, str] = {}
        self.taken: set[str] = set()

    def __call__(self, name: str) -> str:
        if name in self.given:
            return self.given[name]
        base = self.prefix + sanitize(name)
        ident, k = base, 1
        while ident in self.taken:
            k += 1
            ident = f"{base}_{k}"
        self.given[name] = ident
        self.taken.add(ident)
        return ident


def sanitize(name: str) -> str:
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_") or "t"
    ident = re.sub(r"__+", "_", ident)
    if ident[0].isdigit():
        ident = "t_" + ident
    if ident in RESERVED or ident.lower() in RESERVED or ident.lower().startswith(RESERVED_PREFIXES):
        ident = "u_" + ident
    return ident[:60]

"""Identifiers for generated C++ and Verilog: sanitized, unique, never a keyword, deterministic."""

from __future__ import annotations

import re

_KEYWORDS = frozenset(
    "alignas alignof always and asm assign auto begin bool break case catch char class const constexpr "
    "continue default delete do double else end endcase endfunction endgenerate endmodule endtask enum "
    "explicit export extern false float for friend function generate genvar goto if initial inline inout "
    "input int integer localparam logic long module mutable namespace negedge new not operator or output "
    "parameter posedge private protected public reg register return short signed sizeof static struct "
    "switch task template this throw true try typedef typename union unsigned using virtual void volatile "
    "while wire xor "
    .split()
)


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
    if ident in _KEYWORDS or ident.lower().startswith(("ap_", "hls_")):
        ident = "u_" + ident
    return ident[:60]

"""Errors hlsgen raises for bad input.

Every user-facing failure is a `HlsgenError`: the CLI prints its message on one line and exits 2.
Anything else escaping is a bug in hlsgen and keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Sequence


class HlsgenError(Exception):
    """Bad input: a model, config or data file hlsgen cannot accept. Message names the culprit."""


class UnsupportedModelError(HlsgenError):
    """A model with nodes hlsgen cannot map; lists every offending node at once."""

    def __init__(self, source: str, problems: Sequence[tuple[str, str, str]]):
        self.problems = problems
        lines = "; ".join(f"{name} ({op}): {why}" for name, op, why in problems)
        super().__init__(f"{source}: {len(problems)} unsupported node(s): {lines}")

"""Checking hand-written YAML: one-line errors that name the file, the key path and a fix.

Shared by the compile configuration (hlsgen/config/compile.py) and the YAML model front-end
(hlsgen/frontend/from_yaml.py). A `Where` says where a mapping sits (file, dotted key path, and an
optional label such as ``layers[2] (fc1)``); the `get_*` readers fetch one key, check its type and
range, and raise `HlsgenError` with the full key path. Booleans are never accepted as numbers.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hlsgen.config.limits import DEFAULT_LIMITS, Limits, beyond
from hlsgen.errors import HlsgenError

_MISSING: Any = object()
_FLOAT_TEXT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Where:
    """The place of a mapping in a YAML file, for error messages."""

    source: str  # the file, as the user named it
    path: str = ""  # dotted key path of the mapping, e.g. "quant"
    label: str = ""  # prefix such as "layers[2] (fc1)"; keys are then named relative to it

    def key(self, key: object) -> str:
        return f"{self.path}.{key}" if self.path else str(key)

    def child(self, key: object) -> Where:
        return Where(self.source, self.key(key), self.label)

    def error(self, message: str) -> HlsgenError:
        prefix = f"{self.label}: " if self.label else ""
        return HlsgenError(f"{self.source}: {prefix}{message}")


def suggest(word: str, choices: Collection[str]) -> str:
    """' (did you mean 'x'?)' for the nearest choice, or '' when nothing is close."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def check_keys(mapping: Mapping[Any, Any], allowed: Collection[str], where: Where) -> None:
    """Refuse keys outside `allowed`, naming the full key path and the nearest allowed key."""
    for key in mapping:
        if not isinstance(key, str):
            raise where.error(f"key {where.key(key)!r} must be a string")
        if key not in allowed:
            raise where.error(f"unknown key {where.key(key)!r}{suggest(key, allowed)}")


def as_mapping(value: Any, where: Where, what: str = "a mapping") -> dict[str, Any]:
    """A section value as a dict; an empty YAML section (None) counts as {}."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        name = where.path or "the file"
        raise where.error(f"{name} must be {what} (key: value lines), got {_show(value)}")
    return dict(value)


def _show(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _bounds(lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f" {lo}..{hi}"
    if lo is not None:
        return f" >= {lo}"
    return f" <= {hi}" if hi is not None else ""


def check_int(value: Any, name: str, where: Where, lo: int | None = None, hi: int | None = None) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool)
    if not ok or (lo is not None and value < lo) or (hi is not None and value > hi):
        raise where.error(f"{name} must be an integer{_bounds(lo, hi)}, got {_show(value)}")
    return int(value)


def get_int(m: Mapping[str, Any], key: str, where: Where, default: Any = _MISSING,
            lo: int | None = None, hi: int | None = None) -> int:
    value = _fetch(m, key, where, default)
    return value if value is default else check_int(value, where.key(key), where, lo, hi)


def to_float(value: Any) -> float | None:
    """A YAML number as float. Also takes text like '1e-4', which YAML 1.1 reads as a string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _FLOAT_TEXT.match(value.strip()):
        return float(value)
    return None


def get_float(m: Mapping[str, Any], key: str, where: Where, default: Any = _MISSING,
              rule: str = "a number", check: Any = None) -> float:
    """A finite number; `check(x) -> bool` adds a range test described by `rule`."""
    value = _fetch(m, key, where, default)
    if value is default:
        return value
    x = to_float(value)
    if x is None or not math.isfinite(x) or (check is not None and not check(x)):
        raise where.error(f"{where.key(key)} must be {rule}, got {_show(value)}")
    return x


def get_bool(m: Mapping[str, Any], key: str, where: Where, default: Any = _MISSING) -> bool:
    value = _fetch(m, key, where, default)
    if value is not default and not isinstance(value, bool):
        raise where.error(f"{where.key(key)} must be true or false, got {_show(value)}")
    return value


def get_enum(m: Mapping[str, Any], key: str, where: Where, choices: Collection[str],
             default: Any = _MISSING) -> str:
    value = _fetch(m, key, where, default)
    if value is not default and value not in choices:
        hint = suggest(value, choices) if isinstance(value, str) else ""
        raise where.error(f"{where.key(key)} must be one of {', '.join(choices)}; "
                          f"got {_show(value)}{hint}")
    return value


def get_str(m: Mapping[str, Any], key: str, where: Where, default: Any = _MISSING) -> str:
    value = _fetch(m, key, where, default)
    if value is not default and (not isinstance(value, str) or not value):
        raise where.error(f"{where.key(key)} must be a non-empty string, got {_show(value)}")
    return value


def _fetch(m: Mapping[str, Any], key: str, where: Where, default: Any) -> Any:
    if key in m:
        return m[key]
    if default is _MISSING:
        raise where.error(f"missing key {where.key(key)!r}")
    return default


# ---- reading files -----------------------------------------------------------------------------
class _UniqueKeyLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses duplicate keys (plain PyYAML silently keeps the last one)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if isinstance(key, str) and key in seen:
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", mark)
        seen.add(key)
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml_mapping(path: str | Path, what: str, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Parse a YAML file (safe loader) whose top level must be a mapping; empty file -> {}.

    The file's size (limits.yaml_bytes) is checked before it is read and its nesting depth
    (limits.yaml_depth) from the parser's event stream before any object is built."""
    source = str(path)
    p = Path(path)
    try:
        if p.is_dir():
            raise HlsgenError(f"{source}: is a folder, not a {what} file")
        if p.exists() and not p.is_file():
            raise HlsgenError(f"{source}: not a regular file (a device or pipe is not read)")
        size = p.stat().st_size
        if size > limits.yaml_bytes:
            raise HlsgenError(f"{source}: {what} file of {beyond(limits, 'yaml_bytes', size)}")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HlsgenError(f"{source}: {what} file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HlsgenError(f"{source}: cannot read {what} file: {exc}") from None
    try:
        _check_depth(text, source, what, limits)
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise HlsgenError(f"{source}: {_yaml_message(exc)}") from None
    except RecursionError:  # a safety net: _check_depth bounds the nesting first
        raise HlsgenError(f"{source}: {what} file nests too deeply to read") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise HlsgenError(f"{source}: a {what} file must be a mapping (key: value lines) "
                          f"at the top level, got {_show(data)}")
    return data


def _check_depth(text: str, source: str, what: str, limits: Limits) -> None:
    """Refuse mappings/lists nested deeper than limits.yaml_depth (PyYAML builds them recursively:
    a few thousand levels end in RecursionError). The event stream is flat, so this cannot recurse."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > limits.yaml_depth:
                mark = event.start_mark
                at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
                raise HlsgenError(f"{source}: {what} file nests mappings/lists more than "
                                  f"{limits.yaml_depth} deep{at} (limits.yaml_depth; raise it in the "
                                  "config's limits: section if this is intended)")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _yaml_message(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"YAML syntax error{where}: {problem}"

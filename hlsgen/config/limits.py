"""Resource limits: hostile or broken inputs are refused from their headers, before any allocation.

A downloaded model or data file is untrusted input (docs/trust.md). Sizes are checked where they are
first known, from metadata only: ONNX initializer dims and value_info/graph input shapes (before a
tensor is materialised), .npy headers, .npz members' declared uncompressed sizes (zip central
directory) and their .npy headers, a YAML file's size and nesting depth (before it is parsed into
objects), YAML layer parameter sizes and calibration sample counts (before they are drawn).

The defaults are generous for FPGA-sized networks; a config's `limits:` section raises (or lowers)
them (docs/config.md, "limits"). Every refusal is a one-line `HlsgenError` naming the file, node or
key, the size found and the `limits.<key>` to raise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields

from hlsgen.errors import HlsgenError


@dataclass(frozen=True)
class Limits:
    """`limits:` of the compile configuration. Every value is a maximum."""

    tensor_elements: int = 1 << 26  # one tensor: ONNX initializer/activation, YAML parameter (64 Mi)
    calibration_elements: int = 1 << 28  # one calibration or input array, all samples (256 Mi, 1 GiB f32)
    samples: int = 1_000_000  # samples in one calibration/input array (YAML `calibration.samples` too)
    npz_member_bytes: int = 1 << 30  # one .npz member, uncompressed (1 GiB)
    yaml_bytes: int = 16 << 20  # a YAML model or config file (16 MiB)
    yaml_depth: int = 100  # nesting of YAML mappings and lists

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


DEFAULT_LIMITS = Limits()
LIMIT_KEYS = tuple(f.name for f in fields(Limits))
_UNITS = {"tensor_elements": "elements", "calibration_elements": "elements", "samples": "samples",
          "npz_member_bytes": "bytes", "yaml_bytes": "bytes", "yaml_depth": "levels"}


def elements(shape: Iterable[int]) -> int:
    """The element count of a shape, as an exact Python int (no overflow on hostile dims)."""
    return math.prod(int(d) for d in shape)


def beyond(limits: Limits, key: str, found: int) -> str:
    """The tail of a refusal: 'N elements, more than limits.key = M (raise it in a config's limits:)'."""
    limit = getattr(limits, key)
    return (f"{found:,} {_UNITS[key]}, more than limits.{key} = {limit:,} (if intended, raise it in the "
            "config's limits: section)")


def check(limits: Limits, key: str, found: int, culprit: str) -> None:
    """Raise `HlsgenError("<culprit>: <found> ... exceed limits.<key> ...")` when found > the limit."""
    if found > getattr(limits, key):
        raise HlsgenError(f"{culprit}: {beyond(limits, key, found)}")

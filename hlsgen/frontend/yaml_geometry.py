"""Window geometry of YAML conv and pool layers: kernel/stride/dilation pairs, padding, output size.

`padding` accepts `valid` (none), `same` (output = ceil(input / stride); an odd total pad puts the
extra row/column at the bottom/right, like ONNX SAME_UPPER and TensorFlow), one int for all sides,
[h, w] (symmetric) or [top, left, bottom, right]. Results are IR attributes: (h, w) pairs and
(top, left, bottom, right) pads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hlsgen.config.schema import Where, check_int

_MISSING: Any = object()


def pair(spec: Mapping[str, Any], key: str, where: Where, default: Any = _MISSING) -> tuple[int, int]:
    """An int >= 1 or [h, w] of ints >= 1 as an (h, w) tuple."""
    if key not in spec:
        if default is _MISSING:
            raise where.error(f"missing key {key!r}")
        return tuple(default) if isinstance(default, tuple) else (default, default)
    value = spec[key]
    if isinstance(value, list) and len(value) == 2:
        return check_int(value[0], key, where, 1), check_int(value[1], key, where, 1)
    if isinstance(value, list):
        raise where.error(f"{key} must be an integer >= 1 or a list [h, w], got {value!r}")
    n = check_int(value, key, where, 1)
    return n, n


def same_pads(size: int, k: int, s: int, d: int) -> tuple[int, int]:
    """(before, after) so that output = ceil(size / s); the odd pixel goes after."""
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def padding(spec: Mapping[str, Any], where: Where, hw: tuple[int, int], k: tuple[int, int],
            s: tuple[int, int], d: tuple[int, int]) -> tuple[int, int, int, int]:
    value = spec.get("padding", "valid")
    if value == "valid":
        return 0, 0, 0, 0
    if value == "same":
        (t, b_), (l_, r) = (same_pads(hw[i], k[i], s[i], d[i]) for i in range(2))
        return t, l_, b_, r
    if isinstance(value, list) and len(value) in (2, 4):
        p = tuple(check_int(v, "padding", where, 0) for v in value)
        return (p[0], p[1], p[0], p[1]) if len(p) == 2 else (p[0], p[1], p[2], p[3])
    if isinstance(value, int) and not isinstance(value, bool):
        n = check_int(value, "padding", where, 0)
        return n, n, n, n
    raise where.error(f"padding must be valid, same, an integer, [h, w] or [top, left, bottom, right]; "
                      f"got {value!r}")


def out_size(where: Where, hw: tuple[int, int], k: tuple[int, int], s: tuple[int, int],
             d: tuple[int, int], pads: tuple[int, int, int, int]) -> tuple[int, int]:
    """Output height and width; refuses windows larger than the padded input."""
    out = []
    for i in range(2):
        span = (k[i] - 1) * d[i] + 1
        padded = hw[i] + pads[i] + pads[i + 2]
        if span > padded:
            raise where.error(f"kernel {list(k)} (dilation {list(d)}) does not fit the padded input "
                              f"{hw[0] + pads[0] + pads[2]}x{hw[1] + pads[1] + pads[3]}")
        out.append((padded - span) // s[i] + 1)
    return out[0], out[1]

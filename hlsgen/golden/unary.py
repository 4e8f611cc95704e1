"""The elementwise math functions of the IR (Sigmoid, Tanh, Elu, Selu, HardSigmoid, HardSwish,
Softplus, Softsign, Erf, Exp, Gelu), in float64, as ONNX defines them. One table serves the float
golden kernels and the lookup tables that quantize builds for hardware (QLut)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _elu(x: np.ndarray, a: Mapping[str, Any]) -> np.ndarray:
    return np.where(x > 0, x, float(a["alpha"]) * np.expm1(np.minimum(x, 0)))


def _gelu(x: np.ndarray, a: Mapping[str, Any]) -> np.ndarray:
    if a["approximate"] == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


FUNCTIONS: Mapping[str, Callable[[np.ndarray, Mapping[str, Any]], np.ndarray]] = {
    "Sigmoid": lambda x, a: np.exp(-np.logaddexp(0.0, -x)),
    "Tanh": lambda x, a: np.tanh(x),
    "Elu": _elu,
    "Selu": lambda x, a: float(a["gamma"]) * np.where(x > 0, x, float(a["alpha"]) * np.expm1(np.minimum(x, 0))),
    "HardSigmoid": lambda x, a: np.clip(float(a["alpha"]) * x + float(a["beta"]), 0.0, 1.0),
    "HardSwish": lambda x, a: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    "Softplus": lambda x, a: np.logaddexp(0.0, x),
    "Softsign": lambda x, a: x / (1.0 + np.abs(x)),
    "Erf": lambda x, a: _erf(x),
    "Exp": lambda x, a: np.exp(x),
    "Gelu": _gelu,
}

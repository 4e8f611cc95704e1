"""What passes may read besides the graph: the validated config and calibration data."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hlsgen.config.compile import Config


@dataclass(frozen=True)
class PassContext:
    config: Config
    calibration: np.ndarray | None = None  # float32 batch [N, *input shape without batch]

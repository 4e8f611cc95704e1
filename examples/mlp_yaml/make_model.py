"""Write the example's inputs: weights.npz (seeded MLP parameters) and sample.npy (4 inputs).

Run from anywhere: `python examples/mlp_yaml/make_model.py`. The files land next to this script,
where model.yaml expects them. Same seed, same bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SIZES = [("fc1", 64, 32), ("fc2", 32, 16), ("fc3", 16, 10)]


def make_weights(seed: int = 0) -> dict[str, np.ndarray]:
    """He-normal weights [units, inputs] and small biases, float32, keyed <layer>.weight/.bias."""
    rng = np.random.default_rng(seed)
    arrays: dict[str, np.ndarray] = {}
    for name, k, units in SIZES:
        arrays[f"{name}.weight"] = rng.normal(0.0, np.sqrt(2.0 / k), (units, k)).astype(np.float32)
        arrays[f"{name}.bias"] = rng.normal(0.0, 0.05, units).astype(np.float32)
    return arrays


def main() -> None:
    np.savez(HERE / "weights.npz", **make_weights())
    sample = np.random.default_rng(2).normal(0.0, 1.0, (4, 64)).astype(np.float32)
    np.save(HERE / "sample.npy", sample)
    print(f"wrote {HERE / 'weights.npz'} and {HERE / 'sample.npy'} (shape {sample.shape})")


if __name__ == "__main__":
    main()

"""Parameters for YAML-described layers: from an .npz, from .npy files, or a seeded initializer.

A layer's parameter `<layer>.<suffix>` (suffix: weight, bias, bn.gamma, bn.beta, bn.mean, bn.var; a
standalone batchnorm layer uses gamma, beta, mean, var) is read from
  * an .npz archive (the layer's `weights:` or the model's top-level `weights:`), key `<layer>.<suffix>`;
  * a mapping `{<suffix>: file.npy, ...}` given as the layer's `weights:`;
  * otherwise a seeded initializer: He-normal weights, zero bias, BN statistics drawn near identity.
Each layer's generator is seeded from (model seed, CRC32 of the layer name), so a layer's values do
not change when other layers are added or removed. Relative paths resolve against the YAML file's
folder. Every array is checked for shape and finiteness before it enters the IR.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hlsgen.config.limits import DEFAULT_LIMITS, Limits, beyond, elements
from hlsgen.config.schema import Where, check_keys, suggest
from hlsgen.data import open_arrays
from hlsgen.errors import HlsgenError
from hlsgen.ir.graph import Note

Init = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def he_normal(fan_in: int) -> Init:
    std = float(np.sqrt(2.0 / fan_in))
    return lambda rng, shape: rng.normal(0.0, std, shape)


def zeros(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.zeros(shape)


def uniform(lo: float, hi: float) -> Init:
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def normal(std: float) -> Init:
    return lambda rng, shape: rng.normal(0.0, std, shape)


BN_INITS: dict[str, Init] = {
    "gamma": uniform(0.5, 1.5), "beta": normal(0.1), "mean": normal(0.1), "var": uniform(0.5, 1.5),
}


RANDOM = "random"  # `weights: random`: seeded initializers, asked for


class Weights:
    """All parameter sources of one model file; loads each .npz once and tracks which keys are used."""

    def __init__(self, folder: Path, seed: int, default_npz: str | None, limits: Limits = DEFAULT_LIMITS):
        self.folder = folder
        self.limits = limits
        self.seed = seed
        self.default_npz = default_npz
        self._npz: dict[str, list[str]] = {}  # array names of each .npz
        self._used: dict[str, set[str]] = {}
        self._unasked_random: list[str] = []  # layers seeded without `weights: random` saying so

    def for_layer(self, spec: Any, name: str, where: Where, suffixes: Sequence[str]) -> LayerWeights:
        """Where layer `name` gets its parameters; `spec` is its `weights:` value (or None)."""
        spec = self.default_npz if spec is None else spec
        if spec is None or spec == RANDOM:
            if spec is None:
                self._unasked_random.append(name)
            return LayerWeights(self, name, where, seeded=True)
        if isinstance(spec, str) and spec.endswith(".npz"):
            return LayerWeights(self, name, where, npz=spec)
        if isinstance(spec, dict):
            check_keys(spec, suffixes, where.child("weights"))
            return LayerWeights(self, name, where, files=spec)
        raise where.error(f"weights must be an .npz file, {RANDOM!r} or a mapping {{suffix: file.npy}} with "
                          f"suffixes {', '.join(suffixes)}; got {spec!r}")

    def npz(self, rel: str, where: Where) -> list[str]:
        """The array names of an .npz; arrays are read only when a layer asks for one (npz_array)."""
        if rel not in self._npz:
            self._npz[rel] = list(self._load(rel, where, npz=True, only=None))
            self._used[rel] = set()
        return self._npz[rel]

    def npz_array(self, rel: str, key: str, where: Where) -> np.ndarray:
        arr = self._load(rel, where, npz=True, only=key)[key]
        assert arr is not None
        return arr

    def npy(self, rel: Any, where: Where) -> np.ndarray:
        if not isinstance(rel, str) or not rel.endswith(".npy"):
            raise where.error(f"weights entries must name .npy files, got {rel!r}")
        arr = self._load(rel, where, npz=False, only="")[""]
        assert arr is not None
        return arr

    def _load(self, rel: str, where: Where, npz: bool, only: str | None) -> dict[str, np.ndarray | None]:
        """The array `only` of an .npz (by key) or the one of an .npy (key ""), checked against the
        limits from its header before it is read; only=None: just the names of an .npz."""
        path = Path(rel) if Path(rel).is_absolute() else self.folder / rel
        if not path.is_file():
            raise where.error(f"weights file {rel!r} not found (looked for {path})")
        try:
            with open_arrays(path, self.limits, "tensor_elements") as archive:
                if archive.single:  # read it: a damaged file is reported as such, not as the wrong kind
                    arrays: dict[str, np.ndarray | None] = {"": archive.read("")}
                else:
                    arrays = {name: archive.read(name) if name == only else None for name in archive.names}
                if archive.single != npz:
                    return arrays
        except HlsgenError as exc:
            detail = str(exc).removeprefix(str(path)).removeprefix(":").strip()
            raise where.error(f"cannot read weights file {rel!r}: {detail}") from None
        raise where.error(f"weights file {rel!r} is not an {'.npz archive' if npz else '.npy array'}")

    def mark_used(self, rel: str, key: str) -> None:
        self._used[rel].add(key)

    def unused_notes(self) -> list[Note]:
        """A warning per .npz holding arrays no layer read (usually a misspelt layer name), and one
        naming the layers that got seeded random parameters without `weights: random` asking."""
        notes = []
        if self._unasked_random:
            names = self._unasked_random
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            notes.append(Note("warning", "", f"{len(names)} layer(s) have no weights ({shown}): they get seeded "
                              f"random parameters (seed {self.seed}); give weights: FILE.npz for trained ones, or "
                              f"weights: random to say random is meant", {"random_layers": names}))
        for rel, arrays in self._npz.items():
            extra = sorted(set(arrays) - self._used[rel])
            if extra:
                notes.append(Note("warning", "", f"{rel}: arrays not used by any layer: "
                                  f"{', '.join(extra)}", {"file": rel, "unused": extra}))
        return notes


class LayerWeights:
    """The parameter source of one layer."""

    def __init__(self, store: Weights, name: str, where: Where, seeded: bool = False,
                 npz: str | None = None, files: dict[str, Any] | None = None):
        self.store, self.name, self.where = store, name, where
        self.npz_name, self.files = npz, files
        self.rng = np.random.default_rng([store.seed, zlib.crc32(name.encode())]) if seeded else None

    def get(self, suffix: str, shape: tuple[int, ...], init: Init, axes: str) -> np.ndarray:
        """Parameter `<layer>.<suffix>` with the expected shape (axes names the dimensions)."""
        key = f"{self.name}.{suffix}"
        limits = self.store.limits
        if elements(shape) > limits.tensor_elements:
            size = beyond(limits, "tensor_elements", elements(shape))
            raise self.where.error(f"{key} of shape {list(shape)}: {size}")
        if self.rng is not None:
            return _frozen(init(self.rng, shape).astype(np.float32))
        if self.npz_name is not None:
            names = self.store.npz(self.npz_name, self.where)
            if key not in names:
                raise self.where.error(f"{self.npz_name} has no array {key!r}{suggest(key, names)}")
            self.store.mark_used(self.npz_name, key)
            arr, origin = self.store.npz_array(self.npz_name, key, self.where), f"{key} in {self.npz_name}"
        else:
            assert self.files is not None
            if suffix not in self.files:
                raise self.where.error(f"weights mapping has no entry {suffix!r} (for {key})")
            arr, origin = self.store.npy(self.files[suffix], self.where), self.files[suffix]
        return _checked(arr, shape, origin, axes, self.where)


def _checked(arr: np.ndarray, shape: tuple[int, ...], origin: str, axes: str, where: Where) -> np.ndarray:
    if arr.dtype.kind not in "fiu":
        raise where.error(f"{origin} must hold numbers, got dtype {arr.dtype}")
    if tuple(arr.shape) != shape:
        raise where.error(f"{origin} has shape {list(arr.shape)}, expected {list(shape)} ({axes})")
    if not np.all(np.isfinite(arr)):
        raise where.error(f"{origin} contains NaN or Inf")
    dtype = np.float32 if arr.dtype == np.float32 else np.float64
    return _frozen(arr.astype(dtype))


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(arr)
    arr.setflags(write=False)
    return arr

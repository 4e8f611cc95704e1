"""Reading user arrays (calibration data, inputs) and shaping them into batches for a graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hlsgen.errors import HlsgenError
from hlsgen.ir import Graph


def load_array(path: str | Path, graph: Graph, what: str) -> np.ndarray:
    """A float32 batch from a .npy (one array) or .npz (the only array, or the one named like the
    model input), shaped [N, *input shape without batch]."""
    p = Path(path)
    if not p.is_file():
        raise HlsgenError(f"{p}: {what} file not found")
    try:
        loaded = np.load(p, allow_pickle=False)
    except (ValueError, OSError) as e:
        raise HlsgenError(f"{p}: not a .npy/.npz array file ({e})") from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            arr = _pick_npz(loaded, graph.inputs[0], p)
    else:
        arr = loaded
    return as_batch(arr, graph, str(p))


def _pick_npz(npz: np.lib.npyio.NpzFile, name: str, p: Path) -> np.ndarray:
    if name in npz.files:
        return np.asarray(npz[name])
    if len(npz.files) == 1:
        return np.asarray(npz[npz.files[0]])
    raise HlsgenError(f"{p}: holds arrays {npz.files}; name one '{name}' after the model input")


def as_batch(x: np.ndarray, graph: Graph, source: str = "input") -> np.ndarray:
    """Accept [N, *shape[1:]] or [N, *shape] (with the model's batch dim of 1) as a float batch."""
    shape = graph.tensor(graph.inputs[0]).shape
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.number):
        raise HlsgenError(f"{source}: array of {x.dtype} is not numeric")
    if x.ndim == len(shape) + 1 and tuple(x.shape[1:]) == tuple(shape) and shape[0] == 1:
        x = x.reshape((x.shape[0],) + tuple(shape[1:]))
    if x.ndim != len(shape) or tuple(x.shape[1:]) != tuple(shape[1:]):
        raise HlsgenError(f"{source}: array of shape {list(x.shape)} does not fit model input "
                          f"'{graph.inputs[0]}' {list(shape)}: expected [N, {', '.join(map(str, shape[1:]))}]")
    if not np.all(np.isfinite(x)):
        raise HlsgenError(f"{source}: array contains NaN or Inf")
    return x.astype(np.float32)

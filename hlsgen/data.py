"""Reading user arrays (calibration data, inputs, YAML weights) and shaping them into batches.

Array files are untrusted (docs/trust.md): a .npy header and an .npz member's declared size are
checked against hlsgen.config.limits before a byte of data is read, object (pickled) and complex arrays are
refused, and every failure is a one-line `HlsgenError` naming the file (and the .npz member).
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import numpy as np

from hlsgen.config.limits import DEFAULT_LIMITS, Limits, beyond, elements
from hlsgen.errors import HlsgenError
from hlsgen.ir import Graph

ZIP_MAGIC = b"PK\x03\x04"


def load_array(path: str | Path, graph: Graph, what: str, limits: Limits = DEFAULT_LIMITS) -> np.ndarray:
    """A float32 batch from a .npy (one array) or .npz (the only array, or the one named like the
    model input), shaped [N, *input shape without batch]."""
    p = Path(path)
    if not p.is_file():
        if p.exists():
            raise HlsgenError(f"{p}: {what} is not a regular file (a folder, device or pipe is not read)")
        raise HlsgenError(f"{p}: {what} file not found")
    with open_arrays(p, limits, "calibration_elements") as archive:
        names = archive.names
        name = graph.inputs[0]
        if len(names) != 1 and name not in names:
            raise HlsgenError(f"{p}: holds arrays {names}; name one '{name}' after the model input")
        key = name if name in names else names[0]
        arr = archive.read(key)
        label = f"{p}" if archive.single else f"{p} (array {key!r})"
    return as_batch(arr, graph, label, limits)


class Arrays:
    """The arrays of one .npy (a single array named "") or .npz file, read one at a time, each
    checked against the limits from its header before it is read."""

    def __init__(self, path: Path, names: list[str], read: Callable[[str], np.ndarray], single: bool):
        self.path, self.names, self.read, self.single = path, names, read, single


@contextmanager
def open_arrays(path: Path, limits: Limits = DEFAULT_LIMITS, element_limit: str = "tensor_elements"
                ) -> Iterator[Arrays]:
    """Open a .npy or .npz file (by content, not by name) for checked reading; `element_limit` names
    the limit each array's element count is held to (calibration_elements or tensor_elements)."""
    try:
        with open(path, "rb") as f:
            if f.read(4) == ZIP_MAGIC:
                f.seek(0)
                with _open_zip(f, path) as z:
                    members = {i.filename[:-4] if i.filename.endswith(".npy") else i.filename: i
                               for i in z.infolist() if not i.is_dir()}

                    def read_member(name: str) -> np.ndarray:
                        info = members[name]
                        label = f"{path}: array {name!r}"
                        if info.file_size > limits.npz_member_bytes:
                            size = beyond(limits, "npz_member_bytes", info.file_size)
                            raise HlsgenError(f"{label} inflates to {size}")
                        try:
                            with z.open(info) as m:
                                return _read_npy(m, info.file_size, label, limits, element_limit)
                        except HlsgenError:
                            raise
                        except Exception as e:  # BadZipFile (CRC, sizes), zlib.error, NotImplementedError, ...
                            raise HlsgenError(f"{label}: damaged .npz member ({type(e).__name__}: "
                                              f"{_first_line(e)})") from None

                    yield Arrays(path, list(members), read_member, single=False)
            else:
                f.seek(0)
                size = path.stat().st_size

                def read_single(name: str) -> np.ndarray:
                    return _read_npy(f, size, str(path), limits, element_limit)

                yield Arrays(path, [""], read_single, single=True)
    except OSError as e:
        raise HlsgenError(f"{path}: cannot read ({e.strerror or e})") from None


@contextmanager
def _open_zip(f: IO[bytes], path: Path) -> Iterator[zipfile.ZipFile]:
    try:
        z = zipfile.ZipFile(f)
    except Exception as e:  # BadZipFile, OSError, struct.error, NotImplementedError, ...
        raise HlsgenError(f"{path}: not a .npz archive ({type(e).__name__}: {_first_line(e)})") from None
    with z:
        yield z


def _read_npy(f: IO[bytes], size: int, label: str, limits: Limits, element_limit: str) -> np.ndarray:
    """One .npy stream: header checked (dtype, element count, data present), then the data read."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        reader = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran, dtype = reader(f)
    except Exception as e:  # numpy's header parser raises ValueError, SyntaxError, TokenError, ...
        raise HlsgenError(f"{label}: not a .npy array ({type(e).__name__}: {_first_line(e)})") from None
    if dtype.hasobject:
        raise HlsgenError(f"{label}: holds Python objects (dtype {dtype}); only numeric arrays are read "
                          "(never pickles)")
    if dtype.kind == "c":
        raise HlsgenError(f"{label}: holds complex numbers (dtype {dtype}); give real-valued data")
    if dtype.kind not in "fiub":
        raise HlsgenError(f"{label}: array of {dtype} is not numeric")
    count = elements(shape)
    if count > getattr(limits, element_limit):
        raise HlsgenError(f"{label}: header claims shape {list(shape)}: {beyond(limits, element_limit, count)}")
    data_bytes = count * dtype.itemsize
    here = f.tell()
    if size - here < data_bytes:
        raise HlsgenError(f"{label}: truncated: the header claims shape {list(shape)} ({data_bytes:,} bytes) "
                          f"but {max(size - here, 0):,} bytes follow it")
    try:
        data = np.frombuffer(_read_exactly(f, data_bytes), dtype=dtype, count=count)
        return data.reshape(shape, order="F" if fortran else "C")
    except HlsgenError:
        raise
    except Exception as e:  # EOF, a damaged zip stream (BadZipFile, zlib.error), ...
        raise HlsgenError(f"{label}: cannot read the array data ({type(e).__name__}: {_first_line(e)})") from None


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else "no details"


def _read_exactly(f: IO[bytes], n: int) -> bytes:
    chunks, left = [], n
    while left > 0:
        chunk = f.read(min(left, 1 << 24))
        if not chunk:
            raise EOFError(f"{left:,} bytes missing at the end")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def as_batch(x: np.ndarray, graph: Graph, source: str = "input", limits: Limits = DEFAULT_LIMITS) -> np.ndarray:
    """Accept [N, *shape[1:]] or [N, *shape] (with the model's batch dim of 1) as a float batch."""
    shape = graph.tensor(graph.inputs[0]).shape
    x = np.asarray(x)
    if x.dtype.kind == "c":
        raise HlsgenError(f"{source}: holds complex numbers (dtype {x.dtype}); give real-valued data")
    if not np.issubdtype(x.dtype, np.number):
        raise HlsgenError(f"{source}: array of {x.dtype} is not numeric")
    if x.ndim == len(shape) + 1 and tuple(x.shape[1:]) == tuple(shape) and shape[0] == 1:
        x = x.reshape((x.shape[0],) + tuple(shape[1:]))
    if x.ndim != len(shape) or tuple(x.shape[1:]) != tuple(shape[1:]):
        raise HlsgenError(f"{source}: array of shape {list(x.shape)} does not fit model input "
                          f"'{graph.inputs[0]}' {list(shape)}: expected [N, {', '.join(map(str, shape[1:]))}]")
    if x.shape[0] == 0:
        raise HlsgenError(f"{source}: array of shape {list(x.shape)} holds no samples (N = 0)")
    if x.shape[0] > limits.samples:
        raise HlsgenError(f"{source}: {beyond(limits, 'samples', x.shape[0])}")
    if not np.all(np.isfinite(x)):
        raise HlsgenError(f"{source}: array contains NaN or Inf")
    return x.astype(np.float32)

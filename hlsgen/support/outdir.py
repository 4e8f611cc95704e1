"""The OUT folder: written atomically, replaced only when hlsgen wrote it, never the user's files.

Rules (docs/cli.md, "The OUT folder"):
  * OUT appears complete or not at all: it is built in a hidden sibling and swapped in; an error,
    Ctrl-C or SIGTERM leaves no temporary folder behind and the previous OUT untouched.
  * An existing OUT is replaced only when it is empty or carries the marker file MARKER that an
    earlier `hlsgen compile` wrote (a report.json alone is not enough).
  * Never replaced, marker or not: the current directory or any folder above it, the home folder,
    the file-system root, and any folder that holds one of the command's inputs.
  * Folders get the mode the umask allows (not mkdtemp's 0700).
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from hlsgen.errors import HlsgenError

MARKER = ".hlsgen-output"


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM turned into an exception, so clean-up runs as for Ctrl-C; the command exits
    128 + signum (130 for SIGINT, 143 for SIGTERM), the shells' convention."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum
MARKER_TEXT = "This folder was written by `hlsgen compile`; the next compile to it replaces it whole.\n"


def is_hlsgen_output(folder: Path) -> bool:
    return (folder / MARKER).is_file()


def require_hlsgen_output(folder: Path, hint: str) -> None:
    """Commands that write into OUT (csim, rtlsim) first check that hlsgen wrote it."""
    if not folder.is_dir():
        raise HlsgenError(f"{folder}: no such folder ({hint})")
    if not is_hlsgen_output(folder):
        raise HlsgenError(f"{folder}: not a folder written by `hlsgen compile` (no {MARKER}); {hint}")


def check_replaceable(out: Path, inputs: Iterable[Path] = ()) -> None:
    """Raise unless `out` (resolved) may be created or replaced."""
    protected = {Path.cwd().resolve(), Path.home().resolve(), Path(out.anchor)}
    protected |= set(Path.cwd().resolve().parents)
    if out in protected:
        raise HlsgenError(f"{out}: refusing to write the output there (the current folder, one above it, "
                          "home or root); choose a new folder for -o")
    for p in inputs:
        src = Path(p).resolve()
        if out == src or out in src.parents:
            raise HlsgenError(f"{out}: holds the input {p}; choose another folder for -o")
    if not out.exists():
        return
    if not out.is_dir():
        raise HlsgenError(f"{out}: exists and is not a folder; choose another -o")
    if any(out.iterdir()) and not is_hlsgen_output(out):
        raise HlsgenError(f"{out}: exists and was not written by `hlsgen compile` (no {MARKER}); "
                          "refusing to replace it (choose another -o or remove it yourself)")


def write_folder_atomically(out_dir: str | Path, fill: Callable[[Path], None],
                            inputs: Iterable[Path] = ()) -> Path:
    """Build the folder in a temporary sibling with `fill`, then swap it in place of `out_dir`."""
    out = Path(out_dir).resolve()
    try:
        check_replaceable(out, list(inputs))
    except OSError as e:  # a name too long, a path through a file, ...
        raise HlsgenError(f"{out}: cannot use as the output folder ({e.strerror or e})") from None
    tmp: Path | None = None
    with terminate_as_interrupt():
        try:
            with _signals_deferred():  # a signal arrives once `tmp` names the folder to clean up
                tmp = _make_temporary(out)
            _set_umask_mode(tmp)
            fill(tmp)
            (tmp / MARKER).write_text(MARKER_TEXT)
            with _signals_deferred():  # two renames: OUT is the old or the new folder, never neither
                _swap_in(tmp, out)
        except BaseException:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
    return out


def write_file_atomically(path: str | Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a file through `.<name>.tmp` beside it, renamed over it only when complete; a folder
    as target, an OSError or an interruption leave the target as it was and no temporary file."""
    p = Path(path)
    try:
        if p.is_dir():
            raise HlsgenError(f"{p}: is a folder; name a file")
    except OSError as e:
        raise HlsgenError(f"{p}: cannot write ({e.strerror or e})") from None
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            write(f)
        os.replace(tmp, p)
    except OSError as e:
        _discard(tmp)
        raise HlsgenError(f"{p}: cannot write ({_why(p, e)})") from None
    except BaseException:
        _discard(tmp)
        raise


def _discard(tmp: Path) -> None:
    with suppress(OSError):  # its folder is not there (or not a folder): nothing was written
        tmp.unlink(missing_ok=True)


def _make_temporary(out: Path) -> Path:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{out.name[:40]}.tmp-", dir=out.parent))
    except OSError as e:
        raise HlsgenError(f"{out}: cannot create the output folder ({_why(out, e)})") from None


def _why(path: Path, e: OSError) -> str:
    """The reason of an OSError on `path`; a regular file where a folder is needed is named."""
    blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    return f"{blocker} is a file, not a folder" if blocker is not None else e.strerror or str(e)


def _swap_in(tmp: Path, out: Path) -> None:
    """Replace `out` by `tmp`; if the second rename fails, the old folder is put back."""
    try:
        if not out.exists():
            os.replace(tmp, out)
            return
        old = Path(tempfile.mkdtemp(prefix=f".{out.name[:40]}.old-", dir=out.parent))
        os.replace(out, old / "x")
        try:
            os.replace(tmp, out)
        except BaseException:
            os.replace(old / "x", out)
            raise
        finally:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as e:
        raise HlsgenError(f"{out}: cannot write the output folder ({e.strerror or e})") from None


def _set_umask_mode(folder: Path) -> None:
    mask = os.umask(0)
    os.umask(mask)
    folder.chmod(0o777 & ~mask)


@contextmanager
def _handling(handler: Callable[[int, object], None], *signums: int) -> Iterator[None]:
    """`handler` for `signums` inside the block, the previous handlers restored after it; outside the
    main thread (where Python cannot set handlers) the signals are left alone."""
    try:
        previous = {sig: signal.signal(sig, handler) for sig in signums}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while a temporary folder is created (and its name is not yet
    known to the clean-up code) or swapped in; one that arrived is raised as KeyboardInterrupt when
    the block ends. Python-level handlers, since the signal may reach another thread (BLAS, onnxruntime
    pools), where a pthread_sigmask of the main thread would not hold it."""
    caught: list[int] = []

    def record(signum: int, frame: object) -> None:
        caught.append(signum)

    with _handling(record, signal.SIGINT, signal.SIGTERM):
        yield
    if caught:
        raise Interrupted(caught[0])


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt inside the block, so clean-up code runs as for Ctrl-C."""
    def handler(signum: int, frame: object) -> None:
        raise Interrupted(signum)

    with _handling(handler, signal.SIGTERM):
        yield

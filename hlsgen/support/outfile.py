"""Files written at a path the user names (`run --output`, `compare --json`, `export-qdq -o`,
`regress --junit`): never over one of the command's inputs, never over a file hlsgen did not write.

Rules (docs/cli.md, "Files hlsgen writes"):
  * The target may not be one of the command's inputs (the same file by path, symlink or hard
    link), whatever its name: `export-qdq a.onnx -o a.onnx`, `run --input x.npy --output x.npy`.
  * An existing target is replaced only when hlsgen wrote it: every file written through
    `write_owned_file` is recorded in a ledger ($HLSGEN_CACHE/written/, one small entry per path
    holding the SHA-256 of the bytes written), and an existing file is hlsgen's when its bytes
    still hash to its entry. A file the user made, or edited since, is refused, naming it.
  * The ledger is advisory in one direction only: losing it (another machine, a cleared cache)
    makes hlsgen refuse a file it could have replaced, never replace one it must not.
  * The file itself is written atomically (hlsgen.support.outdir.write_file_atomically).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path
from typing import BinaryIO

from hlsgen.errors import HlsgenError
from hlsgen.support.outdir import write_file_atomically

LEDGER = "written"


def write_owned_file(path: str | Path, write: Callable[[BinaryIO], object], inputs: Iterable[Path | None] = (),
                     suffixes: tuple[str, ...] = ()) -> Path:
    """Check `path` (not an input, absent or hlsgen's, one of `suffixes` when given), write it
    atomically with `write`, and record it as hlsgen's. Returns the path."""
    p = Path(path)
    check_writable_target(p, inputs, suffixes)
    write_file_atomically(p, write)
    _remember(p)
    return p


def check_writable_target(p: Path, inputs: Iterable[Path | None] = (), suffixes: tuple[str, ...] = ()) -> None:
    """Raise HlsgenError unless hlsgen may write `p` (see the module's rules); writes nothing."""
    try:
        if p.is_dir():
            raise HlsgenError(f"{p}: is a folder; name a {_kinds(suffixes)}")
        if suffixes and p.suffix.lower() not in suffixes:
            raise HlsgenError(f"{p}: name a {_kinds(suffixes)}")
        for src in inputs:
            if src is not None and _same_file(p, Path(src)):
                raise HlsgenError(f"{p}: is an input of this command ({src}); refusing to write over it")
        if p.exists() and not _written_by_hlsgen(p):
            raise HlsgenError(f"{p}: exists and was not written by hlsgen; refusing to replace it "
                              "(name another file or remove it yourself)")
    except OSError as e:  # a name too long, a path through a file, ...
        raise HlsgenError(f"{p}: cannot write ({e.strerror or e})") from None


def _kinds(suffixes: tuple[str, ...]) -> str:
    return f"{' or '.join(suffixes)} file" if suffixes else "file"


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)  # a hard link, or a symlink resolve() could not see through
    except OSError:  # one of them does not exist
        return False


def _entry(p: Path) -> Path:
    from hlsgen.support.cache import cache_base

    key = hashlib.sha256(os.fsencode(p.resolve())).hexdigest()[:32]
    return cache_base() / LEDGER / key


def _digest(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _written_by_hlsgen(p: Path) -> bool:
    try:
        recorded = _entry(p).read_text().split("\n", 1)[0]
    except (OSError, UnicodeDecodeError):
        return False
    return recorded == _digest(p)


def _remember(p: Path) -> None:
    """Record the written bytes' digest; a ledger that cannot be written only costs a later refusal."""
    entry = _entry(p)
    text = f"{_digest(p)}\n{p.resolve()}\n"
    with suppress(OSError, HlsgenError):
        write_file_atomically(entry, lambda f: f.write(text.encode()))

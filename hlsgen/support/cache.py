"""The build caches, bounded: least-recently-used entries are removed beyond a size limit.

hlsgen keeps four caches, each keyed by content (the keys are their owners' business):

  rtlsim  $HLSGEN_CACHE/rtlsim/<key>/   Verilator/Icarus builds (hlsgen.tools.rtlsim.build); a build is
          complete when <key>/hlsgen.ok exists and runs under an flock on <key>.lock beside it
  synth   $HLSGEN_CACHE/synth/<key>/    Yosys results (hlsgen.tools.synth); an entry appears by one rename
          of a finished .<key>.tmp-* folder
  csim    $HLSGEN_CSIM_CACHE/<key>/     g++ objects and binaries, only when that variable is set (by
          default they live in OUT/hls/build/ and go with OUT); files appear by rename of *.tmp
  csim-pch $HLSGEN_CACHE/csim-pch/<key>/  the C-sim builds' precompiled ap_int/hls_stream header
          (hlsgen.tools.csim_pch), one per compiler and flags; built under <key>.lock, the .gch appears
          by rename

($HLSGEN_CACHE defaults to $XDG_CACHE_HOME/hlsgen, else ~/.cache/hlsgen.)

Limit: $HLSGEN_CACHE_MAX, else `cache: {max_size: ...}` in $XDG_CONFIG_HOME/hlsgen/config.yaml
(~/.config/hlsgen/config.yaml), else 5G; sizes like 500M, 5G, 1.5T (powers of 1024) or bytes,
`unlimited` switches eviction off. The size of an entry is the disk space of its files.

Eviction (`trim`), after every csim/rtlsim/synth build through `used(entries)`:
  * "last used" of an entry is the later of its folder's mtime and its lock file's mtime; `used()`
    touches the entries a run is using, so the order is least recently used, not least recently built;
  * entries used in the last GRACE_SECONDS (10 min) are never removed, even above the limit, so a
    running simulation does not lose the build it is about to run (the limit may be exceeded for
    that long);
  * an rtlsim entry is removed only while holding its lock (taken without waiting: an entry being
    built or checked is skipped); a builder waiting on that lock then finds no hlsgen.ok and builds
    again. Lock files are kept (empty), so two builders can never hold different locks for one key;
  * an entry is first renamed to .evict-* (atomic), then deleted, so no reader ever sees a half-removed
    entry under its key;
  * one trim at a time per cache root (a non-blocking lock on .trim.lock; a second one returns);
  * leftovers of interrupted writes (.*.tmp-*, *.tmp, .evict-*) older than a day are removed too.
A cache problem (permissions, a vanished file) never fails a build: trim logs it and moves on.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hlsgen.errors import HlsgenError

log = logging.getLogger("hlsgen.support.cache")

DEFAULT_MAX = 5 * 1024**3
GRACE_SECONDS = 600.0
STALE_SECONDS = 86400.0
UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
ENV_MAX = "HLSGEN_CACHE_MAX"
TRIM_LOCK = ".trim.lock"
PCH_CACHE = "csim-pch"


def cache_base() -> Path:
    """$HLSGEN_CACHE, else $XDG_CACHE_HOME/hlsgen, else ~/.cache/hlsgen (as rtlsim and synth use it)."""
    base = os.environ.get("HLSGEN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hlsgen")
    return Path(base)


def cache_dirs() -> dict[str, Path]:
    """Each cache hlsgen manages and its folder (csim only when $HLSGEN_CSIM_CACHE is set)."""
    base = cache_base()
    dirs = {"rtlsim": base / "rtlsim", "synth": base / "synth", PCH_CACHE: base / PCH_CACHE}
    csim = os.environ.get("HLSGEN_CSIM_CACHE")
    if csim:
        dirs["csim"] = Path(csim)
    return dirs


# ---------------------------------------------------------------------------------------------- the limit

def parse_size(text: str, where: str) -> int | None:
    """'5G' -> 5 * 1024**3; 'unlimited' -> None. Units K, M, G, T (powers of 1024; a trailing B or iB is
    allowed), no unit = bytes."""
    s = str(text).strip()
    if s.lower() in ("unlimited", "none", "off"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgtKMGT]?)(?:i?[bB])?", s)
    if m is None:
        raise HlsgenError(f"{where}: cache size must be a number with an optional unit K, M, G or T "
                          f"(e.g. 5G, 500M) or 'unlimited', got {s!r}")
    return int(float(m.group(1)) * UNITS[m.group(2).upper()])


def user_config_file() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")) / "hlsgen" / "config.yaml"


def cache_limit() -> tuple[int | None, str]:
    """(limit in bytes or None for no limit, where it came from)."""
    env = os.environ.get(ENV_MAX)
    if env is not None and env.strip():
        return parse_size(env, f"${ENV_MAX}"), f"${ENV_MAX}"
    path = user_config_file()
    if path.is_file():
        value = _config_max_size(path)
        if value is not None:
            return parse_size(value, f"{path}: cache.max_size"), str(path)
    return DEFAULT_MAX, "default"


def _config_max_size(path: Path) -> str | None:
    import yaml

    try:
        data = yaml.safe_load(path.read_text()[:65536])
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise HlsgenError(f"{path}: cannot read ({type(e).__name__})") from e
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) - {"cache"}:
        raise HlsgenError(f"{path}: the user configuration holds only a `cache:` section")
    section = data.get("cache") or {}
    if not isinstance(section, dict) or set(section) - {"max_size"}:
        raise HlsgenError(f"{path}: `cache:` holds only `max_size`")
    value = section.get("max_size")
    return None if value is None else str(value)


# ---------------------------------------------------------------------------------------------- entries

@dataclass(frozen=True)
class Entry:
    cache: str
    path: Path
    size: int  # bytes on disk
    last_used: float  # seconds since the epoch

    @property
    def lock(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")


def _disk_size(path: Path) -> int:
    total = 0
    try:
        st = path.lstat()
    except OSError:
        return 0
    total += st.st_blocks * 512
    if path.is_dir() and not path.is_symlink():
        try:
            children = list(os.scandir(path))
        except OSError:
            return total
        for c in children:
            total += _disk_size(Path(c.path))
    return total


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _is_leftover(name: str) -> bool:
    return name.startswith(".evict-") or ".tmp" in name


def entries(caches: dict[str, Path] | None = None) -> list[Entry]:
    """Every entry of every cache (leftovers of interrupted writes and lock files are not entries)."""
    found = []
    for cache, root in (caches or cache_dirs()).items():
        try:
            children = sorted(os.scandir(root), key=lambda c: c.name)
        except OSError:
            continue
        for c in children:
            if c.name.startswith(".") or _is_leftover(c.name) or not c.is_dir(follow_symlinks=False):
                continue
            path = Path(c.path)
            used = max(_mtime(path), _mtime(path.with_name(c.name + ".lock")))
            found.append(Entry(cache, path, _disk_size(path), used))
    return found


def _leftovers(root: Path) -> list[Path]:
    try:
        return [Path(c.path) for c in os.scandir(root) if _is_leftover(c.name)]
    except OSError:
        return []


# ---------------------------------------------------------------------------------------------- removal

@contextmanager
def _try_lock(path: Path) -> Iterator[bool]:
    """Hold an flock on `path` if nobody else does (True), else yield False at once."""
    try:
        f = open(path, "a")  # noqa: SIM115 -- "a": neither truncates nor touches the mtime
    except OSError:
        yield False
        return
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _remove_tree(path: Path) -> bool:
    """Rename to .evict-* (atomic: the key is gone at once), then delete. False if it vanished."""
    grave = path.with_name(f".evict-{path.name[:48]}-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.rename(path, grave)
    except FileNotFoundError:
        return False
    shutil.rmtree(grave, ignore_errors=True)
    return True


def remove_entry(entry: Entry, min_idle: float = 0.0, now: float | None = None) -> bool:
    """Remove one entry unless it is being built or checked (its lock is held) or was used in the last
    `min_idle` seconds. True when it was removed."""
    now = time.time() if now is None else now
    had_lock = entry.lock.exists()
    if entry.cache == "rtlsim" or had_lock:
        with _try_lock(entry.lock) as locked:  # creates a missing lock file (then its mtime is not a use)
            if not locked:
                return False
            if now - max(_mtime(entry.path), _mtime(entry.lock) if had_lock else 0.0) < min_idle:
                return False
            return _remove_tree(entry.path)
    if now - _mtime(entry.path) < min_idle or any(p.name.endswith(".tmp") and now - _mtime(p) < STALE_SECONDS
                                                  for p in _children(entry.path)):
        return False  # a csim build writing its .tmp objects into it (a day-old .tmp is a crash's leftover)
    return _remove_tree(entry.path)


def _children(path: Path) -> list[Path]:
    try:
        return [Path(c.path) for c in os.scandir(path)]
    except OSError:
        return []


def _remove_leftover(path: Path, older_than: float, now: float) -> int:
    if now - _mtime(path) < older_than:
        return 0
    size = _disk_size(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with suppress(OSError):
            path.unlink()
    return size


@dataclass
class TrimResult:
    removed: list[Entry]
    freed: int  # bytes, leftovers included
    total_before: int
    total_after: int
    limit: int | None
    skipped: bool = False  # another process was trimming


def trim(limit: int | None = None, keep: Iterable[Path] = (), grace: float = GRACE_SECONDS,
         caches: dict[str, Path] | None = None, now: float | None = None) -> TrimResult:
    """Remove least-recently-used entries until all caches together fit `limit` (default: cache_limit()).
    Entries in `keep` and those used in the last `grace` seconds stay."""
    caches = caches or cache_dirs()
    if limit is None:
        limit = cache_limit()[0]
    now = time.time() if now is None else now
    base = cache_base()
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        return TrimResult([], 0, 0, 0, limit, skipped=True)
    with _try_lock(base / TRIM_LOCK) as locked:
        if not locked:
            return TrimResult([], 0, 0, 0, limit, skipped=True)
        freed = sum(_remove_leftover(p, STALE_SECONDS, now) for root in caches.values() for p in _leftovers(root))
        found = entries(caches)
        total = before = sum(e.size for e in found)
        removed: list[Entry] = []
        if limit is not None and total > limit:
            kept = {Path(p).resolve() for p in keep}
            for e in sorted(found, key=lambda e: e.last_used):
                if total <= limit:
                    break
                if e.path.resolve() in kept or now - e.last_used < grace:
                    continue
                if remove_entry(e, grace, now):
                    removed.append(e)
                    total -= e.size
                    freed += e.size
                    log.info("cache: removed %s (%d bytes, last used %.0f s ago)", e.path, e.size, now - e.last_used)
        return TrimResult(removed, freed, before, total, limit)


def used(*paths: Path | str) -> TrimResult | None:
    """A run is using these cache entries: mark them used now, then trim the caches to the limit.
    Called after csim, rtlsim and synth builds. Never raises for a cache problem (logged instead);
    a malformed limit is a HlsgenError."""
    for p in paths:
        with suppress(OSError):
            os.utime(p)
    limit = cache_limit()[0]  # a bad $HLSGEN_CACHE_MAX is the user's to fix: one line, exit 2
    try:
        return trim(limit, keep=[Path(p) for p in paths])
    except OSError as e:
        log.warning("cache: trimming failed: %s", e)
        return None


def clear(caches: dict[str, Path] | None = None) -> tuple[list[Entry], list[Entry], int]:
    """Remove every entry (and leftovers) now; entries whose lock is held by a running build stay.
    Returns (removed, kept, bytes freed)."""
    caches = caches or cache_dirs()
    now = time.time()
    removed, kept = [], []
    freed = sum(_remove_leftover(p, 0.0, now) for root in caches.values() for p in _leftovers(root))
    for e in entries(caches):
        if remove_entry(e, 0.0, now):
            removed.append(e)
            freed += e.size
        else:
            kept.append(e)
    return removed, kept, freed


def info(caches: dict[str, Path] | None = None) -> dict[str, Any]:
    """Per cache: folder, entries, bytes; the total, the limit and where it comes from."""
    caches = caches or cache_dirs()
    found = entries(caches)
    limit, source = cache_limit()
    rows = []
    for name, root in caches.items():
        mine = [e for e in found if e.cache == name]
        rows.append({"cache": name, "path": str(root), "entries": len(mine), "bytes": sum(e.size for e in mine),
                     "oldest": min((e.last_used for e in mine), default=None)})
    return {"caches": rows, "entries": len(found), "bytes": sum(e.size for e in found), "limit": limit,
            "limit_source": source}


def human(n: float | None) -> str:
    if n is None:
        return "unlimited"
    for unit in ("B", "K", "M", "G", "T"):
        if abs(n) < 1024 or unit == "T":
            return f"{n:.0f} B" if unit == "B" else f"{n:.1f} {unit}iB"
        n /= 1024
    return f"{n:.1f} TiB"


def render_info(data: dict[str, Any]) -> str:
    lines = [f"{'cache':8s}  {'entries':>7s}  {'size':>10s}  folder"]
    for r in data["caches"]:
        lines.append(f"{r['cache']:8s}  {r['entries']:7d}  {human(r['bytes']):>10s}  {r['path']}")
    if "csim" not in {r["cache"] for r in data["caches"]}:
        lines.append(f"{'csim':8s}  {'-':>7s}  {'-':>10s}  in each OUT/hls/build/ (set $HLSGEN_CSIM_CACHE to share "
                     "and bound it)")
    limit = data["limit"]
    share = f" ({100 * data['bytes'] / limit:.0f}% of the limit)" if limit else ""
    lines.append(f"total: {data['entries']} entries, {human(data['bytes'])}{share}; limit {human(limit)} "
                 f"({data['limit_source']})")
    return "\n".join(lines)

"""Bounded build caches (hlsgen.support.cache) and `hlsgen cache info|clear`: LRU order, the size limit from
the environment or the user config, entries in use never removed, leftovers cleaned, the csim hook."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hlsgen.errors import HlsgenError
from hlsgen.support import cache

MB = 1024**2


@pytest.fixture
def caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Private $HLSGEN_CACHE (never the user's), no limit from the environment or a user config."""
    base = tmp_path / "cache"
    monkeypatch.setenv("HLSGEN_CACHE", str(base))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("HLSGEN_CACHE_MAX", raising=False)
    monkeypatch.delenv("HLSGEN_CSIM_CACHE", raising=False)
    return base


def _entry(root: Path, name: str, mb: float, age_s: float, lock: bool = False) -> Path:
    """A cache entry of `mb` MiB last used `age_s` seconds ago (rtlsim-style lock file with `lock`)."""
    d = root / name
    d.mkdir(parents=True)
    (d / "data.bin").write_bytes(os.urandom(int(mb * MB)))
    t = time.time() - age_s
    os.utime(d, (t, t))
    if lock:
        lk = root / f"{name}.lock"
        lk.write_text("")
        os.utime(lk, (t, t))
    return d


@pytest.mark.parametrize("text, value", [("5G", 5 * 1024**3), ("500M", 500 * MB), ("1.5K", 1536), ("123", 123),
                                         ("2GiB", 2 * 1024**3), ("10mb", 10 * MB), ("unlimited", None), ("0", 0)])
def test_parse_size(text: str, value: int | None) -> None:
    assert cache.parse_size(text, "x") == value


@pytest.mark.parametrize("text", ["", "5X", "-1G", "five", "5 G B"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(HlsgenError, match="cache size"):
        cache.parse_size(text, "$HLSGEN_CACHE_MAX")


def test_limit_from_env_then_user_config_then_default(caches: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache.cache_limit() == (5 * 1024**3, "default")
    cfg = tmp_path / "config" / "hlsgen" / "config.yaml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("cache:\n  max_size: 2G\n")
    assert cache.cache_limit() == (2 * 1024**3, str(cfg))
    monkeypatch.setenv("HLSGEN_CACHE_MAX", "300M")
    assert cache.cache_limit() == (300 * MB, "$HLSGEN_CACHE_MAX")
    monkeypatch.delenv("HLSGEN_CACHE_MAX")
    cfg.write_text("cache:\n  max_sise: 2G\n")
    with pytest.raises(HlsgenError, match="only `max_size`"):
        cache.cache_limit()


def test_trim_removes_least_recently_used_first(caches: Path) -> None:
    rtl, syn = caches / "rtlsim", caches / "synth"
    oldest = _entry(rtl, "verilator-a", 1, 5000, lock=True)
    old = _entry(syn, "b" * 64, 1, 4000)
    newer = _entry(rtl, "verilator-c", 1, 3000, lock=True)
    newest = _entry(syn, "d" * 64, 1, 2000)
    r = cache.trim(limit=int(2.5 * MB))
    assert [e.path for e in r.removed] == [oldest, old]
    assert not oldest.exists() and not old.exists() and newer.exists() and newest.exists()
    assert r.total_after <= 2.5 * MB < r.total_before
    assert (rtl / "verilator-a.lock").exists()  # lock files stay: one lock per key, always
    assert not [p for p in rtl.iterdir() if p.name.startswith(".evict-")]


def test_used_marks_an_entry_recent(caches: Path) -> None:
    rtl = caches / "rtlsim"
    a = _entry(rtl, "a", 1, 5000)
    b = _entry(rtl, "b", 1, 4000)
    cache.used(a)  # a run takes `a` from the cache: now b is the least recently used
    r = cache.trim(limit=int(1.5 * MB))
    assert [e.path for e in r.removed] == [b] and a.exists()


def test_recent_entries_stay_above_the_limit(caches: Path) -> None:
    rtl = caches / "rtlsim"
    fresh = [_entry(rtl, f"fresh{i}", 1, 60) for i in range(3)]  # used a minute ago: a run may need them
    stale = _entry(rtl, "stale", 1, 3600)
    r = cache.trim(limit=0)
    assert [e.path for e in r.removed] == [stale]
    assert all(p.exists() for p in fresh) and r.total_after > 0


def test_an_entry_whose_lock_is_held_is_skipped(caches: Path) -> None:
    rtl = caches / "rtlsim"
    busy = _entry(rtl, "busy", 1, 5000, lock=True)
    idle = _entry(rtl, "idle", 1, 4000, lock=True)
    with open(rtl / "busy.lock", "a") as held:  # a builder holding the lock (another open file description)
        fcntl.flock(held, fcntl.LOCK_EX)
        r = cache.trim(limit=0)
    assert [e.path for e in r.removed] == [idle]
    assert busy.exists()


def test_one_trim_at_a_time(caches: Path) -> None:
    a = _entry(caches / "rtlsim", "a", 1, 5000)
    with open(caches / cache.TRIM_LOCK, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert cache.trim(limit=0).skipped
    assert a.exists()
    assert not cache.trim(limit=0).skipped and not a.exists()


def test_leftovers_of_interrupted_writes(caches: Path) -> None:
    syn = caches / "synth"
    stale = _entry(syn, ".abc.tmp-x1", 1, 2 * 86400)
    writing = _entry(syn, ".def.tmp-x2", 1, 10)  # a Yosys run storing its entry right now
    cache.trim(limit=None)
    assert not stale.exists() and writing.exists()


def test_csim_entry_being_written_is_skipped(caches: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    csim = tmp_path / "csim-cache"
    monkeypatch.setenv("HLSGEN_CSIM_CACHE", str(csim))
    building = _entry(csim, "k1", 1, 5000)
    (building / "top.o.123.tmp").write_text("")
    t = time.time() - 5000
    os.utime(building, (t, t))
    done = _entry(csim, "k2", 1, 4000)
    crashed = _entry(csim, "k3", 1, 3 * 86400)  # a .tmp left by a build that died days ago
    (crashed / "tb.o.99.tmp").write_text("")
    t = time.time() - 3 * 86400
    os.utime(crashed / "tb.o.99.tmp", (t, t))
    os.utime(crashed, (t, t))
    r = cache.trim(limit=0)
    assert [e.path for e in r.removed] == [crashed, done] and building.exists()


def test_clear_and_info(caches: Path) -> None:
    _entry(caches / "rtlsim", "a", 1, 10, lock=True)
    _entry(caches / "synth", "b", 2, 10)
    data = cache.info()
    by = {r["cache"]: r for r in data["caches"]}
    assert by["rtlsim"]["entries"] == 1 and by["synth"]["entries"] == 1
    assert 3 * MB <= data["bytes"] < 3.2 * MB and data["limit"] == 5 * 1024**3
    removed, kept, freed = cache.clear()
    assert len(removed) == 2 and not kept and freed >= 3 * MB
    assert cache.info()["entries"] == 0


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hlsgen.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def test_cache_cli(caches: Path) -> None:
    _entry(caches / "rtlsim", "a", 1, 10, lock=True)
    r = _cli("cache", "info")
    assert r.returncode == 0, r.stderr
    rtl = next(line for line in r.stdout.splitlines() if line.startswith("rtlsim"))
    assert rtl.split()[1] == "1" and "MiB" in rtl and str(caches / "rtlsim") in rtl
    assert "limit 5.0 GiB (default)" in r.stdout
    r = _cli("cache", "clear")  # no terminal to ask: refused, nothing removed
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--yes" in r.stderr
    assert (caches / "rtlsim" / "a").exists()
    r = _cli("cache", "clear", "--yes")
    assert r.returncode == 0 and "removed 1 entries" in r.stdout
    assert not (caches / "rtlsim" / "a").exists()
    r = _cli("cache", "info", env={"HLSGEN_CACHE_MAX": "lots"})
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "HLSGEN_CACHE_MAX" in r.stderr
    assert "Traceback" not in r.stderr


FAKE_CXX = """#!{python}
# stands in for g++: objects are empty, the "binary" is a testbench reporting a mismatch
import os, sys
args = sys.argv[1:]
if "-dumpfullversion" in args:
    print("12.2.0")
    print("x86_64-linux-gnu")
    sys.exit(0)
out = args[args.index("-o") + 1]
if "-c" in args:
    open(out, "w").write("")
    sys.exit(0)
open(out, "w").write("#!/bin/sh\\necho 'ERROR: output 0 beat 0: expected 1, got 2 (fake testbench)'\\nexit 1\\n")
os.chmod(out, 0o755)
"""


def fake_compiler(folder: Path) -> Path:
    """A g++ stand-in whose C-sim binary always reports a mismatch (exit 1): csim without g++'s cost."""
    folder.mkdir(parents=True, exist_ok=True)
    cxx = folder / "fake-cxx"
    cxx.write_text(FAKE_CXX.format(python=sys.executable))
    cxx.chmod(0o755)
    return cxx


def test_csim_trims_the_cache_after_its_build(caches: Path, tmp_path: Path) -> None:
    """The hook: `hlsgen csim` marks its entry used and evicts a stale one beyond the limit."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    out = tmp_path / "out"
    r = _cli("compile", str(examples / "mlp_yaml" / "model.yaml"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    csim_cache = tmp_path / "csim-cache"
    stale = _entry(csim_cache, "0123456789abcdef", 2, 5000)
    env = {"CXX": str(fake_compiler(tmp_path / "bin")), "HLSGEN_CSIM_CACHE": str(csim_cache), "HLSGEN_CACHE_MAX": "1M"}
    r = _cli("csim", str(out), env=env)
    assert r.returncode == 1 and "csim FAIL" in r.stdout, r.stdout + r.stderr
    assert not stale.exists()
    assert [p.name for p in csim_cache.iterdir() if not p.name.startswith(".")] != []  # its own entry stays

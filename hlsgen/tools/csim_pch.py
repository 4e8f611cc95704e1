"""A precompiled header for the C-sim builds: ap_int.h and hls_stream.h, parsed once per machine.

Every design's top.cpp and tb_main.cpp include the same ap_int / hls_stream headers, and parsing
them is about 2 s of each g++ run (a third of a small design's build). `precompiled(cxx, version,
flags, log)` returns the flags that make g++ use a precompiled copy (`-include <dir>/hlsgen_pch.h`,
with hlsgen_pch.h.gch beside it), building it on first use:

* one per compiler, flags and header folder (about 80 MB), in the `csim-pch` cache
  ($HLSGEN_CACHE/csim-pch/<key>/, listed, bounded and cleared with the others: hlsgen.support.cache), keyed
  by their SHA-256;
* built under a file lock (parallel test workers wait for one build) into a temporary file that
  replaces the target when complete, so no half-written .gch is ever seen;
* purely an accelerator: the header's text is what the design's own top.h includes first (the same
  AP_INT_MAX_W), so g++ gives the same objects with or without it; if it cannot be built, the
  builds go on without it (the reason is logged), and g++ itself falls back to the text of
  hlsgen_pch.h when it finds the .gch unusable.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
from collections.abc import Callable
from contextlib import suppress

from hlsgen.backends.hls import MAX_BEAT_BITS
from hlsgen.support.cache import PCH_CACHE, cache_base

HEADER = "hlsgen_pch.h"
TEXT = f"""\
// hlsgen C-sim precompiled header (hlsgen/tools/csim_pch.py): what every generated top.h includes first
#ifndef AP_INT_MAX_W
#define AP_INT_MAX_W {MAX_BEAT_BITS}
#endif
#include <ap_int.h>
#include <hls_stream.h>
#include <cstdio>
#include <string>
"""


def precompiled(cxx: str, version: str, flags: list[str], log: Callable[[str], None]) -> list[str]:
    """The g++ flags that use the precompiled header for these compiler flags ([] if it cannot be built)."""
    key = hashlib.sha256("\0".join([cxx, version, *flags, TEXT]).encode()).hexdigest()[:16]
    folder = cache_base() / PCH_CACHE / key
    header, gch = folder / HEADER, folder / f"{HEADER}.gch"
    use = ["-include", str(header)]
    if gch.is_file():
        with suppress(OSError):
            os.utime(folder)  # last used, for the cache's LRU eviction (hlsgen.support.cache)
        return use
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it
            if gch.is_file():
                return use
            header.write_text(TEXT)
            tmp = folder / f"{HEADER}.gch.{os.getpid()}.tmp"
            argv = [cxx, *flags, "-x", "c++-header", str(header), "-o", str(tmp)]
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                tmp.unlink(missing_ok=True)
                log(f"build: no precompiled header ({cxx} exit {proc.returncode}); compiling without it")
                return []
            os.replace(tmp, gch)
            log(f"build: precompiled header {gch}")
    except OSError as e:
        log(f"build: no precompiled header ({e}); compiling without it")
        return []
    return use

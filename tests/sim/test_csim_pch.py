"""The C-sim builds' precompiled header (hlsgen/tools/csim_pch.py): built once, really used by g++,
the same object code as without it, and a compiler that cannot build it leaves the builds as they were."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hlsgen.tools.csim_build import BASE_FLAGS, compiler, header_dir
from hlsgen.tools.csim_pch import HEADER, precompiled

SOURCE = """\
#include <ap_int.h>
#include <hls_stream.h>
int main() {
    hls::stream<ap_uint<12> > s;
    s.write(ap_uint<12>(4095));
    ap_int<7> v = s.read().range(6, 0);
    return v.to_int() == -1 ? 0 : 1;
}
"""


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, list[str], Path]:
    monkeypatch.setenv("HLSGEN_CACHE", str(tmp_path / "cache"))
    cxx = compiler()
    version = subprocess.run([cxx, "-dumpfullversion"], capture_output=True, text=True).stdout
    (tmp_path / "t.cpp").write_text(SOURCE)
    return cxx, version, [*BASE_FLAGS, "-isystem", str(header_dir())], tmp_path


def test_built_once_used_by_gcc_and_the_same_object_code(setup: tuple[str, str, list[str], Path]) -> None:
    cxx, version, flags, tmp = setup
    said: list[str] = []
    use = precompiled(cxx, version, flags, said.append)
    assert use[0] == "-include" and Path(use[1]).name == HEADER
    gch = Path(use[1] + ".gch")
    assert gch.is_file() and len(said) == 1 and "precompiled header" in said[0]
    assert gch.parent.parent == tmp / "cache" / "csim-pch"  # a cache of its own (hlsgen cache info|clear)
    stamp = gch.stat().st_mtime_ns
    assert precompiled(cxx, version, flags, said.append) == use  # the second call reuses it
    assert gch.stat().st_mtime_ns == stamp and len(said) == 1

    def compile_(extra: list[str], obj: str) -> str:
        p = subprocess.run([cxx, *flags, *extra, "-Winvalid-pch", "-H", "-c", str(tmp / "t.cpp"), "-o",
                            str(tmp / obj)], capture_output=True, text=True, check=True)
        return p.stderr

    with_pch = compile_(use, "with.o")
    without = compile_([], "without.o")
    assert f"! {gch}" in with_pch  # g++ -H marks the precompiled header it loaded with "!"
    assert ".gch" not in without
    assert (tmp / "with.o").read_bytes() == (tmp / "without.o").read_bytes()
    subprocess.run([cxx, str(tmp / "with.o"), "-o", str(tmp / "t")], check=True)
    assert subprocess.run([str(tmp / "t")]).returncode == 0


def test_a_compiler_that_cannot_build_it_gives_no_flags(setup: tuple[str, str, list[str], Path]) -> None:
    _, version, flags, _ = setup
    said: list[str] = []
    assert precompiled("false", version, flags, said.append) == []
    assert said and "compiling without it" in said[0]

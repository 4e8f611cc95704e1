"""scripts/system_tools.sh (run by `make demo` / `make test`): says what it installs and why, installs
only as root with apt-get, and otherwise notes what it skipped and exits 0.

The script runs with PATH set to a folder of stubs: `id` answers the uid the case wants, `apt-get`
(when present) records its arguments, and the tools it looks for are absent unless stubbed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "system_tools.sh"


def _stubs(tmp_path: Path, uid: int, apt: bool, present: tuple[str, ...] = ()) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("cat",):
        (bin_dir / tool).symlink_to(shutil.which(tool) or f"/bin/{tool}")
    scripts = {"id": f"echo {uid}", **{t: "exit 0" for t in present}}
    if apt:
        scripts["apt-get"] = f'echo "$@" >> {tmp_path / "apt.log"}'
    for name, body in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _run(tmp_path: Path, group: str, bin_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/bin/sh", str(SCRIPT), group], capture_output=True, text=True, check=False,
                          env={"PATH": str(bin_dir), "HLSGEN_LZ4_HEADER": str(tmp_path / "none.h"), **env})


def _apt_calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "apt.log"
    return log.read_text().splitlines() if log.exists() else []


def test_root_with_apt_says_what_it_installs_and_why(tmp_path: Path) -> None:
    r = _run(tmp_path, "demo", _stubs(tmp_path, uid=0, apt=True))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("make: installing optional system packages with apt-get (Debian), as root:")
    assert "ccache: Verilator rebuilds" in r.stdout and "liblz4-dev: FST waveforms" in r.stdout
    assert "iverilog" not in r.stdout  # demo needs only the demo's tools
    assert _apt_calls(tmp_path) == ["update -qq", "install -y -qq ccache liblz4-dev"]


def test_the_test_group_adds_the_simulator_and_the_browser(tmp_path: Path) -> None:
    r = _run(tmp_path, "test", _stubs(tmp_path, uid=0, apt=True, present=("ccache",)))
    assert r.returncode == 0, r.stderr
    assert _apt_calls(tmp_path)[-1] == "install -y -qq liblz4-dev iverilog chromium chromium-driver"


@pytest.mark.parametrize(("uid", "apt", "env", "why"), [
    (1000, True, {}, "not root"),
    (0, False, {}, "no apt-get on this machine"),
    (0, True, {"HLSGEN_SYSTEM_TOOLS": "skip"}, "HLSGEN_SYSTEM_TOOLS=skip"),
])
def test_without_root_or_apt_it_notes_and_goes_on(tmp_path: Path, uid: int, apt: bool, env: dict[str, str],
                                                  why: str) -> None:
    r = _run(tmp_path, "test", _stubs(tmp_path, uid=uid, apt=apt), **env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"make: note: optional system packages not installed ({why})")
    assert "make: to add them: sudo apt-get install ccache liblz4-dev iverilog chromium chromium-driver" in r.stdout
    assert _apt_calls(tmp_path) == []


def test_nothing_missing_prints_nothing(tmp_path: Path) -> None:
    (tmp_path / "none.h").write_text("")
    bin_dir = _stubs(tmp_path, uid=0, apt=True, present=("ccache", "iverilog", "chromedriver"))
    r = _run(tmp_path, "test", bin_dir)
    assert (r.returncode, r.stdout, _apt_calls(tmp_path)) == (0, "", [])


def test_a_failing_apt_get_is_a_note(tmp_path: Path) -> None:
    bin_dir = _stubs(tmp_path, uid=0, apt=True)
    (bin_dir / "apt-get").write_text("#!/bin/sh\nexit 100\n")
    r = _run(tmp_path, "demo", bin_dir)
    assert r.returncode == 0
    assert r.stdout.splitlines()[-1] == "make: note: apt-get install ccache liblz4-dev failed; going on without them"

"""The OUT folder never costs the user a file: hlsgen replaces only what it wrote itself.

Covers the data-loss cases of issue 9: `-o .`, a parent of the inputs, a folder holding the inputs,
a foreign folder that happens to hold a report.json; interrupted writes (an exception, SIGTERM)
leave no temporary folder and keep the previous OUT; new folders get the umask's mode.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hlsgen.errors import HlsgenError
from hlsgen.support.outdir import MARKER, write_folder_atomically


def _fill(tmp: Path) -> None:
    (tmp / "report.json").write_text("{}\n")


def _entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_current_folder_with_a_report_json_is_never_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("report.json", "thesis.tex", "model.onnx"):
        (tmp_path / name).write_text(name)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(HlsgenError, match="current folder"):
        write_folder_atomically(".", _fill)
    (tmp_path / MARKER).write_text("")  # even with the marker: never the current folder
    with pytest.raises(HlsgenError, match="current folder"):
        write_folder_atomically(tmp_path, _fill)
    with pytest.raises(HlsgenError, match="current folder"):
        write_folder_atomically(tmp_path.parent, _fill)
    assert _entries(tmp_path) == sorted([MARKER, "report.json", "thesis.tex", "model.onnx"])


def test_folder_holding_an_input_is_never_replaced(tmp_path: Path) -> None:
    out = tmp_path / "proj"
    out.mkdir()
    (out / MARKER).write_text("")
    (out / "model.onnx").write_text("m")
    with pytest.raises(HlsgenError, match="holds the input"):
        write_folder_atomically(out, _fill, [out / "model.onnx"])
    with pytest.raises(HlsgenError, match="holds the input"):
        write_folder_atomically(tmp_path, _fill, [out / "model.onnx"])
    assert (out / "model.onnx").read_text() == "m"


def test_foreign_folder_with_report_json_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    with pytest.raises(HlsgenError, match="was not written by `hlsgen compile`"):
        write_folder_atomically(out, _fill)
    assert (out / "notes.txt").read_text() == "mine"


def test_own_output_is_replaced_and_marked(tmp_path: Path) -> None:
    out = write_folder_atomically(tmp_path / "out", _fill)
    (out / "stale.txt").write_text("old")
    out2 = write_folder_atomically(tmp_path / "out", _fill)
    assert out2 == out and _entries(out) == [MARKER, "report.json"]
    assert _entries(tmp_path) == ["out"]  # no temporary sibling left


def test_failure_keeps_previous_output_and_leaves_nothing(tmp_path: Path) -> None:
    out = write_folder_atomically(tmp_path / "out", _fill)

    def broken(tmp: Path) -> None:
        (tmp / "half.txt").write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_folder_atomically(out, broken)
    assert _entries(tmp_path) == ["out"] and _entries(out) == [MARKER, "report.json"]


def test_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        out = write_folder_atomically(tmp_path / "out", _fill)
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o755


def test_sigterm_during_write_leaves_nothing(tmp_path: Path) -> None:
    """A real process gets SIGTERM while filling OUT: exit 143 (128 + 15), one line, no temporary folder."""
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from hlsgen.cli import main\n"
        "import hlsgen.cli as cli\n"
        "from hlsgen.support.outdir import write_folder_atomically\n"
        "def slow(args):\n"
        "    def fill(tmp):\n"
        "        (tmp / 'part.txt').write_text('x')\n"
        "        print('filling', flush=True)\n"
        "        time.sleep(30)\n"
        "    write_folder_atomically(args.out, fill)\n"
        "    return 0\n"
        "cli.COMMANDS['compile'] = slow\n"
        "sys.exit(main(['compile', 'm.onnx', '-o', sys.argv[1]]))\n"
    )
    p = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "out")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert p.stdout is not None and p.stdout.readline() == "filling\n"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=20)
    time.sleep(0.1)
    assert p.returncode == 143 and err.count("\n") == 1 and "interrupted" in err
    assert _entries(tmp_path) == []

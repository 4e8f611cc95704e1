"""Every command shown in the docs runs: the ```console blocks of README.md and docs/*.md.

The convention (docs/testing.md, "Commands in the docs"):

- a fenced block whose info string is ``console`` is executed; other blocks (``sh``, ``text``, ...) are not;
- in it, a line starting with ``$ `` is a command, typed as a user types it; a command ending in ``\\``
  continues on the next line, a here-document (``<<'EOF'``) runs to its terminator;
- the other lines up to the next command are output the command must print (stdout and stderr merged),
  in this order, each a whole line after trimming and collapsing spaces; in them ``...`` or ``…`` match
  anything and a time such as ``4.2 s`` or ``1 min 02 s`` matches any time; a line that is only ``...``
  is skipped. Output not to be checked goes into a ``text`` block instead;
- ``<!-- docs-test: heavy -->`` on the line before the block marks its commands heavy: they run only in
  the ``heavy`` test (``make test-all``), together with everything else of that file, in order.

The commands of one file run in order, in a temporary copy of the working tree (the repository's
files without .git, .venv and build/) whose ``.venv`` links to the venv running the tests; ``hlsgen``
and ``python`` resolve to that venv (its bin/ first on PATH). ``cd`` carries over to the next command
of the file, like a shell. A command that exits non-zero, runs out of time, or does not print a line
its block shows fails the test, with the file, line, command and its output.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
DOCS = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
HEAVY_MARK = "<!-- docs-test: heavy -->"
TIMEOUT = 900.0  # seconds per command; heavy: HEAVY_TIMEOUT
HEAVY_TIMEOUT = 3600.0

# Commands not run, each with its reason (printed). Keep this tiny: every entry is a documented command
# that nobody checks here.
SKIP: dict[str, str] = {
    r"make (demo|test|test-all)\b": "make re-runs the venv set-up (pip install -e of this temporary copy would "
    "re-point the shared .venv's hlsgen to it) and `make test` would run this test inside itself; the example models "
    "`make demo` generates are made by the working_copy fixture, its hlsgen commands are documented one by one",
    r"(\.venv/bin/)?pip install -e": "pip install -e of this temporary copy would re-point the shared .venv's hlsgen "
    "to it; the tutorial_extra fixture installs the extra's requirements into the venv instead",
}

TIME_RE = re.compile(r"\d+(?:[.,]\d+)?(?: min \d+(?:\.\d+)?)? s\b")
WILD = "\x00"


@dataclass
class Command:
    file: str
    line: int  # 1-based line of the `$ ` line
    text: str  # the command as typed, continuation lines and here-document included
    expected: list[str] = field(default_factory=list)
    heavy: bool = False

    def skip_reason(self) -> str | None:
        for pattern, reason in SKIP.items():
            if re.match(pattern, self.text.strip()):
                return reason
        return None

    def needs_tutorial_extra(self) -> bool:
        return "examples/tutorial/export_" in self.text


def extract(markdown: str, name: str) -> list[Command]:
    """The commands of the ```console blocks of one Markdown text, in order."""
    lines = markdown.splitlines()
    commands: list[Command] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(`{3,}|~{3,})\s*(\S*)", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3)
        start = i
        i += 1
        body: list[tuple[int, str]] = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            line = lines[i]
            body.append((i + 1, line[len(indent):] if line.startswith(indent) else line.lstrip()))
            i += 1
        i += 1  # the closing fence
        if info != "console":
            continue
        prev = next((lines[k].strip() for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        heavy = prev == HEAVY_MARK
        j = 0
        current: Command | None = None
        while j < len(body):
            no, line = body[j]
            if line.startswith("$ "):
                text = line[2:]
                heredoc = re.search(r"<<-?\s*(['\"]?)(\w+)\1", text)
                while text.endswith("\\") and j + 1 < len(body):
                    j += 1
                    text += "\n" + body[j][1]
                if heredoc:
                    end = heredoc.group(2)
                    while j + 1 < len(body):
                        j += 1
                        text += "\n" + body[j][1]
                        if body[j][1].strip() == end:
                            break
                current = Command(name, no, text, heavy=heavy)
                commands.append(current)
            elif current is not None and line.strip() not in ("", "...", "…"):
                current.expected.append(line)
            j += 1
    return commands


def _norm(line: str) -> str:
    return " ".join(line.split())


def line_pattern(expected: str) -> re.Pattern[str]:
    """A shown output line as a regex: `...`/`…` match anything, a time any time, spaces collapse."""
    s = _norm(expected).replace("...", WILD).replace("…", WILD)
    s = TIME_RE.sub("\x01", s)
    rx = re.escape(s).replace(WILD, ".*").replace("\x01", r"\d+(?:[.,]\d+)?(?: min \d+(?:\.\d+)?)? s")
    return re.compile(rx)


def missing_lines(expected: list[str], output: str) -> list[str]:
    """The shown lines not printed, in order (each must come after the previous one's match)."""
    actual = [_norm(x) for x in output.splitlines()]
    k = 0
    missing = []
    for want in expected:
        rx = line_pattern(want)
        hit = next((n for n in range(k, len(actual)) if rx.fullmatch(actual[n])), None)
        if hit is None:
            missing.append(want)
        else:
            k = hit + 1
    return missing


def make_working_copy(dest: Path) -> Path:
    """The repository's files without .git/.venv/build and caches; .venv links to the venv in use."""
    ignore = shutil.ignore_patterns(".git", ".venv", "build", "__pycache__", "*.egg-info", ".mypy_cache",
                                    ".ruff_cache", ".pytest_cache", ".hypothesis")
    shutil.copytree(ROOT, dest, ignore=ignore, symlinks=True)
    (dest / ".venv").symlink_to(VENV_BIN.parent)
    # what `make demo` (skipped) would have generated: the docs use these models right after set-up
    for make_model in sorted(dest.glob("examples/*/make_model.py")):
        if not (make_model.parent / "sample.npy").exists():
            subprocess.run([sys.executable, str(make_model)], cwd=dest, check=True, capture_output=True)
    return dest


def run_commands(commands: list[Command], workdir: Path, log: Path | None = None) -> tuple[int, list[str]]:
    """Run the commands in order; the number run and the failures (each a readable paragraph)."""
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENV_BIN.parent)
    env.pop("PYTHONPATH", None)
    cwd = workdir
    pwd_file = workdir / ".docs_test_pwd"
    ran = 0
    for cmd in commands:
        reason = cmd.skip_reason()
        where = f"{cmd.file}:{cmd.line}"
        if reason:
            print(f"SKIP {where}: $ {cmd.text.splitlines()[0]}\n     reason: {reason}")
            continue
        script = f"{cmd.text}\n__rc=$?\npwd > '{pwd_file}'\nexit $__rc\n"
        t0 = time.monotonic()
        try:
            proc = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=HEAVY_TIMEOUT if cmd.heavy else TIMEOUT)
            code, output = proc.returncode, proc.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            code, output = -1, out + "\n(timed out)"
        ran += 1
        took = time.monotonic() - t0
        print(f"RUN  {where} ({took:.1f} s, exit {code}): $ {cmd.text.splitlines()[0]}")
        if log is not None:
            with log.open("a") as f:
                f.write(f"==== {where} exit {code} {took:.1f} s\n$ {cmd.text}\n{output}\n")
        if pwd_file.exists():
            cwd = Path(pwd_file.read_text().strip())
        tail = "\n".join(output.splitlines()[-40:])
        if code != 0:
            return ran, [f"{where}: exit {code}\n$ {cmd.text}\n{tail}"]
        missing = missing_lines(cmd.expected, output)
        if missing:
            shown = "\n".join(f"  {m}" for m in missing)
            return ran, [f"{where}: output lacks the line(s) the doc shows:\n{shown}\n$ {cmd.text}\n{tail}"]
    return ran, []


def _docs_with(pred: str) -> list[str]:
    out = []
    for name in DOCS:
        cmds = extract((ROOT / name).read_text(), name)
        if pred == "any" and cmds or pred == "heavy" and any(c.heavy for c in cmds):
            out.append(name)
    return out


@pytest.fixture
def working_copy(tmp_path: Path) -> Path:
    return make_working_copy(tmp_path / "hlsgen")


@pytest.fixture(scope="session")
def tutorial_extra() -> None:
    """Install the `tutorial` extra's requirements into the venv when one of them is missing."""
    m = re.search(r"^tutorial = (\[.*\])$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert m, "pyproject.toml has no tutorial extra"
    extra = ast.literal_eval(m.group(1))
    modules = {"torch": "torch", "brevitas": "brevitas", "onnxscript": "onnxscript", "onnxoptimizer": "onnxoptimizer"}
    if all(importlib.util.find_spec(m) for m in modules.values()):
        return
    print(f"installing the tutorial extra into {VENV_BIN.parent}: {' '.join(extra)}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *extra], check=True)


def _run_doc(name: str, tmp: Path, heavy: bool) -> None:
    commands = extract((ROOT / name).read_text(), name)
    if not heavy:
        commands = [c for c in commands if not c.heavy]
        assert not any(c.needs_tutorial_extra() for c in commands), \
            f"{name}: a command needing the tutorial extra is not in a block marked {HEAVY_MARK}"
    if not commands:
        pytest.skip(f"{name}: every command is in a block marked heavy")
    workdir = make_working_copy(tmp / "hlsgen")
    log = tmp / "commands.log"
    ran, failures = run_commands(commands, workdir, log)
    print(f"{name}: {ran} command(s) ran, log in {log}")
    assert not failures, failures[0]


@pytest.mark.parametrize("name", _docs_with("any"))
def test_documented_commands(name: str, tmp_path: Path) -> None:
    """The commands of the file's console blocks not marked heavy, in order."""
    _run_doc(name, tmp_path, heavy=False)


@pytest.mark.heavy
@pytest.mark.parametrize("name", _docs_with("heavy"))
def test_documented_commands_heavy(name: str, tmp_path: Path, tutorial_extra: None) -> None:
    """Every command of the file, heavy blocks included, in order."""
    _run_doc(name, tmp_path, heavy=True)


# --- the extraction and the checks themselves -------------------------------------------------------

SYNTHETIC = """# A page

```sh
hlsgen never-run       # not a console block
```

```console
$ echo one two \\
    three
one two three
$ python - <<'EOF'
print("from a here-document")
EOF
from a ...
```

<!-- docs-test: heavy -->

  ```console
  $ echo slow; echo "csim PASS: build 4.2 s, run 0.63 s"
  ...
  csim PASS: build 1 min 02 s, run 0.1 s
  ```
"""


def test_extract_follows_the_convention() -> None:
    cmds = extract(SYNTHETIC, "synthetic.md")
    assert [(c.line, c.heavy) for c in cmds] == [(8, False), (11, False), (20, True)]
    assert cmds[0].text == "echo one two \\\n    three" and cmds[0].expected == ["one two three"]
    assert cmds[1].text.endswith("EOF") and cmds[1].expected == ["from a ..."]
    assert cmds[2].expected == ["csim PASS: build 1 min 02 s, run 0.1 s"]


def test_shown_output_is_matched_line_by_line() -> None:
    out = "x\ncompiled tiny: 6 layers  -> /tmp/a/build/t\ncsim PASS: build 61.0 s, run 0.24 s\n"
    assert missing_lines(["compiled tiny: 6 layers -> .../build/t", "csim PASS: build 4.2 s, run 0.6 s"], out) == []
    assert missing_lines(["csim PASS: build 4.2 s, run 0.6 s", "compiled tiny: ..."], out) == ["compiled tiny: ..."]
    assert missing_lines(["csim FAIL: ..."], out) == ["csim FAIL: ..."]
    assert missing_lines(["compiled tiny"], out) == ["compiled tiny"]  # whole lines, not substrings


def test_synthetic_doc_runs(tmp_path: Path) -> None:
    ran, failures = run_commands(extract(SYNTHETIC, "synthetic.md"), tmp_path)
    assert (ran, failures) == (3, [])


def test_a_broken_command_is_caught(tmp_path: Path) -> None:
    """Negative control: a failing documented command, and a command whose shown output is not printed."""
    broken = "```console\n$ cd sub\n$ hlsgen compile nope.onnx -o build/x\n$ echo never\n```\n"
    (tmp_path / "sub").mkdir()
    ran, failures = run_commands(extract(broken, "broken.md"), tmp_path)
    assert ran == 2 and len(failures) == 1
    assert failures[0].startswith("broken.md:3: exit 2\n$ hlsgen compile nope.onnx")
    assert "hlsgen: error: nope.onnx: no such file" in failures[0]  # ran in sub/ (the cd carried over)

    wrong = "```console\n$ hlsgen --help\nusage: hlsgen frobnicate\n```\n"
    ran, failures = run_commands(extract(wrong, "wrong.md"), tmp_path)
    assert ran == 1 and "output lacks the line(s) the doc shows:\n  usage: hlsgen frobnicate" in failures[0]


def test_skip_list_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ran, failures = run_commands(extract("```console\n$ make demo\n```\n", "s.md"), tmp_path)
    assert (ran, failures) == (0, [])
    assert "SKIP s.md:2: $ make demo\n     reason: make re-runs the venv set-up" in capsys.readouterr().out


def test_docs_have_console_blocks() -> None:
    """The tutorial, the README and the CLI reference keep their commands under test."""
    names = _docs_with("any")
    assert {"README.md", "docs/tutorial.md"} <= set(names), names

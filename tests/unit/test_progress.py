"""hlsgen.support.progress (issue 10 item 2): plain lines off a terminal and in CI, a live display on a
terminal, nothing with --quiet; build-time estimates; chunked calibration equals one batch."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from hlsgen.support import progress

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp_yaml" / "model.yaml"


@pytest.fixture(autouse=True)
def _fresh_mode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Every test starts from detection, with its own estimate file, and leaves no mode behind."""
    monkeypatch.setenv("HLSGEN_CACHE", str(tmp_path / "cache"))
    progress.reset()
    yield
    progress.reset()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hlsgen.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_plain_lines(capsys: pytest.CaptureFixture[str]) -> None:
    with progress.using("plain"):
        progress.step("regress", "3 model(s), 2 at a time")
        with progress.task("synth", "3 Yosys runs, 2 at a time", total=3) as t:
            t.advance("conv_3", seconds=41.2)
            t.advance("fc", "cached", seconds=-1)
            t.advance("glue", "FAILED", seconds=2.0)
        with progress.task("verilator", "building the replay testbench of out", estimate=45.0):
            pass
    out, err = capsys.readouterr()
    assert out == ""  # progress never goes to stdout
    lines = err.splitlines()
    assert lines[:4] == ["[regress] 3 model(s), 2 at a time",
                         "[synth] conv_3 done 1/3 (41.2 s)",
                         "[synth] fc cached 2/3",
                         "[synth] glue FAILED 3/3 (2.0 s)"]
    assert re.fullmatch(r"\[synth\] 3 Yosys runs, 2 at a time: done in \d+\.\d s", lines[4])
    assert re.fullmatch(r"\[verilator\] building the replay testbench of out: done in \d+\.\d s \(estimate 45\.0 s\)",
                        lines[5])
    assert len(lines) == 6  # finished steps only: nothing when a step starts


def test_plain_counted_task_prints_quarters_and_nothing_after_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with progress.using("plain"):
        with progress.task("calibrate", "1,000 inputs", total=1000) as t:
            for _ in range(10):
                t.advance(n=100)
        with pytest.raises(RuntimeError), progress.task("g++", "building csim"):
            raise RuntimeError("compiler failed")
    lines = capsys.readouterr().err.splitlines()
    assert [x.split(" (")[0] for x in lines[:3]] == [f"[calibrate] 1,000 inputs: {n}/1,000" for n in
                                                     ("300", "500", "800")]
    assert lines[3].startswith("[calibrate] 1,000 inputs: done in ")
    assert len(lines) == 4  # the failed build printed nothing: its error is the one line


def test_quiet_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with progress.using("quiet"):
        progress.step("regress", "3 models")
        with progress.task("synth", "runs", total=2) as t:
            t.advance("a")
            t.advance("b")
        with progress.task("verilator", "build", estimate=3.0):
            pass
    assert capsys.readouterr() == ("", "")


def test_rich_renders_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120, color_system=None)
    with progress.using("rich", console):
        assert progress.mode() == "rich"
        with progress.task("verilator", "building the cocotb model of out", estimate=600.0) as build:
            with progress.task("synth", "4 Yosys runs", total=4) as t:
                t.advance("conv_3", seconds=12.5)
                progress._live.refresh()  # type: ignore[union-attr]  # render now, not at the next tick
            progress._live.refresh()  # type: ignore[union-attr]
            with progress.task("csim", "C simulation of out/[red]x[/] [/oops]"):  # a path is not markup
                progress._live.refresh()  # type: ignore[union-attr]
            assert build.elapsed >= 0
    text = buf.getvalue()
    assert "\x1b[" in text  # cursor control of a live display
    assert "building the cocotb model of out" in text and "left" in text  # the estimate column
    assert "1/4" in text  # the count column of the counted task
    assert "csim C simulation of out/[red]x[/] [/oops]: done in" in text
    assert "synth conv_3 done 1/4 (12.5 s)" in text  # a finished part, printed above the display
    assert "synth 4 Yosys runs: done in" in text and "verilator building the cocotb model of out: done in" in text
    assert progress._live is None  # the display stopped with its last task
    assert capsys.readouterr() == ("", "")  # nothing on the real stdout or stderr


def test_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    monkeypatch.setattr(sys, "stdout", _Tty())
    monkeypatch.setattr(sys, "stderr", _Tty())
    assert progress.detect() == "rich" and progress.mode() == "rich"
    for value in ("true", "1", "yes"):
        monkeypatch.setenv("CI", value)
        assert progress.detect() == "plain" and progress.mode() == "plain"
    for value in ("", "0", "false"):
        monkeypatch.setenv("CI", value)
        assert progress.detect() == "rich"
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # stdout to a file or pipe: plain lines on stderr
    assert progress.detect() == "plain"


def test_using_restores_and_reset_detects() -> None:
    console = Console(file=io.StringIO())
    with progress.using("quiet"):
        with progress.using("rich", console):
            assert progress.mode() == "rich" and progress._console is console
        assert progress.mode() == "quiet" and progress._console is None
    assert progress._mode is None and progress.mode() == "plain"  # pytest's captured stderr is no terminal
    progress.set_mode("quiet")
    progress.reset()
    assert progress._mode is None
    with pytest.raises(ValueError):
        progress.set_mode("loud")


def test_estimates_are_remembered(tmp_path: Path) -> None:
    assert progress.estimate("verilator:replay:out", "verilator:replay") is None
    progress.remember(42.0, "verilator:replay:out", "verilator:replay")
    progress.remember(10.0, "verilator:replay:other", "verilator:replay")
    assert progress.estimate("verilator:replay:out", "verilator:replay") == 42.0  # this design's own figure
    assert progress.estimate("verilator:replay:new", "verilator:replay") == 10.0  # else the last of its kind
    assert (tmp_path / "cache" / progress.TIMINGS).is_file()
    (tmp_path / "cache" / progress.TIMINGS).write_text("{damaged")
    assert progress.estimate("verilator:replay") is None  # a damaged file is no error
    progress.remember(0.0, "zero")  # nothing to learn from
    assert progress.estimate("zero") is None


def test_chunked_calibration_equals_one_batch(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    import importlib

    from hlsgen.pipeline import compile_model

    calibrate = importlib.import_module("hlsgen.passes.calibrate")  # the package exports a function of that name

    calib = np.random.default_rng(3).normal(size=(300, 64)).astype(np.float32)
    with progress.using("plain"):
        chunked = compile_model(MLP, None, calib)
        err = capsys.readouterr().err
        monkeypatch.setattr(calibrate, "PROGRESS_MIN", 10**9)
        whole = compile_model(MLP, None, calib)
    assert err.startswith("[calibrate] 300 inputs, ") and ": done in " in err
    assert capsys.readouterr().err == ""  # one batch below PROGRESS_MIN: no progress
    qtypes = {t.name: t.qtype for t in whole.graph.tensors.values() if t.qtype is not None}
    assert qtypes and qtypes == {t.name: t.qtype for t in chunked.graph.tensors.values() if t.qtype is not None}


def test_cli_quiet_compile_prints_nothing_on_stderr(tmp_path: Path) -> None:
    np.save(tmp_path / "calib.npy", np.random.default_rng(0).normal(size=(300, 64)).astype(np.float32))
    loud = _cli("compile", str(MLP), "--calib", str(tmp_path / "calib.npy"), "-o", str(tmp_path / "a"))
    assert loud.returncode == 0, loud.stderr
    assert "[calibrate] 300 inputs" in loud.stderr  # off a terminal: plain lines
    for args in (["--quiet", "compile", str(MLP)], ["compile", "-q", str(MLP)],
                 ["-q", "compile", str(MLP), "--calib", str(tmp_path / "calib.npy")]):
        r = _cli(*args, "-o", str(tmp_path / "b"))
        assert r.returncode == 0 and r.stderr == "", (args, r.stderr)
        assert r.stdout.startswith("compiled mlp_yaml: 3 layers")  # results still on stdout
    bad = _cli("--quiet", "compile", str(tmp_path / "nope.onnx"), "-o", str(tmp_path / "c"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "hlsgen: error:" in bad.stderr  # errors print


def test_cli_main_leaves_no_mode_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hlsgen.cli import main

    assert main(["--quiet", "compile", str(MLP), "-o", str(tmp_path / "o")]) == 0
    assert capsys.readouterr().err == ""
    assert progress._mode is None


FAKE_YOSYS = """#!{python}
import json, pathlib, re, sys
if sys.argv[1:] == ["-V"]:
    print("Yosys 0.0 (a stand-in for the progress test)")
    sys.exit(0)
script = pathlib.Path(sys.argv[sys.argv.index("-s") + 1]).read_text()
top = re.search(r"hierarchy -top (\\S+)", script).group(1)
pathlib.Path("yosys.log").write_text("stand-in\\n")
cells = {{"LUT6": 3, "FDRE": 2}}
pathlib.Path("stat.json").write_text(json.dumps({{"modules": {{top: {{"num_cells_by_type": cells}}}}}}))
"""


def test_synth_shows_every_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`synthesize` reports each finished Yosys run (a stand-in Yosys: the progress, not the cells)."""
    from hlsgen.pipeline import compile_model
    from hlsgen.report.output import write_compilation
    from hlsgen.tools.synth import synthesize

    out, _ = write_compilation(compile_model(MLP), tmp_path / "mlp_yaml", [MLP])
    yosys = tmp_path / "yosys"
    yosys.write_text(FAKE_YOSYS.format(python=sys.executable))
    yosys.chmod(0o755)
    capsys.readouterr()
    with progress.using("plain"):
        result = synthesize(out, yosys=yosys, use_cache=False)
    lines = capsys.readouterr().err.splitlines()
    runs = [r["name"] for r in (*result["layers"], result["glue"])]
    n = len(runs)  # 3 layers, 2 port converters (64-bit ports, docs/streams.md) and the glue
    assert n == 6 and len(lines) == n + 1, lines
    for i, line in enumerate(lines[:n], 1):
        assert re.fullmatch(rf"\[synth\] (\w+) done {i}/{n} \(\d+\.\d s\)", line), line
    assert sorted(line.split()[1] for line in lines[:n]) == sorted(runs)
    assert re.fullmatch(rf"\[synth\] {n} Yosys runs of mlp_yaml, 2 at a time: done in \d+\.\d s", lines[n])
    with progress.using("plain"):
        synthesize(out, yosys=yosys)  # from the cache now
    assert [line.split()[2] for line in capsys.readouterr().err.splitlines()[:n]] == ["cached"] * n
    with progress.using("quiet"):
        synthesize(out, yosys=yosys, use_cache=False)
    assert capsys.readouterr().err == ""


def test_builds_and_replay_runs_carry_estimates_from_the_last_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """rtlsim: a build's time is the next build's estimate (this design's, else its kind's); a replay
    run's seconds per model cycle give the next run's. The simulator itself is stood in for."""
    from hlsgen.pipeline import compile_model
    from hlsgen.report.output import write_compilation
    from hlsgen.tools import replay, rtlsim

    builds: list[Path] = []
    def build_replay(sources: list[Path], sim: str, waves: bool, build_dir: Path) -> None:
        time.sleep(0.05)
        builds.append(build_dir)

    monkeypatch.setattr(replay, "build_replay", build_replay)
    runs: list[int | None] = []

    def run_replay(out: Path, top: str, sim: str, build_dir: Path, run_dir: Path, frames: int | None,
                   waves: bool) -> float:
        runs.append(frames)
        return 64.0  # "seconds" of the stand-in simulator

    monkeypatch.setattr(replay, "run_replay", run_replay)
    out, _ = write_compilation(compile_model(MLP), tmp_path / "mlp_yaml", [MLP])
    (tmp_path / "six.yaml").write_text("quant: {act_bits: 6}\n")  # other Verilog: another build
    other, _ = write_compilation(compile_model(MLP, tmp_path / "six.yaml"), tmp_path / "other", [MLP])
    capsys.readouterr()
    with progress.using("plain"):
        for folder in (out, other, out):
            _, sources = rtlsim.design(folder)
            rtlsim.build(replay.replay_sources(folder, sources), replay.REPLAY_TOP, "verilator", False, kind="replay")
        first, second = capsys.readouterr().err.splitlines()  # the third: the first design again, cached
        assert re.fullmatch(r"\[verilator\] building the replay testbench of mlp_yaml: done in \d+\.\d s", first)
        assert re.fullmatch(r"\[verilator\] building the replay testbench of other: done in \d+\.\d s", second)
        assert len(builds) == 2
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        rtlsim._replay(out, "hlsgen_top", "verilator", builds[0], run_dir, None, False)
        rtlsim._replay(out, "hlsgen_top", "verilator", builds[0], run_dir, 2, False)
    lines = capsys.readouterr().err.splitlines()
    per_frame = rtlsim._cycles_per_frame(out)
    assert per_frame == 8 and runs == [None, 2]
    assert re.fullmatch(r"\[rtlsim\] verilator replay of mlp_yaml: "
                        r"4 frames at 8 cycles/frame \(~32 cycles, cycle model\): "
                        r"done in \d+\.\d s", lines[0])
    # 64 s for 4 x 8 cycles: 2 s per cycle, so 2 frames are estimated at 32 s
    assert re.fullmatch(r"\[rtlsim\] verilator replay of mlp_yaml: "
                        r"2 frames at 8 cycles/frame \(~16 cycles, cycle model\): "
                        r"done in \d+\.\d s \(estimate 32\.0 s\)", lines[1])
    assert progress.estimate("rtlsim:verilator:replay-s/cycle:mlp_yaml") == 4.0  # the last run: 64 s, 2 x 8 cycles
    assert progress.estimate("verilator:replay:mlp_yaml") is not None


def test_sized_estimates_scale_to_the_design() -> None:
    """A build of size S that took T seconds: an unseen design of size S/10 is estimated at T/10 (the
    plain fallback gave T, another design's figure), a known design at its own figure, sizes between
    two known ones on the line through them, sizes beyond in proportion to the nearest."""
    keys = ("verilator:replay:big", "verilator:replay")
    assert progress.estimate_sized(1000, *keys) is None
    progress.remember_sized(30.0, 100_000, *keys)
    assert progress.estimate_sized(10_000, "verilator:replay:small", "verilator:replay") == pytest.approx(3.0)
    assert progress.estimate_sized(100_000, *keys) == 30.0
    progress.remember_sized(8.0, 10_000, "verilator:replay:small", "verilator:replay")
    assert progress.estimate_sized(100_000, *keys) == 30.0  # its own figure, not the last design's
    assert progress.estimate_sized(10_000, "verilator:replay:small", "verilator:replay") == 8.0
    new = ("verilator:replay:new", "verilator:replay")
    assert progress.estimate_sized(55_000, *new) == pytest.approx(19.0)  # 8 s + 22 s x 45/90: a fixed part
    assert progress.estimate_sized(200_000, *new) == pytest.approx(60.0)
    assert progress.estimate_sized(5_000, *new) == pytest.approx(4.0)
    assert progress.estimate_sized(1_000_001, *new) is None  # beyond ten times the largest figure's size
    assert progress.estimate_sized(999, *new) is None  # or a tenth of the smallest's
    assert progress.estimate("verilator:replay:small") == 8.0  # the plain reading: the newest seconds
    assert progress.estimate_sized(0, *new) is None


def test_sized_figures_are_bounded_and_robust(tmp_path: Path) -> None:
    timings = tmp_path / "cache" / progress.TIMINGS
    progress.remember(12.0, "g++:csim:2")  # a plain figure (an older hlsgen's) is no sized one
    assert progress.estimate_sized(1000, "g++:csim:2") is None
    for i in range(1, 12):
        progress.remember_sized(float(i), 1000 * i, "g++:csim:2")
    progress.remember_sized(5.5, 5000, "g++:csim:2")  # a size again: replaced, newest last
    figures = json.loads(timings.read_text())["g++:csim:2"]
    assert len(figures) == progress.MAX_FIGURES and figures[-1] == [5000, 5.5]
    assert [f[0] for f in figures].count(5000) == 1
    progress.remember_sized(1e-6, 10**6, "rtlsim:verilator:replay")  # a small figure is not rounded away
    assert progress.estimate_sized(10**6, "rtlsim:verilator:replay") == 1e-6
    progress.remember_sized(0.0, 10, "zero")
    progress.remember_sized(1.0, 0, "zero")
    assert progress.estimate_sized(10, "zero") is None
    timings.write_text(json.dumps({"a": [[1, 2], "x", [0, 3], [4, -1], [True, 2]], "b": [], "c": {"x": 1}}))
    assert progress.estimate_sized(2, "b", "c", "a") == 4.0  # only the valid figure [1, 2]


def test_builds_and_runs_estimate_unseen_designs_by_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The call sites: a Verilator build and a C-sim build of a design never built are estimated from a
    ten times larger design's build at a tenth of its time, a random-stall run from another design's
    seconds per model cycle. The tools (Verilator, g++, cocotb) are stood in for."""
    from hlsgen.pipeline import compile_model
    from hlsgen.report.output import write_compilation
    from hlsgen.tools import csim_build, replay, rtlsim

    out, _ = write_compilation(compile_model(MLP), tmp_path / "mlp_yaml", [MLP])
    _, sources = rtlsim.design(out)
    src = replay.replay_sources(out, sources)
    size, cpp = rtlsim.verilog_bytes(src), csim_build.compiled_bytes(out / "hls")
    assert size > sum(f.stat().st_size for f in sources) and 10_000 < cpp < size
    progress.remember_sized(300.0, 10 * size, "verilator:replay:big", "verilator:replay")
    progress.remember_sized(50.0, 10 * cpp, "g++:csim:2:big", "g++:csim:2")
    progress.remember_sized(4.0, 2_000, "rtlsim:verilator:stall")  # 2 ms per cycle, a larger design's
    monkeypatch.setattr(replay, "build_replay", lambda *args: None)
    cxx = tmp_path / "cxx"
    cxx.write_text("#!/bin/sh\necho 12.2.0\n")  # `-dumpfullversion`: nothing else is run
    cxx.chmod(0o755)
    monkeypatch.setattr(csim_build, "compiler", lambda: str(cxx))
    monkeypatch.setattr(csim_build, "header_dir", lambda: tmp_path)
    monkeypatch.setattr(csim_build, "precompiled", lambda *args: [])
    monkeypatch.setattr(csim_build.Builder, "_run_parallel", lambda self, jobs: None)

    def simulate(*args: object, **kwargs: object) -> tuple[dict[str, object], float, Path]:
        return {"random_stalls": {"passed": True}}, 0.5, tmp_path

    monkeypatch.setattr(rtlsim, "simulate", simulate)
    capsys.readouterr()
    with progress.using("plain"):
        rtlsim.build(src, replay.REPLAY_TOP, "verilator", False, kind="replay")
        csim_build.Builder(out / "hls", log=lambda line: None).build()
        rtlsim._stall_run(out, "hlsgen_top", "verilator", tmp_path, 100, 1, False, tmp_path)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].endswith("(estimate 30.0 s)"), lines  # not 300 s
    assert lines[1].endswith("(estimate 5.0 s)"), lines  # not 50 s
    assert lines[2].endswith("(estimate 1.6 s)"), lines  # 100 frames x 8 cycles at 2 ms
    assert progress.estimate_sized(size, "verilator:replay:mlp_yaml") is not None  # its own figure now
    assert progress.estimate("rtlsim:verilator:stall-s/cycle:mlp_yaml") == pytest.approx(0.5 / 800)

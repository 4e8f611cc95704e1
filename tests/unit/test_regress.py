"""`hlsgen regress`: model discovery, steps in order stopping at the first failure, the summary table,
exit codes, JUnit XML, the executor seam (a fake executor here; a Dask LocalCluster in a heavy case).

The default cases never run g++ or Verilator: csim goes through a stand-in compiler whose testbench
always reports a mismatch (the negative control); the full four steps run in the heavy cases."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hostile_cases import default_sigint
from test_cache import fake_compiler

from hlsgen.errors import HlsgenError
from hlsgen.tools import regress as rg

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MLP = EXAMPLES / "mlp_yaml"


def _cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hlsgen.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL, cwd=cwd)


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HLSGEN_CACHE", str(tmp_path / "hlsgen-cache"))


def _table(stdout: str) -> dict[tuple[str, str], str]:
    """(model, step) -> status from the summary table."""
    rows = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] in (rg.PASS, rg.FAIL, rg.ERROR, rg.SKIP):
            rows[(parts[0], parts[1])] = parts[2]
    return rows


def _junit(path: Path) -> dict[tuple[str, str], ET.Element]:
    root = ET.parse(path).getroot()
    return {(c.get("classname", "").rsplit(".", 1)[-1], c.get("name", "")): c for c in root.iter("testcase")}


# ---------------------------------------------------------------------------------------------- discovery

def test_discover_examples_folder() -> None:
    specs = {s.name: s for s in rg.discover([EXAMPLES])}
    assert set(specs) == {"mlp_yaml", "qdq_cnn", "resnet_cifar"}
    assert specs["qdq_cnn"].model.name == "model.onnx"  # model.onnx wins over model_float.onnx
    r = specs["resnet_cifar"]
    assert r.model == EXAMPLES / "resnet_cifar" / "model.onnx"
    assert r.calib == EXAMPLES / "resnet_cifar" / "calib.npy" and r.config == EXAMPLES / "resnet_cifar" / "config.yaml"
    assert specs["mlp_yaml"].calib is None and specs["mlp_yaml"].config is None


def test_discover_files_siblings_and_unique_names(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    for stem in ("a", "b"):
        shutil.copy(MLP / "model.yaml", lib / f"{stem}.yaml")
        shutil.copy(MLP / "weights.npz", lib / "weights.npz")
    np.save(lib / "a.calib.npy", np.zeros((2, 64), np.float32))
    (lib / "config.yaml").write_text("quant: {weight_bits: 6}\n")
    (lib / "sub").mkdir()
    shutil.copy(MLP / "model.yaml", lib / "sub" / "model.yaml")
    shutil.copy(MLP / "weights.npz", lib / "sub" / "weights.npz")
    specs = rg.discover([lib, lib / "a.yaml"])
    assert [s.name for s in specs] == ["a", "b", "sub", "a-2"]
    assert specs[0].calib == lib / "a.calib.npy" and specs[1].calib is None
    assert specs[0].config == lib / "config.yaml"  # a folder's config.yaml is never a model itself


def test_discover_refuses(tmp_path: Path) -> None:
    with pytest.raises(HlsgenError, match="no such file"):
        rg.discover([tmp_path / "nope"])
    with pytest.raises(HlsgenError, match="no model"):
        rg.discover([tmp_path])
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(HlsgenError, match="not a model"):
        rg.discover([tmp_path / "x.txt"])


def test_parse_steps() -> None:
    assert rg.parse_steps("csim") == ("compile", "csim")
    assert rg.parse_steps("rtlsim,golden,compile") == ("compile", "golden", "rtlsim")
    with pytest.raises(HlsgenError, match="unknown step"):
        rg.parse_steps("compile,synth")


@pytest.mark.parametrize("args, message", [
    (["nope.onnx"], "no such file"),
    ([str(MLP), "--steps", "lint"], "unknown step"),
    ([str(MLP), "-j", "0"], "-j must be at least 1"),
    ([str(MLP), "--frames", "0"], "--frames must be at least 1"),
    ([str(MLP), "-o", "/dev/null/out"], "cannot use as the regression folder"),
    ([str(MLP), "--timeout", "0"], "--timeout must be positive"),
    ([str(MLP), "--junit", "."], "is a folder"),
])
def test_cli_errors_are_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    r = _cli("regress", *args, *([] if "-o" in args else ["-o", str(tmp_path / "out")]), cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and message in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------------------------- real runs

def test_compile_and_golden_pass(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    r = _cli("regress", str(MLP), "--steps", "compile,golden", "-o", str(tmp_path / "out"), "--junit", str(junit))
    assert r.returncode == 0, r.stdout + r.stderr
    assert _table(r.stdout) == {("mlp_yaml", "compile"): "PASS", ("mlp_yaml", "golden"): "PASS"}
    assert "golden vs float (max rel.)" in r.stdout and "within 1 LSB of onnxruntime" in r.stdout
    assert r.stdout.splitlines()[-2].startswith("PASS: 1/1 models passed")
    cases = _junit(junit)
    assert set(cases) == {("mlp_yaml", "compile"), ("mlp_yaml", "golden")}
    assert not any(c.find("failure") is not None for c in cases.values())
    assert (tmp_path / "out" / "mlp_yaml" / "report.json").is_file()
    assert "hlsgen.cli compare" in (tmp_path / "out" / "_logs" / "mlp_yaml.golden.log").read_text()


def test_negative_control_csim_failure(tmp_path: Path) -> None:
    """A model whose csim fails is FAIL with exit 1 and a JUnit failure naming the reason; a model whose
    compile fails is ERROR there and its csim is skipped; the good model's compile still passes."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.yaml").write_text("name: broken\ninput: {name: x, shape: [1, 4]}\nlayers: [{op: Nope}]\n")
    junit = tmp_path / "ci" / "junit.xml"
    env = {"CXX": str(fake_compiler(tmp_path / "bin"))}
    r = _cli("regress", str(MLP), str(broken), "--steps", "compile,csim", "-j", "2", "-o", str(tmp_path / "out"),
             "--junit", str(junit), env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert _table(r.stdout) == {("mlp_yaml", "compile"): "PASS", ("mlp_yaml", "csim"): "FAIL",
                                ("broken", "compile"): "ERROR", ("broken", "csim"): "SKIP"}
    csim_line = next(line for line in r.stdout.splitlines() if line.startswith("mlp_yaml") and " csim " in line)
    assert "first divergent layer" in csim_line  # the one-line reason: csim's own localization
    assert r.stdout.splitlines()[-2].startswith("FAIL: 0/2 models passed")
    cases = _junit(junit)
    failure = cases[("mlp_yaml", "csim")].find("failure")
    assert failure is not None and failure.get("type") == "fail"
    assert "first divergent layer" in failure.get("message", "")
    err = cases[("broken", "compile")].find("failure")
    assert err is not None and err.get("type") == "error" and "model.yaml" in err.get("message", "")
    assert cases[("broken", "csim")].find("skipped") is not None
    assert cases[("mlp_yaml", "compile")].find("failure") is None
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "4" and suite.get("failures") == "2"


def test_golden_falls_back_to_the_compile_report(tmp_path: Path) -> None:
    out = tmp_path / "m"
    out.mkdir()
    (out / "report.json").write_text('{"errors": {"golden_vs_float_relative": [0.0123]}}')
    status, reason = rg._golden_fallback(out, "no onnxruntime counterpart")
    assert status == rg.PASS and "0.0123" in reason and "no onnxruntime counterpart" in reason
    (out / "report.json").write_text('{"errors": {"golden_vs_float_relative": [NaN]}}')
    assert rg._golden_fallback(out, "x")[0] == rg.FAIL
    (out / "report.json").unlink()
    assert rg._golden_fallback(out, "x")[0] == rg.ERROR


# ---------------------------------------------------------------------------------------------- executors

class ReversingExecutor(Executor):
    """A fake executor: runs nothing until the last job is submitted, then finishes the jobs in reverse
    order (as a cluster might), pickling every call as a remote worker would."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.jobs: list[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:  # type: ignore[override]
        fn, args = pickle.loads(pickle.dumps((fn, args)))
        f: Future[Any] = Future()
        self.jobs.append((f, fn, args))
        if len(self.jobs) == self.expected:
            threading.Thread(target=self._finish_in_reverse).start()
        return f

    def _finish_in_reverse(self) -> None:
        for fut, job, a in reversed(self.jobs):
            fut.set_result(job(*a))
            time.sleep(0.05)


def test_run_all_with_a_fake_executor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def fake_step(argv: list[str], timeout: float, log: Path) -> tuple[int | None, str, float]:
        step = argv[3]
        name = Path(argv[argv.index("-o") + 1] if "-o" in argv else argv[4]).name
        calls.append(f"{step} {name}")
        if step == "csim" and name == "b":
            return 1, "csim FAIL: build 1.0 s, run 0.10 s\nfirst divergent layer: layer fc1 ...", 0.5
        return 0, {"compile": "golden vs float (max rel.): 0.01"}.get(step, "csim PASS: build cached"), 0.25

    monkeypatch.setattr(rg, "_run_step", fake_step)
    specs = [rg.ModelSpec(n, tmp_path / n / "model.yaml") for n in ("a", "b", "c")]
    opts = rg.Options(out=tmp_path / "out", steps=("compile", "csim"))
    seen: list[str] = []
    results = rg.run_all(specs, opts, ReversingExecutor(3), lambda r: seen.append(r.model.name))
    assert seen == ["c", "b", "a"]  # completion order
    assert [r.model.name for r in results] == ["a", "b", "c"]  # the table keeps the command-line order
    assert [r.passed for r in results] == [True, False, True]
    b = results[1]
    assert [(s.step, s.status) for s in b.steps] == [("compile", "PASS"), ("csim", "FAIL")]
    assert b.steps[1].reason == "first divergent layer: layer fc1 ..."
    assert sorted(calls) == ["compile a", "compile b", "compile c", "csim a", "csim b", "csim c"]
    table = rg.render_table(results)
    assert table.splitlines()[0].split() == ["model", "step", "status", "seconds", "reason"]
    assert [line.split()[:3] for line in table.splitlines()[2:]][3] == ["b", "csim", "FAIL"]


def test_steps_stop_at_the_first_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_step(argv: list[str], timeout: float, log: Path) -> tuple[int | None, str, float]:
        return (None, "", timeout) if argv[3] == "compare" else (0, "ok", 0.1)

    monkeypatch.setattr(rg, "_run_step", fake_step)
    r = rg.run_model(rg.ModelSpec("m", tmp_path / "m.onnx"), rg.Options(out=tmp_path, timeout=7))
    assert [(s.step, s.status) for s in r.steps] == [("compile", "PASS"), ("golden", "ERROR"), ("csim", "SKIP"),
                                                     ("rtlsim", "SKIP")]
    assert r.steps[1].reason == "timed out after 7 s"
    assert r.steps[2].reason == "not run: golden did not pass"


def test_scheduler_without_a_cluster_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    r = _cli("regress", str(MLP), "--steps", "compile", "-o", str(tmp_path / "out"), "--scheduler",
             "tcp://127.0.0.1:9", env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"})
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.splitlines()[-1].startswith("hlsgen: error: --scheduler tcp://127.0.0.1:9: cannot connect")
    assert "Traceback" not in r.stderr


@pytest.mark.heavy
def test_dask_local_cluster(tmp_path: Path) -> None:
    """The same jobs on a Dask scheduler: a LocalCluster with one worker process, reached by address."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as cluster:
        junit = tmp_path / "junit.xml"
        r = _cli("regress", str(MLP), str(EXAMPLES / "qdq_cnn"), "--steps", "compile,golden",
                 "-o", str(tmp_path / "out"), "--scheduler", cluster.scheduler_address, "--junit", str(junit))
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"Dask scheduler {cluster.scheduler_address}" in r.stderr
        assert _table(r.stdout) == {(m, s): "PASS" for m in ("mlp_yaml", "qdq_cnn") for s in ("compile", "golden")}
        assert len(_junit(junit)) == 4


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_dask_worker_in_another_folder_gets_absolute_paths(tmp_path: Path) -> None:
    """A scheduler and a worker started as a user starts them (`dask scheduler`, `dask worker`), the
    worker in a folder of its own: relative model paths given to `hlsgen regress` still pass (they
    were resolved in the worker's folder: 'examples/mlp_yaml/model.yaml: no such file')."""
    pytest.importorskip("distributed")
    dask = Path(sys.executable).parent / "dask"
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    project, elsewhere = tmp_path / "project", tmp_path / "worker_home"
    shutil.copytree(MLP, project / "examples" / "mlp_yaml")
    elsewhere.mkdir()
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "stdin": subprocess.DEVNULL}
    scheduler = subprocess.Popen([str(dask), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], cwd=elsewhere, **quiet)  # type: ignore[call-overload]
    worker = subprocess.Popen([str(dask), "worker", address, "--nworkers", "1", "--nthreads", "1",
                               "--no-dashboard"], cwd=elsewhere, **quiet)  # type: ignore[call-overload]
    try:
        r = _cli("regress", "examples/mlp_yaml", "--steps", "compile,golden", "-o", "out", "--scheduler", address,
                 cwd=project, env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "60s"})
    finally:
        for proc in (worker, scheduler):
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    assert r.returncode == 0, r.stdout + r.stderr
    assert _table(r.stdout) == {("mlp_yaml", "compile"): "PASS", ("mlp_yaml", "golden"): "PASS"}
    assert (project / "out" / "mlp_yaml" / "report.json").is_file()
    assert not (elsewhere / "out").exists()


@pytest.mark.heavy
def test_all_four_steps(tmp_path: Path) -> None:
    """compile, golden, csim (g++), rtlsim (Verilator) on the smallest example."""
    r = _cli("regress", str(MLP), "-o", str(tmp_path / "out"), "--frames", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _table(r.stdout) == {("mlp_yaml", s): "PASS" for s in rg.STEPS}
    assert "throughput: bit-exact" in r.stdout


def test_dask_executor_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Dask path of run_all (Client.get_executor on a scheduler address), quickly: an in-process
    LocalCluster, steps stubbed (the heavy case above runs real steps on worker processes)."""
    distributed = pytest.importorskip("distributed")

    def fake_step(argv: list[str], timeout: float, log: Path) -> tuple[int | None, str, float]:
        return (1, "FAIL: 1 layer(s) beyond 1 LSB fed: fc2 (3)", 0.1) if argv[3] == "compare" else (0, "", 0.1)

    monkeypatch.setattr(rg, "_run_step", fake_step)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as c:
        executor, close = rg.dask_executor(c.scheduler_address)
        try:
            specs = [rg.ModelSpec(n, tmp_path / f"{n}.onnx") for n in ("x", "y")]
            results = rg.run_all(specs, rg.Options(out=tmp_path, steps=("compile", "golden")), executor)
        finally:
            close()
    assert [r.model.name for r in results] == ["x", "y"]
    assert all([(s.step, s.status) for s in r.steps] == [("compile", "PASS"), ("golden", "FAIL")] for r in results)
    assert results[0].steps[1].reason == "FAIL: 1 layer(s) beyond 1 LSB fed: fc2 (3)"


def test_ctrl_c_stops_the_running_steps(tmp_path: Path) -> None:
    """SIGINT: exit 130 with one line, and no step process (they run in their own sessions) outlives it."""
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "hlsgen.cli", "regress", str(MLP), str(EXAMPLES / "qdq_cnn"),
                             "--steps", "compile,golden", "-j", "2", "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    def steps_running() -> list[str]:
        return subprocess.run(["pgrep", "-f", f"hlsgen.cli (compile|compare) .* {out}"], capture_output=True,
                              text=True).stdout.split()

    deadline = time.monotonic() + 60
    while not steps_running() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert steps_running(), "no step started"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("hlsgen: interrupted") and "Traceback" not in err
    time.sleep(0.5)
    assert steps_running() == []
    # no temporary left; a compile that finished before the signal left a complete OUT (its marker)
    left = {p.name for p in out.iterdir()} - {"_logs"}
    assert left <= {"mlp_yaml", "qdq_cnn"} and all((out / name / ".hlsgen-output").is_file() for name in left)
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]


def test_timeout_is_an_error_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = _cli("regress", str(MLP), "--steps", "compile,golden", "--timeout", "0.3", "-o", str(out))
    assert r.returncode == 1, r.stdout + r.stderr
    assert _table(r.stdout) == {("mlp_yaml", "compile"): "ERROR", ("mlp_yaml", "golden"): "SKIP"}
    assert "timed out after 0.3 s" in r.stdout
    assert sorted(p.name for p in out.iterdir()) == ["_logs"]

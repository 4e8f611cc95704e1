"""`hlsgen regress`: compile + golden + csim + rtlsim over many models, in parallel; one summary table,
JUnit XML for CI; beyond one machine the same jobs go to a Dask cluster (`--scheduler ADDRESS`).

A job is one model; its steps run in order, each as its own `hlsgen` process (`python -m hlsgen.cli`,
the very commands a user types), and stop at the first one that does not pass:

  compile  hlsgen compile MODEL [-c CONFIG] [--calib CALIB] -o OUT/<name>
  golden   hlsgen compare MODEL [-c CONFIG] [--calib CALIB]: every rounding point of the golden model
           within 1 LSB of onnxruntime. When onnxruntime cannot run the model (compare exits 2, e.g. a
           graph export-qdq cannot express) the step falls back to the golden-vs-float error that the
           compile reported (OUT/<name>/report.json), and says so in its reason.
  csim     hlsgen csim OUT/<name>
  rtlsim   hlsgen rtlsim OUT/<name> [--frames N]

Statuses: PASS; FAIL (the step ran and found a mismatch: exit 1); ERROR (bad input or a tool that
could not run: exit 2, a crash, a timeout); SKIP (an earlier step of the model did not pass).
Parallelism: -j N jobs at a time in threads (each step is a process of its own, so threads only
wait); with --scheduler, a `distributed.Client` executor instead, whose workers must see the same
paths (models and OUT) and have hlsgen installed.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor, as_completed
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path

from hlsgen.errors import HlsgenError

STEPS = ("compile", "golden", "csim", "rtlsim")
MODEL_SUFFIXES = (".onnx", ".yaml", ".yml")
NOT_MODELS = ("config.yaml", "config.yml")
PASS, FAIL, ERROR, SKIP = "PASS", "FAIL", "ERROR", "SKIP"
REASON_CHARS = 200
KILL_GRACE = 10.0  # seconds between SIGTERM and SIGKILL of a step stopped early


@dataclass(frozen=True)
class ModelSpec:
    """One model of the regression: its files and the name of its OUT folder."""

    name: str
    model: Path
    calib: Path | None = None
    config: Path | None = None


def spec_files(specs: Iterable[ModelSpec]) -> list[Path]:
    """Every file the regression reads (models, calibration data, configs): never written over."""
    return [p for s in specs for p in (s.model, s.calib, s.config) if p is not None]


@dataclass(frozen=True)
class Options:
    out: Path  # OUT/<name> per model, OUT/_logs/<name>.<step>.log
    steps: tuple[str, ...] = STEPS
    frames: int | None = None  # rtlsim --frames
    timeout: float = 3600.0  # seconds per step
    python: str = sys.executable


@dataclass(frozen=True)
class StepResult:
    step: str
    status: str
    seconds: float
    reason: str  # one line
    log: str = ""  # the log file (full stdout + stderr)


@dataclass(frozen=True)
class ModelResult:
    model: ModelSpec
    steps: tuple[StepResult, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return all(s.status == PASS for s in self.steps)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps)


def outcome(r: ModelResult) -> str:
    """PASS, or the status and step of the first step that did not pass (`FAIL at csim`)."""
    bad = next((s for s in r.steps if s.status != PASS), r.steps[-1] if r.steps else None)
    return "PASS" if r.passed else f"{bad.status} at {bad.step}" if bad else "no steps"


# ---------------------------------------------------------------------------------------------- discovery

def discover(paths: Iterable[str | Path]) -> list[ModelSpec]:
    """Models from files and folders.

    A model file (.onnx, .yaml, .yml) takes `<stem>.calib.npy|npz` and `<stem>.config.yaml` beside it,
    else `calib.npy|npz` and `config.yaml` of its folder. A folder holding model.onnx / model.yaml (or
    exactly one model file) is one model; any other folder stands for every model file in it and
    every model folder below it. Names are unique (the folder name for model.*, else the file stem;
    a repeated name gets -2, -3, ...)."""
    specs: list[ModelSpec] = []
    for p in paths:
        path = Path(p)
        if path.is_file():
            if path.suffix.lower() not in MODEL_SUFFIXES:
                raise HlsgenError(f"{path}: not a model (.onnx, .yaml or .yml)")
            specs.append(_spec(path))
        elif path.is_dir():
            found = _models_in(path, depth=0)
            if not found:
                raise HlsgenError(f"{path}: no model (.onnx, .yaml) in this folder or below")
            specs.extend(found)
        else:
            raise HlsgenError(f"{path}: no such file or folder")
    return _unique(specs)


def _model_files(folder: Path) -> list[Path]:
    try:
        return sorted(f for f in folder.iterdir() if f.is_file() and f.suffix.lower() in MODEL_SUFFIXES
                      and f.name.lower() not in NOT_MODELS and not f.name.lower().endswith(".config.yaml"))
    except OSError as e:
        raise HlsgenError(f"{folder}: cannot list ({e.strerror})") from e


def _models_in(folder: Path, depth: int) -> list[ModelSpec]:
    files = _model_files(folder)
    named = [f for f in files if f.stem == "model"]
    if named:
        return [_spec(sorted(named, key=lambda f: MODEL_SUFFIXES.index(f.suffix.lower()))[0])]
    if len(files) == 1:
        return [_spec(files[0])]
    found = [_spec(f) for f in files]
    if depth < 4:
        for sub in sorted(d for d in folder.iterdir() if d.is_dir() and not d.name.startswith((".", "__"))):
            found.extend(_models_in(sub, depth + 1))
    return found


def _first(*candidates: Path) -> Path | None:
    return next((c for c in candidates if c.is_file()), None)


def _spec(model: Path) -> ModelSpec:
    """The model's spec with absolute paths: a job may run on a Dask worker in another working folder."""
    model = model.resolve()
    d, stem = model.parent, model.stem
    calib = _first(d / f"{stem}.calib.npy", d / f"{stem}.calib.npz", d / "calib.npy", d / "calib.npz")
    config = _first(d / f"{stem}.config.yaml", d / "config.yaml")
    name = d.resolve().name if stem == "model" or len(_model_files(d)) == 1 else stem
    return ModelSpec(_safe_name(name), model, calib, config)


def _safe_name(name: str) -> str:
    clean = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".") or "model"
    return clean[:80]


def _unique(specs: list[ModelSpec]) -> list[ModelSpec]:
    seen: dict[str, int] = {}
    out = []
    for s in specs:
        n = seen.get(s.name, 0) + 1
        seen[s.name] = n
        out.append(s if n == 1 else replace(s, name=f"{s.name}-{n}"))
    return out


# ---------------------------------------------------------------------------------------------- one model

_RUNNING: set[subprocess.Popen[str]] = set()
_RUNNING_LOCK = threading.Lock()
_STOPPING = threading.Event()  # set by stop_running: no new step starts in this process


def _hlsgen(opts: Options, *args: str) -> list[str]:
    return [opts.python, "-m", "hlsgen.cli", *args]


def _model_args(spec: ModelSpec) -> list[str]:
    args = [str(spec.model)]
    if spec.config is not None:
        args += ["-c", str(spec.config)]
    if spec.calib is not None:
        args += ["--calib", str(spec.calib)]
    return args


def _run_step(argv: list[str], timeout: float, log: Path) -> tuple[int | None, str, float]:
    """Run one hlsgen command in its own process group (a timeout or Ctrl-C ends the whole group);
    (exit code or None on timeout, stdout + stderr, seconds). The output goes to `log` too."""
    start = time.monotonic()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with _RUNNING_LOCK:
        if _STOPPING.is_set():
            return -int(signal.SIGINT), "interrupted before it started", 0.0
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                text=True, errors="replace", start_new_session=True, env=env)
        _RUNNING.add(proc)
    try:
        try:
            text, _ = proc.communicate(timeout=timeout)
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            _kill(proc)
            text, _ = proc.communicate()
            code = None
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(proc)
    seconds = time.monotonic() - start
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("$ " + " ".join(argv) + "\n" + text + f"\n[exit {code}, {seconds:.1f} s]\n")
    except OSError as e:  # the table still has the verdict
        text += f"\n(log not written: {log}: {e.strerror or e})"
    return code, text, seconds


def _signal_group(proc: subprocess.Popen[str], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        with suppress(ProcessLookupError):
            proc.send_signal(sig)


def _kill(proc: subprocess.Popen[str]) -> None:
    _end([proc])


def _end(procs: list[subprocess.Popen[str]], grace: float = KILL_GRACE) -> None:
    """SIGTERM to each step's process group (hlsgen cleans up its temporary folders on it), SIGKILL to
    what still runs after `grace` seconds."""
    for proc in procs:
        if proc.poll() is None:
            _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for proc in procs:
        with suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    for proc in procs:
        _signal_group(proc, signal.SIGKILL)  # also what the step left running in its group


def stop_running() -> None:
    """End every step process group this process started (Ctrl-C)."""
    with _RUNNING_LOCK:
        _STOPPING.set()
        procs = list(_RUNNING)
    _end(procs)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _error_line(text: str) -> str:
    lines = _lines(text)
    errors = [x for x in lines if x.startswith("hlsgen: error:")]
    if errors:
        return errors[-1].removeprefix("hlsgen: error:").strip()
    if any(x.startswith("Traceback") for x in lines):
        last = lines[-1]
        return f"crash: {last}"
    return lines[-1] if lines else "no output"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 3] + "..."


def _pass_reason(step: str, text: str) -> str:
    lines = _lines(text)
    pick = {
        "compile": lambda x: x.startswith("golden vs float"),
        "golden": lambda x: x.startswith("PASS"),
        "csim": lambda x: x.startswith("csim PASS"),
        "rtlsim": lambda x: x.startswith("throughput:"),
    }[step]
    hits = [x for x in lines if pick(x)]
    return hits[0] if hits else (lines[-1] if lines else "")


def _fail_reason(step: str, text: str) -> str:
    lines = _lines(text)
    if step == "golden":
        hits = [x for x in lines if x.startswith("FAIL")]
    elif step == "csim":
        hits = [x for x in lines if x.startswith("first divergent layer")] or \
            [x for x in lines if x.startswith("csim FAIL") or x.startswith("FAIL")]
    elif step == "rtlsim":
        hits = [x for x in lines if "MISMATCH" in x or x.startswith("first divergent") or x.startswith("timeout")
                or x.startswith("no test result")]
        hits = [" ".join(hits[:2])] if hits else []
    else:
        hits = []
    return hits[0] if hits else _error_line(text)


def _golden_fallback(out: Path, why: str) -> tuple[str, str]:
    """compare cannot run the model: the compile's own golden-vs-float figure."""
    try:
        report = json.loads((out / "report.json").read_text())
        errs = report["errors"]["golden_vs_float_relative"]
    except (OSError, ValueError, KeyError, TypeError):
        return ERROR, f"compare: {why}; and no golden-vs-float figure in {out / 'report.json'}"
    values = [float(v) for v in errs]
    if not all(math.isfinite(v) for v in values):
        return FAIL, f"compare: {why}; golden vs float not finite: {values}"
    shown = ", ".join(f"{v:.3g}" for v in values)
    return PASS, f"golden vs float (max rel.) {shown} (onnxruntime cannot run it: {why})"


def run_model(spec: ModelSpec, opts: Options) -> ModelResult:
    """All steps of one model, in order, until one does not pass. Runs on any worker (picklable)."""
    out = opts.out / spec.name
    logs = opts.out / "_logs"
    argv = {
        "compile": _hlsgen(opts, "compile", *_model_args(spec), "-o", str(out)),
        "golden": _hlsgen(opts, "compare", *_model_args(spec)),
        "csim": _hlsgen(opts, "csim", str(out)),
        "rtlsim": _hlsgen(opts, "rtlsim", str(out), *(["--frames", str(opts.frames)] if opts.frames else [])),
    }
    results: list[StepResult] = []
    stopped = ""
    for step in STEPS:
        if step not in opts.steps:
            continue
        if stopped:
            results.append(StepResult(step, SKIP, 0.0, f"not run: {stopped} did not pass"))
            continue
        log = logs / f"{spec.name}.{step}.log"
        try:
            code, text, seconds = _run_step(argv[step], opts.timeout, log)
        except OSError as e:
            code, text, seconds = -1, f"cannot run {argv[step][0]}: {e}", 0.0
        if code == 0:
            status, reason = PASS, _pass_reason(step, text)
        elif code is None:
            status, reason = ERROR, f"timed out after {opts.timeout:g} s"
        elif code == 1 and "Traceback" not in text:
            status, reason = FAIL, _fail_reason(step, text)
        elif step == "golden" and code == 2:
            status, reason = _golden_fallback(out, _error_line(text))
        else:
            status, reason = ERROR, (_error_line(text) if code == 2 else f"exit {code}: {_error_line(text)}")
        results.append(StepResult(step, status, seconds, _short(reason), str(log)))
        if status != PASS:
            stopped = step
    return ModelResult(spec, tuple(results))


# ---------------------------------------------------------------------------------------------- many models

def run_all(specs: Sequence[ModelSpec], opts: Options, executor: Executor,
            progress: Callable[[ModelResult], None] | None = None) -> list[ModelResult]:
    """Submit one job per model to `executor` (any concurrent.futures.Executor: threads, a Dask
    client's executor, a test's fake); results in the order of `specs`."""
    _STOPPING.clear()
    futures: dict[Future[ModelResult], int] = {executor.submit(run_model, s, opts): i for i, s in enumerate(specs)}
    results: list[ModelResult | None] = [None] * len(specs)
    try:
        for f in as_completed(futures):
            r = f.result()
            results[futures[f]] = r
            if progress is not None:
                progress(r)
    except BaseException:
        for f in futures:
            f.cancel()
        stop_running()
        raise
    return [r for r in results if r is not None]


def thread_executor(jobs: int) -> Executor:
    if jobs < 1:
        raise HlsgenError(f"-j must be at least 1, got {jobs}")
    return ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="hlsgen-regress")


def dask_executor(address: str) -> tuple[Executor, Callable[[], None]]:
    """A concurrent.futures executor on an existing Dask scheduler, and its close function."""
    try:
        from distributed import Client
    except ImportError as e:
        raise HlsgenError("--scheduler needs Dask distributed: pip install 'hlsgen[dist]'") from e
    try:
        client = Client(address)  # connect timeout: Dask's distributed.comm.timeouts.connect (30 s)
    except (OSError, TimeoutError, ValueError) as e:
        raise HlsgenError(f"--scheduler {address}: cannot connect ({type(e).__name__}: {e})") from e
    return client.get_executor(pure=False), client.close


def render_table(results: Sequence[ModelResult]) -> str:
    rows = [(r.model.name, s.step, s.status, f"{s.seconds:.1f}", s.reason) for r in results for s in r.steps]
    head = ("model", "step", "status", "seconds", "reason")
    w = [max(len(head[i]), *(len(row[i]) for row in rows)) if rows else len(head[i]) for i in range(4)]

    def line(row: tuple[str, ...]) -> str:
        return f"{row[0]:{w[0]}}  {row[1]:{w[1]}}  {row[2]:{w[2]}}  {row[3]:>{w[3]}}  {row[4]}".rstrip()

    out = [line(head), line(tuple("-" * n for n in w) + ("-" * 6,))]
    out += [line(row) for row in rows]
    return "\n".join(out)


def summary_line(results: Sequence[ModelResult], seconds: float) -> str:
    steps = [s for r in results for s in r.steps]
    count = {k: sum(s.status == k for s in steps) for k in (PASS, FAIL, ERROR, SKIP)}
    passed = sum(r.passed for r in results)
    verdict = "PASS" if passed == len(results) else "FAIL"
    return (f"{verdict}: {passed}/{len(results)} models passed; steps: {count[PASS]} passed, {count[FAIL]} failed, "
            f"{count[ERROR]} errors, {count[SKIP]} skipped; {seconds:.1f} s")


def junit_xml(results: Sequence[ModelResult], seconds: float) -> ET.ElementTree:
    """One <testsuite name="hlsgen regress">, one <testcase classname=model name=step> per model-step;
    FAIL and ERROR as <failure message=reason type=status> (the log file in its text), SKIP as <skipped>."""
    steps = [(r, s) for r in results for s in r.steps]
    failures = sum(s.status in (FAIL, ERROR) for _, s in steps)
    suite = ET.Element("testsuite", name="hlsgen regress", tests=str(len(steps)), failures=str(failures),
                       errors="0", skipped=str(sum(s.status == SKIP for _, s in steps)), time=f"{seconds:.3f}")
    for r, s in steps:
        case = ET.SubElement(suite, "testcase", classname=f"hlsgen.tools.regress.{r.model.name}", name=s.step,
                             time=f"{s.seconds:.3f}")
        if s.status in (FAIL, ERROR):
            fail = ET.SubElement(case, "failure", message=s.reason, type=s.status.lower())
            fail.text = f"{s.reason}\nmodel: {r.model.model}\nlog: {s.log}"
        elif s.status == SKIP:
            ET.SubElement(case, "skipped", message=s.reason)
    root = ET.Element("testsuites", tests=str(len(steps)), failures=str(failures), time=f"{seconds:.3f}")
    root.append(suite)
    ET.indent(root)
    return ET.ElementTree(root)


JUNIT_SUFFIXES = (".xml",)


def write_junit(path: Path, results: Sequence[ModelResult], seconds: float, inputs: Iterable[Path] = ()) -> None:
    """JUnit XML, written atomically, never over one of `inputs` or a file hlsgen did not write."""
    from hlsgen.support.outfile import write_owned_file

    tree = junit_xml(results, seconds)
    write_owned_file(path, lambda f: tree.write(f, encoding="utf-8", xml_declaration=True), inputs, JUNIT_SUFFIXES)


def prepare_out(out: Path) -> Path:
    """The regression folder, created; one line (exit 2) when it cannot be."""
    try:
        out = out.resolve()
        out.mkdir(parents=True, exist_ok=True)
        (out / "_logs").mkdir(exist_ok=True)
    except OSError as e:
        raise HlsgenError(f"{out}: cannot use as the regression folder ({e.strerror or e})") from None
    return out


def parse_steps(text: str) -> tuple[str, ...]:
    steps = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [s for s in steps if s not in STEPS]
    if bad or not steps:
        raise HlsgenError(f"--steps: unknown step(s) {', '.join(bad) or '(none)'}; choose from {', '.join(STEPS)}")
    if any(s in steps for s in ("csim", "rtlsim")) and "compile" not in steps:
        steps = ("compile", *steps)  # csim and rtlsim simulate the compiled folder
    return tuple(s for s in STEPS if s in steps)

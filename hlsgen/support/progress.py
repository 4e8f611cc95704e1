"""Progress of long work (builds, simulations, Yosys runs, calibration, `hlsgen regress`) on stderr.

Three modes, module-wide:

  rich    a live display (the `rich` library): one row per running task with a spinner, its elapsed
          time and an estimate (`~0:12 left`), a bar for counted tasks; finished steps are printed
          above it. Chosen when stdout and stderr are both terminals and $CI is not set.
  plain   one line per finished step, `[synth] conv_3 done 1/12 (41.2 s)`: when the output is not a terminal
          (a pipe, a file, a test's capture) or in CI ($CI set to anything but "", 0 or false).
  quiet   nothing (`hlsgen --quiet`); errors are not progress and still print.

The CLI sets the mode (`set_mode`, or `using` for a scope that restores the previous one); before
that, and after `reset()`, it is detected at each use. Progress never goes to stdout, which stays
machine-readable.

    with progress.task("synth", "13 Yosys runs, 2 at a time", total=13) as t:
        ...
        t.advance("conv_3", seconds=41.2)              # [synth] conv_3 done 1/13 (41.2 s)
    with progress.task("verilator", "building the replay testbench", estimate=40.0):
        ...                                            # a spinner, elapsed time, ~N s left
    progress.step("regress", "3 model(s), 2 at a time")  # [regress] 3 model(s), 2 at a time

Estimates of single-process work (a Verilator or g++ build, a simulation) come from earlier runs,
kept in timings.json in the build cache folder ($HLSGEN_CACHE, else ~/.cache/hlsgen) under keys
that callers give most specific first (this design's, then its kind's):

  plain   `remember(value, *keys)` keeps one figure (seconds, or a rate such as seconds per
          simulated cycle); `estimate(*keys)` reads the first key's.
  sized   for work whose time grows with the design (a build: with the bytes compiled; a run: with
          the cycles simulated), so that a figure learned on one design fits another:
          `remember_sized(seconds, size, *keys)` adds (size, seconds) to each key's last few figures,
          `estimate_sized(size, *keys)` reads the first key that has any. A remembered size gives its
          own figure; a size between two remembered ones the line through them (a fixed cost, such as
          compiling the simulator's runtime, is counted once, not per byte); a size beyond them the
          nearest one in proportion (a single figure, T seconds at size S, gives T/10 at S/10), but
          no further than ten times or a tenth of its size (MAX_SCALE).

    keys = (f"verilator:replay:{design}", "verilator:replay")
    with progress.task("verilator", "...", estimate=progress.estimate_sized(size, *keys)):
        ...
    progress.remember_sized(seconds, size, *keys)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

MODES = ("rich", "plain", "quiet")
TIMINGS = "timings.json"
MAX_TIMINGS = 500
MAX_FIGURES = 8  # (size, seconds) pairs kept per sized key
MAX_SCALE = 10.0  # a figure is scaled to at most ten times, or a tenth of, its size
MIN_ESTIMATE = 1.0  # seconds; a shorter estimate is not shown

_lock = threading.RLock()
_mode: str | None = None  # None: detect at each use
_console: Console | None = None  # rich mode's console (tests pass one writing to a StringIO)
_live: Progress | None = None  # the shared live display while rich tasks run
_live_tasks = 0


# ---------------------------------------------------------------------------------------------- the mode

def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _is_terminal(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def detect() -> str:
    """rich on a terminal (stdout and stderr), plain otherwise and in CI."""
    if in_ci() or os.environ.get("TERM") == "dumb":
        return "plain"
    return "rich" if _is_terminal(sys.stderr) and _is_terminal(sys.stdout) else "plain"


def mode() -> str:
    """The mode in force: the one set, else the detected one."""
    return _mode or detect()


def set_mode(new: str | None, console: Console | None = None) -> None:
    """Set the mode for this process (None: detect at each use); `console`: rich mode's console."""
    global _mode, _console
    if new is not None and new not in MODES:
        raise ValueError(f"progress mode {new!r}; choose one of {', '.join(MODES)}")
    with _lock:
        _mode, _console = new, console


def reset() -> None:
    """Back to detection, no console override (what a fresh process has)."""
    set_mode(None)


@contextmanager
def using(new: str | None, console: Console | None = None) -> Iterator[None]:
    """`set_mode` for a scope; the previous mode and console come back afterwards."""
    with _lock:
        saved = (_mode, _console)
    set_mode(new, console)
    try:
        yield
    finally:
        set_mode(*saved)


# ---------------------------------------------------------------------------------------------- output

def seconds_text(seconds: float) -> str:
    """41.2 s, 3 min 05 s, 1 h 02 min."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


def _plain(kind: str, message: str) -> None:
    print(f"[{kind}] {message}", file=sys.stderr, flush=True)


def _rich_console() -> Console:
    global _console
    with _lock:
        if _console is None:
            from rich.console import Console

            _console = Console(stderr=True, highlight=False)
        return _console


def _rich_print(kind: str, message: str) -> None:
    from rich.text import Text

    line = Text.assemble((kind, "bold cyan"), " ", message)
    console = _live.console if _live is not None else _rich_console()
    console.print(line, highlight=False)


def step(kind: str, message: str) -> None:
    """One line: `[kind] message` (plain), printed above the live display (rich), or nothing."""
    m = mode()
    if m == "plain":
        _plain(kind, message)
    elif m == "rich":
        _rich_print(kind, message)


# ---------------------------------------------------------------------------------------------- tasks

class Task:
    """A running piece of work; `advance` when a part of it is done."""

    def __init__(self, kind: str, description: str, total: int | None, estimate: float | None,
                 show_plain: bool, current: str) -> None:
        self.kind, self.description, self.total, self.estimate = kind, description, total, estimate
        self.show_plain = show_plain
        self.mode = current
        self.done = 0
        self.start = time.monotonic()
        self._id: TaskID | None = None
        self._plain_quarter = 0  # unnamed advances in plain mode: a line per quarter of the total

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def advance(self, name: str | None = None, detail: str = "done", n: int = 1,
                seconds: float | None = None) -> None:
        """`n` more parts done; a named part gets a line: `[kind] name detail done/total (seconds)`
        (`seconds`: the part's own time; default the task's elapsed time; a negative value: none)."""
        with _lock:
            self.done += n
            done = self.done
        secs = self.elapsed if seconds is None else seconds
        count = f" {done}/{self.total}" if self.total else ""
        timing = f" ({seconds_text(secs)})" if secs >= 0 else ""
        if self.mode == "rich" and _live is not None and self._id is not None:
            _live.update(self._id, completed=done)
            if name is not None:
                _rich_print(self.kind, f"{name} {detail}{count}{timing}")
        elif self.mode == "plain":
            if name is not None:
                _plain(self.kind, f"{name} {detail}{count}{timing}")
            elif self.total and self.show_plain:
                quarter = 4 * done // self.total
                if quarter > self._plain_quarter and done < self.total:
                    self._plain_quarter = quarter
                    _plain(self.kind, f"{self.description}: {done:,}/{self.total:,} ({seconds_text(secs)})")

    def update(self, description: str) -> None:
        """New text for the live row (plain and quiet: nothing)."""
        self.description = description
        if self.mode == "rich" and _live is not None and self._id is not None:
            _live.update(self._id, description=description)


@contextmanager
def task(kind: str, description: str, total: int | None = None, estimate: float | None = None,
         plain: bool = True) -> Iterator[Task]:
    """A task shown while the block runs. `total`: parts to count (None: a spinner); `estimate`:
    expected seconds (shown as time left; for a counted task rich estimates from the rate).
    Plain mode prints a line when a step is done, none when it starts: `[kind] description: done in
    N s (estimate M s)` at the end (`plain=False`: not even that, e.g. when the command prints its own
    verdict; named advances still print). Nothing is printed when the block raises: the error says
    it, alone on its line (a refused input is one line on stderr)."""
    if estimate is not None and estimate < MIN_ESTIMATE:
        estimate = None  # nothing worth announcing
    t = Task(kind, description, total, estimate, plain, mode())
    if t.mode == "rich":
        _start_live()
        assert _live is not None
        t._id = _live.add_task(description, total=total, kind=kind, estimate=estimate)
    ok = False
    try:
        yield t
        ok = True
    finally:
        if t.mode == "rich":
            _end_live(t, ok)
        elif t.mode == "plain" and plain and ok:
            est = f" (estimate {seconds_text(estimate)})" if estimate else ""
            _plain(kind, f"{t.description}: done in {seconds_text(t.elapsed)}{est}")


def _start_live() -> None:
    global _live, _live_tasks
    from rich.progress import BarColumn, Progress, SpinnerColumn, TimeElapsedColumn

    with _lock:
        if _live is None:
            console = _rich_console()
            # stdout into the display only when it is the terminal too (otherwise it is data)
            redirect = _is_terminal(sys.stdout) and console.is_terminal
            what, count, left = _columns()
            _live = Progress(SpinnerColumn(), what, BarColumn(bar_width=20), count, TimeElapsedColumn(), left,
                             console=console, transient=True, refresh_per_second=8,
                             redirect_stdout=redirect, redirect_stderr=redirect)
            _live.start()
        _live_tasks += 1


def _end_live(t: Task, ok: bool) -> None:
    global _live, _live_tasks
    with _lock:
        live = _live
        if live is None:
            return
        if t._id is not None:
            live.remove_task(t._id)
        if ok:
            _rich_print(t.kind, f"{t.description}: done in {seconds_text(t.elapsed)}")
        _live_tasks -= 1
        if _live_tasks <= 0:
            live.stop()
            _live, _live_tasks = None, 0


def _columns() -> list[Any]:
    """The description, count and time-left columns (classes made here: rich is imported only when a live
    display starts)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class WhatColumn(ProgressColumn):
        """The kind and the description, as plain text (a path or name is never read as markup)."""

        def render(self, task: Any) -> Text:
            return Text.assemble((task.fields.get("kind", ""), "bold cyan"), " ", task.description)

    class CountColumn(ProgressColumn):
        """done/total of a counted task."""

        def render(self, task: Any) -> Text:
            return Text(f"{int(task.completed)}/{int(task.total)}" if task.total else "")

    class LeftColumn(ProgressColumn):
        """Time left: from the estimate given (a single process), else from the rate of parts done."""

        def render(self, task: Any) -> Text:
            est = task.fields.get("estimate")
            elapsed = task.elapsed or 0.0
            if task.total is None or not task.completed:
                if not est:
                    return Text("")
                if elapsed > est:
                    return Text(f"(est. {seconds_text(est)}, over)", style="yellow")
                return Text(f"~{seconds_text(est - elapsed)} left", style="cyan")
            left = task.time_remaining
            return Text(f"~{seconds_text(left)} left" if left is not None else "", style="cyan")

    return [WhatColumn(), CountColumn(), LeftColumn()]


# ---------------------------------------------------------------------------------------------- estimates

def _timings_file() -> Path:
    from hlsgen.support.cache import cache_base

    return cache_base() / TIMINGS


Figures = list[list[float]]  # a sized key's [size, seconds] pairs, the newest last


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def _figures(value: Any) -> Figures:
    """The valid [size, seconds] pairs of a sized key's value (none for a plain number or garbage)."""
    if not isinstance(value, list):
        return []
    return [[float(p[0]), float(p[1])] for p in value
            if isinstance(p, list) and len(p) == 2 and _positive(p[0]) and _positive(p[1])]


def _read_timings() -> dict[str, float | Figures]:
    """timings.json: a number per plain key, [size, seconds] pairs per sized key; anything else dropped."""
    try:
        data = json.loads(_timings_file().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    known: dict[str, float | Figures] = {}
    for k, v in data.items():
        if _positive(v):
            known[k] = float(v)
        elif figures := _figures(v):
            known[k] = figures
    return known


def _significant(value: float) -> float:
    """Four significant digits (a rate in seconds per byte or per cycle is far below 0.001)."""
    return float(f"{value:.4g}")


def estimate(*keys: str) -> float | None:
    """The remembered figure of the first key that has one (most specific first; a sized key: its
    newest seconds)."""
    known = _read_timings()
    value = next((known[k] for k in keys if k in known), None)
    return value[-1][1] if isinstance(value, list) else value


def remember(value: float, *keys: str) -> None:
    """Keep `value` (seconds, or a rate) under every key (a write that fails is ignored: estimates
    are a courtesy)."""
    if value > 0:
        _store(keys, lambda _old: _significant(value))


def estimate_sized(size: float, *keys: str) -> float | None:
    """Seconds for work of `size` (bytes compiled, cycles simulated) from the first key with figures
    (most specific first): at a remembered size its figure, between two sizes on the line through
    their figures, beyond them in proportion to the nearest, up to MAX_SCALE times (or a MAX_SCALE-th
    of) its size. None when no key has any, or further away (a figure's fixed part, such as a
    simulator's start-up, cannot be told from its per-size part: a 0.4 s run of 16 cycles is no rate
    for 70,000)."""
    known = _read_timings()
    figures = next((f for f in (_figures(known.get(k)) for k in keys) if f), None)
    return _at(figures, size) if figures and size > 0 else None


def _at(figures: Figures, size: float) -> float | None:
    """Seconds at `size` from (size, seconds) figures (see estimate_sized)."""
    below = max((f for f in figures if f[0] <= size), default=None)
    above = min((f for f in figures if f[0] >= size), default=None)
    if below is None or above is None:  # beyond the sizes known: in proportion to the nearest
        s, t = below or above or figures[0]
        return t * size / s if 1 / MAX_SCALE <= size / s <= MAX_SCALE else None
    (s0, t0), (s1, t1) = below, above
    return t0 + (t1 - t0) * (size - s0) / (s1 - s0) if s1 > s0 else t0


def remember_sized(seconds: float, size: float, *keys: str) -> None:
    """Add (size, seconds) to every key's figures: one per size, the newest MAX_FIGURES of them."""
    if seconds > 0 and size > 0:
        figure = [size, _significant(seconds)]
        _store(keys, lambda old: [*(f for f in _figures(old) if f[0] != size), figure][-MAX_FIGURES:])


def _store(keys: tuple[str, ...], new: Callable[[Any], float | Figures]) -> None:
    """Set every key to `new(its old value)` in timings.json (the newest keys last, at most MAX_TIMINGS),
    written to a temporary file that replaces it; a write that fails is ignored."""
    if not keys:
        return
    path = _timings_file()
    with _lock:
        known = _read_timings()
        for k in keys:
            known[k] = new(known.pop(k, None))
        known = dict(list(known.items())[-MAX_TIMINGS:])
        tmp: Path | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{TIMINGS}.", dir=path.parent)
            tmp = Path(name)
            with os.fdopen(fd, "w") as f:
                json.dump(known, f, indent=1)
            os.replace(tmp, path)
        except OSError:
            if tmp is not None:
                tmp.unlink(missing_ok=True)

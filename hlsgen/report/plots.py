"""The plots of report.html, drawn with matplotlib as inline SVG text.

Deterministic: no pyplot and no global backend (a bare `Figure` saved as SVG), a fixed `svg.hashsalt`,
no date in the SVG metadata, text kept as <text> (no glyph paths), math text off (a model's `$` is
text), and every SVG id prefixed per figure so that several figures share one HTML document.
Layer names reach a plot only through `identifiers.shown` and matplotlib's own XML escaping.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hlsgen.support.cache import cache_base


def _writable_config_dir() -> str | None:
    """A folder matplotlib may write its font cache to: MPLCONFIGDIR when it is set and writable, else
    hlsgen's own (in the hlsgen cache, or a per-user temporary folder); None if none is writable."""
    given = os.environ.get("MPLCONFIGDIR")
    if given and os.access(given, os.W_OK):
        return given
    for base in (cache_base(), Path(tempfile.gettempdir()) / f"hlsgen-{os.getuid()}"):
        folder = base / "matplotlib"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return str(folder)
    return None


def _import_matplotlib() -> None:
    """matplotlib reads MPLCONFIGDIR once, at import, and warns on stderr when the folder is not writable
    (a read-only HOME, another user): hlsgen's errors must stay one line, and a user's matplotlibrc must
    not change the plots. The variable is set for the import only, so child processes (which may run as
    another user) never inherit it."""
    before = os.environ.get("MPLCONFIGDIR")
    chosen = _writable_config_dir()
    if chosen:
        os.environ["MPLCONFIGDIR"] = chosen
    try:  # every module that reads the config or the font cache, while the variable is set
        import matplotlib.axes  # noqa: F401
        import matplotlib.figure  # noqa: F401
        import matplotlib.font_manager  # noqa: F401
        import matplotlib.ticker  # noqa: F401
    finally:
        if before is None:
            os.environ.pop("MPLCONFIGDIR", None)
        else:
            os.environ["MPLCONFIGDIR"] = before


_import_matplotlib()

import matplotlib  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator  # noqa: E402

from hlsgen.support.identifiers import shown  # noqa: E402

RC: Any = {"svg.hashsalt": "hlsgen-report", "svg.fonttype": "none", "text.parse_math": False, "font.size": 8,
      "font.family": "DejaVu Sans", "axes.titlesize": 8, "axes.labelsize": 8, "figure.dpi": 72}
ESTIMATE, SYNTH, LIMIT, CLIP = "#4c78a8", "#f58518", "#d62728", "#fbe3e4"
LABEL_CHARS = 28


def label(name: str) -> str:
    """A layer name for a tick label: one line, shortened in the middle."""
    text = shown(name)
    if len(text) <= LABEL_CHARS:
        return text
    half = (LABEL_CHARS - 1) // 2
    return text[:half] + "…" + text[len(text) - (LABEL_CHARS - 1 - half):]


def to_svg(fig: Figure, prefix: str) -> str:
    """The figure as an <svg> element (no XML prolog), its ids prefixed with `prefix`."""
    buf = io.StringIO()
    with matplotlib.rc_context(RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r'\bid="', f'id="{prefix}-', text)
    text = text.replace("url(#", f"url(#{prefix}-").replace('href="#', f'href="#{prefix}-')
    return text.strip()


def _figure(width: float, height: float, left: float = 0.0, top: float = 0.3, bottom: float = 0.35,
            hspace: float = 0.0, wspace: float = 0.2) -> Figure:
    """A figure with fixed margins in inches (no layout engine: it costs seconds on many axes)."""
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=(left + 0.1) / width, right=1 - 0.15 / width, top=1 - top / height,
                        bottom=bottom / height, hspace=hspace, wspace=wspace)
    return fig


def layer_bars(names: Sequence[str], panels: Sequence[dict[str, Any]]) -> str:
    """Horizontal bars, one row per layer, one panel per quantity. A panel: title, `estimate` values
    (None: no bar), optional `synth` values (drawn beside the estimate) and `limit` (a vertical line,
    e.g. the frame period) with its `limit_label`."""
    with matplotlib.rc_context(RC):
        fig = _figure(2.0 + 2.2 * len(panels), 0.8 + 0.24 * len(names), left=1.9, bottom=0.35, wspace=0.12)
        axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
        y = list(range(len(names)))
        for ax, panel in zip(axes, panels, strict=True):
            _bar_panel(ax, y, panel)
        axes[0].set_yticks(y, [label(n) for n in names])
        axes[0].invert_yaxis()
        return to_svg(fig, "bars")


def _bar_panel(ax: Axes, y: list[int], panel: dict[str, Any]) -> None:
    synth = panel.get("synth")
    h = 0.4 if synth else 0.7
    est = [v or 0 for v in panel["estimate"]]
    ax.barh([v - h / 2 if synth else v for v in y], est, height=h, color=ESTIMATE, label="estimate")
    if synth:
        ax.barh([v + h / 2 for v in y], [v or 0 for v in synth], height=h, color=SYNTH, label="synthesis")
    if panel.get("limit"):
        ax.axvline(panel["limit"], color=LIMIT, linestyle="--", linewidth=1, label=panel.get("limit_label"))
    ax.set_title(panel["title"])
    ax.grid(axis="x", linewidth=0.3)
    if synth or panel.get("limit"):
        ax.legend(loc="lower right", fontsize=7)


def histograms(rows: Sequence[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]) -> str:
    """Per layer (label, weight histogram, activation histogram): counts per bin on a log scale, the
    chosen range as dashed lines, the clipped region shaded."""
    with matplotlib.rc_context(RC):
        fig = _figure(10.0, 0.4 + 1.5 * len(rows), left=0.45, top=0.25, bottom=0.3, hspace=0.62 / 1.1, wspace=0.22)
        axes = fig.subplots(len(rows), 2, squeeze=False)
        for (name, w, a), pair in zip(rows, axes, strict=True):
            _hist_panel(pair[0], name, "weights", w)
            _hist_panel(pair[1], name, "activations", a)
        return to_svg(fig, "hist")


def _hist_panel(ax: Axes, name: str, what: str, h: dict[str, Any] | None) -> None:
    if h is None:
        ax.set_axis_off()
        ax.text(0.5, 0.5, f"{label(name)}: no {what}", ha="center", va="center", transform=ax.transAxes,
                color="#777777")
        return
    n = len(h["counts"])
    step = (h["hi"] - h["lo"]) / n
    edges = [h["lo"] + i * step for i in range(n + 1)]
    lo, hi = h["range"]
    ax.axvspan(h["lo"], lo, color=CLIP, linewidth=0)
    ax.axvspan(hi, h["hi"], color=CLIP, linewidth=0)
    ax.stairs([max(k, 0.5) for k in h["counts"]], edges, baseline=0.5, fill=True, color=ESTIMATE)
    ax.set_yscale("log", nonpositive="clip")
    top = max(2, max(h["counts"])) * 2
    ax.set_ylim(0.5, top)
    ax.yaxis.set_major_locator(FixedLocator([10.0 ** k for k in range(0, len(str(int(top))))]))
    ax.yaxis.set_major_formatter(FuncFormatter(_count))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_locator(MaxNLocator(7))
    ax.set_xlim(h["lo"], h["hi"])
    for bound in (lo, hi):
        ax.axvline(bound, color=LIMIT, linestyle="--", linewidth=1)
    unit = {"LSB": "in LSB of the channel scale", "code": "integer codes", "value": "real value"}[h["unit"]]
    ax.set_title(f"{label(name)} {what} ({h['type']}, {unit}); clipped {percent(h['clipped'])}", loc="left")
    ax.tick_params(labelsize=7)


def _count(v: float, _pos: int | None = None) -> str:
    """A count on a log axis: 1, 10, 100, 1k, 10k, ..., 1M."""
    for div, suffix in ((1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


def percent(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.3g}%"


def error_bars(names: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]],
               notes: Sequence[str] = ()) -> str:
    """Per layer, grouped horizontal bars of error figures in LSB (one series per figure kind); a
    layer's note (e.g. its clipped share) follows its name."""
    with matplotlib.rc_context(RC):
        fig = _figure(10.0, 0.9 + 0.11 * len(names) * max(2, len(series)), left=1.9, bottom=0.5)
        ax = fig.subplots()
        h = 0.8 / len(series)
        colors = (ESTIMATE, SYNTH, "#54a24b", "#b279a2")
        for k, (title, values) in enumerate(series):
            ax.barh([i - 0.4 + h * (k + 0.5) for i in range(len(names))], [v or 0 for v in values], height=h,
                    color=colors[k % len(colors)], label=title)
        notes = list(notes) or [""] * len(names)
        ax.set_yticks(range(len(names)), [f"{label(n)} · {note}" if note else label(n)
                                          for n, note in zip(names, notes, strict=True)])
        ax.invert_yaxis()
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlim(0, max(2.0, 1.3 * max((v or 0 for _, values in series for v in values), default=0)))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("LSB of the layer's output scale")
        ax.grid(axis="x", linewidth=0.3)
        ax.legend(loc="lower right", fontsize=7)
        return to_svg(fig, "error")

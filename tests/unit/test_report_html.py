"""OUT/report.html (hlsgen.report.html): its structure, the data behind its plots, escaping of hostile
names, byte-identical output for the same inputs, and the refresh after csim/rtlsim/synth results."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import model_zoo as zoo
import numpy as np
import onnx
import pytest

from hlsgen.pipeline import compile_model
from hlsgen.report.html import NAME, markdown_html, refresh
from hlsgen.report.output import write_compilation
from hlsgen.tools.results import print_summary, record_csim

HOSTILE = '<script>alert("x")</script>&amp;\'<img src=x onerror=alert(1)>'
SECTIONS = ("dataflow", "costs", "quantization", "error", "runs", "tables", "files")


class Page(HTMLParser):
    """Tags, ids, links and the <svg> elements of a page; fails on a tag closed out of order."""

    VOID = {"meta", "br", "img", "link", "input", "hr", "path", "rect", "use", "stop", "circle", "line"}

    def __init__(self, text: str) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.tags: list[str] = []
        self.svgs: list[dict[str, int]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append(tag)
        if a.get("id"):
            self.ids.append(str(a["id"]))
        if tag == "a" and a.get("href"):
            self.hrefs.append(str(a["href"]))
        if tag == "svg" and "svg" not in self.stack:
            self.svgs.append({"paths": 0, "texts": 0})
        if self.svgs and "svg" in (*self.stack, tag):
            self.svgs[-1]["paths"] += tag == "path"
            self.svgs[-1]["texts"] += tag == "text"
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()


def _hostile_model(folder: Path) -> Path:
    """resnet_tiny with a hostile model name and a hostile name on its first Conv node."""
    m = zoo.resnet_tiny(seed=3)
    m.graph.name = HOSTILE
    next(n for n in m.graph.node if n.op_type == "Conv").name = HOSTILE
    path = folder / "hostile.onnx"
    onnx.save(m, str(path))
    np.save(folder / "calib.npy", zoo.random_inputs(m, 24, seed=1))
    return path


@pytest.fixture(scope="module")
def outs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same model compiled twice into two folders."""
    d = tmp_path_factory.mktemp("report_html")
    model = _hostile_model(d)
    folders = []
    for name in ("a", "b"):
        c = compile_model(model, None, d / "calib.npy")
        out, _ = write_compilation(c, d / name, [model, d / "calib.npy"])
        folders.append(out)
    return folders[0], folders[1]


def test_structure(outs: tuple[Path, Path]) -> None:
    out = outs[0]
    text = (out / NAME).read_text()
    page = Page(text)
    assert page.stack == []
    assert set(SECTIONS) <= set(page.ids)
    # self-contained: no script, no external resource, no URL but the SVG namespace
    assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) <= {"http://www.w3.org/2000/svg",
                                                             "http://www.w3.org/1999/xlink"}
    # the four plots: dataflow, cost bars, histograms, error bars, each drawn
    assert len(page.svgs) == 4
    assert all(s["paths"] > 10 and s["texts"] > 5 for s in page.svgs), page.svgs
    # every link leads to a file of OUT
    local = [h for h in page.hrefs if not h.startswith("#")]
    assert any(h == "report.md" for h in local) and any(h.startswith("graph/") for h in local)
    assert all((out / unquote(h)).is_file() for h in local), [h for h in local if not (out / unquote(h)).is_file()]


def test_dataflow_graph_shows_every_layer_and_fifo(outs: tuple[Path, Path]) -> None:
    out = outs[0]
    r = json.loads((out / "report.json").read_text())
    svg = (out / NAME).read_text().split('<h2 id="costs">')[0]
    hw = r["hardware"]
    for lay in hw["dataflow"]["layers"]:
        assert f"PE {lay['pe']} × SIMD {lay['simd']} · {lay['cycles']:,} cycles/frame" in svg
    assert svg.count(">FIFO ") == len(hw["fifo_depths"])  # one label per edge
    assert svg.count('stroke="#d62728" stroke-width="3"') == 1  # the bottleneck, once
    assert "host: quantize input" in svg and "(Softmax)" in svg  # host-side ops apart


def test_profile_counts_every_value(outs: tuple[Path, Path]) -> None:
    """The histograms are counts per bin of every weight and of every activation value seen."""
    r = json.loads((outs[0] / "report.json").read_text())
    p = r["profile"]
    samples = int(p["samples"].split()[0])
    assert samples == 24 and "calibration" in p["samples"]
    rows = {row["name"]: row for row in r["layers"]}
    weighted = 0
    for name, v in p["layers"].items():
        row = rows[name]
        if v["weights"]:
            weighted += 1
            assert sum(v["weights"]["counts"]) == row["weight_count"]
            assert v["weights"]["range"] == [-127, 127] and v["weights"]["clipped"] == 0.0
        a = v["activation"]
        assert sum(a["counts"]) == samples * int(np.prod(row["output"][1:]))
        assert a["range"][0] == pytest.approx(row["act_out"]["scale"] * (-128 - row["act_out"]["zero_point"]))
        assert 0.0 <= a["clipped"] < 0.05
        assert v["error"]["max_lsb"] >= v["error"]["mean_lsb"] >= 0
    assert weighted == sum(1 for row in r["layers"] if row["op"] in ("QConv", "QGemm"))


def test_hostile_names_are_escaped(outs: tuple[Path, Path]) -> None:
    text = (outs[0] / NAME).read_text()
    assert HOSTILE not in text and "<script" not in text and "<img" not in text
    assert "&lt;script&gt;" in text  # the name is shown, escaped (in the title and the tables)
    assert text.count("&lt;script&gt;") >= 3


def test_two_compiles_are_byte_identical(outs: tuple[Path, Path]) -> None:
    a, b = ((o / NAME).read_bytes() for o in outs)
    assert a == b
    assert b"<dc:date>" not in a and b"2026-" not in a  # no date until a simulation ran


def test_refresh_after_csim_rtlsim_and_synth(outs: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "out"
    shutil.copytree(outs[1], out)
    before = (out / NAME).read_text()
    assert "not run: <code>hlsgen csim OUT</code>" in before
    record_csim(out, True, 3.5, 0.25)
    refresh(out)  # what `hlsgen csim` does once the runner has written its result
    csim = json.loads((out / "csim" / "result.json").read_text())
    text = (out / NAME).read_text()
    assert f"<td>csim (g++)</td><td>{csim['date']}</td>" in text and '<span class="pass">PASS</span>' in text
    assert not list(out.rglob(".*.tmp"))  # written through a temporary file, renamed
    # rtlsim: its result file in OUT/rtlsim/<sim>/
    r = json.loads((out / "report.json").read_text())
    cpf = r["hardware"]["cycles_per_frame"]
    run_dir = out / "rtlsim" / "verilator"
    run_dir.mkdir(parents=True)
    results = {"throughput": {"passed": False, "beats": 3, "expected_beats": 4, "frames": 4, "stall": 0,
                              "cycles_per_frame": cpf + 7, "model_cycles": cpf, "describe": "", "layers": []}}
    (run_dir / "result.json").write_text(json.dumps(results))
    print_summary(results, "verilator", 1.0, True, 1.0, run_dir, None, ("throughput",))  # what rtlsim ends with
    refresh(out)  # then the command line
    text = (out / NAME).read_text()
    assert "rtlsim (verilator) throughput" in text and f"{cpf + 7:,} cycles/frame (model {cpf:,})" in text
    assert '<span class="fail">FAIL</span> MISMATCH, 3/4 output beats' in text
    # synthesis: the bars gain a second series, the summary its totals
    assert "Synthesis: not run" in text
    _fake_synth(out, r)
    refresh(out)  # `hlsgen synth` once OUT/synth/ is in place
    text = (out / NAME).read_text()
    assert "Synthesis (Yosys" in text and text.count(">synthesis</text>") == 3  # DSP, LUT, BRAM legends
    assert "Synthesis: not run" not in text


def _fake_synth(out: Path, r: dict[str, object]) -> None:
    """OUT/synth/utilization.json as `hlsgen synth` writes it (hw.synth_report.summarize), made-up figures."""
    from hlsgen.devices.parts import find_part
    from hlsgen.tools.synth_report import render_table, summarize

    hw = r["hardware"]
    assert isinstance(hw, dict)
    runs = {lay["name"]: {"module": lay["name"], "kind": lay["kind"], "status": "ok", "cached": True, "seconds": 1.0,
                          "resources": {"dsp": 3, "lut": 500, "lutram": 0, "ff": 300, "bram18": 1, "bram36": 0,
                                        "bram36_eq": 0.5}} for lay in hw["dataflow"]["layers"]}
    runs["glue"] = {"module": "top", "kind": "fifos", "status": "ok", "cached": True, "seconds": 1.0,
                    "resources": {"dsp": 0, "lut": 10, "lutram": 0, "ff": 5, "bram18": 0, "bram36": 0, "bram36_eq": 0}}
    u = summarize(runs, hw["part"], find_part(hw["part"]), "Yosys 0.0 (test)", "yosys", 1.0)
    (out / "synth").mkdir()
    (out / "synth" / "utilization.json").write_text(json.dumps(u))
    (out / "synth" / "utilization.md").write_text(render_table(u) + "\n")


def test_a_measured_clock_replaces_the_assumed_one(outs: tuple[Path, Path], tmp_path: Path) -> None:
    """After `hlsgen pnr`, the summary's frame rate and latency are at nextpnr's Fmax, not hw.hls.clock_ns."""
    import shutil

    from hlsgen.devices.parts import pnr_target
    from hlsgen.tools.pnr import render_table, result_of

    out = tmp_path / "out"
    shutil.copytree(outs[1], out)
    cpf = json.loads((out / "report.json").read_text())["hardware"]["cycles_per_frame"]
    text = (out / NAME).read_text()
    assert "a frame at an assumed 100 MHz" in text and "Place and route: not run" in text
    report = {"fmax": {"ap_clk": {"achieved": 52.5, "constraint": 125.0}},
              "utilization": {"MULT18X18D": {"used": 3, "available": 156}}, "critical_paths": []}
    result = result_of(report, "hlsgen_top", "LFE5U-85F-6BG381C", pnr_target("LFE5U-85F-6BG381C"), 125.0, 1,
                       ("Yosys 0.0", "nextpnr 0.0"), 1.0, False)
    (out / "pnr").mkdir()
    (out / "pnr" / "result.json").write_text(json.dumps(result))
    (out / "pnr" / "pnr.md").write_text(render_table(result))
    refresh(out)
    text = (out / NAME).read_text()
    assert f"{52.5e6 / cpf:,.1f} frames/s, {cpf / 52.5:,.2f} µs a frame at 52.5 MHz, the Fmax nextpnr" in text
    assert "a frame at an assumed" not in text and "Fmax 52.5 MHz against 125.0 MHz" in text
    assert '<td>MULT18X18D</td><td class="n">3</td>' in text  # pnr.md's table


def test_rebuild_command_in_a_fresh_process(outs: tuple[Path, Path], tmp_path: Path) -> None:
    """`python -m hlsgen.report.html OUT` (and so rtlsim's refresh, which imports it first) rebuilds the page."""
    import shutil
    import subprocess
    import sys

    out = tmp_path / "out"
    shutil.copytree(outs[0], out)
    (out / NAME).unlink()
    done = subprocess.run([sys.executable, "-m", "hlsgen.report.html", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (out / NAME).read_bytes() == (outs[0] / NAME).read_bytes()
    bad = subprocess.run([sys.executable, "-m", "hlsgen.report.html", str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 2 and "not a folder written by `hlsgen compile`" in bad.stderr


def test_refresh_leaves_other_folders_alone(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text("{}")
    assert refresh(tmp_path) is None
    assert not (tmp_path / NAME).exists()


def test_markdown_subset() -> None:
    md = "## Title <b>\n\n| a | b |\n|---|---:|\n| x \\| y | `<i>` **bold** |\n- item & more\n"
    got = markdown_html(md)
    assert "<h3>Title &lt;b&gt;</h3>" in got
    assert '<th class="n">b</th>' in got and "<td>x | y</td>" in got
    assert '<td class="n"><code>&lt;i&gt;</code> <b>bold</b></td>' in got
    assert "<ul><li>item &amp; more</li></ul>" in got


def test_layer_error_separates_saturation_from_rounding() -> None:
    """report.html showed ~100 LSB maxima without saying they came from clipped values: the error is
    split by whether the reference lies inside the quantizer's range (rounding) or beyond it."""
    from hlsgen.ir import IntType, QType
    from hlsgen.report.summary import _layer_error

    q = QType(IntType(8, True), 0.5, 0)  # reals -64 ... 63.5
    ref = np.array([1.1, -2.2, 63.6, 80.0, -70.0, 0.0, 10.0, 20.3])
    codes = np.clip(np.round(ref / 0.5), -128, 127)
    e = _layer_error(ref, codes, q)
    assert e is not None
    assert e["saturated_fraction"] == 2 / 8  # 80 and -70 lie beyond the range; 63.6 is within half an LSB
    assert np.isclose(e["saturation_max_lsb"], (80.0 - 63.5) / 0.5)
    assert np.isclose(e["rounding_max_lsb"], 0.4) and e["rounding_max_lsb"] <= 0.5
    assert e["max_lsb"] == e["saturation_max_lsb"]
    assert _layer_error(ref[:3], codes[:3], q)["saturation_max_lsb"] == 0.0  # type: ignore[index]


def test_the_error_chart_names_the_clipped_share(tmp_path: Path) -> None:
    from hlsgen.report.html import _clipped_note

    assert _clipped_note({"saturated_fraction": 0.0123}) == "1.23% clipped"
    assert _clipped_note({"saturated_fraction": 1e-6}) == "<0.01% clipped"
    assert _clipped_note({"saturated_fraction": 0.0}) == _clipped_note(None) == ""

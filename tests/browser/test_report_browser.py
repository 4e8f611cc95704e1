"""OUT/report.html of the ResNet-8 example in a real browser: headless Chromium (Debian's chromium and
chromium-driver, installed by the Makefile's venv set-up) driven by selenium. It renders without a
console error, every plot is there with drawn paths and a visible size, and a screenshot is saved
(tmp folder; also to $HLSGEN_REPORT_SCREENSHOT when set: docs/img/report.png is made that way).
Skipped when Chromium, chromedriver or selenium is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hlsgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "resnet_cifar"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WIDTH = 1280

webdriver = pytest.importorskip("selenium.webdriver")
if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
    pytest.skip("no Chromium/chromedriver (apt-get install chromium chromium-driver)", allow_module_level=True)

PLOTS_JS = """
const heads = [...document.querySelectorAll('h2')];
return [...document.querySelectorAll('svg')].filter(s => !s.parentElement.closest('svg')).map(s => {
  const r = s.getBoundingClientRect();
  const drawn = [...s.querySelectorAll('path')].filter(p => {
    const b = p.getBBox(); return b.width > 0 || b.height > 0; });
  const head = heads.filter(h => h.compareDocumentPosition(s) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
  return {section: head ? head.id : '', width: r.width, height: r.height, paths: s.querySelectorAll('path').length,
          drawn: drawn.length, texts: s.querySelectorAll('text').length};
});
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (EXAMPLE / "model.onnx").is_file():
        subprocess.run([sys.executable, str(EXAMPLE / "make_model.py")], check=True, capture_output=True)
    out = tmp_path_factory.mktemp("browser") / "resnet_cifar"
    code = main(["compile", str(EXAMPLE / "model.onnx"), "--calib", str(EXAMPLE / "calib.npy"),
                 "-c", str(EXAMPLE / "config.yaml"), "-o", str(out)])
    assert code == 0
    return out / "report.html"


@pytest.fixture(scope="module")
def browser() -> Any:
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={WIDTH},1000", "--hide-scrollbars"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    yield driver
    driver.quit()


def test_report_renders_in_chromium(report: Path, browser: Any, tmp_path: Path) -> None:
    browser.get(report.as_uri())
    assert browser.execute_script("return document.readyState") == "complete"
    assert browser.title.startswith("hlsgen report: resnet8_cifar")
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    plots = browser.execute_script(PLOTS_JS)
    assert [p["section"] for p in plots] == ["dataflow", "costs", "quantization", "error"]
    for p in plots:
        assert p["width"] > 300 and p["height"] > 150, p
        assert p["paths"] > 10 and p["drawn"] > 10 and p["texts"] > 10, p
    # the dataflow shows the 12 layers of ResNet-8 and its one bottleneck
    assert browser.execute_script("return document.querySelectorAll('#dataflow ~ div.plot svg rect').length") >= 14
    assert browser.execute_script(
        "return document.querySelectorAll('rect[stroke=\"#d62728\"][stroke-width=\"3\"]').length") == 1
    shot = tmp_path / "report.png"
    _screenshot(browser, shot, full=True)
    assert shot.stat().st_size > 100_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = os.environ.get("HLSGEN_REPORT_SCREENSHOT")
    if target:
        _screenshot(browser, Path(target), full=False, height=2050)


def _screenshot(browser: Any, path: Path, full: bool, height: int = 0) -> None:
    """The page (whole, or its top `height` pixels) as PNG."""
    total = int(browser.execute_script("return document.documentElement.scrollHeight"))
    browser.set_window_size(WIDTH, total if full else height)
    browser.execute_script("window.scrollTo(0, 0)")
    path.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(path))

"""Issue 9, item 3: every hostile input ends as one line on stderr naming the file/node/key, exit 2
(130 for signals), no traceback or warning, nothing left on disk; sizes are refused from headers
before anything is allocated; the limits are documented and a config's `limits:` raises them.

The cases themselves (the files and the command line of each) are in tests/hostile_cases.py, shared
with benchmarks/hostile_inputs.py, which prints the table of the issue's closing note.
"""

from __future__ import annotations

import contextlib
import io
import zipfile
from pathlib import Path

import model_zoo
import numpy as np
import pytest
from hostile_cases import CASES, Case, have_gxx, npy_header_only, run_case, zip_declaring

from hlsgen import compile_model, float_stage
from hlsgen.cli import one_line
from hlsgen.config.compile import load_config
from hlsgen.config.limits import DEFAULT_LIMITS, LIMIT_KEYS, Limits
from hlsgen.data import load_array
from hlsgen.errors import HlsgenError
from hlsgen.frontend.from_yaml import load_yaml_model

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")  # a numpy warning is a weak message too


@pytest.fixture(scope="module")
def csim_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("csim-cache")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input(case: Case, tmp_path: Path, csim_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if case.needs_gxx and not have_gxx():
        pytest.skip("needs g++")
    monkeypatch.setenv("HLSGEN_CSIM_CACHE", str(csim_cache))
    outcome = run_case(case, tmp_path / "case")
    assert not outcome.problems, f"{outcome.problems}\nstderr:\n{outcome.stderr[-3000:]}"
    if case.needs_gxx:
        assert not list(csim_cache.rglob("*.tmp")), "a temporary object was left in the build cache"


# ---- limits: documented, raised (or lowered) by a config ---------------------------------------------
def test_every_limit_is_documented() -> None:
    text = (ROOT / "docs" / "config.md").read_text() + (ROOT / "docs" / "trust.md").read_text()
    for key in LIMIT_KEYS:
        assert f"limits.{key}" in text or f"`{key}`" in text, key
        assert f"{getattr(DEFAULT_LIMITS, key):,}" in text or str(getattr(DEFAULT_LIMITS, key)) in text, key


def test_limits_section_is_parsed_and_checked(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("limits: {tensor_elements: 1000, yaml_depth: 20}\n")
    c = load_config(cfg)
    assert c.limits == Limits(tensor_elements=1000, yaml_depth=20)
    assert c.to_dict()["limits"]["tensor_elements"] == 1000
    cfg.write_text("limits: {tensor_element: 5}\n")
    with pytest.raises(HlsgenError, match=r"unknown key 'limits.tensor_element' \(did you mean 'tensor_elements'"):
        load_config(cfg)
    cfg.write_text("limits: {samples: 0}\n")
    with pytest.raises(HlsgenError, match="limits.samples must be an integer >= 1"):
        load_config(cfg)


DENSE = "name: m\ninput: {name: x, shape: [64]}\nlayers:\n  - {name: fc, op: dense, units: 32}\n"


def test_config_lowers_and_raises_tensor_limit(tmp_path: Path) -> None:
    model = tmp_path / "m.yaml"
    model.write_text(DENSE)
    low = tmp_path / "low.yaml"
    low.write_text("limits: {tensor_elements: 1000}\n")
    with pytest.raises(HlsgenError, match=r"m.yaml: layers\[0\] \(fc\): fc.weight of shape \[32, 64\]: 2,048 "
                                          r"elements, more than limits.tensor_elements = 1,000"):
        compile_model(model, low)
    compile_model(model, None)  # within the default


def test_config_raises_calibration_limits(tmp_path: Path) -> None:
    m = model_zoo.mlp(seed=3)
    path = tmp_path / "mlp.onnx"
    path.write_bytes(m.SerializeToString())
    calib = tmp_path / "calib.npy"
    np.save(calib, model_zoo.random_inputs(m, 8, seed=1))
    cfg = tmp_path / "c.yaml"
    cfg.write_text("limits: {samples: 4}\n")
    with pytest.raises(HlsgenError, match=r"calib.npy: 8 samples, more than limits.samples = 4"):
        compile_model(path, cfg, calib)
    cfg.write_text("limits: {calibration_elements: 255}\n")
    with pytest.raises(HlsgenError, match=r"calib.npy: header claims shape \[8, 32\]: 256 elements"):
        compile_model(path, cfg, calib)
    cfg.write_text("limits: {calibration_elements: 256, samples: 8}\n")
    assert compile_model(path, cfg, calib).calibration is not None


def test_yaml_samples_limit_counts_the_input_size(tmp_path: Path) -> None:
    model = tmp_path / "m.yaml"
    model.write_text(DENSE + "calibration: {samples: 100}\n")
    with pytest.raises(HlsgenError, match=r"calibration.samples 100 of input \[64\]: 6,400 elements, more than "
                                          r"limits.calibration_elements = 6,000"):
        load_yaml_model(model, Limits(calibration_elements=6000))
    assert load_yaml_model(model, Limits(calibration_elements=6400)).meta["calibration"]["samples"] == 100


def test_yaml_depth_and_size_limits(tmp_path: Path) -> None:
    model = tmp_path / "m.yaml"
    model.write_text(DENSE + "description: " + "x" * 1000 + "\n")
    with pytest.raises(HlsgenError, match=r"model file of 1,\d{3} bytes, more than limits.yaml_bytes = 1,000"):
        load_yaml_model(model, Limits(yaml_bytes=1000))
    load_yaml_model(model)
    model.write_text(DENSE)
    with pytest.raises(HlsgenError, match=r"nests mappings/lists more than 2 deep at line 2"):
        load_yaml_model(model, Limits(yaml_depth=2))
    load_yaml_model(model, Limits(yaml_depth=3))


# ---- array files: headers before data ---------------------------------------------------------------
def _graph(tmp_path: Path):  # type: ignore[no-untyped-def]
    model = tmp_path / "m.yaml"
    model.write_text(DENSE.replace("[64]", "[4]"))
    return load_yaml_model(model)


def test_npy_header_is_checked_before_reading(tmp_path: Path) -> None:
    g = _graph(tmp_path)
    with pytest.raises(HlsgenError, match=r"huge.npy: header claims shape \[1000000000, 4\]"):
        load_array(npy_header_only(tmp_path / "huge.npy", (1_000_000_000, 4)), g, "calibration data")
    with pytest.raises(HlsgenError, match=r"short.npy: truncated: the header claims shape \[100, 4\] \(1,600 bytes\)"
                                          r" but 64 bytes follow it"):
        load_array(npy_header_only(tmp_path / "short.npy", (100, 4)), g, "calibration data")
    np.save(tmp_path / "f.npy", np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4)))
    assert np.array_equal(load_array(tmp_path / "f.npy", g, "x"), np.arange(12).reshape(3, 4))


def test_npz_member_size_comes_from_the_zip_directory(tmp_path: Path) -> None:
    g = _graph(tmp_path)
    small = io.BytesIO()
    np.save(small, np.ones((2, 4), np.float32))
    bomb = zip_declaring(tmp_path / "b.npz", "x.npy", small.getvalue(), 3_800_000_000)
    assert zipfile.ZipFile(bomb).getinfo("x.npy").file_size == 3_800_000_000
    with pytest.raises(HlsgenError, match=r"b.npz: array 'x' inflates to 3,800,000,000 bytes, more than "
                                          r"limits.npz_member_bytes"):
        load_array(bomb, g, "calibration data")
    np.savez_compressed(tmp_path / "ok.npz", x=np.ones((2, 4)))
    assert load_array(tmp_path / "ok.npz", g, "x").shape == (2, 4)
    with pytest.raises(HlsgenError, match=r"ok.npz: array 'x' inflates to 192 bytes, more than "
                                          r"limits.npz_member_bytes = 100"):
        load_array(tmp_path / "ok.npz", g, "x", Limits(npz_member_bytes=100))


def test_config_raises_onnx_tensor_limit(tmp_path: Path) -> None:
    path = tmp_path / "mlp.onnx"
    path.write_bytes(model_zoo.mlp(seed=3).SerializeToString())
    cfg = tmp_path / "c.yaml"
    cfg.write_text("limits: {tensor_elements: 500}\n")
    with pytest.raises(HlsgenError, match=r"mlp.onnx: initializer 'w_1' of dims \[32, 24\]: 768 elements, more "
                                          r"than limits.tensor_elements = 500"):
        float_stage(path, cfg)
    cfg.write_text("limits: {tensor_elements: 768}\n")
    assert float_stage(path, cfg)[2].limits.tensor_elements == 768


def test_cli_prints_any_error_on_one_line() -> None:
    assert one_line("compiling top.cpp failed:\n  top.cpp:1: error: x\n\n   ^~~\n") == \
        "compiling top.cpp failed: | top.cpp:1: error: x | ^~~"


def test_yaml_weights_are_read_lazily_and_checked(tmp_path: Path) -> None:
    model = tmp_path / "m.yaml"
    model.write_text(DENSE.replace("layers:", "weights: w.npz\nlayers:"))
    rng = np.random.default_rng(0)
    arrays = {"fc.weight": rng.normal(size=(32, 64)), "fc.bias": np.zeros(32)}
    np.savez(tmp_path / "w.npz", **arrays, junk=np.array([{"pickled": 1}], dtype=object))
    g = load_yaml_model(model)  # the object array is never read: only the arrays a layer needs are
    assert any("junk" in n.message for n in g.notes)
    small = io.BytesIO()
    np.save(small, arrays["fc.weight"])
    zip_declaring(tmp_path / "w.npz", "fc.weight.npy", small.getvalue(), 3_800_000_000)
    with pytest.raises(HlsgenError, match=r"m.yaml: layers\[0\] \(fc\): cannot read weights file 'w.npz': array "
                                          r"'fc.weight' inflates to 3,800,000,000 bytes"):
        load_yaml_model(model)


def _mutants(good: bytes, n: int, seed: int) -> list[bytes]:
    """`n` copies of `good` with 1-6 random bytes changed (mostly in the header) and some truncated."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        b = bytearray(good)
        for _ in range(int(rng.integers(1, 7))):
            pos = int(rng.integers(len(b))) if rng.random() < 0.5 else int(rng.integers(min(160, len(b))))
            b[pos] = int(rng.integers(256))
        out.append(bytes(b[:int(rng.integers(len(b)))] if rng.random() < 0.2 else b))
    return out


@pytest.mark.parametrize("kind", ["npy", "npz", "npz_compressed"])
def test_mutated_array_files_fail_in_one_line(kind: str, tmp_path: Path) -> None:
    g = _graph(tmp_path)
    buf = io.BytesIO()
    x = np.ones((3, 4), np.float32)
    {"npy": np.save, "npz": lambda f, a: np.savez(f, x=a),
     "npz_compressed": lambda f, a: np.savez_compressed(f, x=a)}[kind](buf, x)
    path = tmp_path / f"m.{kind[:3]}"
    for data in _mutants(buf.getvalue(), 300, seed=len(kind)):
        path.write_bytes(data)
        try:
            load_array(path, g, "calibration data")
        except HlsgenError as e:
            assert "\n" not in str(e) and str(path) in str(e)


def test_mutated_onnx_files_fail_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    for data in _mutants(model_zoo.mlp(seed=3).SerializeToString(), 150, seed=5):
        path.write_bytes(data)
        with contextlib.suppress(HlsgenError):  # anything else (a traceback) fails the test
            float_stage(path)

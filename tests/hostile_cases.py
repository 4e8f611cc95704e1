"""The hostile inputs of issue 9, as files built in a folder and one `hlsgen` command line each.

Shared by tests/unit/test_hostile_inputs.py (every case: exit 2, one stderr line naming the culprit,
nothing left on disk) and benchmarks/hostile_inputs.py (the markdown table of the issue's closing
note). A case's `build(folder)` writes its files into `folder` and returns a `Setup`: the CLI
arguments, the words the one-line message must contain (the file, node or key) and extras (a signal
to send once the output folder is being written, a command run as an unprivileged user, ...).
Nothing here allocates what the hostile files claim: the "3.8 GB" archive is a crafted zip whose
headers declare the size, the [1e9, 3, 8, 8] array is a bare .npy header.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import model_zoo
import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx_builders import init, model, node, vi

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
NOBODY = 65534
QONNX = "qonnx.custom_op.general"


@dataclass
class Setup:
    argv: list[str]  # arguments after `hlsgen`
    expect: Sequence[str]  # substrings of the one stderr line (the culprit: file, node, key)
    cwd: Path | None = None
    signal: int | None = None  # sent once a temporary output folder appears
    as_nobody: bool = False  # run as an unprivileged user (root ignores folder permissions)
    exit: int = 2
    check: Callable[[Path], str | None] | None = None  # extra check after the run: None or a complaint
    note: str = ""  # for a successful run: what the table shows instead of the output


@dataclass(frozen=True)
class Case:
    name: str
    group: str  # "bomb", "traceback", "weak"
    text: str  # what the case is, for the table
    build: Callable[[Path], Setup]
    needs_gxx: bool = False


@dataclass
class Outcome:
    case: Case
    exit: int
    stderr: str
    problems: list[str] = field(default_factory=list)  # empty: the case is handled well

    @property
    def message(self) -> str:
        lines = self.stderr.strip().splitlines()
        return lines[-1] if lines else ""


# ---- small models ------------------------------------------------------------------------------
def _save(m: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(m.SerializeToString())
    return path


def mlp_files(folder: Path) -> tuple[Path, Path]:
    """A float MLP [1, 32] -> [1, 10] and 16 calibration samples."""
    m = model_zoo.mlp(seed=3)
    calib = folder / "calib.npy"
    np.save(calib, model_zoo.random_inputs(m, 16, seed=1))
    return _save(m, folder / "mlp.onnx"), calib


def conv_model(folder: Path, name: str = "conv.onnx") -> Path:
    """A float Conv 3x3 (3 -> 4) + Relu on [1, 3, 8, 8]."""
    g = model_zoo.GraphBuilder(0)
    y = g.op("Relu", [g.conv("x", 3, 4, 3)])
    return _save(g.model([1, 3, 8, 8], y, [1, 4, 8, 8], "conv"), folder / name)


def qdq_conv(shape: Sequence[int], scale: float = 0.02, w_scale: float = 0.01) -> onnx.ModelProto:
    """x -> Q/DQ -> Conv (int8 weights through DequantizeLinear) -> Q/DQ -> y."""
    c, h, w = shape[1], shape[2], shape[3]
    rng = np.random.default_rng(0)
    nodes = [node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], name="q_in"),
             node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"], name="dq_in"),
             node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"], name="dq_w"),
             node("Conv", ["xd", "wd"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("QuantizeLinear", ["c", "sy", "zx"], ["cq"], name="q_out"),
             node("DequantizeLinear", ["cq", "sy", "zx"], ["y"], name="dq_out")]
    inits = [init("sx", scale), init("zx", 0, np.int8), init("sw", w_scale), init("zw", 0, np.int8),
             init("wq", rng.integers(-127, 128, (4, c, 3, 3)), np.int8), init("sy", 0.05)]
    return model(nodes, [vi("x", list(shape))], [vi("y", [1, 4, h, w])], inits, name="qdq_conv")


def npy_header_only(path: Path, shape: tuple[int, ...], dtype: str = "<f4") -> Path:
    """A .npy file whose header claims `shape`, followed by a few bytes of data only."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    path.write_bytes(buf.getvalue() + b"\0" * 64)
    return path


def zip_declaring(path: Path, member: str, data: bytes, declared: int) -> Path:
    """A zip archive with one stored member whose local and central headers declare `declared`
    uncompressed bytes (the CRC and the real data stay small): a zip bomb without the bomb."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr(member, data)
    raw = bytearray(buf.getvalue())
    size = struct.pack("<I", min(declared, 0xFFFFFFFF))
    local = raw.find(b"PK\x03\x04")
    raw[local + 22:local + 26] = size  # uncompressed size in the local header
    central = raw.find(b"PK\x01\x02")
    raw[central + 24:central + 28] = size  # ... and in the central directory
    path.write_bytes(bytes(raw))
    return path


def _cli(*args: object) -> list[str]:
    return [str(a) for a in args]


# ---- memory bombs ------------------------------------------------------------------------------
def npz_bomb(d: Path) -> Setup:
    m, _ = mlp_files(d)
    small = io.BytesIO()
    np.save(small, np.zeros((4, 32), np.float32))
    calib = zip_declaring(d / "bomb.npz", "x.npy", small.getvalue(), 3_800_000_000)
    return Setup(_cli("compile", m, "--calib", calib, "-o", d / "out"), ["bomb.npz", "'x'", "limits.npz_member_bytes"])


def npy_huge_header(d: Path) -> Setup:
    m = conv_model(d)
    calib = npy_header_only(d / "huge.npy", (1_000_000_000, 3, 8, 8))
    return Setup(_cli("compile", m, "--calib", calib, "-o", d / "out"), ["huge.npy", "1000000000"])


def qdq_huge_input(d: Path) -> Setup:
    m = _save(qdq_conv([1, 3, 100000, 100000]), d / "big.onnx")
    return Setup(_cli("compile", m, "-o", d / "out"), ["big.onnx", "'x'", "limits."])


def yaml_huge_dense(d: Path) -> Setup:
    (d / "m.yaml").write_text("name: big\ninput: {name: x, shape: [100000]}\n"
                              "layers:\n  - {name: fc, op: dense, units: 100000}\n")
    return Setup(_cli("compile", d / "m.yaml", "-o", d / "out"), ["m.yaml", "fc", "limits."])


def yaml_huge_samples(d: Path) -> Setup:
    (d / "m.yaml").write_text("name: s\ninput: {name: x, shape: [8]}\ncalibration: {samples: 1000000000}\n"
                              "layers:\n  - {name: fc, op: dense, units: 4}\n")
    return Setup(_cli("compile", d / "m.yaml", "-o", d / "out"), ["m.yaml", "calibration.samples", "limits."])


def onnx_constant_of_shape(d: Path) -> Setup:
    nodes = [node("ConstantOfShape", ["shape"], ["big"], name="make_big"),
             node("Add", ["x", "big"], ["y"], name="add")]
    inits = [init("shape", [1, 3, 100000, 100000], np.int64)]
    m = model(nodes, [vi("x", [1, 3, 8, 8])], [vi("y", None)], inits, name="cos")
    return Setup(_cli("inspect", _save(m, d / "cos.onnx")), ["cos.onnx", "make_big", "limits.tensor_elements"])


def onnx_pad_huge(d: Path) -> Setup:
    nodes = [node("Pad", ["x", "pads"], ["y"], name="pad_big")]
    inits = [init("pads", [0, 0, 100000, 100000, 0, 0, 100000, 100000], np.int64)]
    m = model(nodes, [vi("x", [1, 3, 8, 8])], [vi("y", None)], inits, name="pad")
    return Setup(_cli("inspect", _save(m, d / "pad.onnx")), ["pad.onnx", "pad_big", "limits.tensor_elements"])


def npz_member_huge_header(d: Path) -> Setup:
    m = conv_model(d)
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<f4", "fortran_order": False,
                                                "shape": (1_000_000_000, 3, 8, 8)})
    with zipfile.ZipFile(d / "calib.npz", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("x.npy", head.getvalue() + b"\0" * 1024)
    return Setup(_cli("compile", m, "--calib", d / "calib.npz", "-o", d / "out"),
                 ["calib.npz", "'x'", "limits.calibration_elements"])


def onnx_dev_zero(d: Path) -> Setup:
    (d / "zero.onnx").symlink_to("/dev/zero")
    return Setup(_cli("inspect", d / "zero.onnx"), ["zero.onnx", "not a regular file"])


def config_dev_zero(d: Path) -> Setup:
    m, calib = mlp_files(d)
    (d / "cfg.yaml").symlink_to("/dev/zero")
    return Setup(_cli("compile", m, "-c", d / "cfg.yaml", "--calib", calib, "-o", d / "out"),
                 ["cfg.yaml", "not a regular file"])


def yaml_huge_file(d: Path) -> Setup:
    with open(d / "m.yaml", "w") as f:
        f.write("name: s\ninput: {name: x, shape: [8]}\nlayers:\n  - {name: fc, op: dense, units: 4}\n")
        f.write("# " + "x" * (70 << 20) + "\n")
    return Setup(_cli("compile", d / "m.yaml", "-o", d / "out"), ["m.yaml", "limits.yaml_bytes"])


# ---- tracebacks --------------------------------------------------------------------------------
def _bad_dims_model(d: Path) -> Path:
    m = model_zoo.mlp(seed=3)
    w = m.graph.initializer[0]
    w.dims[:] = [64, 24]  # the data holds 32 x 24 floats
    return _save(m, d / "dims.onnx")


def initializer_dims_compile(d: Path) -> Setup:
    m = _bad_dims_model(d)
    np.save(d / "calib.npy", np.zeros((4, 32), np.float32))
    return Setup(_cli("compile", m, "--calib", d / "calib.npy", "-o", d / "out"), ["dims.onnx", "w_1"])


def initializer_dims_inspect(d: Path) -> Setup:
    return Setup(_cli("inspect", _bad_dims_model(d)), ["dims.onnx", "w_1"])


def qonnx_bits_nan(d: Path) -> Setup:
    nodes = [node("Quant", ["x", "s", "z", "bits"], ["xq"], name="quant_in", domain=QONNX, signed=1, narrow=0,
                  rounding_mode="ROUND"),
             node("Relu", ["xq"], ["y"], name="relu")]
    inits = [init("s", 2.0 ** -4), init("z", 0.0), init("bits", float("nan"))]
    m = model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])], inits, opset=11, extra_domains=[QONNX])
    return Setup(_cli("compile", _save(m, d / "q.onnx"), "-o", d / "out"), ["q.onnx", "quant_in", "bit width"])


def empty_calibration(d: Path) -> Setup:
    m = conv_model(d)
    np.save(d / "empty.npy", np.zeros((0, 3, 8, 8), np.float32))
    return Setup(_cli("compile", m, "--calib", d / "empty.npy", "-o", d / "out"), ["empty.npy", "no samples"])


def npz_object_array(d: Path) -> Setup:
    m = conv_model(d)
    np.savez(d / "obj.npz", x=np.array([{"a": 1}, None], dtype=object))
    return Setup(_cli("compile", m, "--calib", d / "obj.npz", "-o", d / "out"), ["obj.npz", "x", "object"])


def deep_yaml_model(d: Path) -> Setup:
    (d / "deep.yaml").write_text("name: deep\nlayers: " + "[" * 5000 + "]" * 5000 + "\n")
    return Setup(_cli("compile", d / "deep.yaml", "-o", d / "out"), ["deep.yaml", "nest"])


def deep_yaml_config(d: Path) -> Setup:
    m, calib = mlp_files(d)
    (d / "cfg.yaml").write_text("quant: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n")
    return Setup(_cli("compile", m, "-c", d / "cfg.yaml", "--calib", calib, "-o", d / "out"), ["cfg.yaml", "nest"])


def _run_args(d: Path) -> list[str]:
    m, calib = mlp_files(d)
    return _cli("run", m, "--calib", calib, "--input", calib)


def run_output_is_folder(d: Path) -> Setup:
    (d / "y.npy").mkdir()
    return Setup([*_run_args(d), "--output", str(d / "y.npy")], ["y.npy", "folder"])


def run_output_in_proc(d: Path) -> Setup:
    return Setup([*_run_args(d), "--output", "/proc/y.npy"], ["/proc/y.npy"])


def run_output_under_file(d: Path) -> Setup:
    (d / "file.txt").write_text("a file")
    return Setup([*_run_args(d), "--output", str(d / "file.txt" / "y.npy")], ["file.txt/y.npy", "file.txt is a file"])


def export_under_file(d: Path) -> Setup:
    m, calib = mlp_files(d)
    (d / "file.txt").write_text("a file")
    return Setup(_cli("export-qdq", m, "-o", d / "file.txt" / "q.onnx", "--calib", calib),
                 ["file.txt/q.onnx", "file.txt is a file"])


def export_long_name(d: Path) -> Setup:
    m, calib = mlp_files(d)
    return Setup(_cli("export-qdq", m, "-o", d / ("q" * 300 + ".onnx"), "--calib", calib), ["q" * 40, "too long"])


def out_in_proc(d: Path) -> Setup:
    m, calib = mlp_files(d)
    return Setup(_cli("compile", m, "--calib", calib, "-o", "/proc/hlsgen_out"), ["/proc/hlsgen_out"])


def out_read_only(d: Path) -> Setup:
    m, calib = mlp_files(d)
    ro = d / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    return Setup(_cli("compile", m, "--calib", calib, "-o", ro / "out"), ["ro/out", "ermission"],
                 as_nobody=os.geteuid() == 0)


def out_under_file(d: Path) -> Setup:
    m, calib = mlp_files(d)
    (d / "file.txt").write_text("a file")
    return Setup(_cli("compile", m, "--calib", calib, "-o", d / "file.txt" / "out"),
                 ["file.txt/out", "file.txt is a file"])


def out_long_name(d: Path) -> Setup:
    m, calib = mlp_files(d)
    return Setup(_cli("compile", m, "--calib", calib, "-o", d / ("o" * 300)), ["o" * 40, "too long"])


def _compiled(d: Path) -> Path:
    m, calib = mlp_files(d)
    out = d / "out"
    r = subprocess.run([PYTHON, "-m", "hlsgen.cli", "compile", str(m), "--calib", str(calib), "-o", str(out)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"compiling the csim fixture failed: {r.stderr}")
    return out


def csim_layers_bad_meta(d: Path) -> Setup:
    out = _compiled(d)
    (out / "vectors" / "meta.json").write_text('{"layers": [{"name": 1}]}')
    return Setup(_cli("csim", out, "--layers"), ["meta.json"])


def csim_layers_deleted_file(d: Path) -> Setup:
    out = _compiled(d)
    layers = sorted((out / "vectors" / "layers").glob("*.hex"))
    layers[0].unlink()
    return Setup(_cli("csim", out, "--layers"), [layers[0].name])


def csim_deleted_vectors(d: Path) -> Setup:
    out = _compiled(d)
    (out / "vectors" / "input.hex").unlink()
    return Setup(_cli("csim", out, "--layers"), ["input.hex"])


# ---- weak messages -----------------------------------------------------------------------------
def external_data(d: Path) -> Setup:
    m = model_zoo.mlp(seed=3)
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="../../../etc/passwd")
    return Setup(_cli("inspect", _save(m, d / "ext.onnx")), ["ext.onnx", "w_1", "external data"])


def _bn_model(d: Path, eps: float) -> Path:
    m = model_zoo.conv_bn([1.0] * 6, seed=0)
    bn = next(n for n in m.graph.node if n.op_type == "BatchNormalization")
    bn.name = "bn_node"
    for a in bn.attribute:
        if a.name == "epsilon":
            a.f = eps
    np.save(d / "calib.npy", np.random.default_rng(0).standard_normal((4, 4, 8, 8)).astype(np.float32))
    return _save(m, d / "bn.onnx")


def bn_epsilon_zero(d: Path) -> Setup:
    m = model_zoo.conv_bn([0.0] * 6, seed=0)
    bn = next(n for n in m.graph.node if n.op_type == "BatchNormalization")
    bn.name = "bn_node"
    for a in bn.attribute:
        if a.name == "epsilon":
            a.f = 0.0
    np.save(d / "calib.npy", np.random.default_rng(0).standard_normal((4, 4, 8, 8)).astype(np.float32))
    path = _save(m, d / "bn.onnx")
    config = d / "cfg.yaml"
    config.write_text("bn: {var_floor: 0}\n")
    return Setup(_cli("compile", path, "-c", config, "--calib", d / "calib.npy", "-o", d / "out"),
                 ["bn.onnx", "bn_node", "epsilon"])


def bn_epsilon_negative(d: Path) -> Setup:
    path = _bn_model(d, -1.0)
    return Setup(_cli("compile", path, "--calib", d / "calib.npy", "-o", d / "out"), ["bn.onnx", "bn_node", "epsilon"])


def _conv_weights(d: Path, value: float) -> Setup:
    g = model_zoo.GraphBuilder(0)
    y = g.op("Relu", [g.conv("x", 3, 4, 3)])
    m = g.model([1, 3, 8, 8], y, [1, 4, 8, 8], "conv")
    w = numpy_helper.to_array(m.graph.initializer[0]).copy()
    w[1, 0, 0, 0] = value
    m.graph.initializer[0].CopyFrom(numpy_helper.from_array(w, m.graph.initializer[0].name))
    np.save(d / "calib.npy", np.zeros((2, 3, 8, 8), np.float32) + 0.5)
    return Setup(_cli("compile", _save(m, d / "w.onnx"), "--calib", d / "calib.npy", "-o", d / "out"),
                 ["w.onnx", "w_1", "NaN or Inf"])


def conv_weights_nan(d: Path) -> Setup:
    return _conv_weights(d, float("nan"))


def conv_weights_inf(d: Path) -> Setup:
    return _conv_weights(d, float("inf"))


def qdq_scale_zero(d: Path) -> Setup:
    m = _save(qdq_conv([1, 3, 8, 8], w_scale=0.0), d / "s0.onnx")
    return Setup(_cli("compile", m, "-o", d / "out"), ["s0.onnx", "sw", "scale"])


def complex_calibration(d: Path) -> Setup:
    m = conv_model(d)
    np.save(d / "c.npy", np.ones((2, 3, 8, 8), np.complex64))
    return Setup(_cli("compile", m, "--calib", d / "c.npy", "-o", d / "out"), ["c.npy", "complex"])


def _no_tmp_left(d: Path) -> str | None:
    left = [str(p.relative_to(d)) for p in d.rglob("*") if ".tmp" in p.name]
    return f"left behind: {left}" if left else None


def default_sigint() -> None:
    """In the child before exec: SIGINT as an interactive shell delivers it. A test suite started in
    the background of a non-interactive shell (`cmd &`) inherits SIGINT ignored, and Python then
    installs no KeyboardInterrupt handler in the commands it runs."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupted(d: Path, sig: int) -> Setup:
    m, calib = mlp_files(d)
    return Setup(_cli("compile", m, "--calib", calib, "-o", d / "out"), ["interrupted"], signal=sig, exit=128 + sig)


def sigint(d: Path) -> Setup:
    return _interrupted(d, signal.SIGINT)


def sigterm(d: Path) -> Setup:
    return _interrupted(d, signal.SIGTERM)


def out_mode(d: Path) -> Setup:
    m, calib = mlp_files(d)

    def check(folder: Path) -> str | None:
        mode = (folder / "out").stat().st_mode & 0o777
        setup.note = f"OUT created with mode {oct(mode)} (umask {oct(umask)})"
        want = 0o777 & ~umask
        return None if mode == want else f"OUT has mode {oct(mode)}, umask {oct(umask)} allows {oct(want)}"
    umask = os.umask(0)
    os.umask(umask)
    # a successful compile: the one case with exit 0
    setup = Setup(_cli("compile", m, "--calib", calib, "-o", d / "out"), [], exit=0, check=check)
    return setup


def csim_damaged_vector(d: Path) -> Setup:
    out = _compiled(d)
    hexfile = out / "vectors" / "input.hex"
    lines = hexfile.read_text().splitlines()
    hexfile.write_text("\n".join(["zz" + lines[0][2:], *lines[1:]]) + "\n")
    return Setup(_cli("csim", out), ["input.hex"])


def csim_failed_build(d: Path) -> Setup:
    out = _compiled(d)
    top = out / "hls" / "src" / "top.cpp"
    top.write_text(top.read_text() + "\nthis is not C++;\n")
    return Setup(_cli("csim", out), ["top.cpp", "error"], check=_no_tmp_in_cache)


def _no_tmp_in_cache(d: Path) -> str | None:
    cache = os.environ.get("HLSGEN_CSIM_CACHE")
    roots = [d] + ([Path(cache)] if cache else [])
    left = [str(p) for r in roots for p in r.rglob("*.tmp")]
    return f"left behind: {left}" if left else None


CASES: list[Case] = [
    Case("npz_bomb", "bomb", "4 MB .npz inflating to 3.8 GB (declared member size)", npz_bomb),
    Case("npy_huge_header", "bomb", ".npy header claiming [1e9,3,8,8]", npy_huge_header),
    Case("npz_member_huge_header", "bomb", ".npz member whose .npy header claims [1e9,3,8,8]", npz_member_huge_header),
    Case("qdq_huge_input", "bomb", "quantized model with input [1,3,100000,100000]", qdq_huge_input),
    Case("onnx_constant_of_shape", "bomb", "ONNX ConstantOfShape([1,3,100000,100000]) folded as a constant",
         onnx_constant_of_shape),
    Case("onnx_pad_huge", "bomb", "ONNX Pad by 100000 on each side (computed activation)", onnx_pad_huge),
    Case("yaml_huge_dense", "bomb", "YAML dense layer 100000x100000", yaml_huge_dense),
    Case("yaml_huge_samples", "bomb", "YAML calibration: {samples: 1000000000}", yaml_huge_samples),
    Case("yaml_huge_file", "bomb", "70 MB YAML model file", yaml_huge_file),
    Case("onnx_dev_zero", "bomb", "model path linked to /dev/zero (endless)", onnx_dev_zero),
    Case("config_dev_zero", "bomb", "config path linked to /dev/zero (endless)", config_dev_zero),
    Case("initializer_dims_compile", "traceback", "initializer dims not matching their data (compile)",
         initializer_dims_compile),
    Case("initializer_dims_inspect", "traceback", "initializer dims not matching their data (inspect)",
         initializer_dims_inspect),
    Case("qonnx_bits_nan", "traceback", "QONNX Quant bit width NaN", qonnx_bits_nan),
    Case("empty_calibration", "traceback", "empty calibration data [0,3,8,8]", empty_calibration),
    Case("npz_object_array", "traceback", "object array inside an .npz", npz_object_array),
    Case("deep_yaml_model", "traceback", "5000-deep nested YAML model", deep_yaml_model),
    Case("deep_yaml_config", "traceback", "5000-deep nested YAML config", deep_yaml_config),
    Case("run_output_is_folder", "traceback", "run --output naming a folder", run_output_is_folder),
    Case("run_output_in_proc", "traceback", "run --output /proc/y.npy", run_output_in_proc),
    Case("run_output_under_file", "traceback", "run --output under a regular file", run_output_under_file),
    Case("export_under_file", "traceback", "export-qdq OUT under a regular file", export_under_file),
    Case("export_long_name", "traceback", "export-qdq OUT with a 300-character name", export_long_name),
    Case("out_in_proc", "traceback", "-o in /proc", out_in_proc),
    Case("out_read_only", "traceback", "-o in a read-only folder", out_read_only),
    Case("out_under_file", "traceback", "-o under a regular file", out_under_file),
    Case("out_long_name", "traceback", "-o with a 300-character name", out_long_name),
    Case("csim_layers_bad_meta", "traceback", "csim --layers with an invalid meta.json", csim_layers_bad_meta,
         needs_gxx=True),
    Case("csim_layers_deleted_file", "traceback", "csim --layers with a deleted vectors/layers file",
         csim_layers_deleted_file, needs_gxx=True),
    Case("csim_deleted_vectors", "traceback", "csim --layers with a deleted vectors file", csim_deleted_vectors,
         needs_gxx=True),
    Case("external_data", "weak", "initializer with external data outside the model folder", external_data),
    Case("bn_epsilon_zero", "weak", "BatchNorm epsilon 0 (variance 0, no floor)", bn_epsilon_zero),
    Case("bn_epsilon_negative", "weak", "BatchNorm epsilon -1", bn_epsilon_negative),
    Case("conv_weights_nan", "weak", "NaN conv weight", conv_weights_nan),
    Case("conv_weights_inf", "weak", "Inf conv weight", conv_weights_inf),
    Case("qdq_scale_zero", "weak", "QDQ weight scale 0", qdq_scale_zero),
    Case("complex_calibration", "weak", "complex calibration data", complex_calibration),
    Case("sigint", "weak", "SIGINT while OUT is written (exit 130)", sigint),
    Case("sigterm", "weak", "SIGTERM while OUT is written (exit 143)", sigterm),
    Case("out_mode", "weak", "new OUT folder's mode follows the umask (exit 0)", out_mode),
    Case("csim_damaged_vector", "weak", "csim with a damaged vector file", csim_damaged_vector, needs_gxx=True),
    Case("csim_failed_build", "weak", "csim of C++ that does not compile (no .tmp left in the cache)",
         csim_failed_build, needs_gxx=True),
]


# ---- running a case ----------------------------------------------------------------------------
def _snapshot(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def _nobody_prefix() -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def run_case(case: Case, folder: Path, timeout: float = 300) -> Outcome:
    """Build the case in `folder` (created, must be empty), run `hlsgen`, and judge the result."""
    folder.mkdir(parents=True, exist_ok=True)
    setup = case.build(folder)
    before = _snapshot(folder)
    argv = [PYTHON, "-m", "hlsgen.cli", *setup.argv]
    if setup.as_nobody:
        argv = [*_nobody_prefix(), *argv]
        for p in [folder, *folder.parents]:
            if p.stat().st_mode & 0o005 != 0o005:
                p.chmod(p.stat().st_mode | 0o005)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        if setup.signal is not None:
            code, stderr = _run_signalled(argv, setup, folder, env, timeout)
        else:
            r = subprocess.run(argv, capture_output=True, text=True, cwd=setup.cwd, env=env, timeout=timeout)
            code, stderr = r.returncode, r.stderr if setup.exit != 0 else r.stdout
    finally:
        for p in folder.rglob("*"):
            if p.is_dir() and not p.is_symlink():
                p.chmod(p.stat().st_mode | 0o700)
    outcome = Outcome(case, code, stderr)
    outcome.problems = _judge(setup, outcome, before, _snapshot(folder), folder)
    if setup.note:
        outcome.stderr = setup.note
    return outcome


def _run_signalled(argv: list[str], setup: Setup, folder: Path, env: dict[str, str],
                   timeout: float) -> tuple[int, str]:
    """Send the signal once the temporary output folder exists; if the command finished before
    the poll saw it (a fast machine), remove its output and try again (three times at most)."""
    assert setup.signal is not None
    for _ in range(3):
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=setup.cwd,
                             env=env, preexec_fn=default_sigint)
        deadline, sent = time.monotonic() + timeout, False
        while p.poll() is None and time.monotonic() < deadline:
            if any(".tmp-" in q.name for q in folder.iterdir()):
                p.send_signal(setup.signal)
                sent = True
                break
            time.sleep(0.001)
        _, err = p.communicate(timeout=timeout)
        if sent:
            break
        shutil.rmtree(folder / "out", ignore_errors=True)
    return p.returncode, err


def _judge(setup: Setup, o: Outcome, before: set[str], after: set[str], folder: Path) -> list[str]:
    problems = []
    if setup.signal == signal.SIGINT and o.exit == -signal.SIGINT:
        o.exit = 130  # re-raised SIGINT at interpreter exit: the shell sees 130 either way
    if o.exit != setup.exit:
        problems.append(f"exit {o.exit}, expected {setup.exit}")
    lines = o.stderr.strip().splitlines()
    if len(lines) != 1 and setup.exit != 0:
        problems.append(f"{len(lines)} lines of output, expected 1")
    if "Traceback" in o.stderr or "Warning" in o.stderr:
        problems.append("traceback or warning")
    for word in setup.expect:
        if word not in o.message:
            problems.append(f"message does not name {word!r}")
    if setup.exit != 0:
        new = sorted(after - before)
        if new:
            problems.append(f"left on disk: {new[:5]}")
    if setup.check is not None:
        complaint = setup.check(folder)
        if complaint:
            problems.append(complaint)
    return problems


def have_gxx() -> bool:
    return shutil.which(os.environ.get("CXX", "g++")) is not None

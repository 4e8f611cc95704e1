"""OUT/host/ (backends/host.py): the host side of the ports, in Python and in C, against the golden
model and the test vectors it wrote.

Three designs cover the port formats and orders (docs/streams.md): an MLP (a 64-code input pixel at
64 bits: 8 beats of 8; 10 outputs: 2 beats of 5), a conv net on an NCHW image (3-channel pixels packed
two a beat, the input streamed channels-innermost) and the NHWC model (the input streamed in its own
order). Each checks, with integers compared for equality:
  - quantize_input(float input) equals the golden model's input codes (both roundings in the QDQ net);
  - beats(those codes) are the lines of vectors/input.hex, and unbeats(output.hex) the golden output
    codes; dequantize_output equals numerics.dequantize;
  - the C functions give the same bytes, codes and floats.
Negative controls: a flipped bit in one output beat changes exactly one code; the other rounding
quantizes some ties differently.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import model_zoo  # noqa: E402

from hlsgen import compile_model, intermediates  # noqa: E402
from hlsgen.backends.vectors import read_hex  # noqa: E402
from hlsgen.frontend import from_onnx_model  # noqa: E402
from hlsgen.ir import Op  # noqa: E402
from hlsgen.numerics import dequantize  # noqa: E402
from hlsgen.report.output import frame_inputs, write_compilation  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"hlsgen_io_{abs(hash(path))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _designs(root: Path) -> dict[str, tuple[Path, object]]:
    made = {}
    mlp = compile_model(ROOT / "examples" / "mlp_yaml" / "model.yaml")
    m = model_zoo.nhwc_tf_style()
    nhwc = compile_model(from_onnx_model(m, "nhwc"), calib=model_zoo.random_inputs(m, 8, seed=1))
    ex = ROOT / "examples" / "resnet_cifar"
    cnn = compile_model(ex / "model.onnx", ex / "config.yaml", ex / "calib.npy")
    for name, c in (("mlp", mlp), ("nhwc", nhwc), ("cnn", cnn)):
        out, _ = write_compilation(c, root / name)
        made[name] = (out, c)
    return made


@pytest.fixture(scope="module")
def designs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, object]]:
    return _designs(tmp_path_factory.mktemp("host"))


def _golden(c) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """(float tensor the input quantizer reads, its codes, the output codes) of the vector frames."""
    x = frame_inputs(c, c.config.hw.frames)
    values = intermediates(c, x)
    q_in = next(n for n in c.graph.nodes if n.op == Op.QUANTIZE_INPUT)
    q_out = next(n for n in c.graph.nodes if n.op == Op.DEQUANTIZE_OUTPUT)
    return values.get(q_in.inputs[0], x), values[q_in.outputs[0]], values[q_out.inputs[0]]


@pytest.mark.parametrize("name", ["mlp", "nhwc", "cnn"])
def test_python_host_side_matches_golden_and_vectors(designs: dict, name: str) -> None:
    out, c = designs[name]
    io = _load(out / "host" / "hlsgen_io.py")
    x, codes_in, codes_out = _golden(c)
    assert np.array_equal(io.quantize_input(x), codes_in.reshape(len(x), *io.PORTS["in"]["shape"]))
    assert io.beats(codes_in, "in") == read_hex(out / "vectors" / "input.hex")
    got = io.unbeats(read_hex(out / "vectors" / "output.hex"), "out")
    assert np.array_equal(got, codes_out.reshape(got.shape))
    q = c.graph.tensor(next(n for n in c.graph.nodes if n.op == Op.DEQUANTIZE_OUTPUT).inputs[0]).qtype
    assert np.array_equal(io.dequantize_output(got), dequantize(codes_out, q).reshape(got.shape))
    assert io.unpack_output(io.to_bytes(read_hex(out / "vectors" / "output.hex"), "out")).tolist() == got.tolist()
    # negative control: one flipped bit in one output beat is one wrong code
    beats = read_hex(out / "vectors" / "output.hex")
    beats[1] ^= 1 << io.PORTS["out"]["bits"]  # code 1 of beat 1
    assert int((io.unbeats(beats, "out") != got).sum()) == 1


def test_the_port_formats_are_the_three_kinds(designs: dict) -> None:
    ports = {name: _load(out / "host" / "hlsgen_io.py").PORTS for name, (out, _) in designs.items()}
    assert (ports["mlp"]["in"]["fold"], ports["mlp"]["in"]["pack"]) == (8, 1)  # 64 codes: 8 beats of 8
    assert (ports["cnn"]["in"]["pack"], ports["cnn"]["in"]["order"]) == (2, "chw")  # 2 pixels of 3 a beat
    assert ports["nhwc"]["in"]["order"] == "identity"  # streams in its memory order
    assert all(p["tdata_bits"] == 64 for d in ports.values() for p in d.values())


def test_rounding_of_the_input_quantizer_is_the_models() -> None:
    """Negative control: exact ties quantize differently under the other tie rule."""
    import types

    io = types.SimpleNamespace()
    path = ROOT / "templates" / "host" / "hlsgen_io.py.j2"
    assert "half_even" in path.read_text()
    src = _quantizer_source()
    exec(src, io.__dict__)  # noqa: S102 - our own generated module
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5], dtype=np.float64)
    even = io.quantize_input(x)
    io.PORTS["in"]["rounding"] = "half_up"
    up = io.quantize_input(x)
    assert even.ravel().tolist() == [0, 2, 2, 0, -2] and up.ravel().tolist() == [1, 2, 3, 0, -1]


def _quantizer_source() -> str:
    from hlsgen.backends.render import render

    port = {"port": "in", "shape": (5,), "channels": 5, "pixels": 1, "fold": 5, "pack": 1, "bits": 8, "signed": True,
            "tdata_bits": 64, "beats": 1, "order": "identity", "table_list": None, "scale": [1.0], "zero_point": [0],
            "axis": None, "lo": -128, "hi": 127, "bipolar": False, "rounding": "half_even"}
    return render("host/hlsgen_io.py.j2", name="t", ports=[port, dict(port, port="out")])


C_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "hlsgen_io.h"
int main(int argc, char** argv) {
    if (argc != 4) return 2;
    static float x[HLSGEN_IN_ELEMENTS];
    static int64_t codes[HLSGEN_IN_ELEMENTS], oc[HLSGEN_OUT_ELEMENTS];
    static uint8_t bytes[HLSGEN_IN_BYTES], ob[HLSGEN_OUT_BYTES];
    static double y[HLSGEN_OUT_ELEMENTS];
    FILE* f = fopen(argv[1], "rb");
    if (!f || fread(x, sizeof x, 1, f) != 1) return 2;
    fclose(f);
    hlsgen_quantize_in(x, codes);
    hlsgen_pack_in(codes, bytes);
    f = fopen(argv[2], "rb");
    if (!f || fread(ob, sizeof ob, 1, f) != 1) return 2;
    fclose(f);
    hlsgen_unpack_out(ob, oc);
    hlsgen_dequantize_out(oc, y);
    f = fopen(argv[3], "wb");
    fwrite(codes, sizeof codes, 1, f);
    fwrite(bytes, sizeof bytes, 1, f);
    fwrite(oc, sizeof oc, 1, f);
    fwrite(y, sizeof y, 1, f);
    fclose(f);
    return 0;
}
"""


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_c_host_side_matches_python(designs: dict, name: str, tmp_path: Path) -> None:
    out, c = designs[name]
    io = _load(out / "host" / "hlsgen_io.py")
    (tmp_path / "main.c").write_text(C_DRIVER)
    binary = tmp_path / "host_io"
    cc = shutil.which("gcc") or shutil.which("cc")  # g++ depends on gcc (Debian), so it is there with C-sim
    assert cc is not None, "no C compiler (gcc)"
    subprocess.run([cc, "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-I", str(out / "host"),
                    str(tmp_path / "main.c"), str(out / "host" / "hlsgen_io.c"), "-lm", "-o", str(binary)], check=True)
    x, codes_in, codes_out = _golden(c)
    frame = np.asarray(x[0], dtype=np.float32)  # the golden input is float32 data
    (tmp_path / "x.bin").write_bytes(frame.tobytes())
    out_bytes = io.to_bytes(read_hex(out / "vectors" / "output.hex")[:io.PORTS["out"]["beats"]], "out")
    (tmp_path / "o.bin").write_bytes(out_bytes)
    subprocess.run([str(binary), str(tmp_path / "x.bin"), str(tmp_path / "o.bin"), str(tmp_path / "r.bin")], check=True)
    raw = (tmp_path / "r.bin").read_bytes()
    n_in, n_out = frame.size, int(np.prod(io.PORTS["out"]["shape"]))
    nb = io.PORTS["in"]["beats"] * 8
    got_codes = np.frombuffer(raw[:8 * n_in], np.int64)
    got_bytes = raw[8 * n_in:8 * n_in + nb]
    rest = raw[8 * n_in + nb:]
    got_out, got_y = np.frombuffer(rest[:8 * n_out], np.int64), np.frombuffer(rest[8 * n_out:], np.float64)
    assert np.array_equal(got_codes, codes_in[0].ravel())
    assert got_bytes == io.pack_input(codes_in[0])
    assert np.array_equal(got_out, codes_out[0].ravel())
    assert np.array_equal(got_y, io.dequantize_output(codes_out[0]).ravel())

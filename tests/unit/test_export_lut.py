"""Lookup-table layers (QLut: Sigmoid, Tanh, ... between quantizers) through `hlsgen export-qdq` and
`hlsgen compare`: the export expresses the table exactly in standard ONNX (the input codes Cast to
int64, less x_lo, Gather from the table of output codes, DequantizeLinear -> QuantizeLinear into the
layer's output), so onnxruntime reproduces every QLut layer bit for bit: 0 LSB fed, not just the
1-LSB bound, over every input code (signed, unsigned, narrow, 10-bit, bipolar inputs). Negative
control: one table entry the input hits, corrupted in the export only, is seen by compare.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx_builders import init, model, node, vi

from hlsgen import compile_model
from hlsgen.cli import main
from hlsgen.interop.compare import compare_model
from hlsgen.interop.export_qdq import EMITTERS, export_qdq
from hlsgen.interop.ort import ort_integers
from hlsgen.ir import Node

QONNX = "qonnx.custom_op.general"
YAML = """name: lut_yaml
input: {name: x, shape: [16]}
seed: 0
layers:
  - {name: fc1, op: dense, units: 12}
  - {name: sig, op: sigmoid}
  - {name: fc2, op: dense, units: 8, activation: relu}
  - {name: th, op: tanh}
  - {name: fc3, op: dense, units: 4}
"""
CONFIGS = {  # int8; uint8 (x_lo = 0: no Sub); 4 bits in int8 containers; 10-bit input, 16-bit output (opset 21)
    "int8": "quant:\n  act_bits: 8\n",
    "uint8": "quant:\n  act_signed: false\n",
    "int4": "quant:\n  act_bits: 4\n",
    "wide": "quant:\n  act_bits: 8\nlayers:\n  fc1: {act_bits: 10}\n  sig: {act_bits: 16}\n",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The YAML model (dense -> sigmoid -> dense -> tanh -> dense), its configs and an input batch."""
    folder = tmp_path_factory.mktemp("lut")
    out = {"model": folder / "model.yaml", "x": folder / "x.npy"}
    out["model"].write_text(YAML)
    for name, text in CONFIGS.items():
        out[name] = folder / f"{name}.yaml"
        out[name].write_text(text)
    np.save(out["x"], np.random.default_rng(5).normal(0, 1.5, (12, 16)).astype(np.float32))
    return out


def _luts(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["op"] == "QLut"]


def test_compare_a_yaml_model_with_lut_layers(files: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The user's report: compare failed with 'op QLut cannot be exported yet'; now every QLut row is 0 LSB."""
    out = tmp_path / "cmp.json"
    assert main(["compare", str(files["model"]), "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[-1].startswith("PASS")
    report = json.loads(out.read_text())
    assert "exported" in report["reference"] and report["ok"] is True
    assert [r["op"] for r in report["layers"]] == ["QGemm", "QLut", "QGemm", "QLut", "QGemm"]
    luts = _luts(report["layers"])
    assert [r["name"] for r in luts] == ["sig", "th"]
    for r in luts:
        assert r["max_fed"] == 0 and r["mismatch_fed"] == 0.0 and r["ok"] is True and r["outputs"] > 0, r
        assert r["name"] in table


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_lut_layers_are_exact_through_the_export(files: dict[str, Path], config: str) -> None:
    cmp = compare_model(files["model"], files[config], inputs=files["x"])
    luts = [r for r in cmp.rows if r.op == "QLut"]
    assert [r.name for r in luts] == ["sig", "th"] and cmp.ok
    assert all(r.max_fed == 0 and r.mismatch_fed == 0.0 and r.outputs > 0 for r in luts), luts


@pytest.mark.parametrize(("config", "opset"), [("int8", 13), ("wide", 21)])
def test_export_qdq_writes_a_checked_model_with_the_tables(files: dict[str, Path], tmp_path: Path, config: str,
                                                           opset: int, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lut_qdq.onnx"
    assert main(["export-qdq", str(files["model"]), "-c", str(files[config]), "-o", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    m = onnx.load(out)
    onnx.checker.check_model(m, full_check=True)
    assert m.opset_import[0].version == opset and not any(n.domain for n in m.graph.node)
    assert {"QuantizeLinear", "DequantizeLinear", "Gemm", "Cast", "Gather"} <= {n.op_type for n in m.graph.node}
    # each QLut output is a QuantizeLinear with its IR name; its Gather reads the node's table, unchanged
    c = compile_model(files["model"], files[config])
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    producers = {o: n for n in m.graph.node for o in n.output}
    for lut in (n for n in c.graph.nodes if n.op == "QLut"):
        assert producers[lut.outputs[0]].op_type == "QuantizeLinear"
        (gather,) = [n for n in m.graph.node if n.op_type == "Gather" and n.output[0].startswith(f"{lut.name}.")]
        np.testing.assert_array_equal(inits[gather.input[0]].astype(np.int64), lut.attr("table"))


# ---- every input code, one function between two QONNX quantizers --------------------------------------

def _qonnx_lut(path: Path, op: str, attrs: dict, bits: int, signed: bool, s_in: float, s_out: float,
               out_signed: bool) -> Path:
    nodes = [node("Quant", ["x", "s_in", "z_in", "b_in"], ["xq"], name="quant_in", domain=QONNX,
                  signed=int(signed), narrow=0, rounding_mode="ROUND"),
             node(op, ["xq"], ["f"], name="f", **attrs),
             node("Quant", ["f", "s_out", "z0", "b8"], ["y"], name="quant_out", domain=QONNX, signed=int(out_signed),
                  narrow=0, rounding_mode="ROUND")]
    inits = [init("s_in", s_in), init("z_in", 0.0 if signed else float(1 << (bits - 1))), init("b_in", float(bits)),
             init("s_out", s_out), init("z0", 0.0), init("b8", 8.0)]
    m = model(nodes, [vi("x", [1, 4, 8, 8])], [vi("y", [1, 4, 8, 8])], inits, opset=20, extra_domains=[QONNX])
    path.write_bytes(m.SerializeToString())
    return path


CASES = [  # (op, attrs, input bits, signed input, s_in, s_out, signed output)
    ("Sigmoid", {}, 8, True, 0.05, 1 / 256, False),
    ("Tanh", {}, 8, False, 0.02, 1 / 128, True),  # unsigned input: x_lo = 0
    ("HardSwish", {}, 4, True, 0.5, 1 / 32, True),  # narrow: out-of-range inputs are clamped first
    ("Elu", {"alpha": 0.7}, 10, True, 1 / 128, 1 / 32, True),  # int16 input (opset 21)
    ("Gelu", {"approximate": "tanh"}, 6, False, 0.125, 1 / 16, True),
]


@pytest.mark.parametrize(("op", "attrs", "bits", "signed", "s_in", "s_out", "out_signed"), CASES,
                         ids=[f"{c[0]}-{'i' if c[3] else 'u'}{c[2]}" for c in CASES])
def test_every_input_code_is_exact(tmp_path: Path, op: str, attrs: dict, bits: int, signed: bool, s_in: float,
                                   s_out: float, out_signed: bool) -> None:
    """Inputs on every input code (and, for the narrow type, beyond its range): onnxruntime's QLut
    output is the table entry of every code, and compare's row is 0 LSB over them all."""
    path = _qonnx_lut(tmp_path / "lut.onnx", op, attrs, bits, signed, s_in, s_out, out_signed)
    c = compile_model(path)
    (lut,) = [n for n in c.graph.nodes if n.op == "QLut"]
    qx = c.graph.tensor(lut.inputs[0]).qtype
    assert qx is not None
    zp, lo, hi = int(qx.zero_point), qx.int.lo, qx.int.hi
    pad = 4 if bits < 8 else 0
    codes = np.arange(lo - pad, hi + 1 + pad)
    x = np.resize((codes - zp) * s_in, (-(-codes.size // 256), 4, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)

    ort = ort_integers(export_qdq(c.graph), x)
    x_codes = ort[lut.inputs[0]].astype(np.int64)
    assert set(np.unique(x_codes)) == set(range(lo, hi + 1))
    table = np.asarray(lut.attr("table"), np.int64)
    np.testing.assert_array_equal(ort[lut.outputs[0]].astype(np.int64), table[x_codes - int(lut.attr("x_lo"))])

    cmp = compare_model(path, inputs=tmp_path / "x.npy")
    assert "exported" in cmp.reference and [r.op for r in cmp.rows] == ["QLut"]
    (row,) = cmp.rows
    assert row.max_fed == 0 and row.mismatch_fed == 0.0 and row.max_end_to_end == 0 and row.outputs == x.size


def test_bipolar_input(tmp_path: Path) -> None:
    nodes = [node("BipolarQuant", ["x", "s_in"], ["xq"], name="quant_in", domain=QONNX),
             node("Tanh", ["xq"], ["f"], name="f"),
             node("Quant", ["f", "s_out", "z0", "b8"], ["y"], name="quant_out", domain=QONNX, signed=1, narrow=0,
                  rounding_mode="ROUND")]
    inits = [init("s_in", 0.5), init("s_out", 1 / 64), init("z0", 0.0), init("b8", 8.0)]
    m = model(nodes, [vi("x", [1, 8])], [vi("y", [1, 8])], inits, opset=11, extra_domains=[QONNX])
    (tmp_path / "bip.onnx").write_bytes(m.SerializeToString())
    np.save(tmp_path / "x.npy", np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8))
    cmp = compare_model(tmp_path / "bip.onnx", inputs=tmp_path / "x.npy")
    assert [(r.op, r.max_fed, r.mismatch_fed) for r in cmp.rows] == [("QLut", 0, 0.0)]


# ---- negative control ----------------------------------------------------------------------------------

@pytest.mark.parametrize("delta", [1, 2])
def test_negative_control_a_corrupted_table_entry(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], delta: int) -> None:
    """The export's table for `sig` off by `delta` at the code its input hits most: compare reports
    exactly `delta` LSB on `sig`, on the share of values with that input code, and nothing elsewhere;
    off by 2 it fails (exit 1) naming `sig`."""
    c = compile_model(files["model"])
    (sig,) = [n for n in c.graph.nodes if n.name == "sig"]
    x = np.load(files["x"])
    hit = ort_integers(export_qdq(c.graph), x)[sig.inputs[0]].astype(np.int64)
    values, counts = np.unique(hit, return_counts=True)
    code = int(values[np.argmax(counts)])
    table = list(sig.attr("table"))
    qy = c.graph.tensor(sig.outputs[0]).qtype
    assert qy is not None
    i = code - int(sig.attr("x_lo"))
    table[i] += delta if table[i] + delta <= qy.int.hi else -delta
    clean = {r.name: r for r in compare_model(files["model"], inputs=files["x"]).rows}
    assert clean["sig"].max_fed == 0
    emit = EMITTERS["QLut"]

    def corrupted(b, n):  # type: ignore[no-untyped-def]
        emit(b, Node(n.name, n.op, n.inputs, n.outputs, {**n.attrs, "table": tuple(table)}) if n.name == "sig" else n)

    monkeypatch.setitem(EMITTERS, "QLut", corrupted)
    cmp = compare_model(files["model"], inputs=files["x"])
    rows = {r.name: r for r in cmp.rows}
    assert rows["sig"].max_fed == delta and rows["sig"].mismatch_fed == pytest.approx(float(np.mean(hit == code)))
    assert rows["sig"].mismatch_fed > 0 and rows["sig"].max_end_to_end == delta
    fed = {name: (r.max_fed, r.mismatch_fed) for name, r in rows.items() if name != "sig"}
    assert fed == {name: (r.max_fed, r.mismatch_fed) for name, r in clean.items() if name != "sig"}  # only sig moves
    assert main(["compare", str(files["model"]), "--input", str(files["x"])]) == (0 if delta <= 1 else 1)
    verdict = capsys.readouterr().out.splitlines()[-1]
    assert verdict.startswith("PASS") if delta <= 1 else verdict.startswith("FAIL: 1 layer(s)") and "sig (2)" in verdict

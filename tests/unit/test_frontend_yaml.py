"""hlsgen.frontend.from_yaml: YAML model -> float IR (nodes, shapes, weights) and its error messages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hlsgen.errors import HlsgenError
from hlsgen.frontend.from_yaml import calibration_data, load_yaml_model
from hlsgen.ir.graph import Graph
from hlsgen.ir.verify import verify

MLP = """
name: tiny_mlp
input: {name: x, shape: [64]}
layers:
  - {name: fc1, op: dense, units: 32, activation: relu, weights: w.npz}
  - {name: fc2, op: dense, units: 10, weights: w.npz}
  - {op: softmax}
"""

CNN = """
name: tiny_cnn
input: {name: img, shape: [3, 8, 8]}
seed: 7
layers:
  - {name: c1, op: conv, filters: 4, kernel: 3, padding: same, batchnorm: true, activation: relu}
  - {name: c2, op: conv, filters: 4, kernel: 3, padding: same, bias: false}
  - {name: res, op: add, inputs: [c2, c1], activation: relu}
  - {name: p1, op: maxpool, kernel: 2}
  - {name: dw, op: conv, filters: 4, kernel: [3, 1], stride: 2, padding: same, groups: 4,
     activation: leaky_relu, alpha: 0.1}
  - {name: g, op: global_avgpool}
  - {name: f, op: flatten}
  - {name: fc, op: dense, units: 5, activation: relu6}
"""


def write(tmp_path: Path, text: str, name: str = "model.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def load(tmp_path: Path, text: str) -> Graph:
    return verify(load_yaml_model(write(tmp_path, text)))


def mlp_weights(tmp_path: Path, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = {"fc1.weight": rng.normal(size=(32, 64)).astype(np.float32),
              "fc1.bias": rng.normal(size=32).astype(np.float32),
              "fc2.weight": rng.normal(size=(10, 32)), "fc2.bias": rng.normal(size=10)}
    np.savez(tmp_path / "w.npz", **arrays)
    return arrays


def data(graph: Graph, name: str) -> np.ndarray:
    arr = graph.tensor(name).data
    assert arr is not None, name
    return arr


def ops(graph: Graph) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    return [(n.name, n.op, n.inputs, n.outputs) for n in graph.nodes]


# ---- translation -------------------------------------------------------------------------------
def test_mlp_nodes_shapes_and_exact_weights(tmp_path: Path) -> None:
    arrays = mlp_weights(tmp_path)
    g = load(tmp_path, MLP)
    assert g.name == "tiny_mlp" and g.inputs == ("x",) and g.outputs == ("softmax_2",)
    assert ops(g) == [
        ("fc1", "Gemm", ("x", "fc1.weight", "fc1.bias"), ("fc1.gemm",)),
        ("fc1.relu", "Relu", ("fc1.gemm",), ("fc1",)),
        ("fc2", "Gemm", ("fc1", "fc2.weight", "fc2.bias"), ("fc2",)),
        ("softmax_2", "Softmax", ("fc2",), ("softmax_2",)),
    ]
    assert g.node("fc1").attrs["act"] == "none" and g.node("softmax_2").attrs["axis"] == 1
    shapes = {t: g.tensor(t).shape for t in ("x", "fc1.gemm", "fc1", "fc2", "softmax_2")}
    assert shapes == {"x": (1, 64), "fc1.gemm": (1, 32), "fc1": (1, 32), "fc2": (1, 10), "softmax_2": (1, 10)}
    for key, arr in arrays.items():
        assert data(g, key).dtype == arr.dtype and np.array_equal(data(g, key), arr)
    assert g.notes == ()


def test_meta(tmp_path: Path) -> None:
    mlp_weights(tmp_path)
    text = MLP + ("quant: {weight_bits: 4, percentile: 99.9}\n"
                  "calibration: {samples: 8, distribution: uniform}\n")
    g = load(tmp_path, text)
    assert g.meta["format"] == "yaml" and g.meta["source"] == str(tmp_path / "model.yaml")
    assert g.meta["quant"] == {"weight_bits": 4, "percentile": 99.9}
    assert g.meta["calibration"] == {"samples": 8, "distribution": "uniform", "seed": 0,
                                     "low": -1.0, "high": 1.0}
    x = calibration_data(g)
    assert x.shape == (8, 64) and x.dtype == np.float32 and np.all(np.abs(x) <= 1)
    assert np.array_equal(x, calibration_data(g))


def test_cnn_with_batchnorm_and_residual(tmp_path: Path) -> None:
    g = load(tmp_path, CNN)
    assert [(n.name, n.op) for n in g.nodes] == [
        ("c1", "Conv"), ("c1.bn", "BatchNormalization"), ("c1.relu", "Relu"), ("c2", "Conv"),
        ("res", "Add"), ("res.relu", "Relu"), ("p1", "MaxPool"), ("dw", "Conv"),
        ("dw.leaky_relu", "LeakyRelu"), ("g", "GlobalAveragePool"), ("f", "Reshape"), ("fc", "Gemm"),
        ("fc.relu6", "Clip")]
    assert g.node("c1.bn").inputs == ("c1.conv", "c1.bn.gamma", "c1.bn.beta", "c1.bn.mean", "c1.bn.var")
    assert g.node("res").inputs == ("c2", "c1")
    assert dict(g.node("c1").attrs) == {"strides": (1, 1), "pads": (1, 1, 1, 1), "dilations": (1, 1),
                                        "group": 1, "act": "none"}
    assert dict(g.node("dw").attrs)["pads"] == (0, 0, 1, 0) and g.node("dw").attrs["group"] == 4
    assert g.node("dw.leaky_relu").attrs["alpha"] == 0.1
    assert dict(g.node("fc.relu6").attrs) == {"min": 0.0, "max": 6.0}
    assert dict(g.node("p1").attrs) == {"kernel": (2, 2), "strides": (2, 2), "pads": (0, 0, 0, 0),
                                        "dilations": (1, 1)}
    assert g.node("f").attrs["shape"] == (4,)
    shapes = {t: g.tensor(t).shape for t in ("img", "c1", "res", "p1", "dw", "g", "f", "fc")}
    assert shapes == {"img": (1, 3, 8, 8), "c1": (1, 4, 8, 8), "res": (1, 4, 8, 8), "p1": (1, 4, 4, 4),
                      "dw": (1, 4, 2, 2), "g": (1, 4, 1, 1), "f": (1, 4), "fc": (1, 5)}
    assert g.tensor("c1.weight").shape == (4, 3, 3, 3) and g.tensor("dw.weight").shape == (4, 1, 3, 1)
    assert not np.any(g.tensor("c2.bias").real_value()) and g.tensor("fc.weight").shape == (5, 4)


def test_npz_batchnorm_and_npy_mapping_loaded_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    bn = {f"c1.bn.{k}": rng.uniform(0.5, 2, 4).astype(np.float32) for k in ("gamma", "beta", "mean", "var")}
    conv = {"c1.weight": rng.normal(size=(4, 3, 3, 3)), "c1.bias": rng.normal(size=4)}
    np.savez(tmp_path / "c1.npz", **bn, **conv)
    np.save(tmp_path / "fw.npy", rng.normal(size=(2, 4 * 8 * 8)).astype(np.float32))
    np.save(tmp_path / "fb.npy", np.arange(2.0))
    g = load(tmp_path, """
input: {shape: [3, 8, 8]}
layers:
  - {name: c1, op: conv, filters: 4, kernel: 3, padding: 1, batchnorm: true, weights: c1.npz}
  - {op: flatten}
  - {name: out, op: dense, units: 2, weights: {weight: fw.npy, bias: fb.npy}}
""")
    for key, arr in {**bn, **conv}.items():
        assert np.array_equal(data(g, key), arr)
    assert np.array_equal(data(g, "out.weight"), np.load(tmp_path / "fw.npy"))
    assert np.array_equal(data(g, "out.bias"), np.arange(2.0))
    assert g.name == "model" and g.inputs == ("input",)


def test_top_level_weights_and_unused_array_warning(tmp_path: Path) -> None:
    arrays = mlp_weights(tmp_path)
    np.savez(tmp_path / "w.npz", **arrays, **{"fc9.weight": np.zeros(3)})
    g = load(tmp_path, MLP.replace(", weights: w.npz", "") + "weights: w.npz\n")
    assert np.array_equal(data(g, "fc2.weight"), arrays["fc2.weight"])
    assert [(n.kind, n.data["unused"]) for n in g.notes] == [("warning", ["fc9.weight"])]


def test_seeded_init_is_deterministic(tmp_path: Path) -> None:
    a, b = load(tmp_path, CNN), load(tmp_path, CNN)
    c = load(tmp_path, CNN.replace("seed: 7", "seed: 8"))
    for key in ("c1.weight", "c1.bn.gamma", "c1.bn.var", "fc.weight"):
        assert np.array_equal(data(a, key), data(b, key))
        assert not np.array_equal(data(a, key), data(c, key))
    assert not np.array_equal(data(a, "c1.weight"), data(a, "c2.weight"))
    assert data(a, "c1.weight").dtype == np.float32
    w = a.tensor("c1.weight").real_value()
    assert abs(w.std() - np.sqrt(2 / 27)) < 0.1 and not np.any(a.tensor("c1.bias").real_value())
    assert np.all(a.tensor("c1.bn.var").real_value() > 0)


def test_random_weights_unasked_for_are_a_warning(tmp_path: Path) -> None:
    """Layers without `weights:` got seeded random parameters without a word; now a warning names
    them, and `weights: random` (top level or per layer) says random is meant."""
    notes = load(tmp_path, CNN).notes
    assert [(n.kind, n.data["random_layers"]) for n in notes] == [("warning", ["c1", "c2", "dw", "fc"])]
    assert notes[0].message == ("4 layer(s) have no weights (c1, c2, dw, fc): they get seeded random parameters "
                                "(seed 7); give weights: FILE.npz for trained ones, or weights: random to say "
                                "random is meant")
    asked = load(tmp_path, CNN + "weights: random\n")
    assert asked.notes == ()
    for key in ("c1.weight", "fc.weight"):  # the same seeded values, asked for or not
        assert np.array_equal(data(asked, key), data(load(tmp_path, CNN), key))
    one = CNN.replace("units: 5, activation: relu6}", "units: 5, activation: relu6, weights: random}")
    assert [n.data["random_layers"] for n in load(tmp_path, one).notes] == [["c1", "c2", "dw"]]
    with pytest.raises(HlsgenError, match="weights must name an .npz file or be 'random', got 'rand'"):
        load(tmp_path, CNN + "weights: rand\n")


def test_seeded_layer_independent_of_other_layers(tmp_path: Path) -> None:
    a = load(tmp_path, CNN)
    changed = CNN.replace("filters: 4, kernel: 3, padding: same, bias: false", "filters: 4, kernel: 1")
    b = load(tmp_path, changed)
    assert np.array_equal(data(a, "fc.weight"), data(b, "fc.weight"))


def test_pools_padding_forms_and_host_ops(tmp_path: Path) -> None:
    g = load(tmp_path, """
input: {name: x, shape: [2, 9, 9]}
layers:
  - {name: a, op: avgpool, kernel: 3, stride: 2, padding: same, count_include_pad: true}
  - {name: m, op: maxpool, kernel: [2, 3], stride: 1, padding: [1, 0, 0, 2]}
  - {name: c, op: conv, filters: 2, kernel: 3, padding: [1, 2], dilation: 2}
  - {name: bn, op: batchnorm, epsilon: 0.001}
  - {name: r, op: leaky_relu, alpha: 0.2}
  - {op: flatten}
  - {name: s, op: log_softmax, axis: -1}
  - {name: t, op: sigmoid}
""")
    assert dict(g.node("a").attrs) == {"kernel": (3, 3), "strides": (2, 2), "pads": (1, 1, 1, 1),
                                       "count_include_pad": 1}
    assert g.tensor("a").shape == (1, 2, 5, 5)
    assert g.node("m").attrs["pads"] == (1, 0, 0, 2) and g.tensor("m").shape == (1, 2, 5, 5)
    assert g.node("c").attrs["pads"] == (1, 2, 1, 2) and g.tensor("c").shape == (1, 2, 3, 5)
    assert g.node("bn").inputs[1:] == ("bn.gamma", "bn.beta", "bn.mean", "bn.var")
    assert g.node("bn").attrs["epsilon"] == 0.001 and g.node("r").attrs["alpha"] == 0.2
    assert g.node("s").op == "LogSoftmax" and g.node("s").attrs["axis"] == 1
    assert g.node("t").op == "Sigmoid" and g.outputs == ("t",)


# ---- errors ------------------------------------------------------------------------------------
def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(HlsgenError) as info:
        load_yaml_model(write(tmp_path, text))
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(tmp_path / "model.yaml") + ": ")
    return message


HEAD = "input: {name: x, shape: [3, 8, 8]}\nlayers:\n"


@pytest.mark.parametrize(("layers", "expected"), [
    ("  - {name: c1, op: conv, filter: 4, kernel: 3}",
     "layers[0] (c1): unknown key 'filter' (did you mean 'filters'?)"),
    ("  - {name: c1, op: convolution}", "layers[0] (c1): unknown op 'convolution'"),
    ("  - {name: c1, filters: 4}", "layers[0] (c1): missing key 'op'"),
    ("  - {name: c1, op: conv, kernel: 3}", "layers[0] (c1): missing key 'filters'"),
    ("  - {name: 1c, op: flatten}", "layers[0] (1c): layer name '1c' must be identifier-like"),
    ("  - {name: c.1, op: flatten}", "layer name 'c.1' must be identifier-like"),
    ("  - {name: x, op: flatten}", "layers[0] (x): layer name 'x' is already used"),
    ("  - {name: a, op: relu}\n  - {name: a, op: flatten}", "layers[1] (a): layer name 'a' is already used"),
    ("  - {name: d, op: dense, units: 4}",
     "layers[0] (d): dense needs a flat [K] input, got shape [3, 8, 8] from 'x'; add {op: flatten}"),
    ("  - {op: flatten}\n  - {name: c, op: conv, filters: 2, kernel: 1}",
     "layers[1] (c): conv needs a [C, H, W] input, got shape [192] from 'flatten_0'"),
    ("  - {name: c, op: conv, filters: 2, kernel: 9}",
     "layers[0] (c): kernel [9, 9] (dilation [1, 1]) does not fit the padded input 8x8"),
    ("  - {name: c, op: conv, filters: 2, kernel: 3, groups: 2}",
     "groups=2 must divide the input channels (3) and filters (2)"),
    ("  - {name: c, op: conv, filters: 2, kernel: 3, padding: full}",
     "padding must be valid, same, an integer, [h, w] or [top, left, bottom, right]; got 'full'"),
    ("  - {name: c, op: conv, filters: 2, kernel: [3, 3, 3]}",
     "kernel must be an integer >= 1 or a list [h, w]"),
    ("  - {name: c, op: conv, filters: 0, kernel: 3}", "filters must be an integer >= 1, got 0"),
    ("  - {name: p, op: maxpool, kernel: 2, padding: 2}",
     "padding [2, 2, 2, 2] must be smaller than the kernel"),
    ("  - {name: c, op: conv, filters: 2, kernel: 1, activation: relu, alpha: 0.1}",
     "layers[0] (c): alpha only applies to activation: leaky_relu"),
    ("  - {name: c, op: conv, filters: 2, kernel: 1, activation: gelu}",
     "activation must be one of none, relu, relu6, leaky_relu; got 'gelu'"),
    ("  - {name: a, op: relu}\n  - {name: b, op: relu, inputs: [c]}",
     "layers[1] (b): inputs names 'c', which is neither the model input nor an earlier layer"),
    ("  - {name: a, op: relu}\n  - {name: s, op: add, inputs: [a]}",
     "layers[1] (s): inputs must list 2 layer"),
    ("  - {name: a, op: relu}\n  - {name: s, op: add}", "layers[1] (s): missing key 'inputs'"),
    ("  - {name: a, op: relu}\n  - {name: b, op: global_avgpool}\n  - {name: s, op: add, inputs: [a, b]}",
     "layers[2] (s): add needs inputs of one shape, got [3, 8, 8] from 'a' and [3, 1, 1] from 'b'"),
    ("  - {name: a, op: relu}\n  - {name: b, op: relu6, inputs: x}",
     "layers[0] (a): output is never used"),
    ("  - {name: s, op: softmax, axis: 0}", "axis 0 is the batch dimension"),
    ("  - 3", "layers[0]: a layer must be a mapping"),
])
def test_layer_errors(tmp_path: Path, layers: str, expected: str) -> None:
    assert expected in error_of(tmp_path, HEAD + layers + "\n")


def test_unknown_key_suggestions(tmp_path: Path) -> None:
    assert "layers[0] (d): unknown key 'unit' (did you mean 'units'?)" in error_of(
        tmp_path, "input: {shape: [4]}\nlayers:\n  - {name: d, op: dense, unit: 3}\n")
    assert "unknown op 'maxpol' (did you mean 'maxpool'?)" in error_of(tmp_path, HEAD + "  - {op: maxpol}\n")
    assert "unknown key 'layer' (did you mean 'layers'?)" in error_of(
        tmp_path, "input: {shape: [4]}\nlayer: []\n")
    assert "unknown key 'quant.act_bit' (did you mean 'act_bits'?)" in error_of(
        tmp_path, HEAD + "  - {op: relu}\nquant: {act_bit: 4}\n")
    assert "unknown key 'input.shap' (did you mean 'shape'?)" in error_of(tmp_path, "input: {shap: [4]}\n")


@pytest.mark.parametrize(("text", "expected"), [
    ("layers:\n  - {op: relu}\n", "missing key 'input'"),
    ("input: {shape: [8, 8]}\nlayers: [{op: relu}]\n",
     "input.shape must be [features] or [channels, height, width]"),
    ("input: {shape: [0]}\nlayers: [{op: relu}]\n", "input.shape entries must be an integer >= 1, got 0"),
    ("input: {name: in put, shape: [4]}\nlayers: [{op: relu}]\n",
     "input name 'in put' must be identifier-like"),
    ("input: {shape: [4]}\nlayers: []\n", "layers must be a non-empty list"),
    ("input: {shape: [4]}\n", "layers must be a non-empty list"),
    ("input: {shape: [4]}\nseed: -1\nlayers: [{op: relu}]\n", "seed must be an integer >= 0, got -1"),
    ("input: {shape: [4]}\nquant: {weight_bits: 40}\nlayers: [{op: relu}]\n",
     "quant.weight_bits must be an integer 2..16, got 40"),
    ("input: {shape: [4]}\ncalibration: {distribution: gauss}\nlayers: [{op: relu}]\n",
     "calibration.distribution must be one of normal, uniform; got 'gauss'"),
    ("input: {shape: [4]}\ncalibration: {distribution: normal, low: 0}\nlayers: [{op: relu}]\n",
     "unknown key 'calibration.low'"),
    ("input: {shape: [4]}\ncalibration: {distribution: uniform, low: 1, high: 0}\nlayers: [{op: relu}]\n",
     "calibration.high must be greater than calibration.low"),
    ("input: {shape: [4]}\nweights: w.npy\nlayers: [{op: relu}]\n", "weights must name an .npz file"),
    ("input: {shape: [4]}\nlayers:\n  - {op: relu\n", "YAML syntax error at line 4"),
    ("- 1\n", "a model file must be a mapping (key: value lines) at the top level, got a list"),
])
def test_model_errors(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in error_of(tmp_path, text)


def test_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(HlsgenError, match=r"missing\.yaml: model file not found"):
        load_yaml_model(tmp_path / "missing.yaml")


DENSE = "input: {shape: [4]}\nlayers:\n  - {name: d, op: dense, units: 2, weights: %s}\n"


def test_weight_file_errors(tmp_path: Path) -> None:
    msg = error_of(tmp_path, DENSE % "w.npz")
    assert "layers[0] (d): weights file 'w.npz' not found (looked for " + str(tmp_path / "w.npz") in msg
    np.savez(tmp_path / "w.npz", **{"d.weight": np.zeros((2, 5)), "d.bias": np.zeros(2)})
    msg = error_of(tmp_path, DENSE % "w.npz")
    assert "d.weight in w.npz has shape [2, 5], expected [2, 4] (units, inputs)" in msg
    np.savez(tmp_path / "w.npz", **{"d.weights": np.zeros((2, 4)), "d.bias": np.zeros(2)})
    assert "w.npz has no array 'd.weight' (did you mean 'd.weights'?)" in error_of(tmp_path, DENSE % "w.npz")
    np.savez(tmp_path / "w.npz", **{"d.weight": np.full((2, 4), np.nan), "d.bias": np.zeros(2)})
    assert "d.weight in w.npz contains NaN or Inf" in error_of(tmp_path, DENSE % "w.npz")
    (tmp_path / "bad.npz").write_text("not a zip")
    assert "cannot read weights file 'bad.npz'" in error_of(tmp_path, DENSE % "bad.npz")
    assert "weights must be an .npz file, 'random' or a mapping" in error_of(tmp_path, DENSE % "w.h5")
    np.save(tmp_path / "plain.npy", np.zeros(3))
    (tmp_path / "plain.npy").rename(tmp_path / "plain.npz")
    assert "weights file 'plain.npz' is not an .npz archive" in error_of(tmp_path, DENSE % "plain.npz")


def test_weight_mapping_errors(tmp_path: Path) -> None:
    np.save(tmp_path / "w.npy", np.zeros((2, 4)))
    assert "unknown key 'weights.bn.gamma'" in error_of(tmp_path, DENSE % "{weight: w.npy, bn.gamma: w.npy}")
    assert "weights mapping has no entry 'bias' (for d.bias)" in error_of(tmp_path, DENSE % "{weight: w.npy}")
    msg = error_of(tmp_path, DENSE % "{weight: w.txt}")
    assert "weights entries must name .npy files, got 'w.txt'" in msg
    assert "weights file 'b.npy' not found" in error_of(tmp_path, DENSE % "{weight: w.npy, bias: b.npy}")
    np.savez(tmp_path / "z.npz", b=np.zeros(2))
    (tmp_path / "z.npz").rename(tmp_path / "b.npy")
    msg = error_of(tmp_path, DENSE % "{weight: w.npy, bias: b.npy}")
    assert "weights file 'b.npy' is not an .npy array" in msg
    np.save(tmp_path / "b.npy", np.zeros(3))
    msg = error_of(tmp_path, DENSE % "{weight: w.npy, bias: b.npy}")
    assert "b.npy has shape [3], expected [2] (outputs)" in msg


def test_negative_bn_variance(tmp_path: Path) -> None:
    params = {f"n.{k}": np.ones(3) for k in ("gamma", "beta", "mean")} | {"n.var": np.array([1.0, -1.0, 1.0])}
    np.savez(tmp_path / "bn.npz", **params)
    msg = error_of(tmp_path, HEAD + "  - {name: n, op: batchnorm, weights: bn.npz}\n")
    assert "layers[0] (n): n.var has negative entries" in msg


def test_bias_false_needs_no_bias_array(tmp_path: Path) -> None:
    np.save(tmp_path / "w.npy", np.ones((2, 4)))
    text = ("input: {shape: [4]}\nlayers:\n"
            "  - {name: d, op: dense, units: 2, bias: false, weights: {weight: w.npy}}\n")
    g = load(tmp_path, text)
    assert np.array_equal(g.tensor("d.bias").real_value(), np.zeros(2))


def test_example_mlp_yaml() -> None:
    folder = Path(__file__).resolve().parents[2] / "examples" / "mlp_yaml"
    g = verify(load_yaml_model(folder / "model.yaml"))
    assert [n.op for n in g.nodes] == ["Gemm", "Relu", "Gemm", "Relu", "Gemm", "Softmax"]
    assert [g.tensor(t).shape for t in ("x", "fc1", "fc2", "fc3", "probs")] == [
        (1, 64), (1, 32), (1, 16), (1, 10), (1, 10)]
    assert g.meta["quant"] == {"weight_bits": 8, "act_bits": 8} and g.notes == ()
    with np.load(folder / "weights.npz") as stored:
        for key in stored.files:
            assert np.array_equal(data(g, key), stored[key])

"""Sanity checks for tests/model_zoo.py: valid ONNX, runs in onnxruntime, QDQ quantization works."""

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

pytest.importorskip("onnxruntime")

TESTS_DIR = str(Path(__file__).resolve().parents[1])
if TESTS_DIR not in sys.path:
    sys.path.insert(0, TESTS_DIR)

import model_zoo as zoo  # noqa: E402

BUILDERS = {
    "resnet_tiny": (zoo.resnet_tiny, (10,)),
    "resnet_tiny_nobn": (lambda: zoo.resnet_tiny(with_bn=False), (10,)),
    "dw_separable": (zoo.dw_separable, (10,)),
    "mlp": (zoo.mlp, (10,)),
    "conv_bn": (lambda: zoo.conv_bn([1.0, 0.5, 2.0, 1.5, 0.8, 1.2]), (6, 8, 8)),
    "nhwc_tf_style": (zoo.nhwc_tf_style, (10,)),
}
QDQ_MODELS = ["resnet_tiny", "dw_separable", "mlp"]


@pytest.mark.parametrize("name", list(BUILDERS))
def test_builder_valid_and_runs(name):
    build, out_shape = BUILDERS[name]
    model = build()
    onnx.checker.check_model(model, full_check=True)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 1
    x = zoo.random_inputs(model, 2, seed=1)
    for sample in x:
        (y,) = zoo.run_ort(model, sample).values()
        assert y.shape == (1, *out_shape)
        assert np.all(np.isfinite(y))


@pytest.mark.parametrize("name", list(BUILDERS))
def test_builder_deterministic(name):
    build, _ = BUILDERS[name]
    assert build().SerializeToString() == build().SerializeToString()


def test_seed_changes_weights():
    assert zoo.resnet_tiny(0).SerializeToString() != zoo.resnet_tiny(1).SerializeToString()


@pytest.mark.parametrize("build", [zoo.resnet_tiny, zoo.dw_separable, zoo.mlp])
def test_dynamic_batch(build):
    model = build(dynamic_batch=True)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"
    x = zoo.random_inputs(model, 3, seed=2)
    (y,) = zoo.run_ort(model, x).values()
    assert y.shape == (3, 10)


def test_random_inputs():
    model = zoo.dw_separable()
    x = zoo.random_inputs(model, 5, seed=7)
    assert x.shape == (5, 8, 12, 12) and x.dtype == np.float32
    np.testing.assert_array_equal(x, zoo.random_inputs(model, 5, seed=7))
    assert zoo.random_inputs(zoo.nhwc_tf_style(), 1, 0).shape == (1, 8, 8, 3)


@pytest.mark.parametrize("var", [[0.0] * 6, [1e-12] * 6, [-1.0, 1, 1, 1, 1, 1], [np.nan, 1, 1, 1, 1, 1]])
def test_conv_bn_edge_cases_are_valid_onnx(var):
    model = zoo.conv_bn(var, gamma=[0.0, -1.0, 1.0, 2.0, -0.5, 0.0], relu=False)
    onnx.checker.check_model(model)
    bn = next(n for n in model.graph.node if n.op_type == "BatchNormalization")
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    np.testing.assert_array_equal(inits[bn.input[4]], np.asarray(var, np.float32))
    assert inits[bn.input[1]][1] == -1.0


def test_conv_bn_rejects_wrong_length():
    with pytest.raises(ValueError):
        zoo.conv_bn([1.0] * 4)


def test_resnet_tiny_residual_inputs_differ_in_magnitude():
    model = zoo.resnet_tiny(dynamic_batch=True)
    x = zoo.random_inputs(model, 8, seed=3)
    acts = zoo.run_ort(model, x, all_intermediates=True)
    adds = [n for n in model.graph.node if n.op_type == "Add"]
    assert len(adds) == 2
    for add in adds:
        a, b = (float(np.abs(acts[i]).max()) for i in add.input)
        assert max(a, b) / min(a, b) > 2.0, (add.name, a, b)


@pytest.mark.parametrize("name", QDQ_MODELS)
@pytest.mark.parametrize("act", ["int8", "uint8"])
def test_qdq_quantize(name, act, tmp_path):
    model = BUILDERS[name][0]()
    calib = zoo.random_inputs(model, 16, seed=4)
    qdq = zoo.qdq_quantize(model, calib, per_channel=True, activation_type=act, tmp_dir=tmp_path)
    onnx.checker.check_model(qdq)
    ops = {n.op_type for n in qdq.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    x = calib[0]
    y_float = zoo.run_ort(model, x)["y"]
    acts = zoo.run_ort(qdq, x, all_intermediates=True)
    assert np.abs(acts["y"] - y_float).max() < 0.1 * max(1.0, np.abs(y_float).max())
    q_outs = [n.output[0] for n in qdq.graph.node if n.op_type == "QuantizeLinear"]
    assert q_outs and all(acts[o].dtype == np.dtype(act) for o in q_outs)
    assert list(tmp_path.iterdir()) == []  # temporary files cleaned up


def test_qdq_quantize_opset11_needs_per_tensor(tmp_path):
    model = zoo.nhwc_tf_style()
    calib = zoo.random_inputs(model, 8, seed=5)
    with pytest.raises(ValueError, match="opset"):
        zoo.qdq_quantize(model, calib, per_channel=True, tmp_dir=tmp_path)
    qdq = zoo.qdq_quantize(model, calib, per_channel=False, tmp_dir=tmp_path)
    assert np.all(np.isfinite(zoo.run_ort(qdq, calib[0])["y"]))


def test_run_ort_intermediates_float_model():
    model = zoo.mlp()
    outs = zoo.run_ort(model, zoo.random_inputs(model, 1, 0), all_intermediates=True)
    assert set(outs) == {o for n in model.graph.node for o in n.output}
    assert all(v.dtype == np.float32 for v in outs.values())

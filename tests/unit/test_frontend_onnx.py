"""The ONNX front-end: each op's translation, QDQ and QONNX quantization, and the error paths."""

import math
import re
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from hlsgen.errors import HlsgenError, UnsupportedModelError
from hlsgen.frontend import from_onnx_model, load_onnx
from hlsgen.ir.types import IntType, QType

TESTS_DIR = str(Path(__file__).resolve().parents[1])
if TESTS_DIR not in sys.path:
    sys.path.insert(0, TESTS_DIR)

from onnx_builders import eval_ir, init, model, node, run_ort, single, vi  # noqa: E402

INF = math.inf
EPILOGUE = {"act": "none", "clip_min": -INF, "clip_max": INF, "alpha": 0.0}
RNG = np.random.default_rng(0)


def only_node(g):
    assert len(g.nodes) == 1
    return g.nodes[0]


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def assert_matches_ort(m, x, atol=1e-5):
    """The IR's meaning (tests/onnx_builders.eval_ir) equals onnxruntime's output."""
    g = from_onnx_model(m)
    ours = eval_ir(g, x)[g.outputs[0]]
    ref = run_ort(m, x)
    assert ours.shape == ref.shape
    assert np.allclose(ours, ref, rtol=1e-5, atol=atol)
    return g


def problems_of(m):
    with pytest.raises(UnsupportedModelError) as err:
        from_onnx_model(m, "m.onnx")
    return err.value.problems


# ---- graph level --------------------------------------------------------------------------------
def test_meta_names_and_symbolic_batch():
    m = single("Relu", ["N", 3, 4, 4], ["N", 3, 4, 4], opset=11)
    g = from_onnx_model(m, "/some/dir/net.onnx")
    assert dict(g.meta) == {"format": "onnx-float", "opset": 11, "source": "net.onnx", "file_ops": {"Relu": 1}}
    assert g.inputs == ("x",) and g.outputs == ("y",)
    assert g.tensor("x").shape == (1, 3, 4, 4)
    assert g.tensor("y").shape == (1, 3, 4, 4)
    n = only_node(g)
    assert (n.name, n.op, n.inputs, n.outputs, dict(n.attrs)) == ("n", "Relu", ("x",), ("y",), {})


def test_unknown_non_batch_dim_names_the_tensor():
    m = single("Relu", [1, "C", 4, 4])
    with pytest.raises(HlsgenError, match=r"'x'.*dimension 1"):
        from_onnx_model(m, "m.onnx")


def test_unnamed_nodes_get_op_index_names():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Sigmoid", ["a"], ["y"])]
    g = from_onnx_model(model(nodes, [vi("x", [1, 4])], [vi("y", None)]))
    assert [n.name for n in g.nodes] == ["Relu_0", "Sigmoid_1"]


def test_exactly_one_graph_input_required():
    n = node("Add", ["a", "b"], ["y"])
    m = model([n], [vi("a", [1, 4]), vi("b", [1, 4])], [vi("y", None)])
    with pytest.raises(HlsgenError, match="exactly one input"):
        from_onnx_model(m, "m.onnx")


def test_initializers_listed_as_inputs_are_ignored():
    w = init("w", rand(4, 2))
    n = node("MatMul", ["x", "w"], ["y"])
    m = model([n], [vi("x", [1, 4]), vi("w", [4, 2])], [vi("y", None)], [w], opset=9)
    g = from_onnx_model(m)
    assert g.inputs == ("x",)
    assert np.array_equal(g.tensor("w").data, onnx.numpy_helper.to_array(w).astype(np.float64))
    assert g.tensor("w").data.dtype == np.float64


def test_opset_out_of_range():
    with pytest.raises(HlsgenError, match="opset 5 not supported"):
        from_onnx_model(single("Relu", [1, 4], opset=5), "m.onnx")
    assert only_node(from_onnx_model(single("Relu", [1, 4], opset=8))).op == "Relu"  # upgraded


def test_missing_file(tmp_path):
    path = tmp_path / "nope.onnx"
    with pytest.raises(HlsgenError) as err:
        load_onnx(path)
    assert str(err.value) == f"{path}: no such file"


def test_not_an_onnx_file(tmp_path):
    path = tmp_path / "junk.onnx"
    path.write_bytes(b"\xff\xfe this is not a protobuf \x00\x01")
    with pytest.raises(HlsgenError) as err:
        load_onnx(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: not an ONNX model") and "\n" not in msg
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    with pytest.raises(HlsgenError, match=r"empty.onnx: not an ONNX model"):
        load_onnx(empty)
    with pytest.raises(HlsgenError, match="directory"):
        load_onnx(tmp_path)


def test_load_from_file(tmp_path):
    path = tmp_path / "relu.onnx"
    onnx.save(single("Relu", [1, 4]), str(path))
    g = load_onnx(str(path))
    assert g.meta["source"] == "relu.onnx"
    assert only_node(g).op == "Relu"


def test_identity_dropout_removed_and_aliases_kept():
    nodes = [node("Identity", ["x"], ["i1"]), node("Relu", ["i1"], ["r"], name="relu"),
             node("Dropout", ["r"], ["d"]), node("Identity", ["d"], ["y"])]
    m = model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])], opset=9)
    g = from_onnx_model(m)
    n = only_node(g)
    assert n.inputs == ("x",) and n.outputs == ("r",)
    assert g.outputs == ("r",)
    assert g.tensor("r").aliases == ("d", "y")
    assert g.tensor("x").aliases == ("i1",)


def test_constant_node_becomes_constant_tensor():
    c = helper.make_node("Constant", [], ["c"],
                         value=helper.make_tensor("v", TensorProto.FLOAT, [4], [1, 2, 3, 4]))
    ci = helper.make_node("Constant", [], ["ci"], value_int=3)
    nodes = [c, ci, node("Mul", ["x", "c"], ["m"], name="mul"), node("Add", ["m", "ci"], ["y"], name="add")]
    g = from_onnx_model(model(nodes, [vi("x", [1, 4])], [vi("y", None)]))
    assert [n.op for n in g.nodes] == ["Mul", "Add"]
    assert g.node("mul").inputs == ("x", "c")
    assert np.array_equal(g.tensor("c").data, np.array([1.0, 2.0, 3.0, 4.0]))
    assert g.tensor("c").data.dtype == np.float64
    assert g.tensor("ci").data.dtype == np.int64 and int(g.tensor("ci").data) == 3


def test_dead_nodes_are_not_translated_or_reported():
    nodes = [node("Relu", ["x"], ["y"], name="relu"), node("Concat", ["x", "x"], ["dead"], axis=1)]
    g = from_onnx_model(model(nodes, [vi("x", [1, 4])], [vi("y", None)]))
    assert [n.name for n in g.nodes] == ["relu"]


# ---- unsupported nodes ------------------------------------------------------------------------------
def test_unsupported_error_lists_every_offending_node():
    hidden = 4
    w = init("W", rand(1, 4 * hidden, 8))
    r = init("R", rand(1, 4 * hidden, hidden))
    nodes = [node("Relu", ["x"], ["r"], name="relu"),
             node("LSTM", ["r", "W", "R"], ["seq"], name="lstm", hidden_size=hidden),
             node("Concat", ["seq", "seq"], ["cat"], name="cat", axis=3),
             node("Sigmoid", ["cat"], ["y"], name="sig")]
    m = model(nodes, [vi("x", [1, 1, 8])], [vi("y", None)], [w, r])
    probs = problems_of(m)
    assert [(p[0], p[1]) for p in probs] == [("lstm", "LSTM"), ("cat", "Concat")]
    with pytest.raises(UnsupportedModelError, match=r"m.onnx: 2 unsupported node\(s\): lstm \(LSTM\)"):
        from_onnx_model(m, "m.onnx")


def test_unsupported_custom_and_qonnx_ops():
    nodes = [node("MultiThreshold", ["x", "t"], ["a"], name="mt", domain="qonnx.custom_op.general"),
             node("Foo", ["a"], ["y"], name="foo", domain="my.domain")]
    m = model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])], [init("t", rand(4, 3))],
              extra_domains=["qonnx.custom_op.general", "my.domain"])
    probs = problems_of(m)
    assert probs == [("mt", "MultiThreshold",
                      "QONNX op MultiThreshold is not supported (only Quant, BipolarQuant and Trunc)"),
                     ("foo", "Foo", "custom op my.domain.Foo is not supported")]


def test_matmul_with_an_activation_on_the_right_says_so():
    """It said 'the right operand must be a constant [32, N], got (32, 1)': the shape was fine, the
    operand was not a constant."""
    nodes = [node("Relu", ["x"], ["r"], name="relu"), node("MatMul", ["x", "r"], ["y"], name="mm")]
    m = model(nodes, [vi("x", [32, 32])], [vi("y", [32, 32])])
    assert problems_of(m) == [("mm", "MatMul", "the right operand r is computed by the graph (an activation), "
                               "not a constant: a MatMul between two activations has no hardware unit yet "
                               "(only weights on the right)")]
    wrong = model([node("MatMul", ["x", "w"], ["y"], name="mm")], [vi("x", [1, 32])], [vi("y", [1, 4])],
                  [init("w", rand(16, 4))])
    assert problems_of(wrong) == [("mm", "MatMul", "the right operand w must have shape [32, N] to multiply the "
                                   "input's 32 columns, got [16, 4]")]


# ---- Conv ----------------------------------------------------------------------------------------------
def test_conv_basic_bias_materialised():
    w = rand(4, 3, 3, 3)
    m = single("Conv", [1, 3, 8, 8], None, [init("w", w)], ["w"], pads=[1, 1, 1, 1])
    g = from_onnx_model(m)
    n = only_node(g)
    assert n.op == "Conv" and n.inputs[:2] == ("x", "w")
    assert dict(n.attrs) == {"strides": (1, 1), "pads": (1, 1, 1, 1), "dilations": (1, 1), "group": 1,
                             **EPILOGUE}
    b = g.tensor(n.inputs[2])
    assert b.shape == (4,) and np.array_equal(b.data, np.zeros(4))
    assert g.tensor("y").shape == (1, 4, 8, 8)
    assert np.array_equal(g.tensor("w").data, w.astype(np.float64))


def test_conv_depthwise_strides_dilations_pads():
    w, b = rand(6, 1, 3, 3), rand(6)
    m = single("Conv", [1, 6, 11, 9], None, [init("w", w), init("b", b)], ["w", "b"], group=6,
               strides=[2, 1], dilations=[2, 1], pads=[1, 0, 2, 1])
    g = from_onnx_model(m)
    n = only_node(g)
    assert n.inputs == ("x", "w", "b")
    assert (n.attr("group"), n.attr("strides"), n.attr("dilations"), n.attr("pads")) == \
        (6, (2, 1), (2, 1), (1, 0, 2, 1))
    x = rand(1, 6, 11, 9)
    assert g.tensor("y").shape == run_ort(m, x).shape == (1, 6, 5, 8)


@pytest.mark.parametrize("auto_pad, pads", [("SAME_UPPER", (0, 1, 1, 1)), ("SAME_LOWER", (1, 1, 0, 1)),
                                            ("VALID", (0, 0, 0, 0))])
def test_conv_auto_pad_resolved(auto_pad, pads):
    w = rand(2, 3, 3, 3)
    kw = {"strides": [2, 1], "auto_pad": auto_pad}
    m = single("Conv", [1, 3, 8, 7], None, [init("w", w)], ["w"], **kw)
    n = only_node(from_onnx_model(m))
    assert n.attr("pads") == pads
    explicit = single("Conv", [1, 3, 8, 7], None, [init("w", w)], ["w"], strides=[2, 1], pads=list(pads))
    x = rand(1, 3, 8, 7)
    assert np.array_equal(run_ort(m, x), run_ort(explicit, x))


def test_conv_non_constant_weight_and_conv1d_unsupported():
    n1 = node("Conv", ["x", "x"], ["y"], name="c")
    m = model([n1], [vi("x", [1, 1, 3, 3])], [vi("y", None)])
    assert problems_of(m) == [("c", "Conv", "the weight must be a constant")]
    m3d = single("Conv", [1, 3, 4, 4, 4], None, [init("w", rand(2, 3, 3, 3, 3))], ["w"])
    assert "only 2-D" in problems_of(m3d)[0][2]


# ---- normalisation and activations ------------------------------------------------------------------
@pytest.mark.parametrize("opset", [9, 15])
def test_batchnorm(opset):
    params = [init(k, rand(3)) for k in ("g", "b", "mu")] + [init("var", np.abs(rand(3)) + 0.1)]
    m = single("BatchNormalization", [1, 3, 4, 4], None, params, ["g", "b", "mu", "var"], opset=opset,
               epsilon=1e-3)
    g = from_onnx_model(m)
    n = only_node(g)
    assert n.inputs == ("x", "g", "b", "mu", "var")
    assert n.attr("epsilon") == float(np.float32(1e-3))
    assert g.tensor("y").shape == (1, 3, 4, 4)


def test_batchnorm_training_mode_unsupported():
    params = [init(k, rand(3)) for k in ("g", "b", "mu", "var")]
    m = single("BatchNormalization", [1, 3, 4, 4], None, params, ["g", "b", "mu", "var"], opset=15,
               training_mode=1)
    assert problems_of(m) == [("n", "BatchNormalization", "training_mode=1")]


@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh"])
def test_unary(op):
    n = only_node(from_onnx_model(single(op, [1, 5])))
    assert (n.op, n.inputs, dict(n.attrs)) == (op, ("x",), {})


def test_leaky_relu_alpha():
    assert only_node(from_onnx_model(single("LeakyRelu", [1, 5]))).attr("alpha") == float(np.float32(0.01))
    n = only_node(from_onnx_model(single("LeakyRelu", [1, 5], alpha=0.25)))
    assert n.attr("alpha") == 0.25


def test_clip_opset9_attributes():
    n = only_node(from_onnx_model(single("Clip", [1, 5], opset=9, min=0.0, max=6.0)))
    assert dict(n.attrs) == {"min": 0.0, "max": 6.0}
    n = only_node(from_onnx_model(single("Clip", [1, 5], opset=9, max=6.0)))
    assert dict(n.attrs) == {"min": -INF, "max": 6.0}


def test_clip_opset13_inputs():
    m = single("Clip", [1, 5], None, [init("lo", -1.5), init("hi", 2.0)], ["lo", "hi"], opset=13)
    assert dict(only_node(from_onnx_model(m)).attrs) == {"min": -1.5, "max": 2.0}
    m = single("Clip", [1, 5], None, [init("hi", 6.0)], ["", "hi"], opset=13)
    assert dict(only_node(from_onnx_model(m)).attrs) == {"min": -INF, "max": 6.0}
    m = single("Clip", [1, 5], opset=13)
    assert dict(only_node(from_onnx_model(m)).attrs) == {"min": -INF, "max": INF}


def test_clip_non_constant_bound_unsupported():
    nodes = [node("ReduceMin", ["x"], ["lo"], keepdims=0), node("Clip", ["x", "lo"], ["y"], name="clip")]
    m = model(nodes, [vi("x", [1, 5])], [vi("y", None)])
    assert ("clip", "Clip", "Clip min must be a constant") in problems_of(m)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
def test_binary_with_constant_operand(op):
    c = rand(3, 1, 1) + 2
    g = from_onnx_model(single(op, [1, 3, 4, 5], None, [init("c", c)], ["c"]))
    n = only_node(g)
    assert (n.op, n.inputs) == (op, ("x", "c"))
    assert g.tensor("y").shape == (1, 3, 4, 5)
    assert np.array_equal(g.tensor("c").data, c.astype(np.float64))


def test_binary_two_activations():
    nodes = [node("Relu", ["x"], ["r"]), node("Add", ["x", "r"], ["y"], name="add")]
    g = from_onnx_model(model(nodes, [vi("x", [1, 2, 3, 3])], [vi("y", None)]))
    assert g.node("add").inputs == ("x", "r")


@pytest.mark.parametrize("opset, axis, expected", [(11, None, 1), (13, None, 1), (13, 1, 1), (11, -1, 1)])
def test_softmax_axis(opset, axis, expected):
    kw = {} if axis is None else {"axis": axis}
    for op in ("Softmax", "LogSoftmax"):
        n = only_node(from_onnx_model(single(op, [1, 10], opset=opset, **kw)))
        assert (n.op, dict(n.attrs)) == (op, {"axis": expected})


def test_softmax_old_opset_on_4d_unsupported():
    assert "flattens" in problems_of(single("Softmax", [1, 3, 2, 2], opset=11))[0][2]
    n = only_node(from_onnx_model(single("Softmax", [1, 3, 2, 2], opset=13, axis=1)))
    assert n.attr("axis") == 1


# ---- dense ------------------------------------------------------------------------------------------
def test_matmul():
    w = rand(6, 3)
    g = from_onnx_model(single("MatMul", [1, 6], None, [init("w", w)], ["w"]))
    n = only_node(g)
    assert (n.op, n.inputs) == ("MatMul", ("x", "w"))
    assert g.tensor("y").shape == (1, 3)


def test_matmul_unsupported_cases():
    m = single("MatMul", [1, 2, 6], None, [init("w", rand(6, 3))], ["w"])
    assert "must be 2-D" in problems_of(m)[0][2]
    nodes = [node("Relu", ["x"], ["r"]), node("MatMul", ["x", "r"], ["y"], name="mm")]
    assert problems_of(model(nodes, [vi("x", [1, 1])], [vi("y", None)]))[0][:2] == ("mm", "MatMul")


@pytest.mark.parametrize("trans_b, alpha, beta, c_shape", [
    (0, 1.0, 1.0, (5,)), (1, 1.0, 1.0, (5,)), (0, 0.5, 2.0, (1, 5)), (1, 1.5, 0.25, (5,)),
    (1, 2.0, 1.0, None), (0, 1.0, 3.0, (1,)),
])
def test_gemm_folding_matches_onnxruntime(trans_b, alpha, beta, c_shape):
    b_mat = rand(5, 7) if trans_b else rand(7, 5)
    inits = [init("B", b_mat)]
    extra = ["B"]
    if c_shape is not None:
        inits.append(init("C", rand(*c_shape)))
        extra.append("C")
    m = single("Gemm", [1, 7], None, inits, extra, transB=trans_b, alpha=alpha, beta=beta)
    g = from_onnx_model(m)
    n = only_node(g)
    assert n.op == "Gemm" and dict(n.attrs) == EPILOGUE
    w, b = g.tensor(n.inputs[1]).data, g.tensor(n.inputs[2]).data
    assert w.shape == (5, 7) and b.shape == (5,)
    assert g.tensor("y").shape == (1, 5)
    x = rand(1, 7)
    ref = run_ort(m, x)
    assert np.allclose(x.astype(np.float64) @ w.T + b, ref, rtol=1e-5, atol=1e-5)


def test_gemm_trans_b_without_folding_keeps_the_names():
    m = single("Gemm", [1, 7], None, [init("B", rand(5, 7)), init("C", rand(5))], ["B", "C"], transB=1)
    assert only_node(from_onnx_model(m)).inputs == ("x", "B", "C")


def test_gemm_unsupported_cases():
    m = single("Gemm", [1, 7], None, [init("B", rand(7, 5)), init("C", rand(5, 1))], ["B", "C"])
    assert "not broadcast along the 5 output features" in problems_of(m)[0][2]
    m = single("Gemm", [1, 7], None, [init("B", rand(1, 5))], ["B"], transA=1)
    assert "transA=1" in problems_of(m)[0][2]


# ---- pooling and padding ------------------------------------------------------------------------------
def test_maxpool_attrs_and_shape():
    m = single("MaxPool", [1, 2, 9, 9], None, opset=12, kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1],
               dilations=[1, 2])
    g = from_onnx_model(m)
    n = only_node(g)
    assert dict(n.attrs) == {"kernel": (3, 2), "strides": (2, 2), "pads": (1, 0, 1, 1), "dilations": (1, 2)}
    assert g.tensor("y").shape == run_ort(m, rand(1, 2, 9, 9)).shape == (1, 2, 5, 4)


def test_maxpool_same_upper_and_ceil_mode():
    m = single("MaxPool", [1, 1, 7, 7], None, kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER")
    n = only_node(from_onnx_model(m))
    assert n.attr("pads") == (0, 0, 1, 1)
    same = single("MaxPool", [1, 1, 8, 8], None, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    assert only_node(from_onnx_model(same)).attr("pads") == (0, 0, 0, 0)
    changes = single("MaxPool", [1, 1, 7, 7], None, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    assert problems_of(changes) == [("n", "MaxPool", "ceil_mode=1 changes the output size")]


def test_maxpool_indices_unsupported():
    n = node("MaxPool", ["x"], ["y", "idx"], name="mp", kernel_shape=[2, 2])
    m = model([n], [vi("x", [1, 1, 4, 4])], [vi("y", None)])
    assert problems_of(m) == [("mp", "MaxPool", "the Indices output is not supported")]


@pytest.mark.parametrize("cip", [0, 1])
def test_average_pool(cip):
    m = single("AveragePool", [1, 3, 6, 6], None, kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
               count_include_pad=cip)
    g = from_onnx_model(m)
    assert dict(only_node(g).attrs) == {"kernel": (3, 3), "strides": (1, 1), "pads": (1, 1, 1, 1),
                                         "count_include_pad": cip}
    assert g.tensor("y").shape == (1, 3, 6, 6)


def test_global_average_pool():
    g = from_onnx_model(single("GlobalAveragePool", [1, 5, 3, 4]))
    assert only_node(g).op == "GlobalAveragePool" and g.tensor("y").shape == (1, 5, 1, 1)


def test_global_max_pool_is_a_max_pool_over_the_whole_image():
    g = assert_matches_ort(single("GlobalMaxPool", [1, 5, 3, 4], [1, 5, 1, 1]), rand(1, 5, 3, 4))
    n = only_node(g)
    assert n.op == "MaxPool" and g.tensor("y").shape == (1, 5, 1, 1)
    assert dict(n.attrs) == {"kernel": (3, 4), "strides": (1, 1), "pads": (0, 0, 0, 0), "dilations": (1, 1)}


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_max_over_height_and_width_is_a_global_max_pool(opset, keepdims):
    """tf2onnx's GlobalMaxPooling2D, PyTorch's x.amax((2, 3)): as ReduceMean, into a whole-image MaxPool."""
    out = [1, 5, 1, 1] if keepdims else [1, 5]
    if opset < 18:
        m = single("ReduceMax", [1, 5, 3, 4], out, opset=opset, axes=[2, 3], keepdims=keepdims)
    else:
        m = single("ReduceMax", [1, 5, 3, 4], out, [init("axes", [-2, 3], np.int64)], ["axes"],
                   opset=opset, keepdims=keepdims)
    g = assert_matches_ort(m, rand(1, 5, 3, 4))
    assert [n.op for n in g.nodes] == ["MaxPool"] + ([] if keepdims else ["Reshape"])
    assert g.tensor("y").shape == tuple(out)


def test_reduce_max_over_channels_is_refused_naming_the_node():
    m = single("ReduceMax", [1, 5, 3, 4], None, opset=13, axes=[1])
    assert problems_of(m) == [("n", "ReduceMax", "axes [1]: only the spatial axes [2, 3] (a global max pool) "
                                                 "are supported")]


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_mean_over_height_and_width_is_a_global_average_pool(opset, keepdims):
    """PyTorch's AdaptiveAvgPool2d(1) / x.mean((2, 3)): axes an attribute before opset 18, an input
    from it on; keepdims=0 adds a Reshape to [N, C]. Same values as onnxruntime."""
    axes = [2, -1]
    out = [1, 5, 1, 1] if keepdims else [1, 5]
    if opset < 18:
        m = single("ReduceMean", [1, 5, 3, 4], out, opset=opset, axes=axes, keepdims=keepdims)
    else:
        m = single("ReduceMean", [1, 5, 3, 4], out, [init("axes", axes, np.int64)], ["axes"],
                   opset=opset, keepdims=keepdims)
    g = assert_matches_ort(m, rand(1, 5, 3, 4))
    assert [n.op for n in g.nodes] == ["GlobalAveragePool"] + ([] if keepdims else ["Reshape"])
    assert g.tensor("y").shape == tuple(out)


@pytest.mark.parametrize("axes", [[1], [1, 2, 3], [3]])
def test_reduce_mean_over_other_axes_is_refused_naming_the_node(axes):
    m = single("ReduceMean", [1, 5, 3, 4], None, opset=13, axes=axes)
    assert problems_of(m) == [("n", "ReduceMean", f"axes {sorted(a % 4 for a in axes)}: only the spatial axes "
                                                  "[2, 3] (a global average pool) are supported")]


def test_pad_opset9_attributes():
    m = single("Pad", [1, 2, 4, 4], None, opset=9, pads=[0, 0, 1, 2, 0, 0, 3, 4], value=1.5)
    g = from_onnx_model(m)
    assert dict(only_node(g).attrs) == {"pads": (1, 2, 3, 4), "value": 1.5}
    assert g.tensor("y").shape == (1, 2, 8, 10)


def test_pad_opset13_inputs():
    pads = init("p", [0, 0, 1, 0, 0, 0, 0, 2], np.int64)
    m = single("Pad", [1, 2, 4, 4], None, [pads, init("v", -2.0)], ["p", "v"], opset=13)
    g = from_onnx_model(m)
    assert dict(only_node(g).attrs) == {"pads": (1, 0, 0, 2), "value": -2.0}
    assert g.tensor("y").shape == run_ort(m, rand(1, 2, 4, 4)).shape == (1, 2, 5, 6)


def test_pad_unsupported_cases():
    m = single("Pad", [1, 2, 4, 4], None, opset=9, pads=[0, 1, 0, 0, 0, 0, 0, 0])
    assert problems_of(m)[0][2] == "only H and W may be padded"
    m = single("Pad", [1, 2, 4, 4], None, opset=9, pads=[0, 0, 1, 1, 0, 0, 1, 1], mode="reflect")
    assert "only constant" in problems_of(m)[0][2]


# ---- layout ----------------------------------------------------------------------------------------------
def test_flatten_to_reshape():
    g = from_onnx_model(single("Flatten", ["N", 4, 3, 2]))
    n = only_node(g)
    assert (n.op, dict(n.attrs)) == ("Reshape", {"shape": (24,)})
    assert g.tensor("y").shape == (1, 24)
    assert dict(only_node(from_onnx_model(single("Flatten", [1, 4, 3, 2], axis=0))).attrs) == {"shape": (24,)}
    assert "batch" in problems_of(single("Flatten", [1, 4, 3, 2], axis=2))[0][2]


def test_reshape_with_zero_and_minus_one():
    shape = init("s", [0, -1, 2], np.int64)
    g = from_onnx_model(single("Reshape", [1, 4, 3, 2], None, [shape], ["s"]))
    assert dict(only_node(g).attrs) == {"shape": (12, 2)}
    assert g.tensor("y").shape == (1, 12, 2)


def test_reshape_moving_the_batch_unsupported():
    m = single("Reshape", [1, 4, 3, 2], None, [init("s", [4, 6], np.int64)], ["s"])
    assert "does not keep dim 0 as the batch" in problems_of(m)[0][2]


@pytest.mark.parametrize("opset", [9, 11, 13, 17])
def test_reshape_with_computed_shape(opset):
    """x.view(x.size(0), -1) as exporters write it: the shape subgraph is evaluated, not translated."""
    unsq = {"axes": [0]} if opset < 13 else {}
    nodes = [node("Relu", ["x"], ["r"], name="relu"), node("Shape", ["r"], ["sh"]),
             node("Gather", ["sh", "i0"], ["n0"], axis=0),
             node("Unsqueeze", ["n0"] + (["ax"] if opset >= 13 else []), ["n1"], **unsq),
             node("Concat", ["n1", "m1"], ["tgt"], axis=0), node("Reshape", ["r", "tgt"], ["y"], name="rs")]
    inits = [init("i0", 0, np.int64), init("ax", [0], np.int64), init("m1", [-1], np.int64)]
    m = model(nodes, [vi("x", ["N", 2, 3, 3])], [vi("y", None)], inits, opset=opset)
    g = from_onnx_model(m)
    assert [n.name for n in g.nodes] == ["relu", "rs"]
    assert dict(g.node("rs").attrs) == {"shape": (18,)} and g.tensor("y").shape == (1, 18)


def test_reshape_with_unknowable_shape_unsupported():
    nodes = [node("ReduceMax", ["x"], ["mx"], keepdims=0), node("Cast", ["mx"], ["c"], to=TensorProto.INT64),
             node("Reshape", ["x", "c"], ["y"], name="rs")]
    m = model(nodes, [vi("x", [1, 4])], [vi("y", None)])
    assert problems_of(m) == [("rs", "Reshape", "the target shape is computed at run time and could not be "
                                                "inferred")]


@pytest.mark.parametrize("opset", [11, 13])
def test_squeeze_unsqueeze(opset):
    def axes_args(axes):
        if opset < 13:
            return {"axes": axes}, [], []
        return {}, [init("ax", axes, np.int64)], ["ax"]

    kw, inits, extra = axes_args([2, 3])
    g = from_onnx_model(single("Squeeze", [1, 5, 1, 1], None, inits, extra, opset=opset, **kw))
    assert dict(only_node(g).attrs) == {"shape": (5,)} and g.tensor("y").shape == (1, 5)
    kw, inits, extra = axes_args([-1, 2])
    g = from_onnx_model(single("Unsqueeze", [1, 5], None, inits, extra, opset=opset, **kw))
    assert dict(only_node(g).attrs) == {"shape": (5, 1, 1)} and g.tensor("y").shape == (1, 5, 1, 1)
    kw, inits, extra = axes_args([0])
    assert "batch" in problems_of(single("Unsqueeze", [1, 5], None, inits, extra, opset=opset, **kw))[0][2]


def test_transpose():
    g = from_onnx_model(single("Transpose", [1, 2, 3, 4], perm=[0, 2, 3, 1]))
    assert dict(only_node(g).attrs) == {"perm": (0, 2, 3, 1)}
    assert g.tensor("y").shape == (1, 3, 4, 2)
    assert "moves the batch" in problems_of(single("Transpose", [1, 2, 3, 4], perm=[1, 0, 2, 3]))[0][2]
    assert "moves the batch" in problems_of(single("Transpose", [1, 2]))[0][2]


# ---- QDQ ---------------------------------------------------------------------------------------------------
def qdq_model():
    # its own generator: the weights (and so whether a conv output sits on a rounding boundary, where
    # float32 onnxruntime and the float64 IR meaning may round apart) do not depend on test order
    w_codes = np.array(np.random.default_rng(572).integers(-127, 128, (4, 3, 3, 3)), dtype=np.int8)
    nodes = [
        node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="q_x"),
        node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dq_x"),
        node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], name="dq_w", axis=0),
        node("DequantizeLinear", ["bq", "bs"], ["bd"], name="dq_b", axis=0),
        node("Conv", ["xd", "wd", "bd"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        node("QuantizeLinear", ["c", "ys"], ["yq"], name="q_y"),
        node("DequantizeLinear", ["yq", "ys"], ["y"], name="dq_y"),
    ]
    inits = [init("xs", 0.05), init("xz", 3, np.uint8), init("wq", w_codes, np.int8),
             init("ws", [0.01, 0.02, 0.03, 0.04]), init("wz", [0, 0, 0, 0], np.int8),
             init("bq", [100, -200, 300, 0], np.int32), init("bs", [5e-4, 1e-3, 1.5e-3, 2e-3]),
             init("ys", 0.1)]
    return model(nodes, [vi("x", [1, 3, 5, 5])], [vi("y", None)], inits), w_codes


def test_qdq_hand_built():
    m, w_codes = qdq_model()
    g = from_onnx_model(m)
    assert g.meta["format"] == "onnx-qdq"
    assert [n.op for n in g.nodes].count("DequantizeLinear") == 4
    xq = g.tensor("xq")
    assert xq.qtype == QType(IntType(8, False), float(np.float32(0.05)), 3) and xq.integer and xq.data is None
    assert g.tensor("xd").qtype is None and not g.tensor("xd").integer
    wq = g.tensor("wq")
    ws = np.array([0.01, 0.02, 0.03, 0.04], dtype=np.float32).astype(np.float64)
    assert wq.qtype == QType(IntType(8, True), ws, [0, 0, 0, 0], axis=0)
    assert wq.integer and np.array_equal(wq.data, w_codes.astype(np.int64))
    bq = g.tensor("bq")
    assert bq.qtype.int == IntType(32, True) and bq.qtype.axis == 0 and bq.integer
    assert np.array_equal(bq.data, [100, -200, 300, 0])
    assert g.tensor("yq").qtype == QType(IntType(8, False), float(np.float32(0.1)), 0)
    assert g.node("conv").inputs == ("xd", "wd", "bd")


@pytest.mark.parametrize("dtype, itype", [(np.int16, IntType(16, True)), (np.uint16, IntType(16, False))])
def test_qdq_16_bit(dtype, itype):
    nodes = [node("QuantizeLinear", ["x", "s", "z"], ["q"]), node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    m = model(nodes, [vi("x", [1, 4])], [vi("y", None)], [init("s", 0.5), init("z", 7, dtype)], opset=21)
    assert from_onnx_model(m).tensor("q").qtype == QType(itype, 0.5, 7)


def test_qdq_default_zero_point_and_int4():
    nodes = [node("QuantizeLinear", ["x", "s"], ["q"]), node("DequantizeLinear", ["q", "s"], ["y"])]
    m = model(nodes, [vi("x", [1, 4])], [vi("y", None)], [init("s", 0.5)])
    assert from_onnx_model(m).tensor("q").qtype == QType(IntType(8, False), 0.5, 0)
    z4 = helper.make_tensor("z", TensorProto.INT4, [], [-3])
    nodes = [node("QuantizeLinear", ["x", "s", "z"], ["q"]), node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    m = model(nodes, [vi("x", [1, 4])], [vi("y", None)], [init("s", 0.5), z4], opset=21)
    assert from_onnx_model(m).tensor("q").qtype == QType(IntType(4, True), 0.5, -3)


def test_qdq_mismatched_pair_unsupported():
    nodes = [node("QuantizeLinear", ["x", "s"], ["q"]), node("DequantizeLinear", ["q", "s2"], ["y"], name="dq")]
    m = model(nodes, [vi("x", [1, 4])], [vi("y", None)], [init("s", 0.5), init("s2", 0.25)])
    assert problems_of(m) == [("dq", "DequantizeLinear", "tensor q is quantized twice with different parameters")]


def test_dropout_training_mode_unsupported():
    nodes = [node("Dropout", ["x", "r", "t"], ["y"], name="drop")]
    m = model(nodes, [vi("x", [1, 4])], [vi("y", None)], [init("r", 0.5), init("t", True, np.bool_)])
    assert problems_of(m) == [("drop", "Dropout", "Dropout in training mode")]


def test_qdq_non_constant_scale_unsupported():
    nodes = [node("QuantizeLinear", ["x", "x"], ["q"], name="q"), node("DequantizeLinear", ["q", "s"], ["y"])]
    m = model(nodes, [vi("x", [1])], [vi("y", None)], [init("s", 0.5)])
    assert ("q", "QuantizeLinear", "scale must be a constant") in problems_of(m)


def test_quantize_static_per_channel_qdq(tmp_path):
    quant = pytest.importorskip("onnxruntime.quantization")
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             node("Relu", ["c1"], ["r1"], name="relu1"),
             node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", strides=[2, 2]),
             node("GlobalAveragePool", ["c2"], ["p"], name="gap"),
             node("Flatten", ["p"], ["y"], name="flat")]
    inits = [init("w1", rand(4, 3, 3, 3)), init("b1", rand(4)), init("w2", rand(6, 4, 3, 3)), init("b2", rand(6))]
    float_path, q_path = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(model(nodes, [vi("x", ["N", 3, 8, 8])], [vi("y", ["N", 6])], inits), str(float_path))

    class Reader(quant.CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rand(1, 3, 8, 8)} for _ in range(4)])

        def get_next(self):
            return next(self.data, None)

    quant.quantize_static(str(float_path), str(q_path), Reader(), quant_format=quant.QuantFormat.QDQ,
                          per_channel=True, activation_type=quant.QuantType.QUInt8,
                          weight_type=quant.QuantType.QInt8)
    qm = onnx.load(str(q_path))
    inits_q = {t.name: onnx.numpy_helper.to_array(t) for t in qm.graph.initializer}
    dq_scale = {n.input[0]: n.input[1] for n in qm.graph.node if n.op_type == "DequantizeLinear"}
    g = load_onnx(q_path)
    assert g.meta["format"] == "onnx-qdq" and g.tensor("x").shape == (1, 3, 8, 8)
    convs = [n for n in g.nodes if n.op == "Conv"]
    assert len(convs) == 2
    for conv in convs:
        w_dq, b_dq = g.producer(conv.inputs[1]), g.producer(conv.inputs[2])
        assert w_dq.op == b_dq.op == "DequantizeLinear"
        wt, bt = g.tensor(w_dq.inputs[0]), g.tensor(b_dq.inputs[0])
        assert wt.integer and wt.qtype.int == IntType(8, True) and wt.qtype.axis == 0
        assert np.array_equal(wt.data, inits_q[wt.name].astype(np.int64))
        assert np.array_equal(wt.qtype.scale, inits_q[dq_scale[wt.name]].astype(np.float64))
        assert wt.qtype.scale.size == wt.shape[0]
        assert bt.integer and bt.qtype.int == IntType(32, True)
        xt = g.tensor(g.producer(conv.inputs[0]).inputs[0])
        assert xt.integer and xt.data is None and xt.qtype.int == IntType(8, False) and xt.qtype.axis is None
    q_nodes = [n for n in g.nodes if n.op == "QuantizeLinear"]
    assert q_nodes and all(g.tensor(n.outputs[0]).qtype is not None for n in q_nodes)


# ---- QONNX -------------------------------------------------------------------------------------------------
QONNX = "qonnx.custom_op.general"


def qonnx_model(rounding="ROUND", bits=4.0):
    nodes = [
        node("Quant", ["x", "s_in", "z0", "b8"], ["xq"], name="quant_in", domain=QONNX, signed=1, narrow=0,
             rounding_mode=rounding),
        node("Quant", ["w", "s_w", "z0", "bw"], ["wq"], name="quant_w", domain=QONNX, signed=1, narrow=1,
             rounding_mode="ROUND"),
        node("Conv", ["xq", "wq"], ["c"], name="conv"),
        node("Relu", ["c"], ["r"], name="relu"),
        node("Quant", ["r", "s_out", "z0", "b8"], ["y"], name="quant_out", domain=QONNX, signed=0, narrow=0,
             rounding_mode="ROUND"),
    ]
    inits = [init("s_in", 0.125), init("z0", 0.0), init("b8", 8.0), init("bw", bits),
             init("w", rand(3, 2, 1, 1)), init("s_w", np.array([0.1, 0.2, 0.3]).reshape(3, 1, 1, 1)),
             init("s_out", 0.25)]
    return model(nodes, [vi("x", [1, 2, 4, 4])], [vi("y", [1, 3, 4, 4])], inits, opset=11,
                 extra_domains=[QONNX])


def test_qonnx_quant_pairs():
    g = from_onnx_model(qonnx_model())
    assert g.meta["format"] == "qonnx"
    assert [n.op for n in g.nodes].count("QuantizeLinear") == 3
    q = g.node("quant_in")
    assert (q.op, q.inputs, q.outputs) == ("QuantizeLinear", ("x",), ("xq__q",))
    dq = g.node("quant_in__dq")
    assert (dq.op, dq.inputs, dq.outputs) == ("DequantizeLinear", ("xq__q",), ("xq",))
    assert g.tensor("xq__q").qtype == QType(IntType(8, True), 0.125, 0)
    assert g.tensor("xq__q").integer and g.tensor("xq__q").shape == (1, 2, 4, 4)
    wt = g.tensor("wq__q")
    scales = np.array([0.1, 0.2, 0.3], dtype=np.float32).astype(np.float64)
    assert wt.qtype == QType(IntType(4, True, narrow=True), scales, [0, 0, 0], axis=0)
    assert g.tensor("y__q").qtype == QType(IntType(8, False), 0.25, 0)
    assert g.outputs == ("y",) and g.tensor("y").shape == (1, 3, 4, 4)
    assert g.node("conv").inputs[:2] == ("xq", "wq")


def test_qonnx_unsupported_rounding_and_bits():
    probs = problems_of(qonnx_model(rounding="FLOOR", bits=1.0))
    assert probs == [("quant_in", "Quant", "rounding_mode FLOOR (only ROUND, half to even)")]
    probs = problems_of(qonnx_model(bits=33.0))
    assert ("quant_w", "Quant", "bit width 33 (must be an integer in 1..32 for a constant)") in probs


def test_qonnx_bipolar_quant_of_an_activation():
    n = node("BipolarQuant", ["x", "s"], ["y"], name="bq", domain=QONNX)
    m = model([n], [vi("x", [1, 4])], [vi("y", [1, 4])], [init("s", 0.5)], extra_domains=[QONNX])
    g = from_onnx_model(m)
    q = g.node("bq")
    assert q.op == "QuantizeLinear" and str(g.tensor(q.outputs[0]).qtype.int) == "bipolar"
    bad = model([n], [vi("x", [1, 4])], [vi("y", [1, 4])], [init("s", np.array([0.5, 1, 1, 1]))],
                extra_domains=[QONNX])
    assert problems_of(bad) == [("bq", "BipolarQuant", "a bipolar activation needs one positive scale")]


# ---- translations agree with onnxruntime numerically ------------------------------------------------
def qdq_gemm_model(trans_b, alpha, beta):
    """QDQ Gemm with per-channel int8 B (axis = output features) and a per-channel int32 C."""
    b_codes = RNG.integers(-127, 128, (5, 7) if trans_b else (7, 5)).astype(np.int8)
    b_scale = np.array([0.01, 0.02, 0.015, 0.03, 0.025], np.float32)
    nodes = [node("DequantizeLinear", ["bq", "bs"], ["B"], axis=0 if trans_b else 1),
             node("DequantizeLinear", ["cq", "cs"], ["C"], axis=0),
             node("Gemm", ["x", "B", "C"], ["y"], name="gemm", transB=trans_b, alpha=alpha, beta=beta)]
    inits = [init("bq", b_codes, np.int8), init("bs", b_scale),
             init("cq", RNG.integers(-500, 500, 5), np.int32), init("cs", b_scale * 0.1)]
    return model(nodes, [vi("x", [1, 7])], [vi("y", None)], inits)


NUMERIC_CASES = {
    "conv_dw": lambda: single("Conv", [1, 6, 11, 9], None, [init("w", rand(6, 1, 3, 3)), init("b", rand(6))],
                              ["w", "b"], group=6, strides=[2, 1], dilations=[2, 1], pads=[1, 0, 2, 1]),
    "conv_group2_same_lower": lambda: single("Conv", [1, 4, 7, 6], None, [init("w", rand(6, 2, 3, 2))], ["w"],
                                             group=2, strides=[2, 2], auto_pad="SAME_LOWER"),
    "maxpool_same": lambda: single("MaxPool", [1, 2, 7, 7], None, kernel_shape=[3, 3], strides=[2, 2],
                                   auto_pad="SAME_UPPER"),
    "avgpool_excl": lambda: single("AveragePool", [1, 2, 6, 5], None, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    "avgpool_incl": lambda: single("AveragePool", [1, 2, 6, 5], None, kernel_shape=[3, 2], strides=[2, 1],
                                   pads=[1, 0, 1, 1], count_include_pad=1),
    "pad": lambda: single("Pad", [1, 2, 4, 4], None, [init("p", [0, 0, 1, 0, 0, 0, 0, 2], np.int64),
                                                      init("v", -2.0)], ["p", "v"]),
    "bn9": lambda: single("BatchNormalization", [1, 3, 4, 4], None,
                          [init(k, rand(3)) for k in ("g", "b", "mu")] + [init("var", [0.5, 1.0, 2.0])],
                          ["g", "b", "mu", "var"], opset=9),
    "leaky": lambda: single("LeakyRelu", [1, 8]),
    "clip9": lambda: single("Clip", [1, 8], opset=9, min=-0.5, max=0.5),
    "softmax11": lambda: single("Softmax", [1, 8], opset=11),
    "logsoftmax13": lambda: single("LogSoftmax", [1, 3, 2, 2], opset=13, axis=1),
    "transpose": lambda: single("Transpose", [1, 2, 3, 4], perm=[0, 3, 1, 2]),
    "qdq_conv": lambda: qdq_model()[0],
    "qdq_gemm_transB0": lambda: qdq_gemm_model(0, 0.5, 2.0),
    "qdq_gemm_transB1_alpha": lambda: qdq_gemm_model(1, 1.5, 1.0),
}


@pytest.mark.parametrize("case", list(NUMERIC_CASES))
def test_translation_matches_onnxruntime(case):
    """Each case draws its own input (seeded by its position), so the result does not depend on which
    tests ran before it on the worker (a QDQ case's codes can sit on a rounding boundary)."""
    m = NUMERIC_CASES[case]()
    in_shape = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(list(NUMERIC_CASES).index(case))
    assert_matches_ort(m, rng.standard_normal(in_shape).astype(np.float32))


def test_quantized_gemm_folding_rebuilds_the_dequantize():
    m = qdq_gemm_model(0, 0.5, 2.0)
    b_codes_kn = next(onnx.numpy_helper.to_array(t) for t in m.graph.initializer if t.name == "bq")
    g = from_onnx_model(m)
    gemm = g.node("gemm")
    w_dq, b_dq = g.producer(gemm.inputs[1]), g.producer(gemm.inputs[2])
    assert w_dq.op == b_dq.op == "DequantizeLinear"
    codes, b_codes = g.tensor(w_dq.inputs[0]), g.tensor(b_dq.inputs[0])
    assert codes.shape == (5, 7) and codes.integer and codes.qtype.axis == 0
    assert np.array_equal(codes.data, b_codes_kn.T.astype(np.int64))
    scale = np.array([0.01, 0.02, 0.015, 0.03, 0.025], np.float32).astype(np.float64)
    assert np.array_equal(codes.qtype.scale, scale * 0.5)
    assert b_codes.integer and b_codes.qtype.int == IntType(32, True)
    assert np.array_equal(b_codes.qtype.scale, (np.float32(0.1) * scale.astype(np.float32)).astype(np.float64) * 2)


def test_qonnx_matches_numpy_reference():
    m = qonnx_model()
    g = from_onnx_model(m)
    x = rand(1, 2, 4, 4) * 4
    inits = {t.name: onnx.numpy_helper.to_array(t).astype(np.float64) for t in m.graph.initializer}

    def quant(v, s, lo, hi):
        return s * np.clip(np.round(v / s), lo, hi)

    xq = quant(x.astype(np.float64), 0.125, -128, 127)
    wq = quant(inits["w"], inits["s_w"], -7, 7)
    c = np.einsum("nchw,oc->nohw", xq, wq[:, :, 0, 0])
    ref = quant(np.maximum(c, 0.0), 0.25, 0, 255)
    assert np.allclose(eval_ir(g, x)["y"], ref, rtol=0, atol=1e-12)


ZOO = ["resnet_tiny", "dw_separable", "mlp", "nhwc_tf_style"]


@pytest.mark.parametrize("name", ZOO)
def test_model_zoo_float_and_qdq_match_onnxruntime(name):
    pytest.importorskip("onnxruntime.quantization")
    import model_zoo as zoo

    float_model = getattr(zoo, name)()
    opset = next(o.version for o in float_model.opset_import if o.domain == "")
    qdq = zoo.qdq_quantize(float_model, zoo.random_inputs(float_model, 8), per_channel=opset >= 13)
    x = zoo.random_inputs(float_model, 1, seed=5)
    g = from_onnx_model(float_model, name)
    assert np.allclose(eval_ir(g, x)[g.outputs[0]], zoo.run_ort(float_model, x)["y"], rtol=1e-5, atol=1e-5)
    g = from_onnx_model(qdq, name)
    assert g.meta["format"] == "onnx-qdq"
    ours, ref = eval_ir(g, x), zoo.run_ort(qdq, x, all_intermediates=True)
    codes = [t for t in ref if t in g.tensors and g.tensor(t).integer]
    assert codes
    for t in codes:  # float32 (ORT) vs float64 (here) may flip a rounding tie by one code
        assert np.abs(ours[t].astype(np.int64) - ref[t].astype(np.int64)).max() <= 1, t


@pytest.mark.parametrize("graph_name, expected", [
    ("main_graph", "kws_net"),            # PyTorch's dynamo exporter
    ("torch_jit", "kws_net"),             # PyTorch's TorchScript exporter
    ("torch-jit-export", "kws_net"),      # ... older versions
    ("tf2onnx", "kws_net"),
    ("07bf22c188e44a29be09bcfe0a45ae1b", "kws_net"),  # onnxmltools: a random uuid
    ("", "kws_net"),
    ("ResidualBlockGraph", "ResidualBlockGraph"),     # a name the author chose is kept
    ("main_graph_v2", "main_graph_v2"),
])
def test_model_name_is_the_file_stem_when_the_graph_name_is_an_exporter_default(tmp_path, graph_name, expected):
    m = single("Relu", [1, 4])
    m.graph.name = graph_name
    path = tmp_path / "kws_net.onnx"
    onnx.save(m, path)
    assert load_onnx(path).name == expected


def test_the_docs_state_the_opsets_the_front_end_takes():
    """README.md said 6-22, docs/cli.md 9..21; both now quote the range from_onnx accepts."""
    from hlsgen.frontend.from_onnx import MAX_OPSET
    from hlsgen.frontend.onnx_rewrite import OLDEST_OPSET

    root = Path(__file__).resolve().parents[2]
    for doc in ("README.md", "docs/cli.md"):
        ranges = re.findall(r"opsets (\d+)[–.-]+(\d+)", (root / doc).read_text())
        assert ranges and {(int(a), int(b)) for a, b in ranges} == {(OLDEST_OPSET, MAX_OPSET)}, doc

"""Golden-model kernels against naive loop references written from docs/ir.md.

Integer results compare with np.array_equal only; float results with a tolerance. The integer
references implement the formulas of docs/ir.md with Python ints (their own rounding, not
hlsgen.numerics), so they check the kernels and the shared requant step together.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hlsgen.golden import KERNELS, exact_int_matmul, run_graph
from hlsgen.golden.exact import float_product_is_exact
from hlsgen.ir.epilogue import FLAT_KEYS, epilogue_of
from hlsgen.ir.graph import Graph, Node, Tensor
from hlsgen.ir.ops import Op
from hlsgen.ir.types import INT8, INT32, QType

RNG = np.random.default_rng(1234)


# ---- graph building -------------------------------------------------------------------------------
def one_node_graph(op: str, attrs: dict, inputs: list[tuple[str, np.ndarray, bool]], out: Tensor) -> Graph:
    """inputs: (name, value, is_const); non-constant ones become graph inputs."""
    tensors = {out.name: out}
    graph_inputs = []
    for name, value, const in inputs:
        integer = np.issubdtype(np.asarray(value).dtype, np.integer)
        shape = (1,) + tuple(value.shape[1:]) if not const else tuple(value.shape)
        tensors[name] = Tensor(name, shape, data=value if const else None, integer=bool(integer),
                               qtype=QType(INT32, 1.0) if integer else None)
        if not const:
            graph_inputs.append(name)
    node = Node("n0", op, tuple(n for n, _, _ in inputs), (out.name,), with_epilogue(op, attrs))
    return Graph("g", (node,), tensors, tuple(graph_inputs), (out.name,))


def with_epilogue(op: str, attrs: dict) -> dict:
    """A QConv/QGemm's flat requant attributes (as the references below read them) packed into the
    node's `epilogue` (ir/epilogue.py); other ops as they are."""
    if op not in ("QConv", "QGemm"):
        return attrs
    rest = {k: v for k, v in attrs.items() if k not in FLAT_KEYS}
    return {"acc_bits": 32, "mult_bits": 16, **rest, "epilogue": epilogue_of(attrs)}


def run_one(op: str, attrs: dict, inputs: list[tuple[str, np.ndarray, bool]],
            out: Tensor | None = None) -> np.ndarray:
    out = out or Tensor("y", (1,))
    graph = one_node_graph(op, attrs, inputs, out)
    feeds = {name: value for name, value, const in inputs if not const}
    return run_graph(graph, feeds)[out.name]


# ---- naive references -----------------------------------------------------------------------------
def naive_conv(x, w, pads, strides, dilations, group, pad_value=0):
    """Nested-loop grouped conv; dtype object (Python ints) for integer inputs."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    t, left, b, r = pads
    xp = np.full((n, c, h + t + b, wd + left + r), pad_value, dtype=object)
    xp[:, :, t:t + h, left:left + wd] = x
    ho = (h + t + b - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    wo = (wd + left + r - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    y = np.zeros((n, o, ho, wo), dtype=object)
    og = o // group
    for nn, oo, i, j in itertools.product(range(n), range(o), range(ho), range(wo)):
        acc = 0
        for cc, a, bb in itertools.product(range(cg), range(kh), range(kw)):
            acc += xp[nn, (oo // og) * cg + cc, i * strides[0] + a * dilations[0],
                      j * strides[1] + bb * dilations[1]] * w[oo, cc, a, bb]
        y[nn, oo, i, j] = acc
    return y


def ref_round_shift(v: int, s: int, rounding: str) -> int:
    """round(v / 2**s) with Python ints: ties to even or up."""
    if s == 0:
        return v
    q, r = divmod(v, 1 << s)  # floor
    twice = 2 * r
    if twice > (1 << s) or (twice == (1 << s) and (rounding == "half_up" or q % 2 == 1)):
        q += 1
    return q


def ref_requant(v: int, s: int, zp: int, lo: int, hi: int, rounding: str) -> int:
    return min(max(zp + ref_round_shift(v, s, rounding), lo), hi)


def windows_ref(x, kernel, strides, pads, value):
    """Yield (n, c, i, j, taps) with the padded taps of every pooling window (Python ints/floats)."""
    n, c, h, w = x.shape
    t, left, b, r = pads
    xp = np.full((n, c, h + t + b, w + left + r), value, dtype=object)
    xp[:, :, t:t + h, left:left + w] = x
    ho = (h + t + b - kernel[0]) // strides[0] + 1
    wo = (w + left + r - kernel[1]) // strides[1] + 1
    for nn, cc, i, j in itertools.product(range(n), range(c), range(ho), range(wo)):
        top, lft = i * strides[0], j * strides[1]
        patch = xp[nn, cc, top:top + kernel[0], lft:lft + kernel[1]]
        yield nn, cc, i, j, (ho, wo), list(patch.ravel())


# ---- float conv -----------------------------------------------------------------------------------
@pytest.mark.parametrize("group,strides,dilations,pads", [
    (1, (1, 1), (1, 1), (0, 0, 0, 0)),
    (2, (2, 1), (2, 1), (1, 0, 2, 1)),
    (6, (1, 2), (1, 2), (2, 1, 0, 3)),  # depthwise
])
def test_float_conv_matches_naive(group, strides, dilations, pads):
    x = RNG.normal(size=(2, 6, 9, 10))
    w = RNG.normal(size=(6, 6 // group, 3, 2))
    b = RNG.normal(size=6)
    attrs = {"strides": strides, "pads": pads, "dilations": dilations, "group": group}
    y = run_one("Conv", attrs, [("x", x, False), ("w", w, True), ("b", b, True)])
    ref = naive_conv(x, w, pads, strides, dilations, group).astype(np.float64) + b.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-12)


def test_float_conv_epilogue_and_skip():
    x, w, b = RNG.normal(size=(2, 4, 5, 5)), RNG.normal(size=(4, 4, 3, 3)), RNG.normal(size=4)
    skip = RNG.normal(size=(2, 4, 5, 5))
    attrs = {"pads": (1, 1, 1, 1), "act": "leaky", "alpha": 0.1}
    y = run_one("Conv", attrs, [("x", x, False), ("w", w, True), ("b", b, True), ("s", skip, False)])
    pre = naive_conv(x, w, (1, 1, 1, 1), (1, 1), (1, 1), 1).astype(np.float64) + b.reshape(1, -1, 1, 1) + skip
    np.testing.assert_allclose(y, np.where(pre >= 0, pre, 0.1 * pre), rtol=1e-12, atol=1e-12)
    attrs = {"pads": (1, 1, 1, 1), "act": "clip", "clip_min": -0.5, "clip_max": 0.5}
    y = run_one("Conv", attrs, [("x", x, False), ("w", w, True), ("b", b, True), ("s", skip, False)])
    np.testing.assert_allclose(y, np.clip(pre, -0.5, 0.5), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_float_average_pool(count_include_pad):
    x = RNG.normal(size=(2, 3, 7, 6))
    attrs = {"kernel": (3, 2), "strides": (2, 2), "pads": (1, 1, 1, 0),
             "count_include_pad": count_include_pad}
    y = run_one("AveragePool", attrs, [("x", x, False)])
    counts = {(i, j): sum(t) for _, _, i, j, _, t in windows_ref(np.ones((1, 1, 7, 6)), (3, 2), (2, 2),
                                                               (1, 1, 1, 0), 0.0)}
    for n, c, i, j, shape, taps in windows_ref(x, (3, 2), (2, 2), (1, 1, 1, 0), 0.0):
        assert y.shape[2:] == shape
        count = 6 if count_include_pad else counts[i, j]
        assert y[n, c, i, j] == pytest.approx(sum(taps) / count, rel=1e-12, abs=1e-12)


def test_float_max_pool_padding_never_wins():
    x = -10.0 - RNG.random(size=(1, 2, 4, 4))
    y = run_one("MaxPool", {"kernel": (3, 3), "strides": (1, 1), "pads": (1, 1, 1, 1)}, [("x", x, False)])
    for n, c, i, j, _, taps in windows_ref(x, (3, 3), (1, 1), (1, 1, 1, 1), -np.inf):
        assert y[n, c, i, j] == max(taps)
    assert y.max() < -10.0


def test_quantize_dequantize_linear():
    qt = QType(INT8, 0.5, 3)
    x = np.array([[-100.0, -0.25, 0.25, 0.75, 1.25, 100.0]])
    q = run_one("QuantizeLinear", {}, [("x", x, False)], Tensor("q", (1, 6), qt, integer=True))
    assert q.dtype == np.int64
    assert np.array_equal(q, [[-128, 3, 3, 5, 5, 127]])  # ties to even: -0.5->0, 0.5->0, 1.5->2, 2.5->2
    g = one_node_graph("DequantizeLinear", {}, [("q", q, False)], Tensor("r", (1, 6)))
    g = g.with_tensor(Tensor("q", (1, 6), qt, integer=True))
    np.testing.assert_allclose(run_graph(g, q)["r"], 0.5 * (q - 3))


# ---- integer conv ---------------------------------------------------------------------------------
def ref_qconv(x, w, bias, attrs, skip=None):
    acc = naive_conv(x, w, attrs["pads"], attrs["strides"], attrs["dilations"], attrs["group"],
                     attrs["pad_value"])
    y = np.zeros(acc.shape, dtype=np.int64)
    ties = 0
    for idx in itertools.product(*(range(d) for d in acc.shape)):
        c = idx[1]
        a = acc[idx] + int(bias[c])
        v = a * attrs["mult"][c]
        if v < 0 and attrs["mult_neg"] is not None:
            v = a * attrs["mult_neg"][c]
        if skip is not None:
            v += (int(skip[idx]) - attrs["skip_zp"]) * attrs["skip_mult"][c]
        s = attrs["shift"][c]
        y[idx] = ref_requant(v, s, attrs["zp"], attrs["lo"], attrs["hi"], attrs["rounding"])
        ties += s > 0 and v % (1 << s) == 1 << (s - 1) and attrs["lo"] < y[idx] < attrs["hi"]
    return y, ties


def qconv_case(rounding: str, group: int = 1):
    x = RNG.integers(-128, 128, size=(2, 4, 6, 7), dtype=np.int64)
    w = RNG.integers(-127, 128, size=(6, 4 // group, 3, 3), dtype=np.int64)
    w[0] = RNG.integers(-1, 2, size=w.shape[1:])  # channel 0 stays in range: in-range rounding ties
    bias = RNG.integers(-3000, 3000, size=6, dtype=np.int64)
    bias[0] = 5
    skip = RNG.integers(-128, 128, size=(2, 6, 3, 5), dtype=np.int64)
    attrs = {
        "strides": (2, 1), "pads": (1, 0, 1, 2), "dilations": (1, 2), "group": group, "pad_value": -5,
        "mult": (2, 5, 1, -7, 9, 2), "mult_neg": (1, 2, 1, -3, 4, 1), "shift": (3, 8, 6, 9, 10, 0),
        "skip_zp": 4, "skip_mult": (1, 160, 32, 448, 1536, 1), "zp": -3, "lo": -128, "hi": 127,
        "rounding": rounding,
    }
    return x, w, bias, skip, attrs


@pytest.mark.parametrize("rounding,group", [("half_even", 1), ("half_up", 1), ("half_even", 2)])
def test_qconv_matches_formula(rounding, group):
    x, w, bias, skip, attrs = qconv_case(rounding, group)
    out = Tensor("y", (1, 6, 3, 5), QType(INT8, 1.0, -3), integer=True)
    y = run_one("QConv", attrs, [("x", x, False), ("w", w, True), ("b", bias, True), ("s", skip, False)], out)
    ref, ties = ref_qconv(x, w, bias, attrs, skip)
    assert y.dtype == np.int64
    assert np.array_equal(y, ref)
    assert ties > 0, "the case must exercise rounding ties"
    assert (ref == -128).any() and (ref == 127).any(), "the case must saturate at both ends"
    other = "half_up" if rounding == "half_even" else "half_even"
    assert not np.array_equal(y, ref_qconv(x, w, bias, {**attrs, "rounding": other}, skip)[0])
    perturbed = y.copy()  # negative control: one code off must be caught
    perturbed[0, 0, 0, 0] += 1
    assert not np.array_equal(perturbed, ref)


def test_qgemm_matches_formula():
    x = RNG.integers(-128, 128, size=(5, 20), dtype=np.int64)
    w = RNG.integers(-127, 128, size=(3, 20), dtype=np.int64)
    bias = RNG.integers(-1000, 1000, size=3, dtype=np.int64)
    attrs = {"mult": (5, 3, 1), "mult_neg": None, "shift": (9, 8, 4), "zp": 2, "lo": 2, "hi": 127,
             "rounding": "half_even"}
    y = run_one("QGemm", attrs, [("x", x, False), ("w", w, True), ("b", bias, True)])
    for n, c in itertools.product(range(5), range(3)):
        acc = int(bias[c]) + sum(int(x[n, k]) * int(w[c, k]) for k in range(20))
        assert y[n, c] == ref_requant(acc * attrs["mult"][c], attrs["shift"][c], 2, 2, 127, "half_even")


# ---- integer pools, add, requant ------------------------------------------------------------------
def test_qmaxpool_matches_naive():
    x = RNG.integers(-128, 128, size=(2, 3, 7, 6), dtype=np.int64)
    attrs = {"kernel": (3, 3), "strides": (2, 2), "pads": (1, 1, 1, 1), "pad_value": -128}
    y = run_one("QMaxPool", attrs, [("x", x, False)])
    ref = np.zeros_like(y)
    for n, c, i, j, _, taps in windows_ref(x, (3, 3), (2, 2), (1, 1, 1, 1), -128):
        ref[n, c, i, j] = max(taps)
    assert np.array_equal(y, ref)


@pytest.mark.parametrize("pads,count_include_pad", [((1, 1, 1, 1), 1), ((0, 0, 0, 0), 0)])
def test_qavgpool_matches_naive(pads, count_include_pad):
    x = RNG.integers(-128, 128, size=(2, 3, 7, 6), dtype=np.int64)
    attrs = {"kernel": (3, 2), "strides": (2, 2), "pads": pads, "count_include_pad": count_include_pad,
             "x_zp": 7, "mult": (11,), "mult_neg": None, "shift": (6,), "zp": -1, "lo": -20, "hi": 20,
             "rounding": "half_even"}
    y = run_one("QAvgPool", attrs, [("x", x, False)])
    ref = np.zeros_like(y)
    for n, c, i, j, _, taps in windows_ref(x, (3, 2), (2, 2), pads, 7):
        ref[n, c, i, j] = ref_requant((sum(taps) - 6 * 7) * 11, 6, -1, -20, 20, "half_even")
    assert np.array_equal(y, ref)
    assert (ref == -20).any() and (ref == 20).any()


def test_qavgpool_rejects_exclusive_count_over_padding():
    x = RNG.integers(-128, 128, size=(1, 1, 4, 4), dtype=np.int64)
    attrs = {"kernel": (3, 3), "pads": (1, 1, 1, 1), "count_include_pad": 0, "x_zp": 0, "mult": (1,),
             "shift": (3,), "zp": 0, "lo": -128, "hi": 127}
    with pytest.raises(ValueError, match="count_include_pad"):
        run_one("QAvgPool", attrs, [("x", x, False)])


def test_qadd_matches_formula():
    a = RNG.integers(-128, 128, size=(3, 4, 5, 5), dtype=np.int64)
    b = RNG.integers(0, 256, size=(3, 4, 5, 5), dtype=np.int64)
    attrs = {"a_zp": (-3,), "b_zp": (128,), "a_mult": (300,), "b_mult": (-77,), "mult": None,
             "shift": (8,), "zp": 5, "lo": -128, "hi": 127, "rounding": "half_up"}
    y = run_one("QAdd", attrs, [("a", a, False), ("b", b, False)])
    ref = np.vectorize(lambda p, q: ref_requant((int(p) + 3) * 300 + (int(q) - 128) * -77, 8, 5, -128, 127,
                                                "half_up"))(a, b)
    assert np.array_equal(y, ref)
    assert (ref == -128).any() and (ref == 127).any()


def test_qrequant_per_channel_with_mult_neg():
    x = RNG.integers(-2000, 2000, size=(2, 3, 4), dtype=np.int64)
    attrs = {"x_zp": 10, "axis": 2, "mult": (3, 7, 1, 5), "mult_neg": (1, 2, 1, 1), "shift": (4, 5, 2, 3),
             "zp": 0, "lo": -128, "hi": 127, "rounding": "half_even"}
    y = run_one("QRequant", attrs, [("x", x, False)])
    ref = np.zeros_like(y)
    for idx in itertools.product(*(range(d) for d in x.shape)):
        c = idx[2]
        d = int(x[idx]) - 10
        v = d * attrs["mult"][c] if d * attrs["mult"][c] >= 0 else d * attrs["mult_neg"][c]
        ref[idx] = ref_requant(v, attrs["shift"][c], 0, -128, 127, "half_even")
    assert np.array_equal(y, ref)


# ---- exact matmul ---------------------------------------------------------------------------------
def test_exact_int_matmul_below_bound_uses_float_and_is_exact():
    a = RNG.integers(-(1 << 20), 1 << 20, size=(50, 300), dtype=np.int64)
    b = RNG.integers(-(1 << 20), 1 << 20, size=(300, 7), dtype=np.int64)
    assert float_product_is_exact(a, b)  # 300·2**40 < 2**53
    assert np.array_equal(exact_int_matmul(a, b), a @ b)
    assert np.array_equal(exact_int_matmul(a.astype(np.float64), b), a @ b)


def test_exact_int_matmul_above_bound_falls_back():
    a = RNG.integers(-(1 << 40), 1 << 40, size=(20, 64), dtype=np.int64)
    b = RNG.integers(-(1 << 16), 1 << 16, size=(64, 5), dtype=np.int64)
    assert not float_product_is_exact(a, b)
    exact = a @ b
    assert not np.array_equal((a.astype(np.float64) @ b.astype(np.float64)).astype(np.int64), exact)
    assert np.array_equal(exact_int_matmul(a, b), exact)
    assert exact_int_matmul(a, b).dtype == np.int64


def test_exact_int_matmul_batched_and_negative_control():
    a = RNG.integers(-128, 128, size=(3, 10, 9), dtype=np.int64)
    b = RNG.integers(-128, 128, size=(3, 9, 4), dtype=np.int64)
    got = exact_int_matmul(a, b)
    assert np.array_equal(got, np.matmul(a, b))
    got[1, 2, 3] += 1
    assert not np.array_equal(got, np.matmul(a, b))


# ---- executor -------------------------------------------------------------------------------------
def small_int_graph() -> Graph:
    xq = QType(INT8, 0.1, 0)
    w = RNG.integers(-127, 128, size=(4, 3, 3, 3), dtype=np.int64)
    tensors = [
        Tensor("x", (1, 3, 6, 6)),
        Tensor("xq", (1, 3, 6, 6), xq, integer=True),
        Tensor("w", (4, 3, 3, 3), QType(INT8, 0.01), w, integer=True),
        Tensor("b", (4,), QType(INT32, 0.001), np.arange(4, dtype=np.int64) * 100, integer=True),
        Tensor("yq", (1, 4, 6, 6), QType(INT8, 0.2, 0), integer=True),
        Tensor("y", (1, 4, 6, 6)),
    ]
    attrs = {"pads": (1, 1, 1, 1), "pad_value": 0, "mult": (5,) * 4, "shift": (10,) * 4, "zp": 0,
             "lo": 0, "hi": 127}
    nodes = (
        Node("q", "QuantizeInput", ("x",), ("xq",), {"rounding": "half_even"}),
        Node("c", "QConv", ("xq", "w", "b"), ("yq",), with_epilogue("QConv", attrs)),
        Node("d", "DequantizeOutput", ("yq",), ("y",)),
    )
    return Graph("small", nodes, {t.name: t for t in tensors}, ("x",), ("y",))


def test_run_graph_keep_returns_intermediates():
    g = small_int_graph()
    x = RNG.normal(size=(5, 3, 6, 6))
    plain = run_graph(g, x)
    assert list(plain) == ["y"] and plain["y"].shape == (5, 4, 6, 6)
    everything = run_graph(g, {"x": x}, keep=True)
    assert set(everything) == {"xq", "yq", "y"}
    assert everything["xq"].dtype == np.int64 and everything["yq"].dtype == np.int64
    np.testing.assert_allclose(everything["y"], 0.2 * everything["yq"])
    named = run_graph(g, x, keep={"xq"})
    assert set(named) == {"y", "xq"}
    assert np.array_equal(named["xq"], everything["xq"])


def test_every_op_has_a_kernel_and_unknown_ops_cannot_be_built():
    g = small_int_graph()
    assert set(KERNELS) == set(Op)  # the golden model runs every op of the schema
    with pytest.raises(ValueError, match="NoSuchOp"):
        Node("n", "NoSuchOp", ("x",), ("y",))
    with pytest.raises(ValueError, match="shape"):
        run_graph(g, np.zeros((1, 3, 5, 6)))
    assert Node("n", "QConv", ("x",), ("y",)).op is Op.QCONV  # an op's name is converted to the Op


def test_conv_batch_chunking_is_invisible(monkeypatch):
    import hlsgen.golden.window as window

    x, w, bias, skip, attrs = qconv_case("half_even", 2)
    out = Tensor("y", (1, 6, 3, 5), QType(INT8, 1.0, -3), integer=True)
    inputs = [("x", x, False), ("w", w, True), ("b", bias, True), ("s", skip, False)]
    whole = run_one("QConv", attrs, inputs, out)
    monkeypatch.setattr(window, "IM2COL_BLOCK", 1)  # one image per chunk
    assert np.array_equal(run_one("QConv", attrs, inputs, out), whole)

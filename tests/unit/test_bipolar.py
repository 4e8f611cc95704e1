"""Bipolar (1-bit) activations and weights, as QONNX defines them: x >= 0 -> +1, else -1 (issue 7).

The layer before a bipolar quantizer gets a sign epilogue: the bias rounded toward the threshold
(numerics.sign_bias) makes `acc >= 0` exactly `v >= 0`, and y = clamp(1 + 2·acc, -1, 1). The input
preprocessing of Brevitas TFC models (x·2 − 1 before the first quantizer) runs on the host.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx_builders import init, model, node, vi

from hlsgen import compile_model, run_golden
from hlsgen.frontend.from_onnx import from_onnx_model
from hlsgen.numerics import quantize_bias, sign_bias

QONNX = "qonnx.custom_op.general"


@pytest.mark.parametrize("scale", [0.37, -0.37])
def test_sign_bias_is_exact_at_the_threshold(scale: float) -> None:
    b = np.array([0.5 * scale * 2.6, -0.5 * scale * 2.6, 0.1 * scale, 3.0 * scale])
    n = np.arange(-20, 21)[:, None]
    real_nonneg = scale * (n + b / scale) >= 0
    code = sign_bias(b, np.full(4, scale))
    fires = (n + code >= 0) if scale > 0 else (n + code <= 0)
    assert np.array_equal(fires, real_nonneg)
    rounded = quantize_bias(b, np.full(4, scale))  # negative control: round-to-nearest moves the threshold
    fires_rounded = (n + rounded >= 0) if scale > 0 else (n + rounded <= 0)
    assert not np.array_equal(fires_rounded, real_nonneg)


def tfc_like(seed: int = 0) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """x -> Mul 2 -> Sub 1 -> BipolarQuant -> MatMul(bipolar W1 via Transpose) -> BatchNorm ->
    BipolarQuant -> MatMul(bipolar W2 via Transpose) -> BatchNorm -> BipolarQuant (output)."""
    rng = np.random.default_rng(seed)
    p = {"w1": rng.standard_normal((16, 24)), "w2": rng.standard_normal((5, 16)),
         "g1": rng.uniform(0.5, 2, 16) * rng.choice([-1, 1], 16), "b1": rng.standard_normal(16),
         "m1": rng.standard_normal(16), "v1": rng.uniform(0.5, 2, 16),
         "g2": rng.uniform(0.5, 2, 5), "b2": rng.standard_normal(5), "m2": rng.standard_normal(5),
         "v2": rng.uniform(0.5, 2, 5)}
    p = {k: v.astype(np.float32) for k, v in p.items()}
    nodes = [node("Mul", ["x", "two"], ["x2"]), node("Sub", ["x2", "one"], ["x3"]),
             node("BipolarQuant", ["x3", "s"], ["a0"], domain=QONNX),
             node("BipolarQuant", ["w1", "s"], ["w1q"], domain=QONNX),
             node("Transpose", ["w1q"], ["w1t"], perm=[1, 0]),
             node("MatMul", ["a0", "w1t"], ["h1"]),
             node("BatchNormalization", ["h1", "g1", "b1", "m1", "v1"], ["n1"]),
             node("BipolarQuant", ["n1", "s"], ["a1"], domain=QONNX),
             node("BipolarQuant", ["w2", "s"], ["w2q"], domain=QONNX),
             node("Transpose", ["w2q"], ["w2t"], perm=[1, 0]),
             node("MatMul", ["a1", "w2t"], ["h2"]),
             node("BatchNormalization", ["h2", "g2", "b2", "m2", "v2"], ["n2"]),
             node("BipolarQuant", ["n2", "s"], ["y"], domain=QONNX)]
    inits = [init(k, v) for k, v in p.items()] + [init("two", 2.0), init("one", 1.0), init("s", 1.0)]
    return model(nodes, [vi("x", [1, 24])], [vi("y", [1, 5])], inits, opset=11, extra_domains=[QONNX]), p


def reference(x: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
    """qonnx's execute_onnx semantics in float64."""
    def sign(v: np.ndarray) -> np.ndarray:
        return np.where(v >= 0, 1.0, -1.0)

    def bn(v: np.ndarray, k: str) -> np.ndarray:
        g, b, m, var = (p[f"{n}{k}"].astype(np.float64) for n in "gbmv")
        return (v - m) / np.sqrt(var + 1e-5) * g + b

    a0 = sign(x.astype(np.float64) * 2 - 1)
    a1 = sign(bn(a0 @ sign(p["w1"]).T, "1"))
    return sign(bn(a1 @ sign(p["w2"]).T, "2"))


def test_bipolar_mlp_matches_qonnx_semantics_exactly_without_calibration() -> None:
    m, p = tfc_like()
    c = compile_model(from_onnx_model(m))  # fully quantized: no calibration data
    assert any(n.kind == "host_head" for n in c.graph.notes)  # x·2 − 1 runs on the host
    assert [n.op for n in c.graph.nodes if n.op.startswith("Q")] == ["QuantizeInput", "QGemm", "QGemm"]
    x = np.random.default_rng(5).uniform(0, 1, (64, 24)).astype(np.float32)
    codes = run_golden(c, x, integer=True)[0]
    assert set(np.unique(codes)) <= {-1, 1}
    assert np.array_equal(codes, reference(x, p).astype(np.int64))
    (real,) = run_golden(c, x)
    assert np.array_equal(real, reference(x, p))


def tfc_w1a2() -> onnx.ModelProto:
    """TFC-w1a2: 2-bit narrow activations (scale 1: {-1, 0, 1}) times bipolar weights, BatchNorm in
    between: the accumulator grid is 1.0, so the folded float bias needs the post-multiplier term."""
    m, _ = tfc_like(seed=3)
    for n in m.graph.node:
        if n.op_type == "BipolarQuant" and n.input[0] not in ("w1", "w2"):
            n.op_type = "Quant"
            n.input.extend(["z", "bits2"])
            n.attribute.extend([onnx.helper.make_attribute("signed", 1), onnx.helper.make_attribute("narrow", 1)])
    m.graph.initializer.extend([onnx.numpy_helper.from_array(np.array(0.0, np.float32), "z"),
                                onnx.numpy_helper.from_array(np.array(2.0, np.float32), "bits2")])
    return m


def test_coarse_accumulator_grid_keeps_the_float_bias(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every layer's codes equal the source model's fake-quantized values exactly (64 samples); the
    negative control drops the post-multiplier bias remainder and codes differ."""
    from hlsgen import intermediates
    from hlsgen.golden import run_graph
    from hlsgen.numerics import dequantize
    from hlsgen.passes import quantize_layer

    x = np.random.default_rng(6).uniform(0, 1, (64, 24)).astype(np.float32)

    def mismatches() -> int:
        c = compile_model(from_onnx_model(tfc_w1a2()))
        src = c.stages[0][1]
        ref = run_graph(src, x, keep={o for n in src.nodes for o in n.outputs})
        ours = intermediates(c, x)
        bad, compared = 0, 0
        for n in c.graph.nodes:
            t = c.graph.tensor(n.outputs[0])
            for alias in (a for a in t.aliases if a in ref and n.op == "QGemm"):
                bad += int(np.sum(dequantize(ours[n.outputs[0]], t.qtype) != ref[alias]))
                compared += 1
        assert compared >= 2
        return bad

    assert mismatches() == 0
    monkeypatch.setattr(quantize_layer, "_bias_remainder", lambda *args: None)
    assert mismatches() > 0


def test_inspect_shows_the_host_head() -> None:
    from hlsgen.pipeline import float_stage
    from hlsgen.report.describe import describe

    source, fused, _, _ = float_stage(from_onnx_model(tfc_like()[0]), None)
    text = describe(source, fused)
    head = next(line for line in text.splitlines() if line.startswith("host-side head"))
    assert "(Affine)" in head
    layers = text.split("hardware layers after folding and fusion:\n")[1].split("host-side tail")[0]
    assert "Affine" not in layers and layers.count("Gemm") == 2

"""The op schema (hlsgen/ir/ops.py): one table of ops, arities and attribute defaults, enforced by
verify after every pass, so a misspelt attribute or an unknown rounding mode cannot be silently
replaced by a kernel's default."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from hlsgen.golden import KERNELS
from hlsgen.ir import Graph, IntType, Node, QType, Tensor, VerifyError, verify
from hlsgen.ir.epilogue import Epilogue, Step
from hlsgen.ir.ops import SPECS, Op, node_problems


def test_every_op_has_a_golden_kernel_and_every_kernel_an_op() -> None:
    assert {str(op) for op in Op} == set(KERNELS)


def test_defaults_come_from_the_schema() -> None:
    conv = Node("c", "Conv", ("x", "w", "b"), ("y",), {})
    assert conv.attr("group") == 1 and conv.attr("act") == "none" and conv.attr("clip_max") == math.inf
    assert conv.attr("group", 7) == 7  # an explicit default still wins
    assert Node("q", "QRequant", ("x",), ("y",), {}).attr("rounding") == "half_even"
    assert Node("s", "Softmax", ("x",), ("y",), {}).attr("axis") == -1
    assert Node("a", "Affine", ("x", "a", "b"), ("y",), {}).attr("axis") == 1


def _requant_graph(**attrs: object) -> Graph:
    qt = QType(IntType(8, True), 0.1, 0)
    t = {n: Tensor(n, (1, 4), qt, integer=True) for n in ("x", "y")}
    base = {"x_zp": 0, "mult": (1,) * 4, "shift": (0,) * 4, "zp": 0, "lo": -128, "hi": 127}
    node = Node("r", "QRequant", ("x",), ("y",), {**base, **attrs})
    return Graph("g", (node,), t, ("x",), ("y",))


def test_verify_accepts_a_well_formed_node() -> None:
    verify(_requant_graph(rounding="half_up"))


@pytest.mark.parametrize(("attrs", "message"), [
    ({"rounding": "half_down"}, "rounding='half_down' is not one of"),
    ({"roundng": "half_up"}, "unknown attributes ['roundng']"),
])
def test_verify_refuses_what_a_kernel_would_silently_default(attrs: dict, message: str) -> None:
    with pytest.raises(VerifyError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        verify(_requant_graph(**attrs))


def test_arity_unknown_op_and_required_attributes() -> None:
    assert node_problems("Conv", 2, {}) == ["2 inputs (takes 3..4)"]
    assert node_problems("Frobnicate", 1, {}) == ["unknown op 'Frobnicate'"]
    assert node_problems("Transpose", 1, {}) == ["missing attributes ['perm']"]
    assert all(spec.inputs[0] <= spec.inputs[1] for spec in SPECS.values())
    attrs = {k: np.zeros(1) for k, v in SPECS[Op.QCONV].attrs.items() if k not in ("act", "post_act", "epilogue")}
    epilogue = Epilogue(Step((1,), (0,), 0, -128, 127))
    assert not node_problems("QConv", 3, {**attrs, "epilogue": epilogue})
    assert node_problems("QConv", 3, {**attrs, "epilogue": {"mult": (1,)}}) == ["epilogue is a dict, not an Epilogue"]
    with pytest.raises(ValueError):
        Epilogue(Step((1,), (0,), 0, -128, 127), rounding="half_down")  # an unknown rounding cannot be built
    assert epilogue.problems(4) == [] and Epilogue(Step((1, 2), (0,), 0, 0, 1)).problems(4) == [
        "epilogue tables of [1, 2] entries for 4 channels"]


def test_rounding_is_an_enum_and_unknown_modes_raise() -> None:
    from hlsgen.ir.types import Rounding
    from hlsgen.numerics import ROUNDINGS, round_shift

    assert tuple(r.value for r in Rounding) == ROUNDINGS and Rounding("half_up") is Rounding.HALF_UP
    with pytest.raises(ValueError):
        Rounding("half_down")
    assert round_shift(np.array([5]), 1, Rounding.HALF_UP).tolist() == [3]
    assert round_shift(np.array([5]), 1, Rounding.HALF_EVEN).tolist() == [2]
    with pytest.raises(ValueError, match="unknown rounding"):
        round_shift(np.array([5]), 1, "half_down")  # type: ignore[arg-type]


def _string_constants(root: Path) -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append((str(path.relative_to(root.parent)), node.lineno, node.value))
    return found


def test_integer_ops_are_named_by_the_enum_only() -> None:
    """hlsgen's own integer ops (QConv, ...) are spelt once, in ir/ops.py: everywhere else they are
    Op members or named groups, so a renamed or added op cannot miss a string set somewhere."""
    integer_ops = {str(op) for op in Op if op is Op.QUANTIZE_INPUT or op is Op.DEQUANTIZE_OUTPUT
                   or (op.value.startswith("Q") and op.value[1].isupper())}
    assert {"QConv", "QGemm", "QLut", "QuantizeInput"} <= integer_ops
    package = Path(__file__).resolve().parents[2] / "hlsgen"
    spelt = [(f, line, v) for f, line, v in _string_constants(package)
             if v in integer_ops and f != "hlsgen/ir/ops.py"]
    assert spelt == []
    # negative control: the scan sees a literal where there is one
    assert any(v == "QConv" for f, _, v in _string_constants(package) if f == "hlsgen/ir/ops.py")

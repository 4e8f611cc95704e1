"""Every hardware layer kind is complete: a golden kernel for its IR ops, a module in hw/layers/ with its
lowering, foldings, cycle model, data dependencies and resource counts, an HLS and a Verilog renderer, and
a row in docs/architecture.md. One small net holds a layer of every kind; each is rendered by both
backends and costed by the resource model. Layer kinds are compared as `Kind` members, never as strings."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from onnx_builders import init, model, node, vi  # noqa: E402

from hlsgen import compile_model  # noqa: E402
from hlsgen.backends import hls_layers  # noqa: E402
from hlsgen.backends.hls_layers import layer_code  # noqa: E402
from hlsgen.backends.verilog_layers import unit  # noqa: E402
from hlsgen.frontend.from_onnx import from_onnx_model  # noqa: E402
from hlsgen.golden import KERNELS  # noqa: E402
from hlsgen.hw.dataflow import build_dataflow  # noqa: E402
from hlsgen.hw.layers import MODULES  # noqa: E402
from hlsgen.hw.model import Dataflow, Kind  # noqa: E402
from hlsgen.hw.resources import layer_resources  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ("lower", "cycles", "options", "last_input_pixel", "requant_shape", "features", "mac_dsp", "memories",
         "out_folds", "in_folds")
INSERTED = (Kind.REORDER, Kind.CONVERT)  # kinds hw/ inserts, not lowered from an IR node
# the unit each kind renders to: (Verilog module, HLS kernel function)
UNITS = {Kind.CONV: ("hg_mvu", "conv_mvu"), Kind.DWCONV: ("hg_mvu", "dwconv_mvu"), Kind.GEMM: ("hg_mvu", "dense"),
         Kind.MAXPOOL: ("hg_pool", "maxpool"), Kind.AVGPOOL: ("hg_pool", "avgpool"),
         Kind.ADD: ("hg_eltwise", "add_layer"), Kind.REQUANT: ("hg_eltwise", "requant_layer"),
         Kind.LUT: ("hg_lut", "lut_layer"), Kind.REORDER: ("hg_reorder", "reorder_layer"),
         Kind.CONVERT: (("hg_split", "hg_join"), ("split", "join")),
         Kind.CONCAT: ("hg_concat", "concat_layer"), Kind.SLICE: ("hg_slice", "slice_layer"),
         Kind.UPSAMPLE: ("hg_upsample", "upsample")}


def every_kind_net():
    """conv -> dwconv -> maxpool -> avgpool; add(maxpool, avgpool) -> LeakyRelu (a requant) -> Resize
    x(1, 2) (an upsample) -> Sigmoid (a table) -> concat(its channels 2..5 (a slice), itself) ->
    Transpose -> 1x1 conv (a reorder in front) -> Flatten -> Gemm."""
    rng = np.random.default_rng(7)
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", ["c1"], ["r1"]),
             node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8),
             node("MaxPool", ["c2"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
             node("AveragePool", ["m"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
             node("Add", ["m", "a"], ["s"]),
             node("LeakyRelu", ["s"], ["l"], alpha=0.125),
             node("Resize", ["l", "", "sc"], ["u"], mode="nearest"),
             node("Sigmoid", ["u"], ["g"]),
             node("Slice", ["g", "starts", "ends", "axes"], ["gs"]),
             node("Concat", ["gs", "g"], ["gc"], axis=1),
             node("Transpose", ["gc"], ["t"], perm=[0, 1, 3, 2]),
             node("Conv", ["t", "w3", "b3"], ["c3"], kernel_shape=[1, 1]),
             node("Flatten", ["c3"], ["f"]),
             node("Gemm", ["f", "w4", "b4"], ["y"], transB=1)]
    inits = [init("w1", rng.standard_normal((8, 4, 3, 3)) * 0.3), init("b1", rng.standard_normal(8) * 0.1),
             init("w2", rng.standard_normal((8, 1, 3, 3)) * 0.3), init("b2", rng.standard_normal(8) * 0.1),
             init("starts", np.array([2]), np.int64), init("ends", np.array([6]), np.int64),
             init("axes", np.array([1]), np.int64), init("sc", [1, 1, 1, 2]),
             init("w3", rng.standard_normal((4, 12, 1, 1)) * 0.3), init("b3", rng.standard_normal(4) * 0.1),
             init("w4", rng.standard_normal((5, 4 * 6 * 4)) * 0.3), init("b4", rng.standard_normal(5) * 0.1)]
    return model(nodes, [vi("x", [1, 4, 8, 6])], [vi("y", [1, 5])], inits, opset=13)


@pytest.fixture(scope="module")
def dataflow() -> Dataflow:
    m = every_kind_net()
    calib = np.random.default_rng(3).standard_normal((16, 4, 8, 6)).astype(np.float32)
    c = compile_model(from_onnx_model(m, "every_kind"), calib=calib)
    return build_dataflow(c.graph, c.config.hw)


def missing_parts(kind: Kind, renderers: dict) -> list[str]:
    """What a kind lacks of the parts every kind has."""
    module = MODULES.get(kind)
    if module is None:
        return ["a module in hw/layers/"]
    name = module.__name__.rsplit(".", 1)[1]
    lacks = [f"hw/layers/{name}.{h}" for h in HOOKS if not callable(getattr(module, h, None))
             and not (h == "lower" and kind in INSERTED)]
    lacks += [f"a golden kernel for {op}" for op in module.OPS if op not in KERNELS]
    if kind not in renderers:
        lacks.append("an HLS renderer (hls_layers.KINDS)")
    docs = (ROOT / "docs" / "architecture.md").read_text()
    if f"| `{kind}` |" not in docs:
        lacks.append("a row in docs/architecture.md")
    return lacks


def test_every_kind_has_every_part() -> None:
    assert {kind: missing_parts(kind, hls_layers.KINDS) for kind in Kind} == dict.fromkeys(Kind, [])


def test_a_missing_part_is_found() -> None:
    """Negative control: a kind without its HLS renderer is reported."""
    renderers = {k: v for k, v in hls_layers.KINDS.items() if k != Kind.LUT}
    assert missing_parts(Kind.LUT, renderers) == ["an HLS renderer (hls_layers.KINDS)"]


def test_one_net_renders_every_kind_in_both_backends(dataflow: Dataflow) -> None:
    df = dataflow
    assert {lay.kind for lay in df.layers} == set(Kind)
    for lay in df.layers:
        x, out = df.streams[lay.inputs[0]], df.streams[lay.output]
        verilog_module, hls_kernel = UNITS[lay.kind]
        code = layer_code(df, lay)
        if lay.kind == Kind.CONVERT:  # one split or join (hw/stream_folds.py puts them at the ports here)
            assert unit(lay, df, "top").module in verilog_module and code.steps[0]["func"] in hls_kernel, lay.name
        else:
            assert unit(lay, df, "top").module == verilog_module, lay.name
            assert code.kernel.startswith((hls_kernel, "mvu_shared")), lay.name
        cost = layer_resources(lay, x, out)
        assert cost.lut > 0 and cost.ff > 0, lay.name
        assert lay.cycles == MODULES[lay.kind].cycles(lay, x, out) > 0


def _kind_string_comparisons(root: Path) -> list[tuple[str, int]]:
    """`<x>.kind == "conv"`, `<x>.kind in ("conv", ...)` and the like, for the values of Kind."""
    names = {str(k) for k in Kind}
    found = []
    for path in sorted(root.rglob("*.py")):
        for n in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(n, ast.Compare) and isinstance(n.left, ast.Attribute) and n.left.attr == "kind"):
                continue
            consts = [c for comp in n.comparators for c in ast.walk(comp) if isinstance(c, ast.Constant)]
            if any(c.value in names for c in consts):
                found.append((str(path.relative_to(root.parent)), n.lineno))
    return found


def test_layer_kinds_are_compared_as_members(tmp_path: Path) -> None:
    assert _kind_string_comparisons(ROOT / "hlsgen") == []
    # negative control: the scan finds a string comparison where there is one
    (tmp_path / "bad.py").write_text('def f(layer):\n    return layer.kind in ("gemm", "conv")\n')
    assert _kind_string_comparisons(tmp_path) == [(f"{tmp_path.name}/bad.py", 2)]

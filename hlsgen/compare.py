"""Golden model vs onnxruntime, layer by layer, in LSB: what `hlsgen compare` prints.

onnxruntime runs the source ONNX QDQ model with graph optimizations off (ORT_DISABLE_ALL), one thread,
image by image, with every node output exposed. Each integer layer of the compiled graph is then
compared with the onnxruntime integer tensor its output stands for (`Tensor.aliases`), twice:

  fed          the layer's golden kernel run on onnxruntime's own integer inputs: the layer alone;
  end to end   the whole golden model run on the float input: differences accumulate.

The contract is 1 LSB fed for every layer (onnxruntime computes in float32 where the golden model is
exact, so values near a rounding tie may land on either side). End-to-end figures are shown only.
onnxruntime is imported only when a comparison runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from hlsgen.api import Compilation, compile_model, intermediates
from hlsgen.config import Config
from hlsgen.data import load_array
from hlsgen.errors import HlsgenError
from hlsgen.frontend.onnx_ops_common import QONNX_DOMAINS
from hlsgen.golden import KERNELS
from hlsgen.identifiers import shown
from hlsgen.ir import Graph, Node

COMPARED_OPS = ("QConv", "QGemm", "QAdd", "QAvgPool", "QMaxPool", "QRequant")
BOUND_LSB = 1  # every layer, fed onnxruntime's inputs
SYNTHETIC_BATCH = 8
_QDQ_OPS = ("QuantizeLinear", "DequantizeLinear")
_ORT_INPUT_DTYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16}


@dataclass(frozen=True)
class LayerAgreement:
    """One integer layer: worst |golden - onnxruntime| in LSB (output codes)."""

    name: str
    op: str
    outputs: int  # values compared (batch included)
    max_fed: int  # the layer fed onnxruntime's integer inputs
    mismatch_fed: float  # share of those outputs off by >= 1 LSB
    max_end_to_end: int  # the whole golden model on the float input

    @property
    def ok(self) -> bool:
        return self.max_fed <= BOUND_LSB


@dataclass(frozen=True)
class Comparison:
    model: str
    inputs: int
    input_source: str  # the --input file, "calibration data" or "synthetic (seed 0)"
    ort_version: str
    rows: tuple[LayerAgreement, ...]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)


# --- onnxruntime ---------------------------------------------------------------------------------------

def check_ort_runnable(model: onnx.ModelProto, where: str) -> None:
    """Refuse what `compare` cannot run in onnxruntime: QONNX custom ops and float-only models."""
    qonnx = sorted({n.op_type for n in model.graph.node if n.domain in QONNX_DOMAINS})
    if qonnx:
        raise HlsgenError(f"{where}: QONNX model ({', '.join(qonnx)} nodes), which onnxruntime cannot run: "
                          "compare needs an ONNX QDQ model (`hlsgen export-qdq` does not exist yet)")
    if not any(n.op_type in _QDQ_OPS for n in model.graph.node):
        raise HlsgenError(f"{where}: float model (no QuantizeLinear/DequantizeLinear): compare needs an ONNX "
                          "QDQ model; turning a compiled model into one needs `hlsgen export-qdq` (not available yet)")


def ort_integers(model: onnx.ModelProto, x: np.ndarray) -> dict[str, np.ndarray]:
    """Every integer node output onnxruntime computes for batch `x` (run image by image), by name."""
    sess = _session(_expose_all(model))
    inp = sess.get_inputs()[0]
    dtype = _ORT_INPUT_DTYPES.get(inp.type, np.float32)
    names = [o.name for o in sess.get_outputs()]
    runs = []
    for xi in x:
        try:
            runs.append(dict(zip(names, sess.run(names, {inp.name: xi[None].astype(dtype)}), strict=True)))
        except Exception as e:  # onnxruntime's own exception types  # noqa: BLE001
            raise HlsgenError(f"onnxruntime failed to run the model: {_first_line(e)}") from None
    return {k: np.concatenate([r[k] for r in runs]) for k, v in runs[0].items()
            if np.issubdtype(np.asarray(v).dtype, np.integer)}


def ort_version() -> str:
    import onnxruntime

    return str(onnxruntime.__version__)


def _session(model: onnx.ModelProto) -> Any:
    try:
        import onnxruntime as ort
    except ImportError:
        raise HlsgenError("compare needs onnxruntime: pip install onnxruntime") from None
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    try:
        return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        raise HlsgenError(f"onnxruntime cannot load the model: {_first_line(e)}") from None


def _expose_all(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy whose graph outputs are every node output shape inference can type."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001  (then only the declared types are known)
        inferred = model
    typed = {vi.name: vi for vi in (*inferred.graph.value_info, *inferred.graph.output)
             if vi.type.tensor_type.elem_type}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    have = {o.name for o in out.graph.output}
    for node in out.graph.node:
        for name in node.output:
            if name and name not in have and name in typed:
                out.graph.output.append(typed[name])
                have.add(name)
    return out


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


# --- agreement ------------------------------------------------------------------------------------------

def ort_name(g: Graph, tensor: str, ort: Mapping[str, np.ndarray]) -> str:
    """The onnxruntime integer tensor an integer tensor of the compiled graph stands for."""
    names = [a for a in g.tensor(tensor).aliases if a in ort]
    if not names:
        raise HlsgenError(f"no onnxruntime integer tensor stands for {shown(tensor)} "
                          f"(source names {[shown(a) for a in g.tensor(tensor).aliases]})")
    return names[0]


def fed_output(g: Graph, n: Node, ort: Mapping[str, np.ndarray]) -> np.ndarray:
    """The layer's golden kernel on onnxruntime's integer inputs (constants from the graph)."""
    args = []
    for name in n.inputs:
        if not name:
            continue
        t = g.tensor(name)
        if t.data is not None:
            args.append(np.asarray(t.data, dtype=np.int64 if t.integer else np.float64))
        else:
            args.append(ort[ort_name(g, name, ort)].astype(np.int64))
    return KERNELS[n.op](n, g, args)


def compared_layers(g: Graph) -> list[Node]:
    return [n for n in g.nodes if n.op in COMPARED_OPS]


def fed_differences(g: Graph, ort: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """|golden - onnxruntime| per output value of every compared layer, each fed onnxruntime's inputs."""
    return {n.name: np.abs(fed_output(g, n, ort) - ort[ort_name(g, n.outputs[0], ort)].astype(np.int64))
            for n in compared_layers(g)}


def end_to_end_differences(c: Compilation, x: np.ndarray, ort: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """|golden - onnxruntime| per output value of every compared layer, the golden model run alone on `x`."""
    ours = intermediates(c, x)
    g = c.graph
    return {n.name: np.abs(ours[n.outputs[0]] - ort[ort_name(g, n.outputs[0], ort)].astype(np.int64))
            for n in compared_layers(g)}


def agreement_row(n: Node, fed: np.ndarray, end_to_end: np.ndarray) -> LayerAgreement:
    """One layer's row from its fed and end-to-end differences (integers: 0 means equal)."""
    share = float(np.mean(fed >= 1)) if fed.size else 0.0
    return LayerAgreement(n.name, n.op, int(fed.size), int(fed.max(initial=0)), share,
                          int(end_to_end.max(initial=0)))


def agreement_rows(c: Compilation, x: np.ndarray, ort: Mapping[str, np.ndarray]) -> list[LayerAgreement]:
    """Every compared layer's row, onnxruntime's integer tensors `ort` computed on the same batch `x`."""
    fed, e2e = fed_differences(c.graph, ort), end_to_end_differences(c, x, ort)
    return [agreement_row(n, fed[n.name], e2e[n.name]) for n in compared_layers(c.graph)]


def layer_agreement(c: Compilation, model: onnx.ModelProto, x: np.ndarray) -> list[LayerAgreement]:
    """Fed and end-to-end agreement of every integer layer on batch `x` (onnxruntime runs `model`)."""
    return agreement_rows(c, x, ort_integers(model, x))


# --- the command ----------------------------------------------------------------------------------------

def compare_model(model: str | Path, config: Config | str | Path | None = None,
                  calib: str | Path | None = None, inputs: str | Path | None = None) -> Comparison:
    """What `hlsgen compare` does: compile `model`, run it and onnxruntime on a batch, compare."""
    proto = _load_onnx(Path(model))
    c = compile_model(model, config, calib)
    if inputs is not None:
        x, source = load_array(inputs, c.source, "input"), str(inputs)
    elif c.sample_is_synthetic:
        x, source = c.sample[:SYNTHETIC_BATCH], "synthetic N(0, 1), seed 0"
    else:
        x, source = c.sample, "calibration data"
    if len(x) == 0:
        raise HlsgenError(f"{inputs}: the input batch is empty")
    rows = layer_agreement(c, proto, x)
    if not rows:
        raise HlsgenError(f"{model}: no integer layer to compare")
    return Comparison(c.source.name, len(x), source, ort_version(), tuple(rows))


def _load_onnx(path: Path) -> onnx.ModelProto:
    if path.suffix.lower() in (".yaml", ".yml"):
        raise HlsgenError(f"{path}: compare needs an ONNX QDQ model; a YAML model would need "
                          "`hlsgen export-qdq` (not available yet)")
    if path.suffix.lower() != ".onnx":
        raise HlsgenError(f"{path}: unknown model format (compare takes an ONNX QDQ model, .onnx)")
    if not path.is_file():
        raise HlsgenError(f"{path}: model file not found")
    try:
        proto = onnx.load(str(path))
    except Exception as e:  # noqa: BLE001  (protobuf decode errors have no common base)
        raise HlsgenError(f"{path}: not a readable ONNX model ({_first_line(e)})") from None
    check_ort_runnable(proto, str(path))
    return proto


# --- output ---------------------------------------------------------------------------------------------

HEADERS = ("layer", "op", "worst fed", "off by >=1", "worst end to end")
NAME_WIDTH = 60  # longer layer names are shortened in the middle (the JSON has them whole)


def _short(name: str) -> str:
    text = shown(name)
    if len(text) <= NAME_WIDTH:
        return text
    head = (NAME_WIDTH - 3) // 2
    return text[:head] + "..." + text[len(text) - (NAME_WIDTH - 3 - head):]


def render_table(cmp: Comparison) -> str:
    """The table `hlsgen compare` prints: one row per layer, differences in LSB of the output codes."""
    cells = [(_short(r.name), r.op, str(r.max_fed), f"{100 * r.mismatch_fed:.2f}%", str(r.max_end_to_end))
             for r in cmp.rows]
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(HEADERS)]
    left = (True, True, False, False, False)

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if lj else c.rjust(w) for c, w, lj in zip(row, widths, left, strict=True)).rstrip()

    bad = [r for r in cmp.rows if not r.ok]
    verdict = (f"PASS: every layer within {BOUND_LSB} LSB of onnxruntime when fed its inputs" if not bad else
               f"FAIL: {len(bad)} layer(s) beyond {BOUND_LSB} LSB fed: "
               + ", ".join(f"{shown(r.name)} ({r.max_fed})" for r in bad))
    head = (f"compare {shown(cmp.model)} vs onnxruntime {cmp.ort_version} (ORT_DISABLE_ALL, 1 thread): "
            f"{cmp.inputs} input(s), {cmp.input_source}; |golden - onnxruntime| in LSB")
    return "\n".join([head, line(HEADERS), *(line(row) for row in cells), verdict])


def to_json(cmp: Comparison) -> dict[str, Any]:
    return {"model": cmp.model, "inputs": cmp.inputs, "input_source": cmp.input_source,
            "onnxruntime": cmp.ort_version, "bound_lsb": BOUND_LSB, "ok": cmp.ok,
            "layers": [{**asdict(r), "ok": r.ok} for r in cmp.rows]}


def write_json(path: str | Path, cmp: Comparison) -> None:
    """The table as JSON, written atomically."""
    p = Path(path)
    if p.is_dir():
        raise HlsgenError(f"{p}: is a folder; name a .json file")
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(to_json(cmp), indent=2) + "\n")
        os.replace(tmp, p)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise HlsgenError(f"{p}: cannot write ({e.strerror or e})") from None

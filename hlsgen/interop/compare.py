"""Golden model vs onnxruntime, layer by layer, in LSB: what `hlsgen compare` prints.

onnxruntime runs, with graph optimizations off (ORT_DISABLE_ALL), one thread, image by image and
every node output exposed, either the source model itself when it is ONNX QDQ, or else (float ONNX,
QONNX, YAML) the compiled integer graph exported as a QDQ model (hlsgen.interop.export_qdq). Each integer
layer of the compiled graph is then compared with the onnxruntime integer tensor its output stands
for (its own name in an export, else `Tensor.aliases`), twice:

  fed          each rounding point fed onnxruntime's own integer inputs for it: the layer's golden
               kernel on onnxruntime's layer inputs; for a two-step layer (the model's intermediate
               quantizer t kept, numerics.md §8) step 1 against onnxruntime's t and step 2 fed that t;
  end to end   the whole golden model run on the float input: differences accumulate.

The contract is 1 LSB fed at every rounding point (onnxruntime computes in float32 where the golden
model is exact, so values near a rounding tie may land on either side); nothing is excluded.
End-to-end figures, and a two-step layer fed only its inputs (`max_fed_fused`, where a step-1 tie is
amplified by step 2's gain), are shown, not graded.
Against the source QDQ model this checks hlsgen's reading of the model; against an export it checks
the integer kernels (padding, windows, rounding, clamps) against onnxruntime's float ones.
onnxruntime is imported only when a comparison runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from hlsgen import numerics
from hlsgen.config.compile import Config
from hlsgen.data import load_array
from hlsgen.errors import HlsgenError
from hlsgen.golden import KERNELS
from hlsgen.golden.int_ops import along_axis, requant_step
from hlsgen.interop.ort import ort_integers, ort_reference, ort_version
from hlsgen.ir import Graph, Node, Op
from hlsgen.ir.epilogue import Epilogue, two_step
from hlsgen.ir.ops import INTEGER_LAYER_OPS, LAYOUT_OPS, MVU_OPS
from hlsgen.passes.absorb_qdq import FORK_REQUANT
from hlsgen.passes.calibrate import EXACT_OUTPUT
from hlsgen.pipeline import Compilation, compile_model, intermediates
from hlsgen.support.identifiers import shown
from hlsgen.support.outfile import write_owned_file

__all__ = ["BOUND_LSB", "COMPARED_OPS", "Comparison", "LayerAgreement", "agreement_rows", "compare_model",
           "compared_layers",
           "end_to_end_differences", "fed_differences", "layer_agreement", "ort_integers", "ort_name",
           "render_table", "step_differences", "to_json", "write_json"]

COMPARED_OPS = INTEGER_LAYER_OPS
# exact on codes: hlsgen's own output of one (before the QRequant to a model's other quantizer,
# passes/quantize._passthrough) has no onnxruntime counterpart and is the op on onnxruntime's input
CODE_OPS = (*LAYOUT_OPS, Op.QMAXPOOL, Op.QRESIZE)
BOUND_LSB = 1  # every rounding point, fed onnxruntime's inputs
SYNTHETIC_BATCH = 8


@dataclass(frozen=True)
class LayerAgreement:
    """One integer layer: |golden - onnxruntime| in LSB of the codes, worst and share off by >= 1."""

    name: str
    op: str
    steps: int  # roundings checked: 2 for a two-step epilogue (the model's intermediate quantizer kept)
    outputs: int  # values compared, over its steps and the batch
    max_fed: int  # each rounding point fed onnxruntime's integer inputs for it
    mismatch_fed: float  # share of those values off by >= 1 LSB
    max_fed_fused: int  # the fused layer fed its layer inputs only (a two-step layer amplifies step-1 ties)
    max_end_to_end: int  # the whole golden model on the float input

    @property
    def ok(self) -> bool:
        return self.max_fed <= BOUND_LSB


@dataclass(frozen=True)
class Comparison:
    model: str
    reference: str  # what onnxruntime ran: the source QDQ model, or the export of the compiled graph
    inputs: int
    input_source: str  # the --input file, "calibration data" or "synthetic ..."
    ort_version: str
    rows: tuple[LayerAgreement, ...]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)


# --- agreement ------------------------------------------------------------------------------------------

def ort_name(g: Graph, tensor: str, ort: Mapping[str, np.ndarray]) -> str:
    """The onnxruntime integer tensor an integer tensor of the compiled graph stands for."""
    names = _names(g, tensor, ort)
    if not names:
        raise HlsgenError(f"no onnxruntime integer tensor stands for {shown(tensor)} "
                          f"(source names {[shown(a) for a in g.tensor(tensor).aliases]})")
    return names[0]


def _names(g: Graph, tensor: str, ort: Mapping[str, np.ndarray]) -> list[str]:
    return [a for a in (tensor, *g.tensor(tensor).aliases) if a in ort]  # own name: an exported model


def ort_codes(g: Graph, tensor: str, ort: Mapping[str, np.ndarray]) -> np.ndarray:
    """onnxruntime's codes of an integer tensor: its counterpart's, or for a tensor hlsgen made with a
    Reshape/Transpose (a 1-D conv run as 2-D) or a pass-through op before its requant (CODE_OPS), that
    op applied to its input's codes."""
    p = g.producer(tensor)
    if not _names(g, tensor, ort) and p is not None and (p.op in CODE_OPS or concat_input_requant(g, p)):
        return KERNELS[p.op](p, g, [ort_codes(g, p.inputs[0], ort)])
    if not _names(g, tensor, ort) and p is not None and tensor in forked_tensors(g):
        return _exact_value(g, p, ort)
    return ort[ort_name(g, tensor, ort)].astype(np.int64)


def _exact_value(g: Graph, p: Node, ort: Mapping[str, np.ndarray]) -> np.ndarray:
    """A forked tensor's exact value from onnxruntime's codes: its producer fed its inputs, or for a
    two-step layer its second step fed onnxruntime's intermediate t (so a step-1 near-tie, which
    step 2's gain would amplify, is not counted against the branches)."""
    mid = mid_name(g, p, ort) if p.op in MVU_OPS and two_step(p) else None
    if mid is not None:
        return _second_step(p, ort[mid].astype(np.int64), _fed_inputs(g, p, ort)[3:])
    return KERNELS[p.op](p, g, _fed_inputs(g, p, ort))


def forked_tensors(g: Graph) -> set[str]:
    """Tensors the model quantizes differently on several branches: hlsgen holds their exact value,
    onnxruntime none (passes/absorb_qdq.FORK_REQUANT); their branches are compared fed through them."""
    return {str(note.data["tensor"]) for note in g.notes if note.kind == FORK_REQUANT}


def _output_view(g: Graph, tensor: str, ort: Mapping[str, np.ndarray]
                 ) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """onnxruntime's codes of a layer output, and how to bring ours to them: through the Reshape/
    Transpose chain hlsgen added after the layer when the output itself has no counterpart."""
    chain: list[Node] = []
    p = g.producer(tensor)
    if not _names(g, tensor, ort) and p is not None and p.op in CODE_OPS:
        return ort_codes(g, tensor, ort), lambda a: a
    while not _names(g, tensor, ort):
        m = g.single_consumer(tensor)
        if m is None or m.op not in LAYOUT_OPS:
            ort_name(g, tensor, ort)  # raises, naming the tensor
        assert m is not None
        chain.append(m)
        tensor = m.outputs[0]

    def forward(a: np.ndarray) -> np.ndarray:
        for m in chain:
            a = KERNELS[m.op](m, g, [a])
        return a

    return ort[ort_name(g, tensor, ort)].astype(np.int64), forward


def _fed_inputs(g: Graph, n: Node, ort: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The layer's inputs: onnxruntime's integer tensors, constants from the graph."""
    args = []
    for name in n.inputs:
        if not name:
            continue
        t = g.tensor(name)
        if t.data is not None:
            args.append(np.asarray(t.data, dtype=np.int64 if t.integer else np.float64))
        else:
            args.append(ort_codes(g, name, ort))
    return args


def _diff(g: Graph, n: Node, ort: Mapping[str, np.ndarray], ours: np.ndarray) -> np.ndarray:
    """|ours - onnxruntime| for the layer's output codes `ours`."""
    want, forward = _output_view(g, n.outputs[0], ort)
    return np.abs(forward(ours) - want)


def concat_input_requant(g: Graph, n: Node) -> bool:
    """A QRequant the quantize pass put in front of a Concat input (its output is no model tensor):
    onnxruntime rounds there inside DQ -> Concat -> Q, so it is compared as part of the QConcat."""
    readers = g.consumers(n.outputs[0])
    return n.op == Op.QREQUANT and not g.tensor(n.outputs[0]).aliases and bool(readers) \
        and all(r.op == Op.QCONCAT for r in readers)


def compared_layers(g: Graph) -> list[Node]:
    """The integer layers whose output onnxruntime also computes as codes (not a layer whose output the
    model leaves in float, which hlsgen outputs as its exact sum: passes/calibrate.EXACT_OUTPUT; nor the
    producer of a forked tensor, whose branches are compared through it; nor a Concat input's requant,
    compared with its QConcat)."""
    exact, forked = {note.node for note in g.notes if note.kind == EXACT_OUTPUT}, forked_tensors(g)
    return [n for n in g.nodes if n.op in COMPARED_OPS and n.name not in exact and n.outputs[0] not in forked
            and not concat_input_requant(g, n)]


def fed_differences(g: Graph, ort: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """|golden - onnxruntime| per output value of every compared layer, each fed its inputs from onnxruntime."""
    return {n.name: _diff(g, n, ort, KERNELS[n.op](n, g, _fed_inputs(g, n, ort)))
            for n in compared_layers(g)}


def end_to_end_differences(c: Compilation, x: np.ndarray, ort: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """|golden - onnxruntime| per output value of every compared layer, the golden model run alone on `x`."""
    ours = intermediates(c, x)
    return {n.name: _diff(c.graph, n, ort, ours[n.outputs[0]]) for n in compared_layers(c.graph)}


def mid_name(g: Graph, n: Node, ort: Mapping[str, np.ndarray]) -> str | None:
    """onnxruntime's name of a two-step layer's intermediate tensor t (from its `two_step` note)."""
    for note in g.notes:
        if note.kind == "two_step" and note.node == n.name:
            names = [a for a in [note.data["tensor"], *note.data["aliases"]] if a in ort]
            if names:
                return names[0]
    return None


def step_differences(g: Graph, n: Node, ort: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """A two-step layer at its two rounding points (numerics.md §8): step 1 fed the layer's inputs against
    onnxruntime's t, step 2 fed onnxruntime's t (and skip) against its output."""
    mid = mid_name(g, n, ort)
    if mid is None:
        raise HlsgenError(f"no onnxruntime tensor stands for the intermediate quantizer of {shown(n.name)}")
    fed, t_ort = _fed_inputs(g, n, ort), ort[mid].astype(np.int64)
    e: Epilogue = n.attr("epilogue")
    assert e.mid is not None
    step1 = Epilogue(e.mid, rounding=e.rounding)  # the layer up to its intermediate quantizer
    t = KERNELS[n.op](Node(n.name, n.op, n.inputs[:3], n.outputs, {**n.attrs, "epilogue": step1}), g, fed[:3])
    return [np.abs(t - t_ort), _diff(g, n, ort, _second_step(n, t_ort, fed[3:]))]


def _second_step(n: Node, t_ort: np.ndarray, skip_fed: list[np.ndarray]) -> np.ndarray:
    """A two-step layer's output from onnxruntime's intermediate codes t (and skip)."""
    e: Epilogue = n.attr("epilogue")
    assert e.mid is not None
    nd = t_ort.ndim
    skip = None
    if skip_fed:
        if e.skip is None:
            raise HlsgenError(f"{shown(n.name)} ({n.op}): a skip input without the epilogue's skip scaling")
        skip = (skip_fed[0], along_axis(e.skip.zp, nd, 1), along_axis(e.skip.mult, nd, 1))
    post_bias = None if e.post_bias is None else along_axis(e.post_bias, nd, 1)
    return numerics.fused_epilogue(t_ort - e.mid.zp, requant_step(e.out, nd), None, skip, post_bias, e.rounding)


def agreement_rows(c: Compilation, ort: Mapping[str, np.ndarray], x: np.ndarray) -> list[LayerAgreement]:
    """Every compared layer's row, onnxruntime's integer tensors `ort` computed on the same batch `x`."""
    g = c.graph
    layer, e2e = fed_differences(g, ort), end_to_end_differences(c, x, ort)
    rows = []
    for n in compared_layers(g):
        points = step_differences(g, n, ort) if two_step(n) else [layer[n.name]]
        off = np.concatenate([(d >= 1).ravel() for d in points])
        rows.append(LayerAgreement(n.name, n.op, len(points), int(off.size), max(int(d.max(initial=0)) for d in points),
                                   float(off.mean()) if off.size else 0.0, int(layer[n.name].max(initial=0)),
                                   int(e2e[n.name].max(initial=0))))
    return rows


def layer_agreement(c: Compilation, model: onnx.ModelProto, x: np.ndarray) -> list[LayerAgreement]:
    """Agreement of every integer layer on batch `x`, onnxruntime running `model`."""
    return agreement_rows(c, ort_integers(model, x), x)


# --- the command ----------------------------------------------------------------------------------------

def compare_model(model: str | Path, config: Config | str | Path | None = None,
                  calib: str | Path | None = None, inputs: str | Path | None = None) -> Comparison:
    """What `hlsgen compare` does: compile `model`, run it and onnxruntime on a batch, compare."""
    c = compile_model(model, config, calib)
    proto, reference = ort_reference(c, Path(model))
    if inputs is not None:
        x, source = load_array(inputs, c.source, "input", c.config.limits), str(inputs)
    elif c.sample_is_synthetic:
        x, source = c.sample[:SYNTHETIC_BATCH], "synthetic N(0, 1), seed 0"
    else:
        x, source = c.sample, "calibration data"
    if len(x) == 0:
        raise HlsgenError(f"{inputs}: the input batch is empty")
    rows = layer_agreement(c, proto, x)
    if not rows:
        raise HlsgenError(f"{model}: no integer layer to compare")
    return Comparison(c.source.name, reference, len(x), source, ort_version(), tuple(rows))


# --- output ---------------------------------------------------------------------------------------------

HEADERS = ("#", "layer", "op", "steps", "worst fed", "off by >=1", "worst end to end")
NAME_WIDTH = 60  # longer layer names are shortened in the middle (the JSON has them whole, same order as #)


def _short(name: str) -> str:
    text = shown(name)
    if len(text) <= NAME_WIDTH:
        return text
    head = (NAME_WIDTH - 3) // 2
    return text[:head] + "..." + text[len(text) - (NAME_WIDTH - 3 - head):]


def render_table(cmp: Comparison) -> str:
    """The table `hlsgen compare` prints: one row per layer, differences in LSB of the output codes."""
    cells = [(str(i), _short(r.name), r.op, str(r.steps), str(r.max_fed), f"{100 * r.mismatch_fed:.2f}%",
              str(r.max_end_to_end)) for i, r in enumerate(cmp.rows, 1)]
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(HEADERS)]
    left = (False, True, True, False, False, False, False)

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if lj else c.rjust(w) for c, w, lj in zip(row, widths, left, strict=True)).rstrip()

    bad = [r for r in cmp.rows if not r.ok]
    verdict = (f"PASS: every layer within {BOUND_LSB} LSB of onnxruntime when fed its inputs" if not bad else
               f"FAIL: {len(bad)} layer(s) beyond {BOUND_LSB} LSB fed: "
               + ", ".join(f"{shown(r.name)} ({r.max_fed})" for r in bad))
    head = (f"compare {shown(cmp.model)} with onnxruntime {cmp.ort_version} (ORT_DISABLE_ALL, 1 thread) running "
            f"{cmp.reference}\n{cmp.inputs} input(s), {cmp.input_source}; |golden - onnxruntime| in LSB")
    return "\n".join([head, line(HEADERS), *(line(row) for row in cells), verdict])


def to_json(cmp: Comparison) -> dict[str, Any]:
    return {"model": cmp.model, "reference": cmp.reference, "inputs": cmp.inputs, "input_source": cmp.input_source,
            "onnxruntime": cmp.ort_version, "bound_lsb": BOUND_LSB, "ok": cmp.ok,
            "layers": [{**asdict(r), "ok": r.ok} for r in cmp.rows]}


JSON_SUFFIXES = (".json",)


def write_json(path: str | Path, cmp: Comparison, inputs: Iterable[Path] = ()) -> None:
    """The table as JSON, written atomically, never over one of `inputs` or a file hlsgen did not write."""
    text = (json.dumps(to_json(cmp), indent=2) + "\n").encode()
    write_owned_file(path, lambda f: f.write(text), inputs, JSON_SUFFIXES)

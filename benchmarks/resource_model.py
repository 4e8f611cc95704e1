"""The resource model (hlsgen/hw/resources.py) next to Yosys synthesis, per layer; and its fit.

    python benchmarks/resource_model.py [--only NAME] [--out DIR] [-j N] [--fit] [--stored]

Compiles a set of designs (the examples, the MLPerf Tiny models, test nets at several foldings),
synthesizes each per layer with `hlsgen synth` (cached, so a second run is quick), and prints for
every layer the model's DSP / LUT / FF / BRAM36 beside Yosys's, then per resource the share of
layers within the issue's tolerance (DSP and BRAM 15 %, LUT 25 %; differences of at most 1 DSP,
0.5 BRAM36 or 50 LUT count as within) and the design totals. `--fit` refits the LUT and FF
coefficients by non-negative least squares on every layer and prints them for devices/calibration.py.
`--stored` skips synthesis: it takes the designs of tests/data/synth_*.json at their stored foldings
with those Yosys figures (the model's own folding moves when its coefficients do, so a refit is done
on the stored figures: `--stored --fit`). `--save` writes each synthesized design's figures to
tests/data/synth_<name>.json (after an RTL change: commit it, then run with --save; the file names the
commit); tests/examples/test_resource_model.py checks the model against every stored design.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

from hlsgen import compile_model  # noqa: E402
from hlsgen.config.compile import config_from_dict  # noqa: E402
from hlsgen.config.hw import Parallelism  # noqa: E402
from hlsgen.hw.cost import FEATURES  # noqa: E402
from hlsgen.hw.dataflow import build_dataflow  # noqa: E402
from hlsgen.hw.model import Dataflow  # noqa: E402
from hlsgen.hw.resources import features, layer_resources, structural_part  # noqa: E402
from hlsgen.pipeline import Compilation  # noqa: E402
from hlsgen.report.output import write_compilation  # noqa: E402
from hlsgen.tools.synth import synthesize  # noqa: E402

TOLERANCE = {"dsp": (0.15, 1.0), "bram36": (0.15, 0.5), "lut": (0.25, 50.0), "ff": (0.25, 50.0)}
SYNTH_KEY = {"dsp": "dsp", "lut": "lut", "ff": "ff", "bram36": "bram36_eq"}


def _example(name: str, config: str | None = None) -> Callable[[Path], Compilation]:
    def build(_: Path) -> Compilation:
        ex = ROOT / "examples" / name
        if not (ex / "model.onnx").exists():  # examples whose model is built by a script
            subprocess.run([sys.executable, str(ex / "make_model.py")], check=True, capture_output=True)
        calib = ex / "calib.npy"
        return compile_model(ex / "model.onnx", ex / config if config else None, calib if calib.exists() else None)
    return build


def _mlperf(name: str) -> Callable[[Path], Compilation]:
    def build(work: Path) -> Compilation:
        import mlperf_models
        model, calib = getattr(mlperf_models, name)(work / "models")
        return compile_model(model, None, calib)
    return build


def _zoo(name: str, hw: dict[str, object], quant: dict[str, object] | None = None) -> Callable[[Path], Compilation]:
    def build(_: Path) -> Compilation:
        import model_zoo

        from hlsgen.frontend import from_onnx_model
        m = getattr(model_zoo, name)()
        config = {"hw": hw, **({"quant": quant} if quant else {})}
        return compile_model(from_onnx_model(m, name), config_from_dict(config, name),
                             model_zoo.random_inputs(m, 8, seed=1))
    return build


DESIGNS: dict[str, Callable[[Path], Compilation]] = {
    "resnet_cifar": _example("resnet_cifar", "config.yaml"),
    "qdq_cnn": _example("qdq_cnn"),
    "resnet8": _mlperf("resnet8"),
    "dscnn": _mlperf("dscnn"),
    "fc_ae": _mlperf("fc_ae"),
    "resnet_tiny_slow": _zoo("resnet_tiny", {"budget": {"dsp": 30}}),
    "resnet_tiny": _zoo("resnet_tiny", {}),
    "resnet_tiny_w4": _zoo("resnet_tiny", {}, {"weight_bits": 4}),  # LUT multipliers (weights <= 4 bits)
    "dw_separable": _zoo("dw_separable", {}),  # depthwise, max and average pools, LeakyRelu
}


def measure(name: str, work: Path, jobs: int, save: bool = False) -> tuple[Dataflow, dict[str, dict[str, float]]]:
    c = DESIGNS[name](work)
    out = work / name
    write_compilation(c, out)
    df = build_dataflow(c.graph, c.config.hw)
    synth = synthesize(out, jobs=jobs)
    measured = {r["name"]: r["resources"] for r in synth["layers"] if r["status"] == "ok"}
    if save:
        _save(name, df, synth, measured)
    measured["glue"] = synth["glue"]["resources"]
    return df, measured


def _save(name: str, df: Dataflow, synth: dict[str, object], measured: dict[str, dict[str, float]]) -> None:
    """tests/data/synth_<name>.json: Yosys's figures of every layer at the folding synthesized."""
    if synth["failed"]:
        raise SystemExit(f"{name}: not saved, Yosys failed on {synth['failed']}")
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                         check=True).stdout.strip()
    rows = [{"node": lay.node, "layer": lay.name, "kind": lay.kind, "pe": lay.pe, "simd": lay.simd,
             "dsp": measured[lay.name]["dsp"], "lut": measured[lay.name]["lut"], "ff": measured[lay.name]["ff"],
             "bram36": measured[lay.name]["bram36_eq"]} for lay in df.layers if lay.name in measured]
    doc = {"tool": " ".join(str(synth["yosys"]).split()[:2]), "family": synth["family"], "part": synth["part"],
           "rtl": rev, "layers": rows}
    (ROOT / "tests" / "data" / f"synth_{name}.json").write_text(json.dumps(doc, indent=1) + "\n")


def stored(name: str, work: Path) -> tuple[Dataflow, dict[str, dict[str, float]]]:
    """A design at the folding stored in tests/data/synth_<name>.json, with those Yosys figures (no
    synthesis: the stored figures of the RTL named in the file)."""
    data = json.loads((ROOT / "tests" / "data" / f"synth_{name}.json").read_text())
    c = DESIGNS[name](work)
    pins = {r["node"]: Parallelism(r["pe"], r["simd"]) for r in data["layers"] if r["node"]}  # not converters
    df = build_dataflow(c.graph, replace(c.config.hw, layers=MappingProxyType(pins)))
    measured = {r["layer"]: {"dsp": r["dsp"], "lut": r["lut"], "ff": r["ff"], "bram36_eq": r["bram36"]}
                for r in data["layers"]}
    return df, measured


def _within(kind: str, model: float, synth: float) -> bool:
    rel, floor = TOLERANCE[kind]
    return abs(model - synth) <= max(rel * synth, floor)


def report(results: dict[str, tuple[Dataflow, dict[str, dict[str, float]]]]) -> dict[str, object]:
    print(f"{'design':16s} {'layer':34s} {'kind':8s} {'PE':>4s} {'SIMD':>4s} | "
          + " | ".join(f"{k.upper():>15s}" for k in TOLERANCE))
    hits = {k: 0 for k in TOLERANCE}
    count = 0
    rows = []
    for design, (df, measured) in results.items():
        for lay in df.layers:
            if lay.name not in measured:
                continue
            est = layer_resources(lay, df.streams[lay.inputs[0]], df.streams[lay.output]).as_dict()
            got = {k: float(measured[lay.name][SYNTH_KEY[k]]) for k in TOLERANCE}
            marks = {k: _within(k, est[k], got[k]) for k in TOLERANCE}
            count += 1
            for k in TOLERANCE:
                hits[k] += marks[k]
            cells = " | ".join(f"{est[k]:7.0f} {got[k]:7.0f}{' ' if marks[k] else '*'}" for k in TOLERANCE)
            print(f"{design:16s} {lay.name[:34]:34s} {lay.kind:8s} {lay.pe:4d} {lay.simd:4d} | {cells}")
            rows.append({"design": design, "layer": lay.name, "kind": lay.kind, "pe": lay.pe, "simd": lay.simd,
                         "model": est, "synth": got})
    print("(model synth; * = outside tolerance)")
    share = {k: round(hits[k] / max(count, 1), 3) for k in TOLERANCE}
    print("within tolerance: " + ", ".join(f"{k} {hits[k]}/{count}" for k in TOLERANCE))
    return {"rows": rows, "within": share, "layers": count}


def _nnls(a: np.ndarray, b: np.ndarray, iters: int = 2000) -> np.ndarray:
    """Non-negative least squares by Lawson-Hanson's active set (small problems)."""
    n = a.shape[1]
    x = np.zeros(n)
    passive = np.zeros(n, bool)
    for _ in range(iters):
        w = a.T @ (b - a @ x)
        if passive.all() or np.max(np.where(passive, -np.inf, w)) <= 1e-9:
            break
        passive[int(np.argmax(np.where(passive, -np.inf, w)))] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if np.all(z[passive] > 0):
                x = z
                break
            neg = passive & (z <= 0)
            alpha = np.min(x[neg] / (x[neg] - z[neg]))
            x = x + alpha * (z - x)
            passive &= x > 1e-12
    return x


def fit(results: dict[str, tuple[Dataflow, dict[str, dict[str, float]]]]) -> None:
    """Refit the LUT and FF coefficients (devices/calibration.py) on synthesis minus the structural part
    (DSP, memories), per layer, for the smallest largest relative error (`_minimax_nnls`)."""
    keys = list(FEATURES)
    feats: list[list[float]] = []
    luts: list[float] = []
    ffs: list[float] = []
    meas_lut: list[float] = []
    meas_ff: list[float] = []
    for df, measured in results.values():
        for lay in df.layers:
            if lay.name not in measured:
                continue
            x, out = df.streams[lay.inputs[0]], df.streams[lay.output]
            f = features(lay, x, out)
            fixed = structural_part(lay, x, out)
            feats.append([f[k] for k in keys])
            luts.append(measured[lay.name]["lut"] - fixed.lut)
            ffs.append(measured[lay.name]["ff"] - fixed.ff)
            meas_lut.append(measured[lay.name]["lut"])
            meas_ff.append(measured[lay.name]["ff"])
    a = np.array(feats)
    for label, target, measured in (("lut", luts, meas_lut), ("ff", ffs, meas_ff)):
        coef = _minimax_nnls(a, np.array(target, dtype=float), np.maximum(np.array(measured, dtype=float), 1.0))
        print(f"{label}={{" + ", ".join(f'"{k}": {v:.3g}' for k, v in zip(keys, coef, strict=True)) + "},")


def _minimax_nnls(a: np.ndarray, target: np.ndarray, measured: np.ndarray, rounds: int = 200,
                  tolerance: float = 0.25, floor: float = 50.0) -> np.ndarray:
    """Non-negative coefficients for the tolerance, a bound per layer (not a mean): least squares
    weighted by 1/measured, then reweighted round by round, each layer's weight growing with its
    relative error (iteratively reweighted least squares toward the minimax fit). Of the rounds, the
    one with the most layers within `tolerance` (or `floor` absolute) wins, then the smallest largest
    relative error (a pure minimax can give up many layers to one outlier)."""
    fixed = measured - target  # the structural part of each layer
    best, best_score = np.zeros(a.shape[1]), (-1, -np.inf)
    for start in (1.0 / measured, 1.0 / np.sqrt(measured)):  # relative, then between relative and absolute
        w = start / start.sum()
        for _ in range(rounds):
            coef = _nnls(a * w[:, None], target * w)
            err = np.abs(a @ coef + fixed - measured)
            rel = err / measured
            score = (int(np.sum(err <= np.maximum(tolerance * measured, floor))), -float(rel.max()))
            if score > best_score:
                best, best_score = coef, score
            w = w * (1.0 + 4.0 * rel)
            w = w / w.sum()
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(DESIGNS))
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "resource_model")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--stored", action="store_true",
                    help="no synthesis: the designs of tests/data/synth_*.json at their stored foldings and figures")
    ap.add_argument("--save", action="store_true",
                    help="write tests/data/synth_<design>.json of each design synthesized")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.stored:
        names = args.only or sorted(p.stem[len("synth_"):] for p in (ROOT / "tests" / "data").glob("synth_*.json"))
        results = {name: stored(name, args.out) for name in names}
    else:
        results = {name: measure(name, args.out, args.j, args.save) for name in (args.only or DESIGNS)}
    summary = report(results)
    (args.out / "resource_model.json").write_text(json.dumps(summary, indent=1) + "\n")
    if args.fit:
        fit(results)


if __name__ == "__main__":
    main()

"""OUT trees before and after a refactor: compile a fixed set of models, digest every file, compare.

A refactor changes no output. This compiles the examples, the test nets of tests/model_zoo.py (float
with calibration data, and quantized by onnxruntime) and the ../shared/corpus models (with their
reference inputs as calibration data where asked; a refusal is kept as its message) into one
folder, and writes the SHA-256 of every file of every OUT tree; `diff` lists the files that differ.

    .venv/bin/python scripts/out_trees.py build build/trees-before       # compile + digest.json
    git stash / checkout the change ...
    .venv/bin/python scripts/out_trees.py build build/trees-after
    .venv/bin/python scripts/out_trees.py diff build/trees-before build/trees-after

Nothing of hlsgen is imported here but through its command line, so the same script measures any
two commits (run it from each commit's tree, or keep one copy outside the repository).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
EXAMPLES = {  # name: (model, extra compile arguments), relative to examples/<name>/
    "resnet_cifar": ("model.onnx", ["--calib", "calib.npy", "-c", "config.yaml"]),
    "qdq_cnn": ("model.onnx", []),
    "mlp_yaml": ("model.yaml", []),
}
ZOO = ("resnet_tiny", "dw_separable", "mlp", "nhwc_tf_style")  # tests/model_zoo.py builders
ZOO_QDQ = ("resnet_tiny", "mlp")


def hlsgen(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [str(Path(sys.executable).parent / "hlsgen"), "-q", *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    return r


def build_examples(out: Path) -> None:
    for name, (model, extra) in EXAMPLES.items():
        folder = ROOT / "examples" / name
        if (folder / "make_model.py").is_file():
            subprocess.run([sys.executable, str(folder / "make_model.py")], check=True, capture_output=True)
        args = [a if a.startswith("-") else str(folder / a) for a in extra]
        hlsgen("compile", folder / model, *args, "-o", out / "examples" / name)


def build_zoo(out: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import model_zoo  # the test nets, built as the tests build them
    import numpy as np

    models = out / "_models"
    models.mkdir(parents=True, exist_ok=True)
    for name in ZOO:
        m = getattr(model_zoo, name)()
        calib = model_zoo.random_inputs(m, 32, seed=1)
        (models / f"{name}.onnx").write_bytes(m.SerializeToString())
        np.save(models / f"{name}.calib.npy", calib)
        hlsgen("compile", models / f"{name}.onnx", "--calib", models / f"{name}.calib.npy", "-o", out / "zoo" / name)
        if name in ZOO_QDQ:
            q = model_zoo.qdq_quantize(m, calib, tmp_dir=models)
            (models / f"{name}__qdq.onnx").write_bytes(q.SerializeToString())
            hlsgen("compile", models / f"{name}__qdq.onnx", "-o", out / "zoo" / f"{name}__qdq")


def build_corpus(out: Path) -> None:
    """Every corpus model compiled with defaults; with its reference inputs as calibration data when
    it asks for some; a refusal is kept as OUT/error.txt (its message is an output too)."""
    if not (CORPUS / "check.py").is_file():
        print(f"no corpus at {CORPUS}: skipped", file=sys.stderr)
        return
    import numpy as np

    calib = out / "_models" / "corpus"
    calib.mkdir(parents=True, exist_ok=True)
    for model in sorted((CORPUS / "models").glob("*.onnx")):
        target = out / "corpus" / model.stem
        r = hlsgen("compile", model, "-o", target, check=False)
        if r.returncode != 0 and "--calib" in r.stderr:
            x = calib / f"{model.stem}.npy"
            with np.load(CORPUS / "expected" / f"{model.stem}.npz") as ref:
                np.save(x, ref["inputs"])
            r = hlsgen("compile", model, "--calib", x, "-o", target, check=False)
        if r.returncode != 0:
            target.mkdir(parents=True, exist_ok=True)
            (target / "error.txt").write_text(f"exit {r.returncode}\n{r.stderr}")


def digest(out: Path) -> dict[str, str]:
    trees = [out / part for part in ("examples", "zoo", "corpus") if (out / part).is_dir()]
    return {str(f.relative_to(out)): hashlib.sha256(f.read_bytes()).hexdigest()
            for tree in trees for f in sorted(tree.rglob("*")) if f.is_file()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile every model into DIR and write DIR/digest.json")
    b.add_argument("dir", type=Path)
    d = sub.add_parser("diff", help="the files that differ between two built folders")
    d.add_argument("before", type=Path)
    d.add_argument("after", type=Path)
    args = ap.parse_args()
    if args.command == "build":
        shutil.rmtree(args.dir, ignore_errors=True)
        args.dir.mkdir(parents=True)
        build_examples(args.dir)
        build_zoo(args.dir)
        build_corpus(args.dir)
        files = digest(args.dir)
        (args.dir / "digest.json").write_text(json.dumps(files, indent=1, sort_keys=True) + "\n")
        print(f"{len(files)} files in {len({f.split('/')[1] for f in files})} OUT trees -> {args.dir / 'digest.json'}")
        return 0
    a, b_ = (json.loads((p / "digest.json").read_text()) for p in (args.before, args.after))
    changed = sorted(f for f in a.keys() & b_.keys() if a[f] != b_[f])
    for label, names in (("only before", sorted(a.keys() - b_.keys())), ("only after", sorted(b_.keys() - a.keys())),
                         ("differ", changed)):
        for name in names:
            print(f"{label}: {name}")
    same = len(a.keys() & b_.keys()) - len(changed)
    print(f"{same} of {len(a.keys() | b_.keys())} files byte-identical")
    return 0 if same == len(a.keys() | b_.keys()) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Throughput of the integer golden model on a ResNet-8-sized QConv chain, single-threaded BLAS.

The chain is built by hand: int8 codes [N, 16, 32, 32] go through 3x3 QConv layers 16->16 (32x32),
16->16 (32x32, with a residual skip input), 16->32 (stride 2, 16x16), 32->32 (16x16, skip),
32->64 (stride 2, 8x8), 64->64 (8x8, skip), with random int8 weights and per-channel requant,
about the 12 M MACs per image of a CIFAR ResNet-8. Prints images/s for batch 64.

    python benchmarks/golden_kernels.py [--batch 64] [--repeat 5]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy is imported: one core

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from hlsgen.golden import run_graph  # noqa: E402
from hlsgen.ir.graph import Graph, Node, Tensor  # noqa: E402
from hlsgen.ir.types import INT8, INT32, QType  # noqa: E402

# (in_channels, out_channels, stride, skip from the layer input)
LAYERS = [(16, 16, 1, False), (16, 16, 1, True), (16, 32, 2, False), (32, 32, 1, True), (32, 64, 2, False),
          (64, 64, 1, True)]


def _qconv_layer(i: int, x: str, cin: int, cout: int, stride: int, skip: bool, rng: np.random.Generator,
                 size: int) -> tuple[Node, list[Tensor], int]:
    w = rng.integers(-127, 128, size=(cout, cin, 3, 3), dtype=np.int64)
    bias = rng.integers(-2000, 2000, size=cout, dtype=np.int64)
    tensors = [
        Tensor(f"w{i}", (cout, cin, 3, 3), QType(INT8, 0.01), w, integer=True),
        Tensor(f"b{i}", (cout,), QType(INT32, 1e-4), bias, integer=True),
    ]
    out_size = (size + 2 - 3) // stride + 1
    tensors.append(Tensor(f"y{i}", (1, cout, out_size, out_size), QType(INT8, 0.05), integer=True))
    attrs = {"strides": (stride, stride), "pads": (1, 1, 1, 1), "dilations": (1, 1), "group": 1,
             "pad_value": 0, "mult": tuple(int(m) for m in rng.integers(100, 400, size=cout)),
             "shift": (20,) * cout, "mult_neg": None, "zp": 0, "lo": 0, "hi": 127, "rounding": "half_even"}
    inputs = [x, f"w{i}", f"b{i}"]
    if skip:
        inputs.append(x)
        attrs.update(skip_zp=0, skip_mult=(1 << 19,) * cout)
    return Node(f"conv{i}", "QConv", tuple(inputs), (f"y{i}",), attrs), tensors, out_size


def build_chain(seed: int = 0) -> tuple[Graph, int]:
    """The QConv chain graph and its MACs per image."""
    rng = np.random.default_rng(seed)
    tensors = [Tensor("x", (1, 16, 32, 32), QType(INT8, 0.05), integer=True)]
    nodes, x, size, macs = [], "x", 32, 0
    for i, (cin, cout, stride, skip) in enumerate(LAYERS):
        node, ts, size = _qconv_layer(i, x, cin, cout, stride, skip, rng, size)
        nodes.append(node)
        tensors.extend(ts)
        macs += cin * 9 * cout * size * size
        x = node.outputs[0]
    graph = Graph("qconv_chain", tuple(nodes), {t.name: t for t in tensors}, ("x",), (x,))
    return graph, macs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    graph, macs = build_chain()
    x = np.random.default_rng(1).integers(-128, 128, size=(args.batch, 16, 32, 32), dtype=np.int64)
    run_graph(graph, x)  # warm-up
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        run_graph(graph, x)
        times.append(time.perf_counter() - t0)
    best = min(times)
    print(f"QConv chain: {len(graph.nodes)} layers, {macs / 1e6:.1f} M MACs/image, batch {args.batch}")
    print(f"best of {args.repeat}: {best * 1e3:.1f} ms/batch, {args.batch / best:.1f} images/s "
          f"({macs * args.batch / best / 1e9:.2f} GMAC/s)")


if __name__ == "__main__":
    main()

"""The numpy golden model: the numeric specification every backend must match bit for bit.

`run_graph(graph, feeds, keep)` executes a float or integer IR graph (docs/ir.md) with the kernels
of float_ops.py and int_ops.py, dispatched through `KERNELS`; `exact_int_matmul` is the exact
integer matrix product the integer kernels are built on.
"""

from hlsgen.golden.exact import exact_int_matmul
from hlsgen.golden.execute import KERNELS, run_graph

__all__ = ["KERNELS", "exact_int_matmul", "run_graph"]

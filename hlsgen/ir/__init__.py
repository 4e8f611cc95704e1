"""Graph IR: types, graph, verification, canonical text form."""

from hlsgen.ir.graph import Edit, Graph, Node, Note, Tensor
from hlsgen.ir.ops import Op
from hlsgen.ir.printer import format_graph
from hlsgen.ir.types import INT8, INT32, UINT8, IntType, QType
from hlsgen.ir.verify import VerifyError, verify

__all__ = [
    "INT8", "INT32", "UINT8", "Edit", "Graph", "IntType", "Node", "Note", "Op", "QType", "Tensor", "VerifyError",
    "format_graph", "verify",
]

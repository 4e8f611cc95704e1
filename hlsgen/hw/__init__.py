"""The hardware model: computed once from the integer graph, rendered by every backend.

    model.py     Stream, Layer, Dataflow: what the backends render
    dataflow.py  integer graph -> Dataflow (streams, layout, layers in order)
    lower.py     one IR node -> one Layer (geometry, tables, folding options, cycles)
    fifo.py      FIFO depths of the stream edges (deadlock-free joins)
    packing.py   weight ROM words and per-channel tables, in the order the hardware reads them
    parts.py     FPGA parts and their resource budgets
"""

from hlsgen.hw.dataflow import build_dataflow
from hlsgen.hw.model import Dataflow, Layer, Stream

__all__ = ["Dataflow", "Layer", "Stream", "build_dataflow"]

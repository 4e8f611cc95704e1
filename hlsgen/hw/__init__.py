"""The hardware model: computed once from the integer graph, rendered by every backend.

    model.py     Stream, Layer, Dataflow: what the backends render
    dataflow.py  integer graph -> Dataflow (streams, layout, layers in order)
    lower.py     one IR node -> one Layer (geometry, tables, folding options, cycles)
    fifo.py      FIFO depths of the stream edges (deadlock-free joins)
    packing.py   weight ROM words and per-channel tables, in the order the hardware reads them
    parts.py     FPGA parts and their resource budgets
    resources.py per-layer resource model (DSP, LUT, FF, BRAM), calibrated against `hlsgen synth`
    fold.py      folding to the device: every layer's PE/SIMD within the part's budget
"""

"""The hardware model: computed once from the integer graph, rendered by every backend.

    model.py     Kind, Stream, Layer, Dataflow: what the backends render
    params.py    the typed parameter record of each layer kind
    dataflow.py  integer graph -> Dataflow (streams, layout, layers in order)
    layers/      one module per hardware unit (mvu, pool, eltwise, lut, reorder, convert, resize): its lowering,
                 foldings, cycle model, data dependencies, MAC packing and resource counts
    fifo.py      FIFO depths of the stream edges (deadlock-free joins)
    packing.py   per-channel tables in the order the hardware reads them
    cost.py      the resource model's units: Resources, DSP slices, memories and ROMs of a family
    resources.py per-layer resource model (DSP, LUT, FF, BRAM), calibrated against `hlsgen synth`
    fold.py      folding to the device: every layer's PE/SIMD within the part's budget
    ports.py     the AXI-Stream port formats (hw.io_bits)
    convert.py   the data-width converters' primitives (split, join) and their Python reference
    stream_folds.py  every stream's fold (channels a beat) and the converters between folds
    slow_converters.py  folding again where a converter would be the bottleneck
"""

"""The round trip with onnxruntime: the compiled integer graph as a standard ONNX QDQ model, and the
golden model compared with onnxruntime layer by layer (`hlsgen compare`, `hlsgen export-qdq`).

    export_qdq.py   the integer graph as ONNX QDQ (per-op emitters)
    qdq_builder.py  the builder those emitters use
    ort.py          running onnxruntime (graph optimizations off) on the source or the export
    compare.py      per-layer |golden - onnxruntime| in LSB, fed and end to end
"""

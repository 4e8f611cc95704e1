"""The host side of the ports: OUT/host/, what a user would otherwise write by hand to feed the
hardware from a CPU (docs/streams.md).

    OUT/host/hlsgen_io.py        numpy only: quantize_input, pack_input (the input port's bytes),
                                 unpack_output, dequantize_output; beats/unbeats for hex vectors
    OUT/host/hlsgen_io.h, .c     the same in C99, one frame a call

Both read the port formats of the dataflow (hw/ports.py) and the quantization of the port tensors
(PortCodes). tests/unit/test_host_io.py checks them against OUT/vectors and the golden model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hlsgen.backends.render import render
from hlsgen.hw.model import canonical_order
from hlsgen.hw.ports import PortCodes

FILES = {"hlsgen_io.py": "host/hlsgen_io.py.j2", "hlsgen_io.h": "host/hlsgen_io.h.j2",
         "hlsgen_io.c": "host/hlsgen_io.c.j2"}


def write_host(ports: tuple[PortCodes, ...], name: str, out: Path) -> None:
    folder = out / "host"
    folder.mkdir(parents=True, exist_ok=True)
    names = ["in", "out"] if len(ports) == 2 else ["in", *(f"out_{k}" for k in range(len(ports) - 1))]
    ctx = {"name": name, "guard": "HLSGEN_IO_H", "ports": [port_data(n, p) for n, p in zip(names, ports, strict=True)]}
    for target, template in FILES.items():
        (folder / target).write_text(render(template, **ctx))


def port_data(port: str, p: PortCodes) -> dict[str, Any]:
    s = p.stream
    elements = int(np.prod(p.shape))
    order = np.asarray(s.order, dtype=np.int64)
    if np.array_equal(order, np.arange(elements)):
        kind, order_id, table = "identity", 0, None
    elif len(p.shape) == 3 and np.array_equal(order, canonical_order(p.shape)):
        kind, order_id, table = "chw", 1, None
    else:
        kind, order_id, table = "table", 2, [int(v) for v in order.tolist()]
    axis_dim = p.shape[p.axis] if p.axis is not None else 1
    axis_stride = int(np.prod(p.shape[p.axis + 1:])) if p.axis is not None else 1
    return {"port": port, "shape": tuple(p.shape), "channels": s.channels, "pixels": s.pixels, "fold": s.fold,
            "pack": s.pack, "bits": s.bits, "signed": s.signed, "tdata_bits": s.beat_bits, "beats": s.beats,
            "bytes": s.beats * s.beat_bits // 8, "elements": elements, "order": kind, "order_id": order_id,
            "table": table, "table_list": table, "scale": list(p.scale), "scale_c": [repr(v) for v in p.scale],
            "zero_point": list(p.zero_point), "axis": p.axis, "axis_dim": axis_dim, "axis_stride": axis_stride,
            "lo": p.lo, "hi": p.hi, "bipolar": p.bipolar, "rounding": p.rounding or "half_even"}

"""The small conv net of the hw.tlast and Vitis hand-off tests (tests/unit/test_vitis_handoff.py,
tests/sim/test_tlast.py): 5 x 4 output pixels of 4 int8 channels (32 bits), two pixels a beat at the default
hw.io_bits of 64 (docs/streams.md), so 10 beats of 64 bits per frame."""

NET = """
name: tlast_net
input: {name: x, shape: [3, 5, 4]}
layers:
  - {name: c1, op: conv, filters: 6, kernel: 3, padding: same, activation: relu}
  - {name: c2, op: conv, filters: 4, kernel: 1}
"""
OUT_BEATS = 10  # 5 x 4 pixels, 2 a beat
OUT_BITS = 64  # hw.io_bits: 2 pixels of 4 channels x 8 bits
LAST_BITS = 4  # the Verilog top's beat counter: beats 0 .. 9
OUT_STREAM = "c2_p2"  # the port stream: c2 packed two pixels a beat

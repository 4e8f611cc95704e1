"""The small conv net of the hw.tlast and Vitis hand-off tests (tests/unit/test_vitis_handoff.py,
tests/sim/test_tlast.py): 5 x 4 output pixels of 4 int8 channels, so 20 beats of 32 bits per frame."""

NET = """
name: tlast_net
input: {name: x, shape: [3, 5, 4]}
layers:
  - {name: c1, op: conv, filters: 6, kernel: 3, padding: same, activation: relu}
  - {name: c2, op: conv, filters: 4, kernel: 1}
"""
OUT_BEATS = 20  # 5 x 4 pixels
OUT_BITS = 32  # 4 channels x 8 bits

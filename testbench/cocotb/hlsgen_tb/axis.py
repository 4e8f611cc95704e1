"""AXI-Stream (TDATA/TVALID/TREADY) driver and monitor with seeded random stalls.

Signals are written before a rising edge and the handshake is read right after it: cocotb reports the
values sampled at that edge (Verilator and Icarus alike), so a beat moved iff TVALID and TREADY read 1.
While nothing can move the coroutines sleep until TREADY/TVALID rises instead of polling every cycle.
"""

from __future__ import annotations

import random
from typing import Any

from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time


def cycle_of(period_ns: float) -> int:
    return round(get_sim_time(unit="ns") / period_ns)


class AxisSource:
    """Drives `<prefix>_TDATA/TVALID` from a list of beats; TVALID drops for random idle cycles."""

    def __init__(self, dut: Any, prefix: str, clk: Any, stall: float, rng: random.Random) -> None:
        self.data, self.valid = getattr(dut, f"{prefix}_TDATA"), getattr(dut, f"{prefix}_TVALID")
        self.ready = getattr(dut, f"{prefix}_TREADY")
        self.clk, self.stall, self.rng = clk, stall, rng
        self.first_cycle: int | None = None

    async def send(self, beats: list[int], period_ns: float) -> None:
        self.valid.value = 0
        for beat in beats:
            if self.stall and self.rng.random() < self.stall:
                self.valid.value = 0
                await ClockCycles(self.clk, self.rng.randint(1, 8))
            self.data.value = beat
            self.valid.value = 1
            while True:
                await RisingEdge(self.clk)
                if self.ready.value:
                    break
                await _until_high(self.ready)
            if self.first_cycle is None:
                self.first_cycle = cycle_of(period_ns) - 1
        self.valid.value = 0


class AxisSink:
    """Collects `<prefix>_TDATA` beats with the cycle each arrived; TREADY drops at random."""

    def __init__(self, dut: Any, prefix: str, clk: Any, stall: float, rng: random.Random) -> None:
        self.data, self.valid = getattr(dut, f"{prefix}_TDATA"), getattr(dut, f"{prefix}_TVALID")
        self.ready = getattr(dut, f"{prefix}_TREADY")
        self.clk, self.stall, self.rng = clk, stall, rng
        self.beats: list[int] = []
        self.cycles: list[int] = []

    async def receive(self, count: int, period_ns: float, on_beat: Any = None) -> None:
        ready = 1
        self.ready.value = ready
        while len(self.beats) < count:
            await RisingEdge(self.clk)
            if ready and self.valid.value:
                beat = self.data.value.to_unsigned() if self.data.value.is_resolvable else -1
                self.beats.append(beat)
                self.cycles.append(cycle_of(period_ns) - 1)
                if on_beat is not None:
                    on_beat(len(self.beats) - 1, beat)
            if self.stall:
                ready = int(self.rng.random() >= self.stall)
                self.ready.value = ready
            elif not self.valid.value:
                await _until_high(self.valid)


async def _until_high(signal: Any) -> None:
    """Sleep until `signal` is 1 after the current time step (it may have risen in this very step)."""
    await ReadOnly()
    if not signal.value:
        await RisingEdge(signal)

"""Folding to the device: every layer's (PE, SIMD) chosen for the part's budget.

The dataflow's steady-state cycles per frame are T = max(input beats, slowest layer's cycles); its
resources are the sum over layers (resource model, hlsgen/hw/resources.py) plus the FIFO glue.
Each layer offers a list of foldings (hlsgen/hw/layers/, each kind's `options`). Two goals:

- fastest (default): the smallest T whose cheapest design fits the budget. For a candidate T every
  layer independently takes its cheapest folding with cycles <= T (layers only interact through the
  budget and through T), so the search walks the distinct cycle counts of all foldings upwards and
  stops at the first T that fits. "Cheapest" is a weighted sum of budget fractions; a few weightings
  are tried per T (balanced, and each resource first) before T is rejected.
- `hw.target_fps`: T = floor(clock / fps); every layer takes its cheapest folding meeting T.

Optimality: for a given T the choices are independent per layer, so when each layer's pick is no
larger in every resource than any other folding meeting T (a componentwise-minimal folding exists),
the design is the cheapest at T in every resource, and the first feasible T is the optimum of the
model. `Folding.optimal` records whether that certificate held for every layer; otherwise the
result is the best of the weightings tried (a multi-resource knapsack; docs/hardware.md).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hlsgen.config.hw import HwConfig
from hlsgen.devices.parts import family_of, find_part
from hlsgen.errors import HlsgenError
from hlsgen.hw.cost import Resources

TRADEOFF_STEPS = 9  # rows of the trade-off table, at most one more (the slowest folding)
LUT_SHARE = 0.8  # of the part's LUTs: leave room for routing and the shell
RESOURCES = ("dsp", "lut", "bram36")
GLUE_ROUNDS = 4  # searches of choose_folding when the glue depends on the picks
GlueOf = Callable[[tuple[int, ...]], Resources]  # the glue of one pick (an option index per layer)


@dataclass(frozen=True)
class Budget:
    dsp: float
    lut: float
    bram36: float

    def fits(self, r: Resources) -> bool:
        return all(getattr(r, k) <= getattr(self, k) for k in RESOURCES)

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in RESOURCES}


@dataclass(frozen=True)
class Choice:
    """One layer's folding: its index among the layer's options, cycles and resources."""

    index: int
    cycles: int
    cost: Resources


@dataclass(frozen=True)
class DesignCost:
    """The design estimate of one pick per layer: `fixed` (the glue the search assumes) plus
    the picks' costs, LUTs scaled by `lut_factor` (the part family's calibrated design_lut_factor)."""

    fixed: Resources
    lut_factor: float

    def of(self, picks: Sequence[Choice]) -> Resources:
        total = self.fixed
        for c in picks:
            total = total + c.cost
        return replace(total, lut=total.lut * self.lut_factor)


@dataclass(frozen=True)
class Folding:
    picks: tuple[int, ...]  # option index per layer
    cycles: int
    total: Resources
    budget: Budget
    fits: bool
    optimal: bool  # the componentwise-minimal certificate held for every layer
    goal: str  # "fastest" | "target_fps"
    tradeoffs: tuple[Tradeoff, ...] = ()  # slower, cheaper designs and the hw.target_fps giving each


@dataclass(frozen=True)
class Tradeoff:
    """What `hw.target_fps: fps` gives: the cheapest design meeting it, its cycles and resources."""

    fps: float
    cycles: int
    total: Resources
    picks: tuple[int, ...] = ()  # option index per layer


def budget_of(hw: HwConfig) -> Budget:
    """hw.budget where set, else the part's (LUT: LUT_SHARE of it)."""
    b = hw.budget
    if None not in (b.dsp, b.lut, b.bram36):
        return Budget(float(b.dsp or 0), float(b.lut or 0), float(b.bram36 or 0))
    part = find_part(hw.part)
    return Budget(float(part.dsp if b.dsp is None else min(b.dsp, part.dsp)),
                  float(math.floor(part.lut * LUT_SHARE) if b.lut is None else min(b.lut, part.lut)),
                  float(part.bram36 if b.bram36 is None else min(b.bram36, part.bram36)))


def choose_folding(options: Sequence[Sequence[Choice]], glue: Resources | GlueOf, floor: int, hw: HwConfig,
                   names: Sequence[str] = ()) -> Folding:
    """Pick one option per layer (see the module docstring). `glue`: the resources around the layers
    (FIFOs, width converters), fixed or as a function of the picks; `floor`: cycles no folding can
    beat (the input stream); `names`: the layers' names, for the errors.

    Glue that depends on the picks (a stream's FIFO is as wide as its fold) is not in the per-layer
    costs the search compares, so the search assumes the glue of one pick (first every layer's option
    0) and runs again with the glue of what it picked, until it picks what it assumed (at most
    GLUE_ROUNDS searches; then the best of them). The result and every trade-off row are costed with
    their own glue."""
    glue_of = _cached(glue)
    budget = budget_of(hw)
    factor = family_of(hw.part).calibration.design_lut_factor
    assumed, tried = tuple(0 for _ in options), []
    for _ in range(GLUE_ROUNDS):
        cost = DesignCost(glue_of(assumed), factor)
        if hw.target_fps:
            chosen = _at_target(options, cost, floor, budget, Rate(hw.target_fps, hw.hls.clock_ns),
                                list(names) or [f"layer {i}" for i in range(len(options))])
        else:
            chosen = _fastest(options, cost, floor, budget)
        if chosen.picks == assumed:
            break
        tried.append(_recosted(chosen, options, DesignCost(glue_of(chosen.picks), factor)))
        assumed = chosen.picks
    else:
        chosen = min(tried, key=lambda f: (not f.fits, f.cycles))
        cost = DesignCost(glue_of(chosen.picks), factor)
    rows = tradeoffs(options, cost, floor, budget, hw.hls.clock_ns, chosen.cycles)
    own = [replace(r, total=DesignCost(glue_of(r.picks), factor).of(_chosen(options, r.picks))) for r in rows]
    return replace(chosen, tradeoffs=_pareto([r for r in own if budget.fits(r.total)]))


def _cached(glue: Resources | GlueOf) -> GlueOf:
    if isinstance(glue, Resources):
        return lambda picks: glue
    memo: dict[tuple[int, ...], Resources] = {}
    return lambda picks: memo[picks] if picks in memo else memo.setdefault(picks, glue(picks))


def _chosen(options: Sequence[Sequence[Choice]], picks: tuple[int, ...]) -> list[Choice]:
    return [opts[i] for opts, i in zip(options, picks, strict=True)]


def _recosted(folding: Folding, options: Sequence[Sequence[Choice]], cost: DesignCost) -> Folding:
    """`folding`'s picks costed with `cost` (their own glue) instead of the glue the search assumed."""
    total = cost.of(_chosen(options, folding.picks))
    fits = folding.budget.fits(total)
    return replace(folding, total=total, fits=fits, optimal=folding.optimal and fits)


def _fastest(options: Sequence[Sequence[Choice]], cost: DesignCost, floor: int, budget: Budget) -> Folding:
    lowest = max([floor] + [min(c.cycles for c in opts) for opts in options])
    candidates = sorted({c.cycles for opts in options for c in opts if c.cycles >= lowest} | {lowest})
    tables = [[_CheapestBelow(opts, weigh) for opts in options] for weigh in _weightings(budget)]
    for t in candidates:
        for per_layer in tables:
            picks = [table.at(t) for table in per_layer]
            total = cost.of(picks)
            if budget.fits(total):
                return _folding(options, picks, t, total, budget, True, "fastest", floor)
    picks = [_cheapest(opts, candidates[-1], _weightings(budget)[0]) for opts in options]
    return _folding(options, picks, candidates[-1], cost.of(picks), budget, False, "fastest", floor)


@dataclass(frozen=True)
class Rate:
    """`hw.target_fps` at the clock of `hw.hls.clock_ns`: the cycles per frame it allows."""

    fps: float
    clock_ns: float

    @property
    def cycles(self) -> int:
        return math.floor(1e9 / (self.clock_ns * self.fps))

    def at_best(self, cycles: int) -> str:
        """The highest rate a design of `cycles` per frame reaches at this clock, as text."""
        return f"{rate_text(1e9 / (self.clock_ns * cycles))} frames/s"

    def asked(self) -> str:
        mhz = 1e3 / self.clock_ns
        return f"hw.target_fps {rate_text(self.fps)} at {mhz:,.6g} MHz (hw.hls.clock_ns {self.clock_ns:g})"


def rate_text(x: float) -> str:
    """2,000,000 and 666,667, but 1e+12."""
    return f"{x:,.0f}" if x == round(x) and x < 1e9 else f"{x:,.6g}"


def _at_target(options: Sequence[Sequence[Choice]], cost: DesignCost, floor: int, budget: Budget,
               rate: Rate, names: Sequence[str]) -> Folding:
    target = rate.cycles
    if target < 1:
        raise HlsgenError(f"{rate.asked()} leaves less than one clock cycle per frame; at this clock no design "
                          f"exceeds {rate.at_best(1)}")
    if target < floor:
        raise HlsgenError(f"{rate.asked()} needs {target:,} cycles per frame, but the input stream alone takes "
                          f"{floor:,} (one beat per cycle): at most {rate.at_best(floor)}")
    slowest = sorted(((min(c.cycles for c in opts), name) for opts, name in zip(options, names, strict=True)
                      if min(c.cycles for c in opts) > target), reverse=True)
    if slowest:
        shown = ", ".join(f"{name} ({cycles:,} cycles)" for cycles, name in slowest[:3])
        more = f" and {len(slowest) - 3} more layer(s)" if len(slowest) > 3 else ""
        raise HlsgenError(f"{rate.asked()} needs {target:,} cycles per frame, but even at its most parallel "
                          f"folding {shown}{more} take longer: the model reaches at most "
                          f"{rate.at_best(slowest[0][0])}, set by {slowest[0][1]}")
    found = cheapest_fitting(options, cost, budget, target)
    if found is not None:
        return _folding(options, found[0], target, found[1], budget, True, "target_fps", floor)
    total = cost.of([_cheapest(opts, target, _weightings(budget)[0]) for opts in options])
    need = ", ".join(f"{k} {getattr(total, k):,.0f} of {getattr(budget, k):,.0f}" for k in RESOURCES)
    raise HlsgenError(f"{rate.asked()}: the cheapest design meeting {target:,} cycles per frame does not fit the "
                      f"budget ({need})")


def cheapest_fitting(options: Sequence[Sequence[Choice]], cost: DesignCost, budget: Budget,
                     target: int) -> tuple[list[Choice], Resources] | None:
    """Every layer's cheapest folding meeting `target` cycles, under the first cost order whose total
    fits the budget; None when none does."""
    for weigh in _weightings(budget):
        picks = [_cheapest(opts, target, weigh) for opts in options]
        total = cost.of(picks)
        if budget.fits(total):
            return picks, total
    return None


def tradeoffs(options: Sequence[Sequence[Choice]], cost: DesignCost, floor: int, budget: Budget, clock_ns: float,
              fastest: int) -> tuple[Tradeoff, ...]:
    """The trade-off the folding search leaves: from the chosen design's cycles up to the slowest
    folding, in at most TRADEOFF_STEPS geometric steps (at least doubling), the design that each
    `hw.target_fps` gives (the rate rounded down to 3 significant digits, so it asks for at least
    that many cycles), exactly as that setting chooses it; kept are the rows no other row beats in
    cycles and every resource (the Pareto front)."""
    slowest = max([floor] + [max(c.cycles for c in opts) for opts in options])
    ladder, t = [], float(max(fastest, 1))
    step = max(2.0, (slowest / t) ** (1 / TRADEOFF_STEPS))
    while t < slowest:
        ladder.append(math.ceil(t))
        t *= step
    rows = []
    for t in [*ladder, slowest]:
        fps = _three_digits_down(1e9 / (clock_ns * t))
        found = cheapest_fitting(options, cost, budget, Rate(fps, clock_ns).cycles)
        if found is not None:
            rows.append(Tradeoff(fps, max([floor] + [c.cycles for c in found[0]]), found[1],
                                 tuple(c.index for c in found[0])))
    return _pareto(rows)


def _pareto(rows: Sequence[Tradeoff]) -> tuple[Tradeoff, ...]:
    return tuple(r for r in rows if not any(_dominates(o, r) for o in rows))


def _three_digits_down(x: float) -> float:
    """x rounded down to 3 significant digits (12,500,000 stays an integer, 0.1234 -> 0.123)."""
    exp = math.floor(math.log10(x)) - 2
    return float(math.floor(x / 10**exp) * 10**exp) if exp >= 0 else math.floor(x * 10**-exp) / 10**-exp


def _dominates(a: Tradeoff, b: Tradeoff) -> bool:
    """`a` is no slower and no larger than `b` anywhere, and differs from it."""
    costs = [(getattr(a.total, k), getattr(b.total, k)) for k in RESOURCES]
    no_worse = a.cycles <= b.cycles and all(x <= y for x, y in costs)
    return no_worse and (a.cycles < b.cycles or any(x < y for x, y in costs))


Weigh = Callable[[Resources], tuple[float, ...]]


def _weightings(budget: Budget) -> list[Weigh]:
    """Cost orders tried at each T: the sum of budget fractions, then each resource first."""
    def frac(r: Resources, k: str) -> float:
        limit = getattr(budget, k)
        return getattr(r, k) / limit if limit else (math.inf if getattr(r, k) else 0.0)

    def balanced(r: Resources) -> tuple[float, ...]:
        return (sum(frac(r, k) for k in RESOURCES), r.ff)

    def first(k: str) -> Weigh:
        return lambda r: (frac(r, k), sum(frac(r, j) for j in RESOURCES))

    return [balanced, *(first(k) for k in RESOURCES)]


def _cheapest(opts: Sequence[Choice], t: int, weigh: Weigh) -> Choice:
    meeting = [c for c in opts if c.cycles <= t] or [min(opts, key=lambda c: c.cycles)]
    return min(meeting, key=lambda c: (weigh(c.cost), c.cycles, c.index))


class _CheapestBelow:
    """`_cheapest(opts, t, weigh)` for any t in O(log n): the options sorted by cycles and the running
    minimum of the cost order over that prefix (the cheapest among those with cycles <= t)."""

    def __init__(self, opts: Sequence[Choice], weigh: Weigh) -> None:
        self.fallback = min(opts, key=lambda c: c.cycles)
        order = sorted(opts, key=lambda c: c.cycles)
        self.cycles = [c.cycles for c in order]
        self.best: list[Choice] = []
        key = None
        for c in order:
            k = (weigh(c.cost), c.cycles, c.index)
            if key is None or k < key:
                key, cur = k, c
            self.best.append(cur)

    def at(self, t: int) -> Choice:
        i = bisect_right(self.cycles, t)
        return self.best[i - 1] if i else self.fallback


def _minimal(pick: Choice, opts: Sequence[Choice], t: int) -> bool:
    """No folding meeting t is cheaper than `pick` in any resource."""
    return all(getattr(pick.cost, k) <= getattr(c.cost, k) for c in opts if c.cycles <= t for k in RESOURCES)


def _folding(options: Sequence[Sequence[Choice]], picks: list[Choice], t: int, total: Resources, budget: Budget,
             fits: bool, goal: str, floor: int) -> Folding:
    cycles = max([floor] + [c.cycles for c in picks])
    optimal = fits and all(_minimal(p, opts, t) for p, opts in zip(picks, options, strict=True))
    return Folding(tuple(c.index for c in picks), cycles, total, budget, fits and budget.fits(total), optimal, goal)

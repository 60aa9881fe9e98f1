"""The atlas's search for one cell and target: the smallest buffer (packets) reaching the target,
as a point and a bracket (lo, hi] that the probes' intervals support. Pure: it decides the next
probe (a buffer, and how many seeds it needs) from the probes measured so far, so the targets of
a cell share every probe and a rebuilt atlas asks exactly what it asked before (docs/atlas.md,
"Search").

A probe is the utilization of the cell at one buffer over its seeds: their mean and Student's t
95% interval across them (replications, as `sweeps/mrip.py`'s points). For a target it lies
surely above (its interval's low end at or over it), surely below, or within noise; a probe within
noise gets more seeds (doubled, up to the preset's `max_seeds`) before it counts as noise. A
probe of one seed has no interval: it decides only far from the target (`far`, on the idle
fraction 1 - utilization), and takes a second seed otherwise. The bracket is (the largest buffer
surely below, the smallest surely above]: bracketed from the first guess (`AtlasSpec.first_guess`;
doubled up, quartered down), then bisected on a log scale until it is within RESOLUTION or every
buffer left inside it has been found within noise. The point is where the probes' means cross the
target (log-linear between the two probes around it). Where the noise spans more than a step,
the cell is `undecidable` and the bracket is the answer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

RESOLUTION = 2**0.25
"""The search stops when the bracket (largest miss, smallest meet] is this narrow (or one packet):
a quarter of a doubling, 19%."""
BRACKET_DOWN = 4
"""Below a first guess that meets the target, each step divides the buffer by this."""
PLATEAU_GAIN = 0.001
"""A doubled buffer that misses and gains less utilization than this: more buffer will not reach
the target (an AQM holds the queue, or the senders' windows cap the rate)."""
CONFIDENCE = 0.95
"""The level of every probe's interval across seeds."""


@dataclass
class Probe:
    """A probe's utilization: the mean over its seeds, the half-width of its 95% interval across
    them (None with one seed, or under `decide: mean`: the mean decides), its seeds, and its
    other metrics' means."""

    utilization: float
    halfwidth: float | None = None
    seeds: int = 1
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class Ask:
    """The next probe a target needs: `buffer_pkts` with at least `seeds` seeds."""

    buffer_pkts: int
    seeds: int


@dataclass
class Answer:
    """A target's outcome: the point `buffer_pkts` (None: unreachable, or failed), the bracket
    (lo, hi] (hi None: nothing surely met it), the flags that qualify it, and the confidence of
    the bracket's ends (None where they rest on one seed)."""

    buffer_pkts: int | None
    lo: int
    hi: int | None
    flags: list[str]
    reason: str = ""
    confidence: float | None = None


def side(p: Probe, target: float, max_seeds: int, far: float | None = None) -> str:
    """`above`, `below`, `more` (within noise, and seeds left to add), `noise` or `failed`. With
    `far` a probe of one seed (no interval yet) decides only far from the target: its idle
    fraction at most 1/far of the target's (above) or over far times it (below)."""
    if math.isnan(p.utilization):
        return "failed"
    if far is not None and p.halfwidth is None and p.seeds == 1 < max_seeds:
        idle, allowed = 1 - p.utilization, 1 - target
        return "above" if idle <= allowed / far else "below" if idle > allowed * far else "more"
    hw = p.halfwidth or 0.0
    if p.utilization - hw >= target:
        return "above"
    if p.utilization + hw < target:
        return "below"
    return "more" if p.seeds < max_seeds else "noise"


def step(
    probes: dict[int, Probe], target: float, start: int, cap: int, seeds: tuple[int, int], far: float | None = None
) -> Ask | Answer:
    """The next probe for `target`, or its answer. `seeds`: (a new probe's seeds, the most);
    `far`: how a one-seed probe decides (`side`)."""
    first, most = seeds
    sides = {b: side(p, target, most, far) for b, p in probes.items()}
    if "failed" in sides.values():
        b = min(b for b, s in sides.items() if s == "failed")
        return Answer(None, 0, None, ["failed"], f"a run at {b:,} packets failed")
    if not probes:
        return Ask(start, first)
    above = [b for b, s in sides.items() if s == "above"]
    hi = min(above) if above else None
    lo = max((b for b, s in sides.items() if s == "below" and (hi is None or b < hi)), default=0)
    inside = sorted(b for b in sides if lo < b and (hi is None or b < hi))
    more = [b for b in inside if sides[b] == "more"]
    if more:
        return Ask(more[0], min(most, max(2, 2 * probes[more[0]].seeds)))
    if hi is None:
        return _upward(probes, sides, lo, cap, first)
    if lo == 0 and not inside:
        return Ask(max(1, hi // BRACKET_DOWN), first) if hi > 1 else _answer(probes, sides, target, 0, hi, far)
    gaps = [(lo, inside[0] if inside else hi), (inside[-1] if inside else lo, hi)]
    wide = [(a, b) for a, b in gaps if b - a > 1 and (a == 0 or b / a > RESOLUTION)]
    if wide:
        a, b = max(wide, key=lambda g: g[1] / max(g[0], 0.5))
        if a == 0:
            return Ask(max(1, b // BRACKET_DOWN), first)
        return Ask(min(b - 1, max(a + 1, round(math.sqrt(a * b)))), first)
    return _answer(probes, sides, target, lo, hi, far)


def _upward(probes: dict[int, Probe], sides: dict[int, str], lo: int, cap: int, first: int) -> Ask | Answer:
    """Nothing surely meets the target yet: double the largest buffer, unless it is the cap or
    doubling gained nothing (a plateau)."""
    top = max(probes)
    p, half = probes[top], probes.get(top // 2)
    if top >= cap:
        why = f"utilization {p.utilization:.4f} at {top:,}, the cap"
        flag = "unreachable" if sides[top] == "below" else "undecidable"
        return Answer(None, lo, None, [flag], why)
    if sides[top] == "below" and half is not None and p.utilization - half.utilization < PLATEAU_GAIN:
        why = f"utilization {p.utilization:.4f} at {top:,} and {half.utilization:.4f} at {top // 2:,}"
        return Answer(None, lo, None, ["unreachable"], why)
    return Ask(min(cap, 2 * top), first)


def _answer(
    probes: dict[int, Probe], sides: dict[int, str], target: float, lo: int, hi: int, far: float | None
) -> Answer:
    """The point where the means cross the target inside (lo, hi], and the bracket's flags; its
    confidence where both ends were decided by an interval or far from the target."""
    flags, reasons = [], []
    noise = [b for b, s in sides.items() if lo < b < hi]
    if noise and hi - lo > 2 and (lo == 0 or hi / lo > RESOLUTION):  # two packets: as fine as a bracket gets
        flags.append("undecidable")
        p = probes[noise[0]]
        at = f"{p.utilization:.4f} ± {p.halfwidth or 0:.4f} at {noise[0]:,} packets"
        reasons.append(f"utilization {at} holds the target: the bracket is the answer")
    above_hi = [b for b, s in sides.items() if b > hi and s == "below"]
    if above_hi:
        flags.append("non_monotone")
        reasons.append(f"misses again at {min(above_hi):,}")
    pts = sorted((b, probes[b].utilization) for b in probes if lo <= b <= hi and b > 0)
    point = hi
    for (b1, u1), (b2, u2) in zip(pts, pts[1:]):
        if u1 < target <= u2:
            x = math.log(b1) + (target - u1) / (u2 - u1) * (math.log(b2) - math.log(b1))
            point = min(hi, max(lo + 1, math.ceil(math.exp(x) - 1e-9)))
            break
    ends = [probes[b] for b in (lo, hi) if b in probes]
    confident = bool(ends) and all(p.halfwidth is not None or (far is not None and p.seeds == 1) for p in ends)
    return Answer(point, lo, hi, flags, "; ".join(reasons), CONFIDENCE if confident else None)

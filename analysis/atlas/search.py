"""The atlas's search for one cell: the smallest buffer (packets) reaching each utilization target,
bracketed from the cell's BDP and then bisected on a log scale. Pure: it decides the next buffer
from the probes measured so far, so the targets of a cell share every probe and a rebuilt atlas
asks exactly the probes it asked before (docs/atlas.md, "Search")."""

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


@dataclass
class Probe:
    """A probe's metrics (means over seeds) and its utilization interval's half-width (0: none)."""

    utilization: float
    halfwidth: float = 0.0
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class Answer:
    """A target's outcome: `buffer_pkts` (None: unreachable or undecidable), the bracket
    (lo, hi], and the flags that qualify it."""

    buffer_pkts: int | None
    lo: int
    hi: int | None
    flags: list[str]
    reason: str = ""


def _bracket(probes: dict[int, Probe], target: float) -> tuple[int, int | None]:
    """(largest buffer missing below the smallest meeting one, smallest meeting one or None)."""
    meets = [b for b, p in probes.items() if p.utilization >= target]
    hi = min(meets) if meets else None
    below = [b for b, p in probes.items() if p.utilization < target and (hi is None or b < hi)]
    return (max(below) if below else 0), hi


def next_buffer(probes: dict[int, Probe], target: float, start: int, cap: int) -> int | None:
    """The buffer to probe next for `target`, or None once it is decided."""
    if decided(probes, target, cap) is not None:
        return None
    lo, hi = _bracket(probes, target)
    if not probes:
        return start
    if hi is None:
        return min(cap, 2 * lo) if lo else start
    if lo == 0:
        return max(1, hi // BRACKET_DOWN)
    return min(hi - 1, max(lo + 1, round(math.sqrt(lo * hi))))


def decided(probes: dict[int, Probe], target: float, cap: int) -> Answer | None:
    """The answer once the probes decide it, else None."""
    lo, hi = _bracket(probes, target)
    noisy = [b for b, p in probes.items() if abs(p.utilization - target) <= p.halfwidth and p.halfwidth > 0]
    if any(math.isnan(p.utilization) for p in probes.values()):
        return Answer(None, lo, hi, ["failed"], "a probe's run failed")
    if noisy:
        b = min(noisy)
        p = probes[b]
        why = f"utilization {p.utilization:.4f} ± {p.halfwidth:.4f} at {b:,} packets holds the target"
        return Answer(None, lo, hi, ["undecidable"], why)
    if hi is None:
        if not lo:
            return None
        top = probes[lo]
        half = probes.get(lo // 2)
        if lo >= cap:
            return Answer(None, lo, None, ["unreachable"], f"utilization {top.utilization:.4f} at {lo:,}, the cap")
        if half is not None and top.utilization - half.utilization < PLATEAU_GAIN:
            why = f"utilization {top.utilization:.4f} at {lo:,} and {half.utilization:.4f} at {lo // 2:,}"
            return Answer(None, lo, None, ["unreachable"], why)
        return None
    if hi == 1 or (lo and (hi - lo <= 1 or hi / lo <= RESOLUTION)):
        above = [b for b, p in probes.items() if b > hi and p.utilization < target]
        flags = ["non_monotone"] if above else []
        return Answer(hi, lo, hi, flags, f"misses again at {min(above):,}" if above else "")
    return None

"""Minimum-buffer search: for each grid point, the smallest buffer (packets) whose utilization
reaches a target, by bisection over buffer_pkts. Each bisection round is one sweep of all
unresolved points (one probe per point and seed) through the sweep machinery, so probes run on
Ray and are stored like any other runs (and reused when the search is repeated). A point where
more buffer stops raising utilization, or where none up to MAX_BUFFER_GROWTH times the first
guess reaches the target, is unreachable, with the reason (docs/analysis.md, "min-buffer").

With a precision (precision.metrics naming utilization), a probe meets the target only when its
interval lies above it and misses only when it lies below; a probe within noise gets more time
(a run: its half-width halved) or seeds (a replicated point: twice its replications) up to its
caps, and if it is still within noise the point is undecidable at that precision
(docs/precision.md, "Decisions")."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from analysis.precise import PACKETS, Precise
from analysis.rounds import Tally, search_identity, stored_or_run

PLATEAU_GAIN = 0.001
"""A doubled buffer that misses the target and gains less utilization than this over the last
miss: more buffer will not reach it (an AQM holds the queue, or the offered load is too low)."""
MAX_BUFFER_GROWTH = 64
"""The largest buffer a search tries, as a multiple of its first guess (the BDP, for min-buffer)."""


@dataclass
class Search:
    point: dict[str, Any]
    lo: int  # largest buffer known to miss the target (-1: none yet)
    hi: int  # smallest buffer known (or assumed, until probed) to reach it
    verified: bool = False
    probes: dict[int, float] = field(default_factory=dict)  # buffer -> mean utilization
    cap: int = 2**40  # the largest buffer to try
    unreachable: str | None = None
    """Why no buffer reaches the target, once that is known."""
    halfwidths: dict[int, float] = field(default_factory=dict)
    """buffer -> its probe's half-width (0 without a precision)."""
    undecidable: str | None = None
    """Why a probe could not be decided at the precision asked for, if one could not."""
    packets: int = 0
    """Packets the search's probes simulated."""
    seed_values: dict[int, list[float]] = field(default_factory=dict)
    """buffer -> its probe's utilization per seed (the mean of which is `probes`)."""
    one_seed: int | None = None
    """The seed every probe ran on, when its intervals are one run's own (a precision without
    replications): they cover that seed's RTTs and start times, not the spread across seeds."""

    @property
    def done(self) -> bool:
        return (
            self.unreachable is not None or self.undecidable is not None or (self.verified and self.hi - self.lo <= 1)
        )

    @property
    def min_buffer_pkts(self) -> int | None:
        return self.hi if self.done and self.unreachable is None and self.undecidable is None else None

    def next_buffer(self) -> int:
        """The buffer to probe next: `hi` until it is known to reach the target, then the midpoint."""
        return self.hi if not self.verified else (self.lo + self.hi) // 2

    def record(self, buffer_pkts: int, utilization: float, target: float, halfwidth: float = 0.0) -> None:
        """A probe's utilization, and its interval's half-width: within it of the target, the
        probe neither meets nor misses it and the point is undecidable."""
        self.probes[buffer_pkts] = utilization
        self.halfwidths[buffer_pkts] = halfwidth
        if math.isnan(utilization):
            self.unreachable = f"the run at {buffer_pkts:,} packets failed"
        elif abs(utilization - target) <= halfwidth and not (utilization >= target and halfwidth == 0):
            known = f"between {self.lo + 1:,} and {self.hi:,}" if self.verified else f"above {max(self.lo, 0):,}"
            known += " packets"
            if self.one_seed is not None:  # issue 70: no bracket narrower than its replications support
                known += (
                    f" for seed {self.one_seed}'s draw of RTTs and start times; across seeds it is not known "
                    "(precision.max_seeds=10 decides by replications)"
                )
            at = f"utilization {utilization:.4f}"
            said = (
                f"{at} ± {halfwidth:.4f} at {buffer_pkts:,} packets holds the target {target}"
                if math.isfinite(halfwidth)
                else f"{at} at {buffer_pkts:,} packets has no interval (its batch means stayed correlated to its cap)"
            )
            self.undecidable = f"{said}; the minimum is {known}"
        elif not self.verified:
            if utilization >= target:
                self.verified = True
            else:
                self._grow(buffer_pkts, utilization)
        elif utilization >= target:
            self.hi = buffer_pkts
        else:
            self.lo = buffer_pkts

    def _grow(self, buffer_pkts: int, utilization: float) -> None:
        """The guess missed: double it, unless the last doubling gained nothing or the cap is near."""
        last = self.probes.get(self.lo) if self.lo >= 0 else None
        at = f"utilization {utilization:.3f} at {buffer_pkts:,} packets"
        if last is not None and utilization - last < PLATEAU_GAIN:
            self.unreachable = f"{at} and {last:.3f} at {self.lo:,}: more buffer does not raise it"
        elif 2 * buffer_pkts + 1 > self.cap:
            self.unreachable = f"{at}, the largest tried"
        else:
            self.lo, self.hi = buffer_pkts, 2 * buffer_pkts + 1  # the guess was too small


Measured = tuple[float, float, int]
"""A probe's (utilization, half-width, packets simulated): nan when its run failed, 0 without a
precision."""


def bisect(
    searches: list[Search],
    target: float,
    seeds: tuple[int, ...],
    measure: Callable[[list[tuple[Search, int, int]]], list[Measured]],
    progress: Callable[[int, list[Search]], None] | None = None,
) -> list[Search]:
    """Rounds of bisection over every unresolved search; `measure` runs one round's probes (one
    (search, buffer_pkts, seed) each) wherever it likes and returns what it measured. A probe's
    value is the mean over seeds (with a precision there is one seed, and its interval).
    `progress(round, searches)` is called before each round."""
    for round_no in range(1, 65):
        probes = [(s, s.next_buffer()) for s in searches if not s.done]
        if not probes:
            break
        if progress:
            progress(round_no, searches)
        got = measure([(s, b, seed) for s, b in probes for seed in seeds])
        for k, (s, b) in enumerate(probes):
            mine = got[k * len(seeds) : (k + 1) * len(seeds)]
            s.packets += sum(m[2] for m in mine)
            values = [m[0] for m in mine if not math.isnan(m[0])]
            s.seed_values[b] = values
            halfwidth = mine[0][1] if len(mine) == 1 and values else 0.0
            s.record(b, sum(values) / len(values) if values else math.nan, target, halfwidth)
    return searches


def min_buffer_search(
    base_overrides: list[str],
    points: list[dict[str, Any]],
    target: float,
    hi: list[int],
    seeds: tuple[int, ...],
    results_dir: str,
    unreachable: list[str | None] | None = None,
    quiet: bool = False,
    progress: Callable[[int, list[Search]], None] | None = None,
    precision: dict[str, Any] | None = None,
    caps: list[int] | None = None,
    tally: Tally | None = None,
) -> list[Search]:
    """Bisection per point over [0, hi]; `hi` is probed first and doubled while it misses, up to
    MAX_BUFFER_GROWTH x hi (or the point's `caps`). Probes run as sweeps on Ray (`quiet`: without
    their progress) and are stored as runs. `unreachable`: per point, a reason known before any
    probe (or None). `precision`: the base config's precision section, if it names utilization
    (see the module's comment). The search is one sweep, its rounds' probes added to it
    (`search_identity`); `tally` counts the probes it simulated and those it found stored."""

    precise = None
    if precision is not None:  # every probe stops once its interval is clear of the target
        base_overrides = [*base_overrides, f"precision.decide_at={target}"]
    search = search_identity(base_overrides, points, target, hi, seeds, caps)
    if precision is not None:
        precise = Precise(base_overrides, results_dir, target, quiet, search, tally)

    def on_ray(probes: list[tuple[Search, int, int]]) -> list[Measured]:
        asked = [{**s.point, "buffer_pkts": b, "seed": seed} for s, b, seed in probes]
        if precise is not None:
            return precise.measure(asked, precision)  # type: ignore[arg-type]
        run_ids, got = stored_or_run(base_overrides, asked, results_dir, search, quiet, tally, ("utilization", PACKETS))
        return [(got[i][0], 0.0, round(got[i][1] or 0)) if i in got else (math.nan, 0.0, 0) for i in run_ids]

    why = unreachable or [None] * len(points)
    top = caps or [MAX_BUFFER_GROWTH * h for h in hi]
    one = seeds[0] if precision is not None and int(precision.get("max_seeds") or 1) == 1 and len(seeds) == 1 else None
    searches = [Search(p, -1, h, cap=c, unreachable=w, one_seed=one) for p, h, c, w in zip(points, hi, top, why)]
    return bisect(searches, target, seeds, on_ray, progress)

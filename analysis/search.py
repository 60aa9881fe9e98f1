"""Minimum-buffer search: for each grid point, the smallest buffer (packets) whose utilization
reaches a target, by bisection over buffer_pkts. Each bisection round is one sweep of all
unresolved points (one probe per point and seed) through the sweep machinery, so probes run on
Ray and are stored like any other runs (and reused when the search is repeated). A point where
more buffer stops raising utilization, or where none up to MAX_BUFFER_GROWTH times the first
guess reaches the target, is unreachable, with the reason (docs/analysis.md, "min-buffer")."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from analysis.db import ok_run_values
from sweeps.api import run_points

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

    @property
    def done(self) -> bool:
        return self.unreachable is not None or (self.verified and self.hi - self.lo <= 1)

    @property
    def min_buffer_pkts(self) -> int | None:
        return self.hi if self.done and self.unreachable is None else None

    def next_buffer(self) -> int:
        """The buffer to probe next: `hi` until it is known to reach the target, then the midpoint."""
        return self.hi if not self.verified else (self.lo + self.hi) // 2

    def record(self, buffer_pkts: int, utilization: float, target: float) -> None:
        self.probes[buffer_pkts] = utilization
        if math.isnan(utilization):
            self.unreachable = f"the run at {buffer_pkts:,} packets failed"
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


def bisect(
    searches: list[Search],
    target: float,
    seeds: tuple[int, ...],
    measure: Callable[[list[tuple[Search, int, int]]], list[float]],
    progress: Callable[[int, list[Search]], None] | None = None,
) -> list[Search]:
    """Rounds of bisection over every unresolved search; `measure` runs one round's probes (one
    (search, buffer_pkts, seed) each) wherever it likes and returns their utilizations (nan when
    a run failed). Each probe's value is the mean over seeds. `progress(round, searches)` is
    called before each round."""
    for round_no in range(1, 65):
        probes = [(s, s.next_buffer()) for s in searches if not s.done]
        if not probes:
            break
        if progress:
            progress(round_no, searches)
        util = measure([(s, b, seed) for s, b in probes for seed in seeds])
        for k, (s, b) in enumerate(probes):
            values = [u for u in util[k * len(seeds) : (k + 1) * len(seeds)] if not math.isnan(u)]
            s.record(b, sum(values) / len(values) if values else math.nan, target)
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
) -> list[Search]:
    """Bisection per point over [0, hi]; `hi` is probed first and doubled while it misses, up to
    MAX_BUFFER_GROWTH x hi. Probes run as sweeps on Ray (`quiet`: without their progress) and are
    stored as runs. `unreachable`: per point, a reason known before any probe (or None)."""

    def on_ray(probes: list[tuple[Search, int, int]]) -> list[float]:
        status, run_ids = run_points(
            base_overrides, [{**s.point, "buffer_pkts": b, "seed": seed} for s, b, seed in probes], quiet=quiet
        )
        util = ok_run_values(results_dir, run_ids, "utilization")
        return [util[i][0] if i in util else math.nan for i in run_ids]

    why = unreachable or [None] * len(points)
    searches = [Search(p, -1, h, cap=MAX_BUFFER_GROWTH * h, unreachable=w) for p, h, w in zip(points, hi, why)]
    return bisect(searches, target, seeds, on_ray, progress)

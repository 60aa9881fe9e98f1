"""Minimum-buffer search: for each grid point, the smallest buffer (packets) whose utilization
reaches a target, by bisection over buffer_pkts. Each bisection round is one sweep of all
unresolved points (one probe per point and seed) through the sweep machinery, so probes run on
Ray and are stored like any other runs (and reused when the search is repeated)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from analysis.db import ok_run_values
from sweeps.api import run_points


@dataclass
class Search:
    point: dict[str, Any]
    lo: int  # largest buffer known to miss the target (-1: none yet)
    hi: int  # smallest buffer known (or assumed, until probed) to reach it
    verified: bool = False
    probes: dict[int, float] = field(default_factory=dict)  # buffer -> mean utilization

    @property
    def done(self) -> bool:
        return self.verified and self.hi - self.lo <= 1

    @property
    def min_buffer_pkts(self) -> int | None:
        return self.hi if self.done else None

    def next_buffer(self) -> int:
        """The buffer to probe next: `hi` until it is known to reach the target, then the midpoint."""
        return self.hi if not self.verified else (self.lo + self.hi) // 2

    def record(self, buffer_pkts: int, utilization: float, target: float) -> None:
        self.probes[buffer_pkts] = utilization
        if not self.verified:
            if utilization >= target:
                self.verified = True
            else:
                self.lo, self.hi = buffer_pkts, 2 * buffer_pkts + 1  # the guess was too small
        elif utilization >= target:
            self.hi = buffer_pkts
        else:
            self.lo = buffer_pkts


def bisect(
    searches: list[Search],
    target: float,
    seeds: tuple[int, ...],
    measure: Callable[[list[tuple[Search, int, int]]], list[float]],
) -> list[Search]:
    """Rounds of bisection over every unresolved search; `measure` runs one round's probes (one
    (search, buffer_pkts, seed) each) wherever it likes and returns their utilizations (nan when
    a run failed). Each probe's value is the mean over seeds."""
    for _ in range(64):
        probes = [(s, s.next_buffer()) for s in searches if not s.done]
        if not probes:
            break
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
) -> list[Search]:
    """Bisection per point over [0, hi]; `hi` is probed first and doubled while it misses. Probes
    run as sweeps on Ray and are stored as runs."""

    def on_ray(probes: list[tuple[Search, int, int]]) -> list[float]:
        status, run_ids = run_points(
            base_overrides, [{**s.point, "buffer_pkts": b, "seed": seed} for s, b, seed in probes]
        )
        util = ok_run_values(results_dir, run_ids, "utilization")
        return [util[i][0] if i in util else math.nan for i in run_ids]

    return bisect([Search(p, -1, h) for p, h in zip(points, hi)], target, seeds, on_ray)

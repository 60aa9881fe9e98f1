"""Minimum-buffer search: for each grid point, the smallest buffer (packets) whose utilization
reaches a target, by bisection over buffer_pkts. Each bisection round is one sweep of all
unresolved points (one probe per point and seed) through the sweep machinery, so probes run on
Ray and are stored like any other runs (and reused when the search is repeated)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from analysis.db import connect
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


def _utilization(results_dir: str, run_ids: list[str]) -> dict[str, float]:
    con = connect(results_dir)
    rows = con.execute("SELECT run_id, utilization FROM runs WHERE run_id IN (SELECT unnest(?)) AND status = 'ok'",
                       [run_ids]).fetchall()
    return dict(rows)


def min_buffer_search(base_overrides: list[str], points: list[dict[str, Any]], target: float, hi: list[int],
                      seeds: tuple[int, ...], results_dir: str) -> list[Search]:
    """Bisection per point over [0, hi]; `hi` is probed first and doubled while it misses."""
    searches = [Search(p, -1, h) for p, h in zip(points, hi)]
    for _ in range(64):
        todo = [s for s in searches if not s.done]
        if not todo:
            break
        probes = []
        for s in todo:
            b = s.hi if not s.verified else (s.lo + s.hi) // 2
            probes.append((s, b))
        jobs = [{**s.point, "buffer_pkts": b, "seed": seed} for s, b in probes for seed in seeds]
        status, run_ids = run_points(base_overrides, jobs)
        util = _utilization(results_dir, run_ids)
        for k, (s, b) in enumerate(probes):
            ids = run_ids[k * len(seeds):(k + 1) * len(seeds)]
            values = [util[i] for i in ids if i in util]
            mean = sum(values) / len(values) if values else math.nan
            s.probes[b] = mean
            if not s.verified:
                if mean >= target:
                    s.verified = True
                else:
                    s.lo, s.hi = b, 2 * b + 1  # the guess was too small
            elif mean >= target:
                s.hi = b
            else:
                s.lo = b
    return searches

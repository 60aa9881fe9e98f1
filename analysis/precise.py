"""A search's probes at a precision (issue 57): each probe's utilization with its interval, and
more time or seeds for a probe whose interval holds the target, up to its caps. Every probe runs with
precision.decide_at at the target, so that it stops as soon as its interval is clear of it. A
run's probe halves its half-width (a longer run, up to precision.max_duration_s, at most MAX_HALVINGS
times); a replicated point's doubles its replications (up to precision.max_seeds, reusing those
it ran). docs/precision.md, "Decisions"."""

from __future__ import annotations

import math
from typing import Any

from analysis.db import connect
from analysis.rounds import Tally, start_ray_once, stored_or_run
from sweeps.api import run_points

PACKETS = "pkts_per_s * wall_s"
"""A run's simulated packets, from its summary."""
STOPPED_EARLY = ("precision", "decided")
"""Stop reasons of a probe that stopped before its caps."""
RUN_COLUMNS = ("utilization", "utilization_halfwidth", "stop_reason", PACKETS)
"""What a probe's run decides by."""
MAX_HALVINGS = 4
"""A run's half-width is halved at most this often (each halving costs about 4x the run)."""


def within_noise(utilization: float, halfwidth: float, target: float) -> bool:
    return abs(utilization - target) <= halfwidth


class Precise:
    """Measures probes (point dicts with buffer_pkts and seed) at the base config's precision."""

    def __init__(
        self,
        base: list[str],
        results_dir: str,
        target: float,
        quiet: bool,
        search: str | None = None,
        tally: Tally | None = None,
    ) -> None:
        self.base, self.results_dir, self.target, self.quiet = base, results_dir, target, quiet
        self.search, self.tally = search, tally

    def measure(self, asked: list[dict[str, Any]], precision: dict[str, Any]) -> list[tuple[float, float, int]]:
        replicated = int(precision.get("max_seeds") or 1) > 1
        out: list[tuple[float, float, int]] = [(math.nan, 0.0, 0)] * len(asked)
        extra: list[dict[str, Any]] = [{} for _ in asked]
        todo = list(range(len(asked)))
        for step in range(1, 64):
            if not todo:
                break
            points = [{**asked[i], **extra[i]} for i in todo]
            if replicated:  # its replications, as many as its interval needs, stored or run
                start_ray_once()
                status, run_ids = run_points(self.base, points, quiet=self.quiet, search=self.search)
                if status == 2:  # refused before it ran, its one line printed
                    raise SystemExit(2)
                if self.tally is not None:
                    self.tally.replicated += len(points)
                got = self._points(run_ids, points, precision)
            else:
                run_ids, stored = stored_or_run(
                    self.base, points, self.results_dir, self.search, self.quiet, self.tally, RUN_COLUMNS
                )
                got = self._runs(run_ids, stored)
            again = []
            for i, (u, hw, packets, capped, n) in zip(todo, got):
                # A run's escalation is a new run; a point's reuses its replications (its total).
                out[i] = (u, hw, packets + (0 if replicated else out[i][2]))
                capped = capped or (not replicated and step > MAX_HALVINGS)
                if not math.isnan(u) and within_noise(u, hw, self.target) and not capped:
                    extra[i] = self._more(precision, step, n, replicated)
                    again.append(i)
            todo = again
        return out

    @staticmethod
    def _more(precision: dict[str, Any], step: int, n: int, replicated: bool) -> dict[str, Any]:
        if replicated:  # twice the replications: the point's answer then rests on at least as many
            return {"precision.min_seeds": min(int(precision["max_seeds"]), 2 * n)}
        if precision.get("relative") is not None:
            return {"precision.relative": float(precision["relative"]) / 2**step}
        hw = precision["halfwidth"]
        hw = list(hw) if isinstance(hw, (list, tuple)) else [hw]
        return {"precision.halfwidth": [float(h) / 2**step for h in hw]}

    @staticmethod
    def _runs(run_ids: list[str], got: dict[str, tuple]) -> list[tuple[float, float, int, bool, int]]:
        out = []
        for rid in run_ids:
            if rid not in got:
                out.append((math.nan, 0.0, 0, True, 1))
                continue
            u, hw, stop, packets = got[rid]
            out.append((u, math.inf if hw is None else hw, round(packets or 0), stop not in STOPPED_EARLY, 1))
        return out

    def _points(
        self, run_ids: list[str], points: list[dict[str, Any]], precision: dict[str, Any]
    ) -> list[tuple[float, float, int, bool, int]]:
        """(utilization, half-width, packets, capped, replications) of each probe's point."""
        rows = (
            connect(self.results_dir)
            .execute(
                f"""SELECT p.run_ids[1], p.min_seeds, p.utilization_mean, p.utilization_halfwidth, p.replications,
                       p.max_seeds, p.stop_reason,
                       (SELECT sum({PACKETS}) FROM runs r WHERE list_contains(p.run_ids, r.run_id))
                FROM points p WHERE p.run_ids[1] IN (SELECT unnest(?))""",
                [run_ids],
            )
            .fetchall()
        )
        by = {(r[0], r[1]): r[2:] for r in rows}
        out = []
        for rid, point in zip(run_ids, points):
            min_seeds = int(point.get("precision.min_seeds", precision.get("min_seeds") or 1))
            row = by.get((rid, min_seeds))
            if row is None or row[0] is None:
                out.append((math.nan, 0.0, 0, True, 0))
                continue
            u, hw, n, cap, stop, packets = row
            capped = stop not in STOPPED_EARLY or n >= cap
            out.append((u, math.inf if hw is None else hw, round(packets or 0), capped, n))
        return out

"""Pairing engine runs with ns-3 runs of the same configs, and issue 32's and 33's bounds on
them: utilization within 0.03, mean queueing delay within 20% (or 1 ms), drop-or-mark rate within
25%. Used by the cross-check reproductions (aqm_backends, modern_backends)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

UTIL_TOL = 0.03
"""Issue 32: utilization within 0.03, mean sojourn within 20% (or 1 ms), drop-or-mark rate within 25%."""
SOJOURN_REL, SOJOURN_ABS_MS = 0.20, 1.0
RATE_REL = 0.25
MIN_EVENTS = 50
"""Drops and marks per run (ns-3's, mean of the seeds) below which the rate is not checked."""
METRICS = {
    "utilization": "avg(utilization)",
    "sojourn": "avg(mean_queue_delay_ms)",
    "rate": "avg(loss_rate + coalesce(mark_rate, 0))",
    "marks": "avg(coalesce(bottleneck_marks, 0))",
    "drops": "avg(bottleneck_drops)",
    "timeouts": "avg(timeouts)",
    "seeds": "count(*)",
}


def points(
    con: Any,
    name: str,
    keys: Sequence[str],
    ns3_version: str,
    metrics: dict[str, str] = METRICS,
    table: str = "runs",
    other: str = "ns3",
    check: Any = None,
) -> dict[tuple, dict[str, dict[str, float]]]:
    """Per point (`keys`, config columns), per backend, the seed means of `metrics` over the seeds
    both backends ran (the `other` backend's runs of `ns3_version` only: the scenario's digest is
    in it), and under "check" the point's `check(engine, other)` (`verdicts`); `table`: runs, or a
    view of them with more columns."""
    cols = ", ".join(keys)
    aggs = ", ".join(f"{sql} AS {k}" for k, sql in metrics.items())
    rows = con.execute(
        f"""WITH ok AS (SELECT * FROM {table} WHERE name = ? AND status = 'ok'
                        AND (backend = 'engine' OR backend_version = ?)),
            paired AS (SELECT config_id FROM ok GROUP BY config_id HAVING count(DISTINCT backend) = 2)
        SELECT backend, {cols}, {aggs} FROM ok WHERE config_id IN (SELECT config_id FROM paired)
        GROUP BY ALL ORDER BY ALL""",
        [name, ns3_version],
    ).fetchall()
    out: dict[tuple, dict[str, dict[str, float]]] = {}
    for backend, *rest in rows:
        key, values = tuple(rest[: len(keys)]), rest[len(keys) :]
        out.setdefault(key, {})[backend] = dict(zip(metrics, values))
    paired = {k: v for k, v in out.items() if len(v) == 2}
    for by in paired.values():
        by["check"] = (check or verdicts)(by["engine"], by[other])  # once per point: rows, reading and groups read it
    return paired


def verdicts(ours: dict[str, float], ns3: dict[str, float]) -> tuple[bool, bool | None, bool | None]:
    """(utilization, mean sojourn, drop-or-mark rate) within the bounds; the rate is not
    checked (None) where ns-3 counted fewer than MIN_EVENTS drops and marks per run, too few for a
    25% bound to mean anything."""
    util = abs(ours["utilization"] - ns3["utilization"]) <= UTIL_TOL
    sojourn = None  # not measured (ns-3's drop-tail device queue has no sojourn trace)
    if ours["sojourn"] is not None and ns3["sojourn"] is not None:
        gap = abs(ours["sojourn"] - ns3["sojourn"])
        sojourn = gap <= SOJOURN_ABS_MS or gap <= SOJOURN_REL * ns3["sojourn"]
    if ns3.get("drops", MIN_EVENTS) + ns3.get("marks", 0) < MIN_EVENTS:
        return util, sojourn, None
    return util, sojourn, abs(ours["rate"] - ns3["rate"]) <= RATE_REL * ns3["rate"]


def ok(check: tuple[bool, bool | None, bool | None]) -> bool:
    return all(c is not False for c in check)


def median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else math.nan


def equality_axes(ax: Any, metric: str, label: str) -> None:
    """Finishes one panel of ns-3's figure (x) against ours (y): the line of equality, log scales
    for every metric but utilization, and the axis labels."""
    lo, hi = ax.get_xlim()
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
    if metric != "utilization":
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel(f"ns-3 3.44: {label}")
    ax.set_ylabel(f"ours: {label}")

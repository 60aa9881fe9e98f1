"""The classic rules judged against an atlas (docs/atlas.md, "The rules, judged"): where each is
safe (at least the minimum buffer), how far it over-provisions there, and the exponent a of
B_min ~ N^a per sender, discipline, speed, RTT and target, with its interval."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any

from analysis.atlas_schema import RULES


def judged(rows: list[dict[str, Any]], rule: str) -> tuple[list[dict[str, Any]], list[float]]:
    """The answered rows where `rule` applies, and rule / B_min where it is safe: at or above the
    answer's bracket (its hi_pkts, which surely meets the target), not merely above the point."""
    cells = [r for r in rows if r["min_buffer_pkts"] and r["hi_pkts"] and r[f"rule_{rule}_pkts"]]
    col = f"rule_{rule}_pkts"
    return cells, [r[col] / r["min_buffer_pkts"] for r in cells if r[col] >= r["hi_pkts"]]


def verdicts(rows: list[dict[str, Any]]) -> dict[tuple[str, float], dict[str, float]]:
    """Per (rule, target): cells judged (answered and the rule applies), the fraction where it is
    safe, and the median of rule / B_min where it is."""
    out: dict[tuple[str, float], dict[str, float]] = {}
    for rule in RULES:
        for target in sorted({r["target"] for r in rows}):
            cells, safe = judged([r for r in rows if r["target"] == target], rule)
            out[(rule, target)] = {
                "cells": len(cells),
                "safe": len(safe) / len(cells) if cells else math.nan,
                "over": statistics.median(safe) if safe else math.nan,
            }
    return out


def t_quantile(df: int, confidence: float = 0.95) -> float:
    """Student's t quantile, from the engine's own interval rule (`sim._core.t_interval`) on a
    sample of df + 1 values whose standard error is 1: no statistics library is a dependency."""
    from sim._core import t_interval

    n = df + 1
    values = [0.0] * (n - 1) + [0.0]
    values[0], values[1] = -math.sqrt(n * (n - 1) / 2), math.sqrt(n * (n - 1) / 2)  # sd = sqrt(n): se = 1
    got = t_interval(values, confidence)
    assert got is not None
    return got[1]


def exponents(rows: list[dict[str, Any]], min_points: int = 3) -> dict[tuple, tuple[float, float, int]]:
    """Per (tcp, queue, core_mbps, rtt_ms, target) with >= min_points answered flow counts: the
    least-squares slope a of log B_min over log N, its 95% half-width, and the points."""
    groups: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        if r["min_buffer_pkts"]:
            key = (r["tcp"], r["queue"], r["core_mbps"], r["rtt_ms"], r["target"])
            groups[key].append((math.log(r["flows"]), math.log(r["min_buffer_pkts"])))
    out = {}
    for key, pts in groups.items():
        n = len(pts)
        if n < min_points:
            continue
        mx, my = statistics.fmean(p[0] for p in pts), statistics.fmean(p[1] for p in pts)
        sxx = sum((x - mx) ** 2 for x, _ in pts)
        if sxx == 0:
            continue
        a = sum((x - mx) * (y - my) for x, y in pts) / sxx
        resid = sum((y - my - a * (x - mx)) ** 2 for x, y in pts)
        se = math.sqrt(resid / (n - 2) / sxx) if n > 2 else math.inf
        out[key] = (a, t_quantile(n - 2) * se if n > 2 else math.inf, n)
    return out

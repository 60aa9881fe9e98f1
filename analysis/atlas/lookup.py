"""`python -m analysis atlas query tcp=cubic queue=droptail flows=300 core_mbps=1000 rtt_ms=80
target=0.95`: the minimum buffer at a point, measured if it is a cell, else interpolated from the
cells around it, never extrapolated; with what each classic rule gives there (docs/atlas.md,
"Query").

Interpolation rule: log(B_min / BDP) is multilinear in log(flows), log(core_mbps) and log(rtt_ms)
between the 2^k cells that bracket the point on its k off-grid axes."""

from __future__ import annotations

import itertools
import math
from typing import Any

from analysis.atlas.spec import AXES, NUMERIC, Cell
from sweeps.errors import exit_usage

KEYS = (*AXES, "target", "atlas", "results_dir")


def parse(args: list[str]) -> dict[str, Any]:
    q: dict[str, Any] = {"traffic": "none", "results_dir": "results"}
    for a in args:
        key, sep, value = a.partition("=")
        key = key.removeprefix("+") if key == "+atlas" else key  # as build takes it
        if not sep or key not in KEYS:
            exit_usage(f"{key or a}: is not an atlas query key; allowed: {', '.join(KEYS)}")
        q[key] = value
    for key in (*NUMERIC, "target"):
        if key not in q:
            exit_usage(f"{key}: missing; a query names {', '.join((*AXES[:5], 'target'))}")
        try:
            q[key] = float(q[key])
        except ValueError:
            exit_usage(f"{key}: must be a number, got {q[key]!r}")
    for key in ("tcp", "queue"):
        if key not in q:
            exit_usage(f"{key}: missing; a query names {', '.join((*AXES[:5], 'target'))}")
    if not 0 < q["target"] <= 1:
        exit_usage(f"target: must be a utilization in (0, 1], got {q['target']}")
    return q


def _axis_values(rows: list[dict[str, Any]], axis: str) -> list[float]:
    return sorted({float(r[axis]) for r in rows})


def bracket(values: list[float], x: float) -> list[float] | None:
    """[x] on the grid, [below, above] inside it, None outside."""
    if any(math.isclose(v, x) for v in values):
        return [next(v for v in values if math.isclose(v, x))]
    below, above = [v for v in values if v < x], [v for v in values if v > x]
    return [below[-1], above[0]] if below and above else None


def answer(rows: list[dict[str, Any]], q: dict[str, Any]) -> dict[str, Any]:
    """{'kind': measured|interpolated|outside|unanswered, 'buffer_pkts', 'cells': [(row, weight)], ...}."""
    corners: dict[str, list[float]] = {}
    for axis in NUMERIC:
        values = _axis_values(rows, axis)
        b = bracket(values, q[axis])
        if b is None:
            nearest = min(rows, key=lambda r: sum(abs(math.log(float(r[a]) / q[a])) for a in NUMERIC))
            return {"kind": "outside", "axis": axis, "values": values, "nearest": nearest}
        corners[axis] = b
    by_key = {tuple(float(r[a]) for a in NUMERIC): r for r in rows}
    used, y = [], 0.0
    for combo in itertools.product(*(corners[a] for a in NUMERIC)):
        weight = 1.0
        for axis, v in zip(NUMERIC, combo):
            b = corners[axis]
            if len(b) == 2:
                t = (math.log(q[axis]) - math.log(b[0])) / (math.log(b[1]) - math.log(b[0]))
                weight *= t if v == b[1] else 1 - t
        row = by_key.get(combo)
        if row is None or row["min_buffer_pkts"] is None:
            return {"kind": "unanswered", "cell": combo, "row": row}
        used.append((row, weight))
        y += weight * math.log(row["min_buffer_bdp"])
    bdp = q["core_mbps"] * 1e6 * q["rtt_ms"] / 1e3 / (8 * _pkt_bytes(used[0][0]))
    kind = "measured" if len(used) == 1 else "interpolated"
    return {"kind": kind, "buffer_bdp": math.exp(y), "buffer_pkts": math.exp(y) * bdp, "bdp": bdp, "cells": used}


def _pkt_bytes(row: dict[str, Any]) -> float:
    return row["core_mbps"] * 1e6 * row["rtt_ms"] / 1e3 / 8 / row["bdp_pkts"]


def _describe(r: dict[str, Any]) -> str:
    return f"flows={r['flows']} core_mbps={r['core_mbps']:g} rtt_ms={r['rtt_ms']:g}"


def main(args: list[str]) -> int:
    from analysis.atlas.rules import rules
    from analysis.db import NoResults, connect

    q = parse(args)
    try:
        con = connect(q["results_dir"])
    except NoResults as e:
        exit_usage(f"results_dir: {e}")
    where = "tcp = ? AND queue = ? AND traffic = ?" + (" AND atlas = ?" if "atlas" in q else "")
    params = [q["tcp"], q["queue"], q["traffic"]] + ([q["atlas"]] if "atlas" in q else [])
    for key in ("tcp", "queue", "traffic", "atlas"):
        known = [r[0] for r in con.execute(f"SELECT DISTINCT {key} FROM atlas ORDER BY 1").fetchall()]
        if key in q and q[key] not in known:
            exit_usage(f"{key}: {q[key]!r} is not in the atlas; allowed: {', '.join(map(str, known)) or 'none built'}")
    targets = [
        r[0] for r in con.execute(f"SELECT DISTINCT target FROM atlas WHERE {where} ORDER BY 1", params).fetchall()
    ]
    if not any(math.isclose(t, q["target"]) for t in targets):
        exit_usage(f"target: {q['target']} is not an atlas target; allowed: {', '.join(map(str, targets))}")
    cur = con.execute(f"SELECT * FROM atlas WHERE {where} AND abs(target - ?) < 1e-9", [*params, q["target"]])
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    got = answer(rows, q)
    point = " ".join(
        f"{k}={q[k] if k in ('tcp', 'queue', 'traffic') else format(q[k], 'g')}" for k in (*AXES, "target")
    )
    if got["kind"] == "outside":
        near = got["nearest"]
        print(
            f"{point}: outside the atlas on {got['axis']} ({', '.join(f'{v:g}' for v in got['values'])}); "
            f"no extrapolation. Nearest cell: {_describe(near)}: {_fmt(near)}"
        )
        return 1
    if got["kind"] == "unanswered":
        row = got["row"]
        why = f"{row['flags']}: {row['reason']}" if row else "not built"
        print(
            f"{point}: the cell flows={got['cell'][0]:g} core_mbps={got['cell'][1]:g} rtt_ms={got['cell'][2]:g} "
            f"has no minimum buffer ({why})"
        )
        return 1
    print(f"{point}: {got['kind']} minimum buffer {got['buffer_pkts']:,.0f} packets ({got['buffer_bdp']:.3g} x BDP)")
    for row, w in got["cells"]:
        print(f"  cell {_describe(row)}: {_fmt(row)}" + (f", weight {w:.3f}" if got["kind"] == "interpolated" else ""))
    cell = Cell(q["tcp"], q["queue"], round(q["flows"]), q["core_mbps"], q["rtt_ms"], q["traffic"])
    for name, pkts in rules(round(_pkt_bytes(rows[0])), cell, q["target"]).items():
        if pkts is not None:
            verdict = "meets" if pkts >= got["buffer_pkts"] else "falls short of"
            print(f"  rule {name}: {pkts:,.0f} packets ({pkts / got['bdp']:.3g} x BDP), {verdict} it")
    return 0


def _fmt(row: dict[str, Any]) -> str:
    if row["min_buffer_pkts"] is None:
        return f"no answer ({row['flags']})"
    return f"{row['min_buffer_pkts']:,} packets ({row['min_buffer_bdp']:.3g} x BDP)"

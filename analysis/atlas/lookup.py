"""`python -m analysis atlas query tcp=cubic queue=droptail flows=300 core_mbps=1000 rtt_ms=80
target=0.95 [--format json]`, and `analysis.atlas.query(...)` from Python: the minimum buffer at a
point as a point and a bracket, measured if the point is a cell, else interpolated from the cells
around it, never extrapolated; with the packet size, every cell it used and its flags, an
interpolation error measured on the grid itself, and what each classic rule gives there
(docs/atlas.md, "Query").

Interpolation rule: log(B / BDP) is multilinear in log(flows), log(core_mbps) and log(rtt_ms)
between the 2^k cells that bracket the point on its k off-grid axes, for the point and for each
end of the bracket. Its error: each cell of the slice with answered neighbours on both sides along
an axis is predicted from them alone (leave one out), and the median and 90th percentile of
|log(predicted / answered)| over the axes the query interpolates on are reported."""

from __future__ import annotations

import itertools
import json
import math
import statistics
from pathlib import Path
from typing import Any

from analysis.atlas.spec import AXES, NUMERIC, Cell
from analysis.atlas_schema import atlas_files
from sweeps.errors import exit_usage
from sweeps.schema import SECTIONS

KEYS = (*AXES, "target", "atlas", "results_dir")
REQUIRED = (*AXES[:5], "target")


def parse(args: list[str]) -> dict[str, Any]:
    q: dict[str, Any] = {"traffic": "none", "results_dir": "results"}
    for a in args:
        key, sep, value = a.partition("=")
        key = key.removeprefix("+") if key == "+atlas" else key  # as build takes it
        if not sep or key not in KEYS:
            exit_usage(f"{key or a}: is not an atlas query key; allowed: {', '.join(KEYS)}")
        q[key] = value
    return checked(q)


def checked(q: dict[str, Any]) -> dict[str, Any]:
    """The query's values typed, or exit 2 naming the first that is missing or wrong."""
    for key in REQUIRED:
        if key not in q:
            exit_usage(f"{key}: missing; a query names {', '.join(REQUIRED)}")
    for key in (*NUMERIC, "target"):
        try:
            q[key] = float(q[key])
        except (TypeError, ValueError):
            exit_usage(f"{key}: must be a number, got {q[key]!r}")
        if not q[key] > 0:
            exit_usage(f"{key}: must be > 0, got {q[key]:g}")
    if not q["target"] <= 1:
        exit_usage(f"target: must be a utilization in (0, 1], got {q['target']}")
    return q


def slice_rows(q: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The atlas rows of the query's sender, discipline, traffic and target, and where they came
    from (a built atlas in results_dir, else the copy shipped with the project)."""
    import duckdb

    files = atlas_files(q["results_dir"])
    if not files:
        exit_usage(f"atlas: none built in {q['results_dir']} and none shipped: run `atlas build +atlas=small`")
    listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    con = duckdb.connect()
    con.execute(f"CREATE VIEW atlas AS SELECT * FROM read_parquet([{listed}], union_by_name = true, filename = true)")
    where, params = "tcp = ? AND queue = ? AND traffic = ?", [q["tcp"], q["queue"], q["traffic"]]
    if q.get("atlas"):
        where, params = where + " AND atlas = ?", [*params, q["atlas"]]
    for key in ("atlas", "tcp", "queue", "traffic"):
        known = [r[0] for r in con.execute(f"SELECT DISTINCT {key} FROM atlas ORDER BY 1").fetchall()]
        if q.get(key) is not None and q[key] not in known:
            renamed = SECTIONS.get(key, {}).get("renamed", {}).get(q[key], "")  # tcp=linux: cubic since 0.21.0
            if renamed.split(" ", 1)[0] in known:
                exit_usage(f"{key}: {q[key]!r} was renamed: use {key}={renamed}")
            exit_usage(f"{key}: {q[key]!r} is not in the atlas; allowed: {', '.join(map(str, known))}")
    targets = [
        r[0] for r in con.execute(f"SELECT DISTINCT target FROM atlas WHERE {where} ORDER BY 1", params).fetchall()
    ]
    if not any(math.isclose(t, q["target"]) for t in targets):
        exit_usage(f"target: {q['target']:g} is not an atlas target; allowed: {', '.join(map(str, targets))}")
    cur = con.execute(f"SELECT * FROM atlas WHERE {where} AND abs(target - ?) < 1e-9", [*params, q["target"]])
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    if len({r["atlas"] for r in rows}) > 1:
        names = sorted({r["atlas"] for r in rows})
        exit_usage(f"atlas: the point is in {', '.join(names)}; name one, as atlas={names[0]}")
    return rows, rows[0].pop("filename") if rows else ""


def bracket(values: list[float], x: float) -> list[float] | None:
    """[x] on the grid, [below, above] inside it, None outside."""
    if any(math.isclose(v, x) for v in values):
        return [next(v for v in values if math.isclose(v, x))]
    below, above = [v for v in values if v < x], [v for v in values if v > x]
    return [below[-1], above[0]] if below and above else None


def _log_bdp(value: float | None, bdp: float) -> float | None:
    return None if value is None else (math.log(value / bdp) if value > 0 else -math.inf)


def answer(rows: list[dict[str, Any]], q: dict[str, Any]) -> dict[str, Any]:
    """{'kind': measured|interpolated|outside|unanswered, ...} (see `query`)."""
    corners: dict[str, list[float]] = {}
    for axis in NUMERIC:
        values = sorted({float(r[axis]) for r in rows})
        b = bracket(values, q[axis])
        if b is None:
            at_rtt = min(rows, key=lambda r: abs(math.log(float(r["rtt_ms"]) / q["rtt_ms"])))["rtt_ms"]
            near = min(
                (r for r in rows if r["rtt_ms"] == at_rtt),
                key=lambda r: sum(abs(math.log(float(r[a]) / q[a])) for a in NUMERIC),
            )
            return {"kind": "outside", "axis": axis, "values": values, "nearest": _cell(near)}
        corners[axis] = b
    by_key = {tuple(float(r[a]) for a in NUMERIC): r for r in rows}
    used, logs = [], {"point": 0.0, "lo": 0.0, "hi": 0.0}
    for combo in itertools.product(*(corners[a] for a in NUMERIC)):
        weight = 1.0
        for axis, v in zip(NUMERIC, combo):
            b = corners[axis]
            if len(b) == 2:
                t = (math.log(q[axis]) - math.log(b[0])) / (math.log(b[1]) - math.log(b[0]))
                weight *= t if v == b[1] else 1 - t
        row = by_key.get(combo)
        if row is None or row["min_buffer_pkts"] is None or row["hi_pkts"] is None:
            return {"kind": "unanswered", "cell": _cell(row) if row else dict(zip(NUMERIC, combo)), "built": bool(row)}
        used.append((row, weight))
        for key, col in (("point", "min_buffer_pkts"), ("lo", "lo_pkts"), ("hi", "hi_pkts")):
            logs[key] += weight * _log_bdp(row[col], row["bdp_pkts"])  # type: ignore[operator]
    bdp = q["core_mbps"] * 1e6 * q["rtt_ms"] / 1e3 / (8 * pkt_bytes(used[0][0]))
    off_grid = [a for a in NUMERIC if len(corners[a]) == 2]
    return {
        "kind": "measured" if len(used) == 1 else "interpolated",
        "buffer_pkts": math.exp(logs["point"]) * bdp,
        "lo_pkts": math.exp(logs["lo"]) * bdp,
        "hi_pkts": math.exp(logs["hi"]) * bdp,
        "buffer_bdp": math.exp(logs["point"]),
        "bdp_pkts": bdp,
        "cells": [{**_cell(r), "weight": w} for r, w in used],
        "interpolation_error": loo_error(rows, off_grid) if off_grid else None,
    }


def pkt_bytes(row: dict[str, Any]) -> int:
    return round(row["core_mbps"] * 1e6 * row["rtt_ms"] / 1e3 / 8 / row["bdp_pkts"])


def _cell(r: dict[str, Any]) -> dict[str, Any]:
    keys = (*NUMERIC, "min_buffer_pkts", "lo_pkts", "hi_pkts", "min_buffer_bdp", "confidence", "flags", "reason")
    return {k: r.get(k) for k in keys}


def loo_error(rows: list[dict[str, Any]], axes: list[str]) -> dict[str, Any] | None:
    """Leave one out on the slice: each answered cell with answered neighbours on both sides along
    one of `axes`, predicted by interpolating between them; the median and 90th percentile of the
    error as a factor (1.2: 20%), and the cells behind them."""
    answered = {tuple(float(r[a]) for a in NUMERIC): r for r in rows if r["min_buffer_bdp"]}
    errors = []
    for key, r in answered.items():
        for axis in axes:
            i = NUMERIC.index(axis)
            values = sorted({k[i] for k in answered if all(k[j] == key[j] for j in range(3) if j != i)})
            at = values.index(key[i])
            if 0 < at < len(values) - 1:
                lo, hi = (answered[key[:i] + (values[at + d],) + key[i + 1 :]] for d in (-1, 1))
                t = (math.log(key[i]) - math.log(values[at - 1])) / (
                    math.log(values[at + 1]) - math.log(values[at - 1])
                )
                pred = (1 - t) * math.log(lo["min_buffer_bdp"]) + t * math.log(hi["min_buffer_bdp"])
                errors.append(abs(pred - math.log(r["min_buffer_bdp"])))
    if not errors:
        return None
    errors.sort()
    return {
        "median_factor": math.exp(statistics.median(errors)),
        "p90_factor": math.exp(errors[min(len(errors) - 1, int(0.9 * len(errors)))]),
        "cells": len(errors),
    }


def query(
    tcp: str,
    queue: str,
    flows: float,
    core_mbps: float,
    rtt_ms: float,
    target: float,
    traffic: str = "none",
    atlas: str | None = None,
    results_dir: str | Path = "results",
) -> dict[str, Any]:
    """The atlas's answer at a point, as `atlas query --format json` prints it: `kind`
    (measured, interpolated, outside or unanswered), `buffer_pkts` with its bracket `lo_pkts` and
    `hi_pkts`, `buffer_bdp`, `bdp_pkts`, `pkt_bytes`, `confidence`, the `cells` used (each with its
    weight, answer, bracket and flags), `flags` (theirs, merged), `interpolation_error` (None at a
    cell), `rules` (each rule's packets and whether it is above the bracket), the atlas, its engine
    version and file. Bad input raises SystemExit(2), as the command exits."""
    q = checked(dict(tcp=tcp, queue=queue, flows=flows, core_mbps=core_mbps, rtt_ms=rtt_ms, target=target))
    q.update(traffic=traffic, atlas=atlas, results_dir=str(results_dir))
    rows, source = slice_rows(q)
    got = answer(rows, q)
    got.update(
        point={k: q[k] for k in (*AXES, "target")},
        atlas=rows[0]["atlas"],
        engine_version=rows[0]["engine_version"],
        source=source,
        pkt_bytes=pkt_bytes(rows[0]),
    )
    if got["kind"] in ("measured", "interpolated"):
        got["flags"] = sorted({f for c in got["cells"] for f in (c["flags"] or "").split(",") if f})
        got["confidence"] = min((c["confidence"] for c in got["cells"] if c["confidence"]), default=None)
        got["rules"] = _rules(q, got)
    return got


def _rules(q: dict[str, Any], got: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each rule's buffer at the point, and whether it is safe: at or above the bracket's top."""
    from analysis.atlas.rules import rules

    cell = Cell(q["tcp"], q["queue"], round(q["flows"]), q["core_mbps"], q["rtt_ms"], q["traffic"])
    out = {}
    for name, pkts in rules(got["pkt_bytes"], cell, q["target"]).items():
        if pkts is not None:
            safe = pkts >= got["hi_pkts"]
            out[name] = {"pkts": pkts, "safe": safe, "short": pkts < got["lo_pkts"]}
    return out


def main(args: list[str], fmt: str = "text") -> int:
    import sim

    q = parse(args)
    keys = ("tcp", "queue", "flows", "core_mbps", "rtt_ms", "target", "traffic", "atlas", "results_dir")
    got = query(**{k: q.get(k) for k in keys})
    if got["kind"] == "outside":
        where = ", ".join(f"{k}={v}" for k, v in got["nearest"].items() if k in NUMERIC)
        exit_usage(
            f"{got['axis']}: {q[got['axis']]:g} is outside the atlas ({', '.join(f'{v:g}' for v in got['values'])}); "
            f"no extrapolation. Nearest cell at rtt_ms {got['nearest']['rtt_ms']:g}: {where}: {_fmt(got['nearest'])}"
        )
    if fmt == "json":
        print(json.dumps(got, indent=1, default=str))
        return 0 if got["kind"] in ("measured", "interpolated") else 1
    for line in text(got, sim.ENGINE_VERSION):
        print(line)
    return 0 if got["kind"] in ("measured", "interpolated") else 1


def text(got: dict[str, Any], engine: str) -> list[str]:
    """The answer as the command prints it."""
    point = " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in got["point"].items())
    built = f"atlas {got['atlas']} (engine {got['engine_version']}, {got['pkt_bytes']:,}-byte packets)"
    if got["engine_version"] != engine:
        built += f"; this engine is {engine}: `atlas build +atlas={got['atlas']}` rebuilds it"
    if got["kind"] == "unanswered":
        c = got["cell"]
        where = " ".join(f"{k}={c[k]:g}" for k in NUMERIC)
        why = f"{c['flags']}: {c['reason']}" if got["built"] else "not built"
        return [f"{point}: no minimum buffer: the cell {where} has none ({why})", f"  from {built}"]
    conf = f"{got['confidence']:.0%} " if got["confidence"] else ""
    out = [
        f"{point}: {got['kind']} minimum buffer {got['buffer_pkts']:,.0f} packets ({got['buffer_bdp']:.3g} x BDP), "
        f"{conf}bracket ({got['lo_pkts']:,.0f}, {got['hi_pkts']:,.0f}] packets; BDP {got['bdp_pkts']:,.0f}",
        f"  from {built}",
    ]
    err = got["interpolation_error"]
    if err:
        out.append(
            f"  interpolation error on this slice (leave one out, {err['cells']} cells): median "
            f"x{err['median_factor']:.2f}, 90th percentile x{err['p90_factor']:.2f}"
        )
    for c in got["cells"]:
        w = f", weight {c['weight']:.3f}" if got["kind"] == "interpolated" else ""
        flags = f" [{c['flags']}: {c['reason']}]" if c["flags"] else ""
        out.append(
            f"  cell flows={c['flows']:g} core_mbps={c['core_mbps']:g} rtt_ms={c['rtt_ms']:g}: {_fmt(c)}{w}{flags}"
        )
    if got["flags"]:
        out.append(f'  flagged cells in this answer: {", ".join(got["flags"])} (docs/atlas.md, "Search")')
    for name, r in got["rules"].items():
        verdict = (
            "above the bracket: safe"
            if r["safe"]
            else ("below the bracket: short" if r["short"] else "inside the bracket")
        )
        out.append(f"  rule {name}: {r['pkts']:,.0f} packets ({r['pkts'] / got['bdp_pkts']:.3g} x BDP), {verdict}")
    return out


def _fmt(c: dict[str, Any]) -> str:
    if c["min_buffer_pkts"] is None:
        return f"no answer ({c['flags']})"
    hi = "?" if c["hi_pkts"] is None else f"{c['hi_pkts']:,}"
    return f"{c['min_buffer_pkts']:,} packets ({c['min_buffer_bdp']:.3g} x BDP), bracket ({c['lo_pkts']:,}, {hi}]"

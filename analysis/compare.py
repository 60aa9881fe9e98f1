"""`python -m analysis compare [--name NAME | --sweep ID] [--metric utilization] [--by tcp,flows]
[--threshold 0.015] [--plot FILE]`: the same configs run on several backends (`backend=engine,ns2`),
one row per config with each backend's value of a metric, the differences from the first backend
(the engine when present) and the configs where they differ by more than the threshold.

Runs are paired by `config_id` (the resolved config's hash, equal on every backend), and only
configs that every backend in the selection ran are compared, so averages never mix unpaired
seeds. With `--by`, rows are those columns' values, averaged over the rest (seeds, say)."""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from sweeps.backends import BACKENDS
from sweeps.schema import OPERATIONAL
from sweeps.store import RUNS_SCHEMA


@dataclass
class Comparison:
    backends: list[str]
    keys: list[str]
    rows: list[dict[str, Any]]
    """Each: the key columns, then one value per backend, then `<backend> - <first>` per other backend."""
    threshold: float

    def disagreeing(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if any(abs(d) > self.threshold for d in self.diffs(r) if d is not None)]

    def diffs(self, row: dict[str, Any]) -> list[float | None]:
        return [row[f"{b} - {self.backends[0]}"] for b in self.backends[1:]]


class CompareError(ValueError):
    """Bad arguments or nothing to compare: one line, exit 2."""


def numeric_columns() -> list[str]:
    return [f.name for f in RUNS_SCHEMA if pa.types.is_floating(f.type) or pa.types.is_integer(f.type)]


def compare(
    con: duckdb.DuckDBPyConnection, metric: str = "utilization", by: list[str] | None = None, threshold: float = 0.015
) -> Comparison:
    """The comparison over the runs the connection's views hold."""
    if metric not in numeric_columns():
        raise CompareError(
            f"--metric: {metric!r} is not a numeric column of runs; e.g. utilization, loss_rate, "
            "goodput_mbps, mean_queue_pkts (`python -m analysis schema runs` lists them)"
        )
    unknown = [k for k in by or [] if k not in RUNS_SCHEMA.names]
    if unknown:
        raise CompareError(f"--by: {unknown[0]!r} is not a column of runs (`python -m analysis schema runs`)")
    backends = _backends(con)
    if len(backends) < 2:
        raise CompareError(
            f"nothing to compare: the selected runs are all on {backends[0] if backends else 'no'} "
            "backend; run the grid with backend=engine,ns2 (or ns3) first"
        )
    keys = list(by) if by else ["config_id", "overrides"]
    group = ", ".join(by) if by else "config_id"
    select = group if by else "config_id, any_value(overrides)"
    per_backend = ", ".join(f"avg({metric}) FILTER (WHERE backend = '{b}') AS \"{b}\"" for b in backends)
    data = con.execute(f"""
        WITH paired AS (
            SELECT * FROM runs WHERE status = 'ok' AND config_id IN (
                SELECT config_id FROM runs WHERE status = 'ok' GROUP BY config_id
                HAVING count(DISTINCT backend) = {len(backends)}))
        SELECT {select}, {per_backend}
        FROM paired GROUP BY {group} ORDER BY ALL""").fetchall()
    rows = []
    for rec in data:
        row = dict(zip(keys + backends, rec))
        if not by:
            row["overrides"] = _point(row["overrides"])
        base = row[backends[0]]
        for b in backends[1:]:
            row[f"{b} - {backends[0]}"] = None if base is None or row[b] is None else row[b] - base
        rows.append(row)
    return Comparison(backends, keys, rows, threshold)


def _point(overrides: str) -> str:
    """A run's overrides without those that do not say what it simulates (backend, results_dir, ...)."""
    return " ".join(o for o in overrides.split() if not o.lstrip("+").startswith((*OPERATIONAL, "backend=")))


def _backends(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The backends with ok runs, in registry order (the engine first: the reference)."""
    present = {r[0] for r in con.execute("SELECT DISTINCT backend FROM runs WHERE status = 'ok'").fetchall()}
    return [b for b in BACKENDS if b in present] + sorted(present - set(BACKENDS))


def render(cmp: Comparison, metric: str) -> str:
    """The comparison as text: a table of every row, then what disagrees."""
    from rich.console import Console
    from rich.table import Table

    cols = (
        [k for k in cmp.keys if k != "config_id"]
        + cmp.backends
        + [f"{b} - {cmp.backends[0]}" for b in cmp.backends[1:]]
    )
    table = Table(title=f"{metric} by backend", title_justify="left")
    for c in cols:
        table.add_column(c, overflow="fold")
    for r in cmp.rows:
        table.add_row(
            *("NULL" if r[c] is None else f"{r[c]:.4g}" if isinstance(r[c], float) else str(r[c]) for c in cols)
        )
    console = Console(width=200, record=True, file=open("/dev/null", "w"))
    console.print(table)
    text = console.export_text()
    for b in cmp.backends[1:]:
        diffs = [(abs(d), r) for r in cmp.rows if (d := r[f"{b} - {cmp.backends[0]}"]) is not None]
        if diffs:
            worst, at = max(diffs, key=lambda x: x[0])
            text += (
                f"{b} vs {cmp.backends[0]}: {len(diffs)} configs, |difference| mean "
                f"{sum(d for d, _ in diffs) / len(diffs):.4f}, max {worst:.4f} at "
                f"{' '.join(str(at[k]) for k in cmp.keys if k != 'config_id')}\n"
            )
    bad = cmp.disagreeing()
    text += (
        f"{len(bad)} of {len(cmp.rows)} configs differ by more than {cmp.threshold:g}"
        + (
            ":\n" + "\n".join("  " + " ".join(str(r[k]) for k in cmp.keys if k != "config_id") for r in bad)
            if bad
            else ""
        )
        + "\n"
    )
    return text


def plot(cmp: Comparison, metric: str, path: str) -> None:
    """Each other backend's value against the first's, with the y = x line and the threshold band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 5))
    ref = cmp.backends[0]
    xs = [r[ref] for r in cmp.rows if r[ref] is not None]
    lo, hi = (min(xs), max(xs)) if xs else (0, 1)
    for b in cmp.backends[1:]:
        pts = [(r[ref], r[b]) for r in cmp.rows if r[ref] is not None and r[b] is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", alpha=0.7, label=b)
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
    for s in (-1, 1):
        ax.plot([lo, hi], [lo + s * cmp.threshold, hi + s * cmp.threshold], "k:", lw=0.6)
    ax.set_xlabel(f"{metric} ({ref})")
    ax.set_ylabel(f"{metric} (other backend)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(args: argparse.Namespace, con: duckdb.DuckDBPyConnection) -> int:
    by = [k.strip() for k in args.by.split(",") if k.strip()] if args.by else None
    if not (args.threshold >= 0 and math.isfinite(args.threshold)):
        print(f"error: --threshold: must be a number >= 0, got {args.threshold}", file=sys.stderr)
        return 2
    try:
        cmp = compare(con, args.metric, by, args.threshold)
    except CompareError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(render(cmp, args.metric))
    if args.plot:
        plot(cmp, args.metric, args.plot)
        print(f"wrote {args.plot}")
    return 0

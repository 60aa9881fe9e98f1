"""A sweep's summary plot, logged as a PNG on its MLflow parent run: utilization and loss rate
against the swept numeric axis with the most values (else the first axis), one line per
combination of the other axes, seeds averaged; and, with `mlflow.run_plots=true`, each child
run's time series. Details: docs/sweeps.md (MLflow)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from statistics import fmean
from typing import Any

MAX_LINES = 12
"""More combinations of the other axes than this are drawn as points, without a legend."""
METRICS = (("utilization", "utilization"), ("loss_rate", "loss rate"))


def _sortable(v: Any) -> tuple[int, Any]:
    """Numbers in order, then anything else by its text (a categorical axis keeps its order)."""
    return (0, v) if isinstance(v, int | float) else (1, str(v))


def _x_axis(rows: list[dict[str, Any]], axes: list[str]) -> str:
    """The numeric axis with the most distinct values (the first such in command order), else the
    first axis."""
    numeric = [a for a in axes if all(isinstance(r[a], int | float) for r in rows)]
    return max(numeric, key=lambda a: len({r[a] for r in rows})) if numeric else axes[0]


def summary_png(rows: list[dict[str, Any]], axes: list[str], path: Path) -> bool:
    """Writes the plot of the ok `rows` (runs rows) over the swept `axes` (runs columns) to
    `path`; False, and nothing written, if there is nothing to draw."""
    import matplotlib

    matplotlib.use("Agg")  # the driver may have no display
    import matplotlib.pyplot as plt

    axes = [a for a in axes if a != "seed"] or ["seed"]
    ok = [r for r in rows if r.get("status") == "ok" and all(a in r for a in axes)]
    if not ok:
        return False
    x_axis = _x_axis(ok, axes)
    others = [a for a in axes if a != x_axis]
    numeric = all(isinstance(r[x_axis], int | float) for r in ok)
    groups: dict[tuple, dict[Any, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in ok:
        groups[tuple(r[a] for a in others)][r[x_axis]].append(r)
    fig, panels = plt.subplots(1, len(METRICS), figsize=(11, 4.2))
    lines = len(groups) <= MAX_LINES
    for key, by_x in sorted(groups.items(), key=lambda kv: [_sortable(v) for v in kv[0]]):
        xs = sorted(by_x, key=_sortable)
        label = " ".join(f"{a}={v}" for a, v in zip(others, key)) or None
        for ax, (metric, _) in zip(panels, METRICS):
            values = [[r[metric] for r in by_x[x] if r.get(metric) is not None] for x in xs]
            ys = [fmean(v) if v else float("nan") for v in values]
            at = xs if numeric else [str(x) for x in xs]
            ax.plot(at, ys, marker="o", linestyle="-" if lines else "", label=label if lines else None)
    values = [r[x_axis] for r in ok]
    for ax, (_, name) in zip(panels, METRICS):
        if numeric and min(values) > 0 and max(values) >= 20 * min(values):
            ax.set_xscale("log")
        ax.set_xlabel(x_axis)
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    if lines and others:
        panels[0].legend(fontsize=7)
    fig.suptitle(f"{len(ok)} runs, seeds averaged")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


RUN_PANELS = (
    ("queue_mean_pkts", "mean queue (pkts)"),
    ("utilization", "utilization"),
    ("mean_cwnd_pkts", "mean window (pkts)"),
    ("drops", "drops"),
)


def bottleneck_rows(ts: dict[str, list]) -> list[int]:
    """The indices of a run's time-series rows (columns as lists) of its first link, the
    bottleneck: what MLflow shows of it."""
    links = ts.get("link_id", [])
    return [i for i, link in enumerate(links) if link == links[0]]


def timeseries_png(ts: dict[str, list], path: Path) -> bool:
    """Writes a run's time series (its first link's rows: the bottleneck) against time to `path`;
    False, and nothing written, if it has none."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = bottleneck_rows(ts)
    if not rows:
        return False
    t = [ts["time_s"][i] for i in rows]
    fig, panels = plt.subplots(1, len(RUN_PANELS), figsize=(14, 3.2))
    for ax, (col, label) in zip(panels, RUN_PANELS):
        ax.plot(t, [ts[col][i] if ts[col][i] is not None else float("nan") for i in rows], lw=1)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True

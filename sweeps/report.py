"""What a sweep says while and after it runs: its progress (a bar on a terminal, a plain line every
20 s off one: `sweeps.heartbeat`), its summary, and its MLflow parent's closing (plot, points,
metrics, and a name that says what it holds). docs/sweeps.md, "How it runs"."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from sweeps.errors import python_cmd
from sweeps.heartbeat import eta_text
from sweeps.mrip import Mrip
from sweeps.store import RUNS_SCHEMA, Store

MLFLOW_UI_PORT = 5000
"""The port of the `mlflow ui` command a finished sweep prints, with links on that port."""


class Counts:
    def __init__(self, total: int) -> None:
        self.total, self.ok, self.failed, self.cached, self.retried = total, 0, 0, 0, 0
        self.running = 0


@dataclass
class Execution:
    """How the jobs went: wall times (Ray start-up apart) and whether Ctrl-C stopped them."""

    interrupted: bool
    t_start: float
    t_run: float
    ray_s: float
    ray_lost: str = ""
    """Why Ray was lost under the sweep (`drive.RayLost`), if it was: exit 3."""
    ray_stop_s: float = 0.0
    """Ray's shut-down, which like its start-up is not the jobs' time."""


def progress_bar(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "ok {task.fields[ok]}  failed {task.fields[failed]}  cached {task.fields[cached]}  "
            "running {task.fields[running]}"
        ),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[note]}"),  # a replicated sweep's precision so far (`Mrip.status`)
        console=console,
        transient=False,
        refresh_per_second=2,  # the driver shares the machine with the simulations
    )


def progress_line(sweep_id: str, name: str, counts: Counts, t0: float, mrip: Mrip | None) -> str:
    """The sweep's progress as one plain line (off a terminal, `Heartbeat`)."""
    ran = counts.ok + counts.failed
    todo = counts.total - counts.cached
    note = f"; {mrip.status()}" if mrip is not None and mrip.status() else ""
    return (
        f"sweep {sweep_id} ({name}): {counts.cached + ran} of {counts.total} done (ok {counts.ok}, failed "
        f"{counts.failed}, cached {counts.cached}), {counts.running} running, "
        f"{eta_text(time.monotonic() - t0, ran, todo)}{note}"
    )


def close_tracker(
    tracker: Any,
    console: Console,
    store: Store,
    sweep_id: str,
    counts: Counts,
    ex: Execution,
    points: tuple[list[dict], dict[int, list[str]]] | None = None,
) -> None:
    console.print(f"finishing MLflow logging ({tracker.submitted()} runs)...")
    try:
        cols = [c for c in ("status", "utilization", "loss_rate", *tracker.axes) if c in RUNS_SCHEMA.names]
        tracker.log_sweep_plot(store.read("runs", sweep_id, columns=cols).to_pylist())
    except Exception as e:  # noqa: BLE001 - the runs are stored and logged; a plot must not fail the sweep
        console.print(f"[yellow]mlflow: no summary plot: {type(e).__name__}: {e}")
    if points is not None and points[0]:
        try:
            tracker.log_points(*points)
        except Exception as e:  # noqa: BLE001 - the points are stored; MLflow must not fail the sweep
            console.print(f"[yellow]mlflow: points not logged: {type(e).__name__}: {e}")
    metrics = sweep_metrics(store, sweep_id, counts, time.monotonic() - ex.t_start)
    tracker.close(
        failed=counts.failed > 0 or ex.interrupted,
        sweep_metrics=metrics,
        name=named_parent(tracker, store, sweep_id, points[0] if points else None),
    )
    for err in tracker.errors[:3]:
        console.print(f"[yellow]mlflow: {err}")
    try:
        tracker.share_view(sweep_id)
        server = tracker.uri.startswith(("http://", "https://"))
        ui = tracker.uri.rstrip("/") if server else f"http://127.0.0.1:{MLFLOW_UI_PORT}"
        runs_url, compare_url = tracker.urls(ui)
        # The port in the links is the one in the command that serves them.
        how = "" if server else f" (after `mlflow ui --backend-store-uri {tracker.uri} --port {MLFLOW_UI_PORT}`)"
        console.print(f"MLflow{how}: runs {runs_url}\n  compare this sweep's runs: {compare_url}")
    except Exception as e:  # noqa: BLE001 - the runs are stored; a missing link must not fail the sweep
        console.print(f"[yellow]mlflow: no shared view ({type(e).__name__}: {e})")


ONE_RUN_METRICS = (
    "utilization",
    "goodput_mbps",
    "loss_rate",
    "mean_queue_pkts",
    "p99_queue_pkts",
    "mean_queue_delay_ms",
    "jain_fairness",
    "timeouts",
    "fast_retransmits",
    "wall_s",
)
"""What a single run prints (every metric is in the runs table)."""


def one_run_table(console: Console, store: Store, sweep_id: str) -> None:
    from rich.table import Table

    rows = [r for r in store.read("runs", sweep_id).to_pylist() if r["status"] == "ok"]
    if not rows:
        return
    table = Table(title="run summary", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in ONE_RUN_METRICS:
        v = rows[-1].get(key)
        table.add_row(key, "NULL" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v))
    console.print(table)


def named_parent(tracker: Any, store: Store, sweep_id: str, points: list[dict] | None) -> str:
    """The sweep's parent run, named after what it holds: `name: axes (N runs)`, or for a
    replicated sweep its points and the replications they ran and counted (issue 69: a parent
    named `(30)` for the 30 replications its point might have run held 14)."""
    axes = " x ".join(a for a in tracker.axes if points is None or a != "seed") or "one run"
    if points is None:
        return f"{tracker.experiment}: {axes} ({len(store.members(sweep_id)):,} runs)"
    ran = len(store.read("runs", sweep_id, columns=["run_id"]))
    counted = sum(p["replications"] for p in points)
    some = f"{len(points)} point{'s' * (len(points) != 1)}"
    return f"{tracker.experiment}: {axes} ({some}, {ran} replications run, {counted} counted)"


def sweep_metrics(store: Store, sweep_id: str, counts: Counts, wall_s: float) -> dict[str, float | None]:
    """The parent run's metrics: what ran, how long, and the range of bottleneck utilization."""
    runs = store.read("runs", sweep_id, columns=["utilization", "status"]).to_pylist()
    util = [r["utilization"] for r in runs if r["status"] == "ok" and r["utilization"] is not None]
    return {
        "runs_ok": counts.ok,
        "runs_failed": counts.failed,
        "runs_cached": counts.cached,
        "wall_s": wall_s,
        "best_utilization": max(util, default=None),
        "worst_utilization": min(util, default=None),
    }


def summary(console: Console, store: Store, sweep_id: str, counts: Counts, interrupted: bool, swept: set[str]) -> None:
    state = "interrupted" if interrupted else ("finished with failures" if counts.failed else "finished")
    console.print(
        f"sweep {sweep_id} {state}: {counts.ok} ok, {counts.failed} failed, {counts.cached} cached"
        + (f", {counts.retried} jobs resubmitted after a worker died" if counts.retried else "")
    )
    if counts.failed:
        runs = store.read("runs", sweep_id, columns=["status", "overrides", "error"])
        failed = [r for r in runs.to_pylist() if r["status"] == "failed"][:5]
        for r in failed:
            point = " ".join(o for o in r["overrides"].split() if o.lstrip("+").split("=")[0] in swept)
            console.print(f"  failed: {point or r['overrides']}: {r['error']}")
    suspect = [
        r
        for r in store.read("runs", sweep_id, columns=["overrides", "timing_suspect"]).to_pylist()
        if r["timing_suspect"]
    ]
    if suspect:  # a real-time testbed's runs (the kernel backend) whose own timing erred
        console.print(
            f"  timing suspect in {len(suspect)} runs (their rows' timing_suspect; docs/kernel.md): "
            f"{suspect[0]['overrides']}: {suspect[0]['timing_suspect']}",
            markup=False,
            highlight=False,
        )
    if counts.total == 1 and counts.ok + counts.cached == 1:
        one_run_table(console, store, sweep_id)
    console.print(f'results: {store.root}  ({python_cmd()} -m analysis sql "SELECT ... FROM runs")')

"""`python -m analysis check [--results DIR] [--tracking-uri URI] [--repair]`: does MLflow hold
every stored run exactly once (issue 36)? Per sweep: the runs stored, and of MLflow's child
runs those complete (one per run), missing, left incomplete (RUNNING, or ended without their
metrics) and duplicated. `--repair` reconciles each sweep that is off as a rerun of it does:
the incomplete and duplicated children deleted, the missing runs logged from the store.
docs/sweeps.md, "MLflow exactly once"."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console
from rich.table import Table

COLUMNS = ("stored", "complete", "missing", "incomplete", "duplicated")


def _parent(client: Any, sweep_id: str) -> Any | None:
    from sweeps.tracking import parent_run

    return parent_run(client, [e.experiment_id for e in client.search_experiments()], sweep_id)


def audit(store: Any, client: Any, sweep_id: str) -> dict[str, int]:
    """One sweep's counts (COLUMNS) of stored runs against MLflow's child runs."""
    from sweeps.tracking import child_runs, complete

    stored = set(store.read("runs", sweep_id).column("run_id").to_pylist())
    parent = _parent(client, sweep_id)
    children = child_runs(client, parent.info.experiment_id, parent.info.run_id) if parent else []
    done = Counter(r.data.tags.get("run_id") for r in children if complete(r))
    return {
        "stored": len(stored),
        "complete": sum(1 for rid in stored if done.get(rid) == 1),
        "missing": sum(1 for rid in stored if rid not in done),
        "incomplete": sum(1 for r in children if not complete(r)),
        "duplicated": sum(n - 1 for n in done.values() if n > 1),
    }


def repair(store: Any, uri: str, sweep_id: str) -> int:
    """Reconciles one sweep's child runs and logs its missing runs; returns the runs logged."""
    from mlflow.tracking import MlflowClient

    from sweeps.launch import backfill
    from sweeps.tracking import Tracker

    client = MlflowClient(tracking_uri=uri)
    parent = _parent(client, sweep_id)
    runs = store.read("runs", sweep_id)
    names = [n for n in runs.column("name").to_pylist() if n] if "name" in runs.column_names else []
    experiment = client.get_experiment(parent.info.experiment_id).name if parent else (names or ["sweeps"])[0]
    tracker = Tracker(uri, experiment, sweep_id, n_jobs=runs.num_rows, rename=False)
    logged = backfill(store, sweep_id, tracker)
    tracker.close(failed=False)
    return logged


def main(results: str, uri: str | None, fix: bool) -> int:
    from mlflow.tracking import MlflowClient

    from sweeps.store import Store
    from sweeps.tracking import tracking_uri

    uri = tracking_uri(uri)
    store, client = Store(results), MlflowClient(tracking_uri=uri)
    table = Table(title=f"stored runs against MLflow ({uri})")
    for col in ("sweep", *COLUMNS, "repaired"):
        table.add_column(col, justify="left" if col == "sweep" else "right")
    off = 0
    for sweep_id in store.sweep_ids():
        counts = audit(store, client, sweep_id)
        bad = counts["complete"] != counts["stored"] or counts["incomplete"] or counts["duplicated"]
        repaired = ""
        if bad and fix:
            logged = repair(store, uri, sweep_id)
            after = audit(store, client, sweep_id)
            bad = after["complete"] != after["stored"] or after["incomplete"] or after["duplicated"]
            repaired = f"{logged} logged" + (" (still off)" if bad else "")
        off += bool(bad)
        table.add_row(sweep_id, *(f"{counts[c]:,}" for c in COLUMNS), repaired)
    Console().print(table)
    return 1 if off else 0

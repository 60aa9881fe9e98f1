"""MLflow tracking from the sweep driver, the single writer: one experiment per preset, one
parent run per sweep (reused when the same sweep is rerun), one child run per stored run.
Logging happens on a background thread fed after each Parquet flush, so it never stalls the
workers; child runs are keyed by the `run_id` tag, so a rerun logs only what is missing."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MAX_STEPS = 100  # time-series points logged as step metrics (ts_*) per run
STEP_METRICS = ("utilization", "goodput_mbps", "queue_mean_pkts", "mean_cwnd_pkts")


def tracking_uri(configured: str | None) -> str:
    uri = configured or os.environ.get("MLFLOW_TRACKING_URI")
    return uri or f"sqlite:///{PROJECT_ROOT / 'mlflow.db'}"


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True,
                             timeout=5)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


class Tracker:
    def __init__(self, uri: str, experiment: str, sweep_id: str) -> None:
        import mlflow
        from mlflow.tracking import MlflowClient

        self._mlflow = mlflow
        self.client = MlflowClient(tracking_uri=uri)
        self.uri = uri
        exp = self.client.get_experiment_by_name(experiment)
        if exp is None:
            location = None
            if uri.startswith("sqlite:///"):
                # Artifacts next to the database file (MLflow would use ./mlruns of the cwd).
                location = (Path(uri[len("sqlite:///"):]).parent / "mlruns").as_uri()
            self.experiment_id = self.client.create_experiment(experiment, artifact_location=location)
        else:
            self.experiment_id = exp.experiment_id
        found = self.client.search_runs([self.experiment_id], filter_string=f"tags.sweep_id = '{sweep_id}' "
                                        "and tags.buffersweep_role = 'parent'", max_results=1)
        if found:
            self.parent_id = found[0].info.run_id
        else:
            parent = self.client.create_run(self.experiment_id, run_name=f"sweep {sweep_id}", tags={
                "sweep_id": sweep_id, "buffersweep_role": "parent", "command": " ".join(sys.argv),
                "git_commit": _git_commit()})
            self.parent_id = parent.info.run_id
        self.logged = self._logged_runs()
        self._queue: queue.Queue[tuple[dict[str, Any], dict[str, list], str | None] | None] = queue.Queue()
        self.errors: list[str] = []
        self._thread = threading.Thread(target=self._loop, name="mlflow-logger", daemon=True)
        self._thread.start()

    def _logged_runs(self) -> dict[str, tuple[str, str]]:
        """buffersweep run_id -> (MLflow run id, status) of this sweep's child runs."""
        out: dict[str, tuple[str, str]] = {}
        token = None
        while True:
            page = self.client.search_runs([self.experiment_id],
                                           filter_string=f"tags.mlflow.parentRunId = '{self.parent_id}'",
                                           max_results=5000, page_token=token)
            for r in page:
                out[r.data.tags.get("run_id", "")] = (r.info.run_id, r.data.tags.get("status", ""))
            token = page.token
            if not token:
                return out

    def submit(self, row: dict[str, Any], timeseries: dict[str, list]) -> None:
        """Queues one stored run (its runs row and its time series) for logging. A run already
        logged is logged again only if it failed before and succeeded now (into the same child)."""
        known = self.logged.get(row["run_id"])
        if known is not None and not (known[1] == "failed" and row["status"] == "ok"):
            return
        self.logged[row["run_id"]] = (known[0] if known else "", row["status"])
        self._queue.put((row, timeseries, known[0] if known else None))

    def pending(self) -> int:
        return self._queue.qsize()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                self._log(*item)
            except Exception as e:  # noqa: BLE001 - tracking must not kill the sweep
                self.errors.append(f"{type(e).__name__}: {e}")

    def _log(self, row: dict[str, Any], ts: dict[str, list], existing: str | None) -> None:
        from mlflow.entities import Metric, Param

        from sweeps.store import RUN_META
        from sim.result import SUMMARY_METRICS

        meta = {f.name for f in RUN_META}
        now = int(time.time() * 1000)
        if existing:
            rid = existing
            self.client.set_tag(rid, "status", row["status"])
            params = []  # MLflow params are immutable; a run_id's config never changes
        else:
            run = self.client.create_run(self.experiment_id, run_name=row["overrides"][:250] or row["run_id"],
                                         tags={"mlflow.parentRunId": self.parent_id, "run_id": row["run_id"],
                                               "sweep_id": row["sweep_id"], "status": row["status"],
                                               "buffersweep_role": "child"})
            rid = run.info.run_id
            params = [Param(k, str(v)[:500]) for k, v in row.items()
                      if k not in meta and k not in SUMMARY_METRICS and k != "sweep_id"]
            params += [Param(k, str(row[k])) for k in ("buffer_rule", "buffer_scale", "name")]
        metrics = [Metric(k, float(row[k]), now, 0) for k in SUMMARY_METRICS
                   if row.get(k) is not None and row[k] == row[k]]
        n = len(ts.get("time_s", []))
        if n:
            stride = max(1, -(-n // MAX_STEPS))
            for step, i in enumerate(range(stride - 1, n, stride)):
                for k in STEP_METRICS:
                    v = ts[k][i]
                    if v is not None and v == v:
                        metrics.append(Metric(f"ts_{k}", float(v), now, step))
        self.client.log_batch(rid, metrics=metrics[:1000], params=params[:100])
        self.client.log_text(rid, json.dumps(row, default=str, indent=1), "config.json")
        self.client.set_terminated(rid, status="FINISHED" if row["status"] == "ok" else "FAILED")

    def close(self, failed: bool) -> None:
        self._queue.put(None)
        self._thread.join()
        self.client.set_terminated(self.parent_id, status="FAILED" if failed else "FINISHED")

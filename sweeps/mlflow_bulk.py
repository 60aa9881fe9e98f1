"""Child runs written to a SQLite MLflow store in bulk: a batch of finished runs in one
transaction, as the rows MLflow's own store would write (its SQLAlchemy models in
`mlflow.store.tracking.dbmodels`: runs, tags, params, metrics, latest_metrics).

Why not the client API: `create_run` + `log_batch` + `set_terminated` is three transactions and
about 35 SQL statements a run, 13-25 ms in one process, and a second process adds nothing on 2
cores (SQLite has one writer): about 40 runs/s at best. In bulk a run costs under 1 ms. The rows are
those of `SqlAlchemyStore.create_run`, `log_batch` and `update_run_info` (mlflow 3.17, pinned);
tests/sweeps read every run back through `MlflowClient` and the UI. A batch is one transaction, so
a crash leaves all of it or none (docs/sweeps.md, "MLflow exactly once" and the orchestration benchmark).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NOTE = "mlflow.note.content"
"""The run's description in the UI."""


def supported(uri: str) -> bool:
    """Only a local SQLite store; a tracking server gets the client API."""
    return uri.startswith("sqlite:///")


@dataclass
class ChildRun:
    """One finished child run, as its parts."""

    name: str
    tags: dict[str, str]
    params: dict[str, str]
    metrics: list[tuple[str, float, int, int]]
    """(key, value, timestamp ms, step)."""
    status: str
    """FINISHED or FAILED."""
    files: dict[str, bytes] = field(default_factory=dict)
    """Artifacts by file name."""
    start_ms: int | None = None
    end_ms: int | None = None
    """When the job ran (ms since the epoch): the UI's start time and duration. None: when logged."""


class BulkWriter:
    def __init__(self, client: Any, experiment_id: str) -> None:
        self.store = client._tracking_client.store  # the SqlAlchemyStore behind the client
        self.experiment_id = experiment_id
        self.artifact_root = client.get_experiment(experiment_id).artifact_location

    def write(self, runs: list[ChildRun], now_ms: int, note: Callable[[str], str]) -> list[str]:
        """Writes the runs' artifacts, then every run in one transaction; returns their MLflow ids.
        `note(id)`: a run's description (the NOTE tag), which may link to the run itself."""
        from mlflow.store.tracking.dbmodels.models import SqlLatestMetric, SqlMetric, SqlParam, SqlRun, SqlTag
        from mlflow.utils.uri import append_to_uri_path

        ids = [uuid.uuid4().hex for _ in runs]
        run_rows, tag_rows, param_rows, metric_rows, latest_rows = [], [], [], [], []
        for rid, r in zip(ids, runs):
            artifact_uri = append_to_uri_path(self.artifact_root, rid, "artifacts")
            write_artifacts(artifact_uri, r.files)
            run_rows.append(
                dict(
                    run_uuid=rid,
                    name=r.name,
                    artifact_uri=artifact_uri,
                    experiment_id=int(self.experiment_id),
                    source_type="UNKNOWN",
                    source_name="",
                    entry_point_name="",
                    user_id="unknown",
                    status=r.status,
                    start_time=r.start_ms if r.start_ms is not None else now_ms,
                    end_time=r.end_ms if r.end_ms is not None else now_ms,
                    deleted_time=None,
                    source_version="",
                    lifecycle_stage="active",
                )
            )
            tags = {**r.tags, "mlflow.runName": r.name, NOTE: note(rid)}
            tag_rows += [dict(run_uuid=rid, key=k, value=v) for k, v in tags.items()]
            param_rows += [dict(run_uuid=rid, key=k, value=v) for k, v in r.params.items()]
            metrics, latest = self._metrics(rid, r.metrics)
            metric_rows += metrics
            latest_rows += latest
        with self.store.ManagedSessionMaker(read_only=False) as session:
            for model, rows in (
                (SqlRun, run_rows),
                (SqlTag, tag_rows),
                (SqlParam, param_rows),
                (SqlMetric, metric_rows),
                (SqlLatestMetric, latest_rows),
            ):
                if rows:
                    # The DB-API's executemany with plain tuples: SQLAlchemy's per-row parameter
                    # processing took as long as SQLite's inserts. Names from the models.
                    cols = list(rows[0])
                    sql = f"INSERT INTO {model.__tablename__} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
                    session.connection().exec_driver_sql(sql, [tuple(r[c] for c in cols) for r in rows])
        return ids

    def set_tags(self, tags: list[tuple[str, str, str]]) -> None:
        """(run id, key, value) tags set, replacing a run's earlier value of the key (as
        `set_tag`), in one transaction."""
        if not tags:
            return
        with self.store.ManagedSessionMaker(read_only=False) as session:
            session.connection().exec_driver_sql(
                "INSERT OR REPLACE INTO tags (run_uuid, key, value) VALUES (?, ?, ?)", list(tags)
            )

    def _metrics(self, rid: str, metrics: list[tuple[str, float, int, int]]) -> tuple[list[dict], list[dict]]:
        """The metric rows (MLflow drops exact repeats) and each key's latest: the greatest
        (step, timestamp, value), as SqlAlchemyStore._update_latest_metrics_if_necessary keeps it."""
        rows: dict[tuple, dict[str, Any]] = {}
        latest: dict[str, dict[str, Any]] = {}
        for key, v, ts, step in metrics:
            is_nan, value = self.store.sanitize_metric_value(float(v))
            row = dict(run_uuid=rid, key=key, value=value, timestamp=ts, step=step, is_nan=is_nan)
            rows.setdefault((key, value, ts, step, is_nan), row)
            old = latest.get(key)
            if old is None or (step, ts, value) > (old["step"], old["timestamp"], old["value"]):
                latest[key] = row
        return list(rows.values()), list(latest.values())


def write_artifacts(artifact_uri: str, files: dict[str, bytes]) -> None:
    """A run's artifacts (by file name) into its artifact location: written in place when it is
    local, else through MLflow's artifact repository."""
    if not files:
        return
    if artifact_uri.startswith("file:"):  # the usual case: no copy
        from mlflow.utils.file_utils import local_file_uri_to_path

        d = Path(local_file_uri_to_path(artifact_uri))
        d.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (d / name).write_bytes(data)
        return
    import tempfile

    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

    with tempfile.TemporaryDirectory() as tmp:
        for name, data in files.items():
            (Path(tmp) / name).write_bytes(data)
        get_artifact_repository(artifact_uri).log_artifacts(tmp)

"""A replicated sweep's points in MLflow (issue 69): one run per point under the sweep's parent,
with the point's config as params and its intervals as metrics, and the point's replications as
its children, each tagged `counted` true or false (a replication still running when its point
met its target is stored, and not counted). The replications are logged as the sweep's children
while they run and moved under their point once it has stopped. docs/analysis.md, "MLflow"."""

from __future__ import annotations

import time
from typing import Any

POINT_ROLE = "point"
"""The buffersweep_role of a replicated point's run."""
CHILD_ROLE = "child"


def sweep_runs(client: Any, experiment_id: str, sweep_id: str, role: str) -> list[Any]:
    """Every live run of a sweep with buffersweep_role `role`, wherever it is nested."""
    out, token = [], None
    while True:
        where = f"tags.sweep_id = '{sweep_id}' and tags.buffersweep_role = '{role}'"
        page = client.search_runs([experiment_id], filter_string=where, max_results=5000, page_token=token)
        out += list(page)
        token = page.token
        if not token:
            return out


POINT_TAG = "point"
"""The tag a point's run and its replications share (its swept values): the shared view groups by it."""


def point_label(row: dict[str, Any], axes: list[str]) -> str:
    """`tcp=reno flows=60`: the point's swept values (its index where nothing is swept)."""
    return " ".join(a for a in axes if not a.startswith("seed=")) or f"#{row['point_index']}"


def point_name(row: dict[str, Any], axes: list[str], runs: int) -> str:
    """`point tcp=reno flows=60: 12 replications counted of 14`."""
    counted = row["replications"]
    return f"point {point_label(row, axes)}: {counted} replications counted" + (
        f" of {runs}" if runs != counted else ""
    )


def _metrics(row: dict[str, Any], now: int) -> list[Any]:
    """The point's replications, and per metric its mean, half-width and interval."""
    from mlflow.entities import Metric

    def metric(key: str, value: float) -> Any:
        return Metric(key, float(f"{value:.6g}"), now, 0)  # readable in the UI; Parquet has every digit

    out = [metric("replications", row["replications"])]
    for key, value in row.items():
        if key.endswith("_mean") and value is not None:
            m, hw = key[: -len("_mean")], row[key.replace("_mean", "_halfwidth")]
            out.append(metric(m, value))
            if hw is not None:
                out += [
                    metric(f"{m}_{k}", v)
                    for k, v in (("halfwidth", hw), ("ci_low", value - hw), ("ci_high", value + hw))
                ]
    return out


def log_points(
    tracker: Any, rows: list[dict[str, Any]], replications: dict[int, list[str]], axes_of: Any, bulk: Any = None
) -> int:
    """Logs the points (rows of the `points` table) under the tracker's parent run, replacing an
    earlier attempt's, and moves each point's replications (`replications`: point_index -> the
    run_ids of every replication it has, counted or not) under it. `axes_of(row)`: the point's
    swept overrides. Returns the replications moved."""
    from mlflow.entities import Param, RunTag

    client, exp = tracker.client, tracker.experiment_id
    for r in sweep_runs(client, exp, tracker.sweep_id, POINT_ROLE):
        client.delete_run(r.info.run_id)
    children = {r.data.tags.get("run_id"): r for r in sweep_runs(client, exp, tracker.sweep_id, CHILD_ROLE)}
    now = int(time.time() * 1000)
    moves: list[tuple[str, str, str]] = []
    for row in rows:
        reps = replications.get(row["point_index"], row["run_ids"])
        logged = [children[rid] for rid in reps if rid in children]
        counted = set(row["run_ids"])
        run = client.create_run(
            exp,
            run_name=point_name(row, axes_of(row), len(reps)),
            tags={
                "mlflow.parentRunId": tracker.parent_id,
                "sweep_id": tracker.sweep_id,
                "buffersweep_role": POINT_ROLE,
                POINT_TAG: point_label(row, axes_of(row)),
                "stop_reason": row["stop_reason"],
                "run_ids": ",".join(row["run_ids"]),
            },
        )
        pid = run.info.run_id
        first = logged[0].data.params if logged else {}
        params = {k: v for k, v in first.items() if k != "seed"}
        params["seeds"] = f"{row['seed']}-{row['seed'] + len(reps) - 1}" if reps else str(row["seed"])
        client.log_batch(
            pid,
            metrics=_metrics(row, now),
            params=[Param(k, v) for k, v in list(params.items())[:100]],
            tags=[RunTag("seed", str(row["seed"]))],
        )
        client.set_terminated(pid, status="FINISHED")
        label = point_label(row, axes_of(row))
        for c in logged:
            flag = "true" if c.data.tags.get("run_id") in counted else "false"
            rid = c.info.run_id
            moves += [(rid, "mlflow.parentRunId", pid), (rid, "counted", flag), (rid, POINT_TAG, label)]
    _set_tags(client, bulk, moves)
    return len(moves) // 3


def _set_tags(client: Any, bulk: Any, tags: list[tuple[str, str, str]]) -> None:
    """(MLflow run id, key, value) tags: in one transaction on a SQLite store, else one call each."""
    if bulk is not None:
        bulk.set_tags(tags)
        return
    for run_id, key, value in tags:
        client.set_tag(run_id, key, value)


VIEW_METRICS = (
    "replications",
    "utilization",
    "utilization_halfwidth",
    "utilization_ci_low",
    "utilization_ci_high",
    "loss_rate",
    "loss_rate_halfwidth",
)
"""A replicated sweep's view: each point's replications and intervals."""


def point_view(sweep_id: str, axes: list[str]) -> dict[str, Any]:
    """The shared view of a replicated sweep (MLflow 3.17's runs table state): its points and
    their replications, grouped by point (groups open by default), the point's run first (it
    alone has `replications`), with its intervals as columns. Grouping, unlike nesting, survives
    a shared view: MLflow drops its expanded rows (`runsExpanded`)."""
    return {
        "selectedColumns": [f"params.`{k}`" for k in axes]
        + [f"metrics.`{m}`" for m in VIEW_METRICS]
        + ["tags.`counted`"],
        "searchFilter": f"tags.sweep_id = '{sweep_id}' and tags.{POINT_TAG} LIKE '%'",
        "orderByKey": "metrics.`replications`",
        "orderByAsc": False,
        "groupBy": {"aggregateFunction": "average", "groupByKeys": [{"mode": "tag", "groupByData": POINT_TAG}]},
        "groupsExpanded": {},
    }

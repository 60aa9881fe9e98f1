"""MLflow exactly once (issue 36): whatever an earlier attempt left in MLflow (a child run left
RUNNING, one ended without its metrics, a second child of a run, a child missing), a rerun of the
sweep, or `python -m analysis check --repair`, leaves one FINISHED child with its metrics per
stored run; `python -m analysis check` reports the difference until then."""

from __future__ import annotations

import subprocess
import sys

from tests.sweeps.helpers import mlflow_children, runs, sweep

ARGS = ("-m", "flows=1,2,3,4", "duration_s=2", "warmup_s=1")


def _sabotage(tmp_path) -> None:
    """What a driver or logger killed mid-way leaves: a duplicate left RUNNING with params only,
    a duplicate FAILED without metrics, a child gone, and a child set back to RUNNING."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    _, children = mlflow_children(tmp_path, "sweeps")
    a, b, c, d = sorted(children, key=lambda r: r.data.tags["run_id"])
    for original, status in ((a, "RUNNING"), (b, "FAILED")):
        tags = {k: v for k, v in original.data.tags.items() if not k.startswith("mlflow.") or k == "mlflow.parentRunId"}
        dup = client.create_run(original.info.experiment_id, tags=tags)
        client.log_param(dup.info.run_id, "flows", original.data.params["flows"])
        if status != "RUNNING":
            client.set_terminated(dup.info.run_id, status=status)
    client.delete_run(c.info.run_id)
    client.update_run(d.info.run_id, status="RUNNING")


def _check(tmp_path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "analysis", "check", "--results", str(tmp_path / "results")]
        + ["--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}", *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _exactly_once(tmp_path) -> None:
    stored = sorted(runs(tmp_path).column("run_id").to_pylist())
    _, children = mlflow_children(tmp_path, "sweeps")
    assert sorted(r.data.tags["run_id"] for r in children) == stored
    assert all(r.info.status == "FINISHED" and "utilization" in r.data.metrics for r in children)


def test_a_rerun_or_a_repair_leaves_each_stored_run_logged_exactly_once(tmp_path, ray_head):
    assert sweep(tmp_path, *ARGS, ray_address=ray_head).returncode == 0
    _exactly_once(tmp_path)
    _sabotage(tmp_path)
    report = _check(tmp_path)
    assert report.returncode == 1, report.stdout + report.stderr
    rerun = sweep(tmp_path, *ARGS, ray_address=ray_head)
    assert rerun.returncode == 0 and "4 cached, 0 to run" in rerun.stderr, rerun.stderr[-2000:]
    assert "MLflow: 3 child runs left incomplete or twice by an earlier attempt deleted" in rerun.stderr
    _exactly_once(tmp_path)
    assert _check(tmp_path).returncode == 0
    _sabotage(tmp_path)
    repaired = _check(tmp_path, "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    _exactly_once(tmp_path)

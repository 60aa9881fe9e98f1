"""Faults that cost nothing (issue 36, acceptance 7): a sweep of tiny jobs with MLflow on loses
its embedded Ray's dashboard agent (the raylet fate-shares with it) while jobs run, then its
driver to kill -9 while it logs to MLflow; the same command is rerun. At the end every job is
stored once and ok, and MLflow holds exactly one FINISHED child run with its metrics per job.

FAULT_JOBS sets the size: 600 in `make test`, 10,000 in `make faults` (the issue's size)."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

from tests.conftest import ROOT
from tests.sweeps.helpers import mlflow_children, runs
from tests.sweeps.test_sweep_runs import _descendants

JOBS = int(os.environ.get("FAULT_JOBS", "600"))
TINY = ["flows=1", "core_mbps=1", "duration_s=0.2", "warmup_s=0.1", "start_window_s=0", "wmax_pkts=4", "rtt_ms=10"]


def _cmd(tmp_path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sweeps",
        "-m",
        f"seed=range(0,{JOBS})",
        *TINY,
        "confirm=false",
        f"results_dir={tmp_path / 'results'}",
        f"mlflow.tracking_uri=sqlite:///{tmp_path / 'mlflow.db'}",
    ]


def _env() -> dict[str, str]:
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT))
    env.pop("RAY_ADDRESS", None)
    return env


def _cmdline(pid: int) -> bytes:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return b""


def _children_logged(db) -> int:
    """MLflow child runs ended so far (read-only: the sweep is writing)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            q = "SELECT count(*) FROM runs r JOIN tags t ON t.run_uuid = r.run_uuid "
            q += "WHERE t.key = 'buffersweep_role' AND t.value = 'child' AND r.status = 'FINISHED'"
            return con.execute(q).fetchone()[0]
    except sqlite3.Error:
        return 0


def _wait(what: str, until, timeout_s: float, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout_s
    while not until():
        assert proc.poll() is None, f"the sweep ended (rc {proc.returncode}) before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def reap(proc: subprocess.Popen, seen: set[int]) -> None:
    """Ends a killed sweep's driver, waits a minute for what it started (the reaper ends Ray;
    loggers notice within a second) and kills anything left, by PID."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(_cmdline(p) for p in seen):
        time.sleep(0.5)
    for p in seen:
        if _cmdline(p):
            os.kill(p, signal.SIGKILL)


def test_a_dead_ray_node_and_a_killed_driver_cost_a_rerun_only(tmp_path):
    log = open(tmp_path / "first.log", "w")
    proc = subprocess.Popen(_cmd(tmp_path), cwd=tmp_path, env=_env(), stdout=log, stderr=subprocess.STDOUT)
    seen: set[int] = set()

    def agent() -> int | None:
        seen.update(_descendants(proc.pid))
        return next((p for p in seen if b"DashboardAgent" in _cmdline(p)), None)

    try:
        _wait("jobs running", lambda: agent() is not None and (tmp_path / "results" / "runs").exists(), 300, proc)
        os.kill(agent(), signal.SIGKILL)
        first = tmp_path / "first.log"
        _wait("Ray restarted", lambda: "restarting it (1 of 2)" in first.read_text(), 120, proc)
        _wait("MLflow logging", lambda: _children_logged(tmp_path / "mlflow.db") >= 1, 600, proc)
        seen.update(_descendants(proc.pid))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        reap(proc, seen)
    rerun = subprocess.run(_cmd(tmp_path), cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=1800)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    cached = int(re.search(r"(\d+) cached, \d+ to run", rerun.stderr).group(1))
    assert 0 < cached, "the first attempt stored nothing before it was killed"
    rows = runs(tmp_path).select(["run_id", "status"]).to_pylist()
    ids = {r["run_id"] for r in rows}
    assert len(rows) == len(ids) == JOBS and all(r["status"] == "ok" for r in rows), (len(ids), len(rows))
    _, children = mlflow_children(tmp_path, "sweeps")
    assert sorted(r.data.tags["run_id"] for r in children) == sorted(ids)
    assert all(r.info.status == "FINISHED" and "utilization" in r.data.metrics for r in children)

"""A real local multi-node Ray cluster (inside the tests' private network namespace): sweeps
attached to it, submitted as a job, surviving a dead node and a killed driver."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cluster import local
from cluster.submit import submit
from tests.conftest import ROOT, assert_lasts
from tests.sweeps.helpers import runs, sweep

GRID = [
    "-m",
    "seed=range(1,25)",
    "flows=20",
    "core_mbps=50",
    "duration_s=30",
    "warmup_s=5",
    "ray.batch_size=1",
    "mlflow.enabled=false",
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, ray_head):
    state_dir = tmp_path_factory.mktemp("cluster")
    state = local.up(2, state_dir)
    pgids = [n.pid for n in state.nodes]
    try:
        yield state, state_dir
    finally:
        stopped = local.down(state_dir)
        assert set(stopped) <= set(pgids)
        assert not any(local.alive(p) for p in pgids)
        # Another Ray on this machine (the session's ray_head) is untouched.
        host, port = ray_head.split(":")
        socket.create_connection((host, int(port)), 2).close()


def test_sweep_runs_on_two_nodes(cluster, tmp_path):
    state, _ = cluster
    res = sweep(tmp_path, *GRID, ray_address=state.address)
    assert res.returncode == 0, res.stderr
    t = runs(tmp_path)
    assert t.num_rows == 24 and len(set(t.column("run_id").to_pylist())) == 24
    assert len(set(t.column("node_id").to_pylist())) >= 2


def test_submitted_job_matches_a_local_run(cluster, tmp_path):
    grid = ["seed=range(1,9)", "flows=10", "core_mbps=20", "duration_s=10", "warmup_s=2", "mlflow.enabled=false"]
    job_id, status = submit([*grid, f"results_dir={tmp_path / 'job'}"], cluster[0].dashboard)
    assert status.value == "SUCCEEDED", job_id
    local_run = sweep(tmp_path, "-m", *grid, results_dir=tmp_path / "local")  # embedded Ray
    assert local_run.returncode == 0, local_run.stderr
    import pyarrow.dataset as ds

    job_ids = ds.dataset(tmp_path / "job" / "runs", partitioning="hive").to_table().column("run_id").to_pylist()
    local_ids = ds.dataset(tmp_path / "local" / "runs", partitioning="hive").to_table().column("run_id").to_pylist()
    assert sorted(job_ids) == sorted(local_ids) and len(job_ids) == 8


def test_killed_driver_rerun_runs_only_the_missing(cluster, tmp_path):
    state, _ = cluster
    # The premise: a job lasts over 0.5 s, so that the first flush (2 s after the first result)
    # finds fewer than 8 of the 24 done on the cluster's 2 cores.
    assert_lasts(0.5, flows=20, core_mbps=50, duration_s=800, warmup_s=5)
    cmd = [
        sys.executable,
        "-m",
        "sweeps",
        *GRID[:-3],
        "duration_s=800",
        "warmup_s=5",
        "ray.batch_size=1",
        "mlflow.enabled=false",
        f"results_dir={tmp_path / 'results'}",
        f"ray.address={state.address}",
    ]
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((tmp_path / "results" / "runs").rglob("*.parquet")):
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = runs(tmp_path).num_rows
    assert 0 < before < 24
    res = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"{24 - before} ok, 0 failed, {before} cached" in res.stderr
    ids = runs(tmp_path).column("run_id").to_pylist()
    assert len(ids) == 24 and len(set(ids)) == 24


ATLAS = [
    "+atlas=full",
    "tcp=sack",
    "queue=droptail,codel",
    "flows=1,8",
    "core_mbps=20",
    "rtt_ms=20,40",
    "traffic=none",
    "seeds=[1]",
    "targets=[0.9,0.95]",
    "min_duration_s=20",
    "duration_rtts=50",
    "ray.batch_size=1",
    "mlflow.enabled=false",
]
"""`atlas=full` at a reduced size (issue 59): 8 cells of two targets, probes of 20 s."""


def test_atlas_full_reduced_resumes_after_a_killed_driver_as_if_never_killed(cluster, tmp_path):
    """The driver is killed once its first probes are stored; the rerun simulates only what is
    missing (each probe stored once) and gives the atlas an unkilled build gives."""
    from analysis.db import connect

    state, _ = cluster
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT))

    def build(results: Path, address: str | None) -> list[str]:
        extra = [f"ray.address={address}"] if address else []
        return [sys.executable, "-m", "analysis", "atlas", "build", *ATLAS, f"results_dir={results}", *extra]

    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        build(killed, state.address), cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((killed / "runs").rglob("*.parquet")):
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (killed / "atlas").exists(), "killed before it finished"
    res = subprocess.run(
        build(killed, state.address), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr
    whole = subprocess.run(
        build(tmp_path / "whole", None), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert whole.returncode == 0, whole.stderr
    cols = "tcp, queue, flows, rtt_ms, target, min_buffer_pkts, lo_pkts, flags, utilization, probes"
    a, b = (
        connect(d).execute(f"SELECT {cols} FROM atlas ORDER BY ALL").fetchall() for d in (killed, tmp_path / "whole")
    )
    assert a == b and len(a) == 2 * 2 * 2 * 2
    ids = [r[0] for r in connect(killed).execute("SELECT run_id FROM runs").fetchall()]
    assert len(ids) == len(set(ids)) == sum({r[:4]: r[-1] for r in a}.values())


def test_dead_node_jobs_are_retried_and_marked(cluster, tmp_path):
    """Last in this module: it kills worker1."""
    state, _ = cluster
    assert_lasts(1.0, flows=40, core_mbps=100, duration_s=800, warmup_s=5)  # a job runs long enough to be caught
    cmd = [
        sys.executable,
        "-m",
        "sweeps",
        "-m",
        "seed=range(1,17)",
        "flows=40",
        "core_mbps=100",
        "duration_s=800",
        "warmup_s=5",
        "ray.batch_size=1",
        "mlflow.enabled=false",
        f"results_dir={tmp_path / 'results'}",
        f"ray.address={state.address}",
    ]
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = next(n for n in state.nodes if n.name == "worker1")
    pid = local.raylet_pid(victim)
    assert pid is not None
    # Kill it while it runs a job (a fixed sleep flaked on a loaded machine: the node was idle).
    deadline = time.monotonic() + 120
    while not _running_a_batch(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _running_a_batch(pid), "worker1 never ran a job"
    os.kill(pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    t = runs(tmp_path).to_pylist()
    assert len(t) == 16 and len({r["run_id"] for r in t}) == 16
    assert all(r["status"] == "ok" for r in t)
    assert any(r["attempt"] >= 1 for r in t)
    assert "resubmitted after a worker died" in err


def _running_a_batch(raylet_pid: int) -> bool:
    """A worker of this raylet is executing a batch: Ray titles a busy worker `ray::run_batch`
    (an idle one `ray::IDLE`)."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == raylet_pid and cmd.startswith(b"ray::run_batch"):
            return True
    return False

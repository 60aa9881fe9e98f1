"""Acceptance of the sweep: one stored row and one MLflow child per grid point, caching on
rerun, failures recorded, resume after the driver is killed, dead workers retried."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from sweeps.tracking import INLINE_LOGGING_MAX_JOBS, LOGGER_PROCESSES
from tests.conftest import ROOT, assert_lasts
from tests.sweeps.helpers import mlflow_children, runs, sweep

GRID = ["-m", "tcp=reno,paced", "flows=10,40", "buffer_pkts=5,20", "wmax_pkts=32", "core_mbps=100", "duration_s=20"]


def test_smoke_on_embedded_ray_then_all_cached(tmp_path):
    first = sweep(tmp_path, "-m", "+experiment=smoke")  # no address: embedded local Ray
    assert first.returncode == 0, first.stderr
    t = runs(tmp_path)
    assert t.num_rows == 8
    assert len(set(t.column("run_id").to_pylist())) == 8
    assert set(t.column("status").to_pylist()) == {"ok"}
    parents, children = mlflow_children(tmp_path, "smoke")
    assert (parents, len(children)) == (1, 8)

    again = sweep(tmp_path, "-m", "+experiment=smoke")
    assert again.returncode == 0, again.stderr
    assert "0 ok, 0 failed, 8 cached" in again.stderr
    assert runs(tmp_path).num_rows == 8
    assert mlflow_children(tmp_path, "smoke")[0:1] == (1,)
    assert len(mlflow_children(tmp_path, "smoke")[1]) == 8


def test_hand_written_grid_on_a_cluster(tmp_path, ray_head):
    first = sweep(tmp_path, *GRID, "mlflow.run_plots=true", ray_address=ray_head)
    assert first.returncode == 0, first.stderr
    t = runs(tmp_path)
    assert t.num_rows == 8
    got = sorted(zip(t.column("tcp").to_pylist(), t.column("flows").to_pylist(), t.column("buffer_pkts").to_pylist()))
    assert got == sorted((v, f, b) for v in ("reno", "paced") for f in (10, 40) for b in (5, 20))
    # Every parameter and every metric is a column; the measured values are sane.
    for col in (
        "sweep_id",
        "run_id",
        "status",
        "node_id",
        "started_at",
        "job_wall_s",
        "wmax_pkts",
        "core_mbps",
        "utilization",
        "loss_rate",
        "mean_queue_pkts",
        "jain_fairness",
        "engine_version",
    ):
        assert col in t.column_names
    assert pc.min(t.column("utilization")).as_py() > 0.1
    parents, children = mlflow_children(tmp_path, "sweeps")
    assert (parents, len(children)) == (1, 8)
    child = children[0]
    # Issue 56: a child run's start and duration are its job's (the UI read 0 ms: logging time).
    by_run = {r["run_id"]: r for r in t.to_pylist()}
    for c in children:
        r = by_run[c.data.tags["run_id"]]
        assert c.info.start_time == int(r["started_at"].timestamp() * 1000)
        assert c.info.end_time - c.info.start_time == round(r["job_wall_s"] * 1000) > 0
    # Params: the swept axes and every field that differs from the engine defaults (wmax 32);
    # the whole resolved config is the config.json artifact.
    assert {"flows", "buffer_pkts", "tcp", "wmax_pkts", "duration_s"} <= set(child.data.params)
    assert "utilization" in child.data.metrics
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    path = client.download_artifacts(child.info.run_id, "config.json", str(tmp_path))
    import json

    config = json.loads(open(path).read())
    assert config["rtt_ms"] == 100.0 and config["run_id"] == child.data.tags["run_id"]
    steps = [m.step for m in client.get_metric_history(child.info.run_id, "ts_utilization")]
    # Issue 13: the experiment opens on its runs; names say what was swept; the parent has the
    # sweep's metrics; every time-series column is logged, with the sample time as ts_time_s.
    exp = client.get_experiment_by_name("sweeps")
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    parent = client.get_run(child.data.tags["mlflow.parentRunId"])
    assert parent.info.run_name == "sweeps: tcp x flows x buffer_pkts (8 runs)"
    assert (
        parent.data.metrics["runs_ok"] == 8
        and 0 < parent.data.metrics["worst_utilization"] <= parent.data.metrics["best_utilization"] <= 1
    )
    assert {c.info.run_name for c in children} == {
        f"tcp={v} flows={f} buffer_pkts={b}" for v in ("reno", "paced") for f in (10, 40) for b in (5, 20)
    }
    times = [m.value for m in client.get_metric_history(child.info.run_id, "ts_time_s")]
    assert len(times) == 20 and times == sorted(times) and times[-1] == pytest.approx(20.0)
    assert sorted(steps) == [round(t * 1000) for t in times], "a metric's step is its sample's time in ms"
    assert {"ts_goodput_mbps", "ts_drops", "ts_mean_cwnd_pkts"} <= set(client.get_run(child.info.run_id).data.metrics)
    # Issue 34: a child run carries its flows table; the parent, the sweep's summary plot.
    flows = pq.read_table(client.download_artifacts(child.info.run_id, "flows.parquet", str(tmp_path)))
    assert len(flows) == int(child.data.params["flows"]) and "goodput_mbps" in flows.column_names
    png = client.download_artifacts(parent.info.run_id, "sweep_summary.png", str(tmp_path))
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 10_000
    png = client.download_artifacts(child.info.run_id, "timeseries.png", str(tmp_path))  # mlflow.run_plots
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 10_000
    assert "compare-runs?runs=" in first.stderr and f"#/experiments/{exp.experiment_id}/runs" in first.stderr

    again = sweep(tmp_path, *GRID, ray_address=ray_head)
    assert again.returncode == 0, again.stderr
    assert "0 ok, 0 failed, 8 cached" in again.stderr
    assert runs(tmp_path).num_rows == 8
    assert len(mlflow_children(tmp_path, "sweeps")[1]) == 8


def test_failing_job_is_recorded_and_the_rest_go_on(tmp_path, ray_head):
    res = sweep(tmp_path, *GRID, "debug.fail_when=flows:40", ray_address=ray_head)
    assert res.returncode == 1
    assert "4 ok, 4 failed" in res.stderr
    t = runs(tmp_path).to_pylist()
    assert len(t) == 8
    failed = [r for r in t if r["status"] == "failed"]
    assert {r["flows"] for r in failed} == {40} and len(failed) == 4
    assert all("debug.fail_when" in r["error"] and "Traceback" in r["traceback"] for r in failed)
    assert all(r["utilization"] is None for r in failed)
    # Rerun without the fault: only the failed points run; each point is stored once.
    res = sweep(tmp_path, *GRID, ray_address=ray_head)
    assert res.returncode == 0, res.stderr
    assert "4 ok, 0 failed, 4 cached" in res.stderr
    t = runs(tmp_path).to_pylist()
    assert len(t) == 8 and {r["status"] for r in t} == {"ok"}
    children = mlflow_children(tmp_path, "sweeps")[1]
    assert len(children) == 8
    assert {c.data.tags["status"] for c in children} == {"ok"}


def test_dead_worker_is_retried_and_marked(tmp_path, ray_head):
    res = sweep(
        tmp_path, "-m", "flows=4,8", "duration_s=5", "warmup_s=1", "debug.crash_when=flows:4", ray_address=ray_head
    )
    assert res.returncode == 0, res.stderr
    t = {r["flows"]: r for r in runs(tmp_path).to_pylist()}
    assert t[4]["status"] == "ok" and t[4]["attempt"] == 1
    assert t[8]["attempt"] in (0, 1)  # it may have shared the crashed batch


def test_killed_driver_resumes_without_duplicates(tmp_path, ray_head):
    # The premise: a job lasts over 0.5 s, so that 2 cores have done under 8 of the 24 by the
    # first flush, 2 s after the first result.
    assert_lasts(0.5, flows=20, core_mbps=100, duration_s=400, warmup_s=5)
    grid = [
        "-m",
        "seed=range(1,25)",
        "flows=20",
        "core_mbps=100",
        "duration_s=400",
        "warmup_s=5",
        "ray.batch_size=1",
        "mlflow.enabled=false",
    ]
    cmd = [sys.executable, "-m", "sweeps", *grid, f"results_dir={tmp_path / 'results'}", f"ray.address={ray_head}"]
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    runs_dir = tmp_path / "results" / "runs"
    while time.monotonic() < deadline and not list(runs_dir.rglob("*.parquet")):
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stored_before = runs(tmp_path).num_rows
    assert 0 < stored_before < 24

    res = sweep(tmp_path, *grid[:-1], "mlflow.enabled=false", ray_address=ray_head)
    assert res.returncode == 0, res.stderr
    assert f"{stored_before} cached" in res.stderr
    t = runs(tmp_path)
    ids = t.column("run_id").to_pylist()
    assert len(ids) == 24 and len(set(ids)) == 24
    assert not list((tmp_path / "results").rglob("*.tmp-*"))


def _descendants(pid: int) -> set[int]:
    out = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            kids = open(f"/proc/{pid}/task/{task}/children").read().split()
        except OSError:
            continue
        for k in map(int, kids):
            out |= {k} | _descendants(k)
    return out


def test_a_killed_driver_leaves_no_process_behind(tmp_path):
    """Audit D6: kill -9 of the driver left its MLflow logger processes, the resource tracker and
    Ray's agents running. With an embedded Ray, every process the driver started must end."""
    # More jobs than a driver thread logs (INLINE_LOGGING_MAX_JOBS), so that logger processes start.
    jobs = INLINE_LOGGING_MAX_JOBS + 9
    # The premise: the sweep outlasts the wait for its loggers and workers (seconds): its jobs take
    # 30 s of 2 cores at least.
    assert_lasts(30 * 2 / jobs, flows=20, core_mbps=100, duration_s=600, warmup_s=5)
    grid = ["-m", f"seed=range(1,{jobs + 1})", "flows=20", "core_mbps=100", "duration_s=600", "warmup_s=5"]
    grid.append("ray.batch_size=1")
    cmd = [
        sys.executable,
        "-m",
        "sweeps",
        *grid,
        f"results_dir={tmp_path / 'results'}",
        f"mlflow.tracking_uri=sqlite:///{tmp_path / 'mlflow.db'}",
    ]
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT))
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    started: set[int] = set()
    while time.monotonic() < deadline:  # until the loggers, the tracker and Ray's workers are all up
        time.sleep(0.5)
        started = _descendants(proc.pid)
        cmdlines = [open(f"/proc/{p}/cmdline", "rb").read() for p in started if os.path.exists(f"/proc/{p}")]
        loggers_and_tracker = sum(b"multiprocessing" in c for c in cmdlines)
        if loggers_and_tracker >= LOGGER_PROCESSES + 1 and any(b"run_batch" in c for c in cmdlines):
            break
    assert len(started) >= 4, started
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 60  # a logger notices within 1 s once it has imported MLflow
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in started):
        time.sleep(0.5)
    alive = {p: open(f"/proc/{p}/cmdline", "rb").read()[:80] for p in started if os.path.exists(f"/proc/{p}")}
    for p in alive:  # clean up by PID before failing
        os.kill(p, signal.SIGKILL)
    assert not alive, f"outlived the driver: {alive}"


def test_force_reruns_and_replaces(tmp_path, ray_head):
    grid = ["-m", "flows=2,3", "duration_s=5", "warmup_s=1"]
    assert sweep(tmp_path, *grid, ray_address=ray_head).returncode == 0
    first = {r["run_id"]: r["exec_id"] for r in runs(tmp_path).to_pylist()}
    res = sweep(tmp_path, *grid, "force=true", ray_address=ray_head)
    assert res.returncode == 0, res.stderr
    assert "2 ok, 0 failed, 0 cached" in res.stderr
    second = {r["run_id"]: r["exec_id"] for r in runs(tmp_path).to_pylist()}
    assert second.keys() == first.keys() and len(runs(tmp_path)) == 2  # stored once each
    assert all(second[k] != first[k] for k in first)  # the new executions replaced the old
    assert len(mlflow_children(tmp_path, "sweeps")[1]) == 2


def test_parking_lot_sweep_stores_runs_and_links(tmp_path, ray_head):
    res = sweep(
        tmp_path,
        "-m",
        "topology=parking_lot",
        "flows=2,4",
        "topology.links.1.buffer_pkts=10,30",
        "topology.links.0.rate_mbps=50",
        "rtt_spread_ms=40",
        "duration_s=10",
        "warmup_s=2",
        ray_address=ray_head,
    )
    assert res.returncode == 0, res.stderr
    t = runs(tmp_path)
    assert t.num_rows == 4 and set(t.column("topology").to_pylist()) == {"parking_lot"}
    links = [link[1] for link in t.column("topology_links").to_pylist()]
    assert sorted(link["buffer_pkts"] for link in links) == [10, 10, 30, 30]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "sql",
            "--results",
            str(tmp_path / "results"),
            "--format",
            "csv",
            "SELECT run_id, link_id, rate_mbps, buffer_pkts, utilization, loss_rate "
            "FROM links ORDER BY run_id, link_id",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    rows = [line.split(",") for line in out.stdout.strip().splitlines()[1:]]
    assert len(rows) == 8 and {r[1] for r in rows} == {"0", "1"}
    assert {(r[1], float(r[2])) for r in rows} == {("0", 50.0), ("1", 10.0)}
    assert all(0 < float(r[4]) <= 1 for r in rows)


def _can_mount_tmpfs(path) -> bool:
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {path}"], capture_output=True
    )
    return probe.returncode == 0


def test_a_full_disk_mid_sweep_is_one_line_and_a_failed_parent(tmp_path, ray_head):
    """Audit D9: ENOSPC ended in a traceback and left the MLflow parent run RUNNING."""
    full = tmp_path / "full"
    full.mkdir()
    if not _can_mount_tmpfs(full):
        pytest.skip("no private mount namespace here (unshare -m) for a small tmpfs")
    sweep_cmd = " ".join(
        [
            sys.executable,
            "-m",
            "sweeps",
            "-m",
            "'seed=range(1,9)'",
            "flows=2",
            "duration_s=30",
            "warmup_s=1",
            "ray.batch_size=1",
            f"results_dir={full / 'results'}",
            f"mlflow.tracking_uri=sqlite:///{tmp_path / 'mlflow.db'}",
            f"ray.address={ray_head}",
        ]
    )
    res = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=48k tmpfs {full} && {sweep_cmd}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT)),
    )
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:") or "Traceback" in ln]
    assert res.returncode == 1 and len(errors) == 1, res.stderr[-3000:]
    assert "No space left on device" in errors[0] and "rerun the command to resume" in errors[0]
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp = client.get_experiment_by_name("sweeps")
    assert [r.info.status for r in client.search_runs([exp.experiment_id])] == ["FAILED"]


def test_a_stored_run_missing_from_mlflow_is_logged_again_with_its_flows(tmp_path, ray_head):
    """A run in Parquet but not in MLflow (a driver killed between its flush and its logging) is
    logged by the sweep's next run, with its own flows table."""
    from mlflow.tracking import MlflowClient

    grid = ["-m", "flows=2,4", "duration_s=3", "warmup_s=1"]
    first = sweep(tmp_path, *grid, "debug.fail_when=flows:4", ray_address=ray_head)
    assert first.returncode == 1, first.stderr  # flows=4 failed: the rerun has work, and logs
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    stored = next(c for c in mlflow_children(tmp_path, "sweeps")[1] if c.data.tags["status"] == "ok")
    client.delete_run(stored.info.run_id)
    again = sweep(tmp_path, *grid, ray_address=ray_head)
    assert again.returncode == 0, again.stderr
    children = mlflow_children(tmp_path, "sweeps")[1]
    assert sorted(c.data.params["flows"] for c in children) == ["2", "4"]
    for c in children:
        flows = pq.read_table(client.download_artifacts(c.info.run_id, "flows.parquet", str(tmp_path / c.info.run_id)))
        assert len(flows) == int(c.data.params["flows"]), c.data.params


def test_a_run_that_outgrows_its_memory_is_stored_as_failed(tmp_path, ray_head):
    """Issue 73: the engine stops a run past its memory budget with MemoryError (here none to grow
    into, `debug.starve_when`); the worker lives on and the sweep stores the failure and its cause."""
    res = sweep(tmp_path, *GRID, "debug.starve_when=flows:40", ray_address=ray_head)
    assert res.returncode == 1
    assert "4 ok, 4 failed" in res.stderr
    failed = [r for r in runs(tmp_path).to_pylist() if r["status"] == "failed"]
    assert {r["flows"] for r in failed} == {40} and len(failed) == 4
    for r in failed:
        assert r["error"].startswith("MemoryError: memory: the run outgrew the memory it may allocate"), r["error"]
        assert "(limits.run_memory_mb)" in r["error"] and "flows=40" in r["error"].split("driven by")[1], r["error"]

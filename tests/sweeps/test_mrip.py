"""Replications in parallel (issue 57, part 2): a sweep point with precision.min_seeds/max_seeds
runs its seeds at once on Ray and adds seeds until the interval across them meets its target;
its answer is a row of the `points` view and a run in MLflow; killed and rerun, no replication
runs twice (docs/precision.md, "Replications")."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import duckdb

from sim._core import PRECISION_METRICS, t_interval
from sweeps.api import JobList, compose_config
from sweeps.mrip import STOP_MAX_SEEDS, STOP_PRECISION, Mrip, MripGrid
from tests.conftest import ROOT
from tests.sweeps.helpers import runs, sweep
from tests.sweeps.test_faults import _env, _wait, reap
from tests.sweeps.test_sweep_runs import _descendants

POINT = ["flows=4", "duration_s=20", "precision.metrics=[utilization]", "precision.halfwidth=0.005"]


def _grid(min_seeds: int, max_seeds: int, halfwidth: float) -> MripGrid:
    cfg = compose_config(
        [
            "precision.metrics=[utilization]",
            f"precision.halfwidth={halfwidth}",
            f"precision.min_seeds={min_seeds}",
            f"precision.max_seeds={max_seeds}",
        ]
    )
    return MripGrid(JobList(cfg, [{}]))


def _values(u: float) -> tuple:
    return tuple(u if m == "utilization" else 0.0 for m in PRECISION_METRICS)


def test_a_point_stops_at_the_first_seeds_in_order_that_meet_the_target_whatever_finished_first():
    utils = [0.90, 0.93, 0.91, 0.92, 0.915, 0.913, 0.80, 0.99]  # the first 5 in order meet +-0.02
    answers = []
    for order in (list, reversed):
        grid = _grid(3, 8, 0.02)
        run_ids = [f"r{i}" for i in range(8)]
        mrip = Mrip(grid, run_ids, {}, ahead=8)
        started, feed = [], mrip.feed(lambda i: i)
        while (i := next(feed)) is not None:
            started.append(i)
        assert started == list(range(8))  # the first min_seeds, then up to `ahead` more, in seed order
        for i in order(started):
            mrip.record(run_ids[i], True, {"utilization": utils[i], **{m: 0.0 for m in PRECISION_METRICS[1:]}})
        p = grid.points[0]
        answers.append((p.stop, p.n))
        mean, hw, n = t_interval(utils[: p.n], 0.95)
        assert hw <= 0.02 < t_interval(utils[: p.n - 1], 0.95)[1]
    assert answers[0] == answers[1] == (STOP_PRECISION, 5)


def test_a_point_that_never_meets_its_target_stops_at_max_seeds_and_a_failure_stops_it():
    grid = _grid(2, 3, 1e-9)
    mrip = Mrip(grid, ["a", "b", "c"], {"a": _values(0.5), "b": _values(0.6)}, ahead=1)
    feed = mrip.feed(lambda i: i)
    assert mrip.cached == 2 and next(feed) == 2 and next(feed) is None  # the one left, then a wait
    mrip.record("c", True, dict(zip(PRECISION_METRICS, _values(0.7))))
    assert (grid.points[0].stop, grid.points[0].n) == (STOP_MAX_SEEDS, 3)
    grid = _grid(2, 5, 1e-9)
    mrip = Mrip(grid, list("abcde"), {"a": _values(0.5)}, ahead=1)
    mrip.record("b", False, None)
    assert grid.points[0].stop == "failed" and mrip.table().to_pylist()[0]["replications"] == 1


def test_a_replicated_point_is_a_row_of_points_and_a_run_in_mlflow(tmp_path):
    res = sweep(tmp_path, *POINT, "precision.min_seeds=3", "precision.max_seeds=12")
    assert res.returncode == 0, res.stderr[-3000:]
    (point,) = duckdb.sql(f"SELECT * FROM '{tmp_path}/results/points/*/*.parquet'").to_arrow_table().to_pylist()
    assert point["stop_reason"] == STOP_PRECISION and 3 <= point["replications"] < 12
    stored = {r["run_id"]: r for r in runs(tmp_path).to_pylist()}
    assert len(stored) == len(runs(tmp_path))  # each replication stored once
    utils = [stored[rid]["utilization"] for rid in point["run_ids"]]
    assert [stored[rid]["seed"] for rid in point["run_ids"]] == list(range(1, 1 + point["replications"]))
    mean, hw, _ = t_interval(utils, 0.95)
    assert (point["utilization_mean"], point["utilization_halfwidth"]) == (mean, hw) and hw <= 0.005
    if point["replications"] > 3:
        assert t_interval(utils[:-1], 0.95)[1] > 0.005  # it stopped at the first n that met it
    # The same row through the analysis command's view.
    out = subprocess.run(
        [sys.executable, "-m", "analysis", "sql", "--results", str(tmp_path / "results"), "--format", "csv"]
        + ["SELECT replications, stop_reason FROM points"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.splitlines()[-1] == f'{point["replications"]},"precision"', out.stdout + out.stderr
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp = client.get_experiment_by_name("sweeps")
    (logged,) = client.search_runs([exp.experiment_id], "tags.buffersweep_role = 'point'")
    six = lambda x: float(f"{x:.6g}")  # noqa: E731 - as MLflow gets them (every digit is in Parquet)
    assert logged.data.metrics["utilization"] == six(mean) and logged.data.metrics["utilization_halfwidth"] == six(hw)
    assert logged.data.metrics["replications"] == point["replications"]
    # Issue 69: the point's config as its params, its replications under it, each tagged counted or not.
    assert logged.data.params["flows"] == "4" and "seed" not in logged.data.params, logged.data.params
    reps = client.search_runs([exp.experiment_id], f"tags.mlflow.parentRunId = '{logged.info.run_id}'")
    counted = {r.data.tags["run_id"] for r in reps if r.data.tags["counted"] == "true"}
    assert counted == set(point["run_ids"]) and len(reps) == len(stored)
    assert {r.data.tags["point"] for r in reps} == {logged.data.tags["point"]}
    parent = client.get_run(logged.data.tags["mlflow.parentRunId"])
    ran = f"1 point, {len(stored)} replications run, {point['replications']} counted"
    assert parent.data.tags["mlflow.runName"].endswith(f"({ran})"), parent.data.tags["mlflow.runName"]


def test_killed_and_rerun_no_replication_runs_twice(tmp_path):
    # Replications of about 2 s, a target out of reach: the point runs all 8.
    args = ["core_mbps=500", "flows=20", "buffer_pkts=200", "duration_s=100"]
    args += ["precision.metrics=[utilization]", "precision.halfwidth=1e-9", "precision.min_seeds=4"]
    args += ["precision.max_seeds=8", "mlflow.enabled=false", f"results_dir={tmp_path / 'results'}"]
    cmd = [sys.executable, "-m", "sweeps", *args]
    log = open(tmp_path / "first.log", "w")
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_env(), stdout=log, stderr=subprocess.STDOUT)
    seen: set[int] = set()
    try:
        stored = tmp_path / "results" / "runs"

        def some_stored() -> bool:
            seen.update(_descendants(proc.pid))
            return stored.exists() and any(stored.rglob("part-*.parquet"))

        _wait("a replication stored", some_stored, 300, proc)
        seen.update(_descendants(proc.pid))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        reap(proc, seen)
    first = {r["run_id"]: r["exec_id"] for r in runs(tmp_path).to_pylist()}
    assert 0 < len(first) < 8
    rerun = subprocess.run(cmd, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert int(re.search(r"replications, (\d+) stored", rerun.stderr).group(1)) >= len(first)
    rows = runs(tmp_path).select(["run_id", "exec_id", "seed"]).to_pylist()
    assert len(rows) == len({r["run_id"] for r in rows}) == 8 and sorted(r["seed"] for r in rows) == list(range(1, 9))
    assert all(first.get(r["run_id"], r["exec_id"]) == r["exec_id"] for r in rows)  # none ran again
    (point,) = duckdb.sql(f"SELECT stop_reason, replications FROM '{tmp_path}/results/points/*/*.parquet'").fetchall()
    assert point == (STOP_MAX_SEEDS, 8)


def test_bad_replication_settings_exit_2_naming_the_key(tmp_path):
    res = sweep(tmp_path, "-m", "seed=1,2", *POINT, "precision.max_seeds=3")
    assert res.returncode == 2 and res.stderr.strip().splitlines()[-1].startswith("error: seed: give one seed"), (
        res.stderr
    )
    res = sweep(tmp_path, "precision.max_seeds=3")
    assert res.returncode == 2 and "precision.metrics: name the metrics" in res.stderr, res.stderr
    assert not (tmp_path / "results" / "runs").exists()

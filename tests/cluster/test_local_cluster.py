"""A real local multi-node Ray cluster (inside the tests' private network namespace): sweeps
attached to it, submitted as a job, surviving a dead node and a killed driver."""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from cluster import auth, local
from cluster.submit import submit
from sweeps.raycfg import LOCAL_CLUSTER_DIR, TOKEN_FILE
from tests.conftest import ROOT, assert_lasts, free_port
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
def cluster(tmp_path_factory, ray_head, worker_id):
    """`python -m cluster up --workers 2`, its token the one this module's commands find
    (RAY_AUTH_TOKEN_PATH, in place of the session Ray's). Each pytest worker that runs some of
    this module's tests starts its own, on its own ports (`--port-offset`)."""
    state_dir = tmp_path_factory.mktemp("cluster")
    offset = 100 * int(worker_id[2:]) if worker_id.startswith("gw") else 0
    res = subprocess.run(
        [sys.executable, "-m", "cluster", "--state-dir", str(state_dir), "up", "--workers", "2"]
        + ["--port-offset", str(offset)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    state = local.ClusterState.load(state_dir)
    pgids = [n.pid for n in state.nodes] if state else []
    try:
        assert res.returncode == 0, res.stderr
        token = auth.token_path(state_dir)
        assert token.stat().st_mode & 0o777 == 0o600
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("RAY_AUTH_TOKEN_PATH", str(token))
            yield state, state_dir
    finally:
        latest = local.ClusterState.load(state_dir)
        stopped = local.down(state_dir)
        assert set(stopped) <= set(pgids) | {latest.mlflow_pid if latest else None}
        assert not any(local.alive(p) for p in pgids)
        assert not auth.token_path(state_dir).exists()  # the token goes with the cluster
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
    env = dict(os.environ, PYTHONPATH=str(ROOT))
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
    "decide=mean",
    "probe=fixed",
    "targets=[0.9,0.95]",
    "min_duration_s=20",
    "duration_rtts=50",
    "ray.batch_size=1",
    "mlflow.enabled=false",
]
"""`atlas=full` at a reduced size (issue 59): 8 cells of two targets, probes of 20 s on one seed."""


def test_atlas_full_reduced_resumes_after_a_killed_driver_as_if_never_killed(cluster, tmp_path):
    """The driver is killed once its first probes are stored; the rerun simulates only what is
    missing (each probe stored once) and gives the atlas an unkilled build gives."""
    from analysis.db import connect

    state, _ = cluster
    env = dict(os.environ, PYTHONPATH=str(ROOT))

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
        connect(d).execute(f"SELECT {cols} FROM atlas WHERE atlas = 'full' ORDER BY ALL").fetchall()
        for d in (killed, tmp_path / "whole")  # (the view holds the shipped small atlas too)
    )
    assert a == b and len(a) == 2 * 2 * 2 * 2
    ids = [r[0] for r in connect(killed).execute("SELECT run_id FROM runs").fetchall()]
    assert len(ids) == len(set(ids)) == sum({r[:4]: r[-1] for r in a}.values())


EIGHT = ["-m", "seed=range(1,9)", "flows=4", "core_mbps=10", "duration_s=5", "warmup_s=1", "mlflow.enabled=false"]


def without_ray_token(tmp_path: Path) -> dict[str, str]:
    """This process's environment with no Ray token to be found: RAY_AUTH_TOKEN and _PATH unset,
    and a HOME without ~/.ray/auth_token (the cluster's own file is in its state folder)."""
    if (LOCAL_CLUSTER_DIR / TOKEN_FILE).exists():
        pytest.skip(f"a cluster of this checkout is up ({LOCAL_CLUSTER_DIR}): its token would be found")
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")}
    return dict(env, HOME=str(tmp_path), PYTHONPATH=str(ROOT))


def test_a_sweep_runs_with_the_token_and_is_refused_without_it(cluster, tmp_path):
    """Issue 60, acceptance 1: 8 runs through the cluster stored once; the same sweep without a
    token to find is refused in one line naming it, exit 2, before anything is stored."""
    state, _ = cluster
    res = sweep(tmp_path, *EIGHT, ray_address=state.address)
    assert res.returncode == 0, res.stderr
    ids = runs(tmp_path).column("run_id").to_pylist()
    assert len(ids) == 8 and len(set(ids)) == 8
    cmd = [sys.executable, "-m", "sweeps", *EIGHT, f"results_dir={tmp_path / 'no'}", f"ray.address={state.address}"]
    refused = subprocess.run(cmd, cwd=tmp_path, env=without_ray_token(tmp_path), capture_output=True, text=True)
    assert refused.returncode == 2, refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ray.address: no Ray auth token"), lines
    assert not (tmp_path / "no").exists()


def _http_status(url: str, authorization: str | None) -> int:
    """The HTTP status of a GET of `url` with this Authorization header (None: without one)."""
    req = urllib.request.Request(url, headers={"Authorization": authorization} if authorization else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


RAY_INIT = "import ray; ray.init(address={!r}, logging_level='ERROR'); print(ray.cluster_resources()['CPU'])"


def test_the_jobs_api_and_ray_init_refuse_a_request_without_the_token(cluster, tmp_path):
    """Issue 60, acceptance 2: the Jobs API answers 401 without the token, 403 with a wrong one,
    200 with it; `ray.init(address=...)` without the token (auth off, or a wrong token) fails
    where the same call with it connects."""
    state, state_dir = cluster
    token = auth.token_path(state_dir).read_text().strip()
    jobs = f"{state.dashboard}/api/jobs/"
    bearers = [None, f"Bearer {'0' * 64}", f"Bearer {token}"]
    assert [_http_status(jobs, b) for b in bearers] == [401, 403, 200]
    code = RAY_INIT.format(state.address)
    bare = without_ray_token(tmp_path)
    tries = {
        "off": dict(bare, RAY_AUTH_MODE="disabled"),
        "wrong": dict(bare, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN="0" * 64),
        "right": dict(bare, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token),
    }
    procs = {  # at once: a refused ray.init takes its time to give up
        k: subprocess.Popen(
            [sys.executable, "-c", code], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for k, e in tries.items()
    }
    try:
        got = {k: (p.communicate(timeout=180), p.returncode) for k, p in procs.items()}
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    (out, err), rc = got["right"]
    assert rc == 0 and float(out.split()[-1]) == 2.0, err
    for refused in ("off", "wrong"):  # refused by the cluster's auth (Ray names its token-auth page)
        (_, err), rc = got[refused]
        assert rc != 0 and "token-auth" in err, (refused, err[-2000:])


def test_mlflow_off_loopback_needs_credentials(cluster, tmp_path):
    """Issue 60, acceptance 3: `cluster mlflow --host 0.0.0.0` refuses to start without
    credentials; with generated ones it answers 401 without them and 200 with them, and a sweep
    logs through it with them (and is refused in one line without)."""
    _, state_dir = cluster
    port = free_port()
    base = [sys.executable, "-m", "cluster", "--state-dir", str(state_dir), "mlflow", "--host", "0.0.0.0"]
    base += ["--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_TRACKING_")}
    refused = subprocess.run([*base, "--port", str(port)], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and refused.stderr.strip().startswith("error: --host: 0.0.0.0 is off loopback")
    assert len(refused.stderr.strip().splitlines()) == 1
    started = subprocess.run(
        [*base, "--port", str(port), "--generate-credentials"], env=env, capture_output=True, text=True, timeout=120
    )
    assert started.returncode == 0, started.stderr
    creds = state_dir / auth.MLFLOW_CREDENTIALS
    assert creds.stat().st_mode & 0o777 == 0o600
    user, password = creds.read_text().strip().split(":", 1)
    uri = f"http://127.0.0.1:{port}"
    api = f"{uri}/api/2.0/mlflow/experiments/search?max_results=1"
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    assert _http_status(api, None) == 401 and _http_status(api, f"Basic {basic}") == 200
    grid = ["-m", "flows=1,2", "duration_s=2", "warmup_s=0", f"mlflow.tracking_uri={uri}"]
    cmd = [sys.executable, "-m", "sweeps", *grid, f"results_dir={tmp_path / 'results'}"]
    no = subprocess.run(cmd, cwd=tmp_path, env=dict(env, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    assert no.returncode == 2 and "wants credentials" in no.stderr and len(no.stderr.strip().splitlines()) == 1
    with_creds = dict(env, PYTHONPATH=str(ROOT), MLFLOW_TRACKING_USERNAME=user, MLFLOW_TRACKING_PASSWORD=password)
    ok = subprocess.run(cmd, cwd=tmp_path, env=with_creds, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    from mlflow.tracking import MlflowClient

    os.environ.update(MLFLOW_TRACKING_USERNAME=user, MLFLOW_TRACKING_PASSWORD=password)
    try:
        c = MlflowClient(uri)
        logged = c.search_runs([e.experiment_id for e in c.search_experiments()])
    finally:
        os.environ.pop("MLFLOW_TRACKING_USERNAME")
        os.environ.pop("MLFLOW_TRACKING_PASSWORD")
    assert len([r for r in logged if r.data.tags.get("buffersweep_role") == "child"]) == 2


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
    env = dict(os.environ, PYTHONPATH=str(ROOT))
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

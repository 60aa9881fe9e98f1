"""Bad input: one line naming the key and what is allowed, exit code 2, before any job starts,
and no file written or changed."""

from __future__ import annotations

import pytest

from sim.schema import union_names, unions
from tests.sweeps.helpers import sweep

TCP_OPTIONS = ", ".join(sorted(set(union_names(unions()["tcp"]))))
"""Every `tcp` option, as the engine's registry names them (its laws and presets)."""

pytestmark = pytest.mark.check  # part of `make check`


def snapshot(path):
    return sorted((p.relative_to(path), p.stat().st_mtime_ns) for p in path.rglob("*"))


@pytest.mark.parametrize(
    "args, key, allowed",
    [
        (["-m", "bufer_pkts=5,10"], "bufer_pkts", "buffer_pkts"),
        (
            ["-m", "tcp=reno,vegas"],
            "tcp",
            TCP_OPTIONS,
        ),
        (
            ["tcp=vegas"],
            "tcp",
            TCP_OPTIONS,
        ),
        (["-m", "buffer_pkts=-5,10"], "buffer_pkts", "[0,"),
        (["-m", "flows=abc,10"], "flows", "an integer"),
        (["-m", "core_mbps=0,10"], "core_mbps", "> 0"),
        (["-m", "flows=choice()"], "flows", ""),
        (["-m", "buffer_rule=stanford"], "buffer_rule", "retired; use buffer_policy=bdp|stanford|enachescu"),
        (["-m", "warmup_s=5,50", "duration_s=30"], "warmup_s", "< duration_s"),
        (["-m", "+experiment=nope"], "experiment", "dick_table"),
        # Audit D9: each of these was accepted, ignored or ended in a traceback.
        (["-m", "results_dir=/tmp/a,/tmp/b"], "results_dir", "cannot be swept"),
        (["results_dir="], "results_dir", "non-empty"),
        (["buffer_scale=2"], "buffer_scale", "retired; use buffer_policy.factor"),
        (["buffer_policy=stanford", "buffer_policy.factor=-1"], "buffer_policy.factor", "> 0"),
        (["buffer_pkts=1e3"], "buffer_pkts", "write 1000"),
        (["ray.num_cpus=-1"], "ray.num_cpus", ">= 1"),
        # Issue 15: traffic groups.
        (["-m", "traffic=[{kind:pareto,shape:0.9}]", "buffer_pkts=5,10"], "traffic.0.shape", "> 1"),
        (["traffic=[{kind:udp,route:[0,2]}]"], "traffic.0.route", "link 2 does not exist"),
        (["traffic=[{kind:bulk,flows:0}]"], "traffic.0.flows", "[1,"),
        # Issue 16: buffer policies.
        (["-m", "buffer_policy=bdp,abs9000"], "buffer_policy", "abs, abs_u_undamped, adt, bdp, bscl"),
        (["-m", "buffer_policy=abs", "buffer_policy.target_util=0.9,1.5"], "buffer_policy.target_util", "(0, 1]"),
        (["buffer_policy=abs", "buffer_policy.target_loss=1"], "buffer_policy.target_loss", "[0, 1)"),
        (["buffer_policy=adt", "buffer_policy.gain=-3"], "buffer_policy.gain", ">= 0"),
        (["buffer_policy=abs", "buffer_policy.interval_ms=20"], "buffer_policy.interval_ms", "sample_interval_s"),
        (
            ["topology=parking_lot", "topology.links.1.buffer_policy={name:abs,gain_util:-1}"],
            "topology.links.1.buffer_policy.gain_util",
            ">= 0",
        ),
        # Issue 32: queue disciplines and ECN.
        (["-m", "queue=droptail,blue"], "queue", "allowed: codel, droptail, fq_codel, fq_codel_ns3, pie, red, step"),
        (["queue=codel", "queue.target_ms=0"], "queue.target_ms", "> 0"),
        (["queue=red", "queue.min_th=15", "queue.max_th=10"], "queue.max_th", "> min_th"),
        (["queue=red", "queue.max_p=1.5"], "queue.max_p", "(0, 1]"),
        (["queue=pie", "queue.t_update_ms=-15"], "queue.t_update_ms", "> 0"),
        (["queue=fq_codel", "queue.flows=0"], "queue.flows", "[1,"),
        (["queue=fq_codel", "queue.backlog_test=queue"], "queue.backlog_test", "qdisc, flow"),
        (["tcp=dctcp"], "tcp.ecn", "set tcp.ecn=true"),
        (["queue=codel", "queue.ecn=true"], "queue.ecn", "set tcp.ecn=true"),
        (["queue=step"], "queue", "set tcp.ecn=true"),
        # Issue 17: backends. An unknown one, and a field a backend cannot mirror (checked before
        # its simulator is looked for, so these hold with or without ns-2 and ns-3 installed).
        (["-m", "backend=engine,ns4"], "backend", "engine, ns2, ns3"),
        # Issue 36: a job whose estimated cost is over the limits, refused before the sweep starts.
        (["-m", "tcp=poisson", "poisson_mbps=10,1e7", "duration_s=20"], "limits.max_events", "poisson_mbps=1e+07"),
        (["-m", "flows=10,1000000", "limits.max_memory_gb=0.5"], "limits.max_memory_gb", "flows=1000000"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, args, key, allowed):
    (tmp_path / "results" / "runs").mkdir(parents=True)
    before = snapshot(tmp_path)
    res = sweep(tmp_path, *args, timeout=60)
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert key in lines[0] and allowed in lines[0]
    assert snapshot(tmp_path) == before


def test_unwritable_results_dir(tmp_path):
    blocker = tmp_path / "a-file"  # a directory cannot be created under a regular file, even by root
    blocker.write_text("x")
    before = snapshot(tmp_path)
    res = sweep(tmp_path, "-m", "flows=1,2", results_dir=blocker / "results", timeout=60)
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "results_dir" in lines[0], res.stderr
    assert snapshot(tmp_path) == before


def test_a_second_writer_is_refused_before_anything_runs(tmp_path):
    """Audit D3: two sweeps on one results_dir; the second gets one line and exit 2."""
    from sweeps.store import Store

    with Store(str(tmp_path / "results")).writer_lock():
        before = snapshot(tmp_path)
        res = sweep(tmp_path, "-m", "flows=1,2", "duration_s=2", "warmup_s=1", timeout=60)
        assert snapshot(tmp_path) == before
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "results_dir" in lines[0] and "being written by pid" in lines[0], res.stderr


def test_an_unreachable_object_store_is_one_line(tmp_path):
    """Audit D9: an s3:// results_dir without credentials or network ended in a traceback."""
    res = sweep(
        tmp_path, "flows=1", "duration_s=2", "warmup_s=1", results_dir="s3://no-such-bucket/results", timeout=120
    )
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: results_dir: cannot open"), (
        res.stderr[-2000:]
    )


def _cli(tmp_path, fork_at, *args):
    """The sweep CLI, grids of at least `fork_at` jobs validated by forked processes."""
    import os
    import subprocess
    import sys

    from tests.sweeps.helpers import ROOT

    code = (
        f"import runpy, sys; import sweeps.launch as L; L.PARALLEL_VALIDATION_MIN_JOBS = {fork_at}; "
        "sys.argv = ['sweeps', *sys.argv[1:]]; runpy.run_module('sweeps', run_name='__main__')"
    )
    cmd = [sys.executable, "-c", code, *args, f"results_dir={tmp_path / 'results'}", "mlflow.enabled=false"]
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT))
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_forked_validation_names_the_first_bad_job_and_agrees_with_one_process(tmp_path):
    """A large grid is validated by one forked process per core: the error is the one a single
    process gives (the first bad job in grid order), and the run_ids are the same (a rerun
    validated in one process finds every job cached)."""
    bad = ["-m", "duration_s=2,3,4,5", "start_window_s=0,2.5", "warmup_s=1", "flows=1", "core_mbps=1"]  # 1, 3 bad
    forked, single = _cli(tmp_path, 2, *bad), _cli(tmp_path, 10**9, *bad)
    assert forked.returncode == single.returncode == 2, forked.stderr
    assert forked.stderr.strip().splitlines()[-1] == single.stderr.strip().splitlines()[-1]
    assert "job 1:" in forked.stderr and "start_window_s" in forked.stderr
    assert not (tmp_path / "results" / "runs").exists()
    good = ["-m", "seed=1,2,3", "flows=1", "core_mbps=1", "duration_s=0.3", "warmup_s=0.1", "start_window_s=0"]
    assert _cli(tmp_path, 2, *good).returncode == 0
    again = _cli(tmp_path, 10**9, *good)
    assert again.returncode == 0 and "3 jobs, 3 cached, 0 to run" in again.stderr, again.stderr

"""Reproductions of the papers, run for real (each a few Ray-backed sweeps)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from mlflow.tracking import MlflowClient

import sim
from analysis import rules
from analysis.reproduce import REPRODUCTIONS, reproduce, write_report
from analysis.reproductions.abs import abs_fig1
from analysis.reproductions.common import ray_session
from analysis.reproductions.enachescu import enachescu_fig1
from analysis.reproductions.stanford import (
    STANFORD_CORE_MBPS,
    STANFORD_RTT_MS,
    appenzeller_fig13,
    fig12_half_rule_utilization,
    fig12_overrides,
    profile_min_buffers,
)
from tests.conftest import ENGINE_FASTER

ROOT = Path(__file__).resolve().parents[2]


def check_png(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


@pytest.mark.check
def test_dick_table(tmp_path):
    assert reproduce("dick_table", str(tmp_path / "results"), str(tmp_path / "reports")) == 0
    check_png(tmp_path / "reports" / "dick_table.png")
    md = (tmp_path / "reports" / "dick_table.md").read_text()
    rows = [ln for ln in md.splitlines() if re.match(r"^\| (30|60|90|120) \|", ln)]
    assert len(rows) == 16
    within = int(re.search(r"within 0.05 of Dick's value in (\d+) of 16 rows", md).group(1))
    assert within >= 14
    # ns-2's side is stored runs of the ns2 backend (tests/sweeps/test_backends.py runs both live);
    # none are stored here, and the report says how to add them.
    assert "ns-2 has not been run on this set-up (`python -m analysis reproduce dick_table --backends ns2`" in md
    assert "Engine version" in md and "python -m sweeps -m +experiment=dick_table" in md
    # Issue 34: the report and its figure are a run of the MLflow experiment `reproductions`.
    client = MlflowClient(os.environ["MLFLOW_TRACKING_URI"])
    (run,) = client.search_runs([client.get_experiment_by_name("reproductions").experiment_id])
    assert (run.info.run_name, run.info.status) == ("dick_table", "FINISHED")
    assert {a.path for a in client.list_artifacts(run.info.run_id)} == {"dick_table.md", "dick_table.png"}

    # --stored writes the same report from the same runs, running nothing: not even a cached sweep,
    # which would touch its files.
    def tree():
        return sorted((str(p), p.stat().st_mtime_ns) for p in (tmp_path / "results").rglob("*"))

    before = tree()
    again = tmp_path / "again"
    assert reproduce("dick_table", str(tmp_path / "results"), str(again), mlflow=False, stored_only=True) == 0
    assert (again / "dick_table.md").read_text() == md
    assert tree() == before


def test_enachescu_fig1(tmp_path):
    # The 40-flow curves on one seed: the claims below are about them (`make reproduce` runs the
    # preset's 1, 10, 20 and 40 flows on three seeds).
    report, plot = enachescu_fig1(str(tmp_path / "results"), False, ["seed=1", "flows=40"])
    rows = {r[0]: r for r in report.rows}
    paced_10 = rows["Paced, 40 flows, 10-packet buffer: utilization"][2]
    reno_10 = rows["Reno, 40 flows, 10-packet buffer: utilization"][2]
    reno_b80 = rows["Reno, 40 flows: buffer where utilization reaches 0.80 (pkts, interpolated)"][2]
    assert paced_10 >= 0.70 and paced_10 - reno_10 >= 0.15
    assert reno_b80 is not None and 60 <= reno_b80 <= 150  # "about 100 packets"
    plot()
    axes = plt.gcf().axes
    assert [ax.get_title()[:3] for ax in axes] == ["(a)", "(b)", "(c)", "(d)"]
    assert all("packets" in ax.get_xlabel() and "utilization" in ax.get_ylabel() for ax in axes)
    plt.close("all")


STANFORD_TEST_FLOWS = (100, 500)
"""A reduced grid for the Appenzeller claims: two flow counts, one seed. The full reproduction (8
flow counts, two RTO profiles, the Fig. 12 bisection, two seeds) runs in `make reproduce`."""


def test_stanford_min_buffer(tmp_path):
    results = str(tmp_path / "results")
    with ray_session():
        found, diag = profile_min_buffers(results, "stanford_min_buffer", [], STANFORD_TEST_FLOWS, seeds=(1,))
        rc, half = fig12_half_rule_utilization(results, fig12_overrides(results), STANFORD_TEST_FLOWS, (1,))
    assert rc == 0
    mins = [found[n] for n in STANFORD_TEST_FLOWS]
    assert None not in mins and mins == sorted(mins, reverse=True), found  # falls as N grows
    rule = {n: rules.stanford_pkts(STANFORD_CORE_MBPS, STANFORD_RTT_MS, n) for n in STANFORD_TEST_FLOWS}
    assert all(found[n] <= rule[n] for n in STANFORD_TEST_FLOWS if n >= 150), (found, rule)
    assert all(0 < diag[n][1] < 0.1 for n in STANFORD_TEST_FLOWS), diag  # loss rate at the minimum
    # The paper's Fig. 12 link (400 Mb/s, 20% short flows) at half the rule: above 85%. (ns-2's
    # side, `reproduce stanford_min_buffer --backends ns2`, is an hour of ns-2: `make reproduce`.)
    assert sorted(half) == list(STANFORD_TEST_FLOWS)
    assert all(0.85 < half[n] < 1 for n in half), half


def test_appenzeller_fig13(tmp_path):
    # Three of the six flow counts, one seed (`make reproduce` runs the rest).
    report, plot = appenzeller_fig13(str(tmp_path / "results"), False, (50, 200, 500), (1,))
    # flows -> [n, BDP pkts, rule pkts, AFCT bdp, AFCT rule, ratio, delay bdp, delay rule, util bdp, util rule]
    rows = {r[0]: r for r in report.rows}
    assert sorted(rows) == [50, 200, 500]
    for n, r in rows.items():
        assert r[1] == 4000 and r[2] == round(4000 / n**0.5)
        # A 14-packet flow needs ~2.5 round trips (200 ms at the mean RTT) plus queueing.
        assert 200 < r[4] < r[3] < 700, r  # shorter with the small buffer, as the paper shows
        assert r[7] < r[6]  # because queueing delay is lower
        assert r[9] > 0.9 and r[8] > 0.95
    assert re.search(r"complete faster at every n, as in the paper", report.reading)
    plot()
    ax = plt.gcf().axes[0]
    assert "ms" in ax.get_ylabel() and "flows" in ax.get_xlabel() and len(ax.get_legend().get_texts()) == 2
    plt.close("all")


def test_abs_fig1(tmp_path):
    # Every variant and buffer on one seed (72 runs of 100 s at 100 Mb/s, under a minute); `make
    # reproduce` runs the preset's ten.
    report, plot = abs_fig1(str(tmp_path / "results"), False, ["seed=1"])
    write_report("abs_fig1", report, plot, str(tmp_path / "reports"))
    check_png(tmp_path / "reports" / "abs_fig1.png")
    md = (tmp_path / "reports" / "abs_fig1.md").read_text()
    assert "exited with status" not in md
    rows = [ln.split(" | ") for ln in md.splitlines() if re.match(r"^\| [a-z0-9_]+ \| \d+ \|", ln)]
    assert len(rows) == 8 * 9
    util = {(r[0][2:], int(r[1])): float(r[2]) for r in rows}
    # The paper's trend in utilization, as ours reads it: every variant but TCP-LP (which yields to
    # queueing delay) fills the link as the buffer grows.
    ours_trend = re.search(r"Ours: loss falls .* for (\d) of 8 variants and utilization rises for (\d) of 8", md)
    assert int(ours_trend.group(2)) >= 7
    assert all(
        util[(v, 2048)] > 0.99 for v in ("sack", "bic", "cubic_2622", "highspeed", "htcp", "scalable", "westwood")
    )
    assert all(util[(v, 8)] < 0.9 for v in ("sack", "highspeed", "scalable"))
    # ns-2's TCP-Linux side is stored runs of the ns2 backend (five points of this grid run live
    # in tests/sweeps/test_backends.py); none are stored here.
    assert "ns-2 has not been run on this set-up (`python -m analysis reproduce abs_fig1 --backends ns2`" in md
    assert "Engine version" in md and "python -m sweeps -m +experiment=abs_fig1" in md


@pytest.mark.check
def test_an_unknown_reproduction_is_named_with_the_allowed_ones(capsys):
    from analysis.__main__ import main

    assert main(["reproduce", "abs_fig2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown reproduction 'abs_fig2'; allowed: all, ") and "abs_fig1" in err


def test_stored_refuses_a_search_and_an_empty_results_dir_in_one_line(tmp_path):
    """`--stored` runs nothing: a reproduction that searches as it runs, a results_dir without
    runs, and `--rerun` beside it each get one line and exit 2, with no report written."""
    base = [sys.executable, "-m", "analysis", "reproduce"]
    where = ["--results", str(tmp_path / "r"), "--reports", str(tmp_path / "reports"), "--no-mlflow"]
    cases = {
        "stanford_min_buffer": "error: --stored: stanford_min_buffer: it searches as it runs",
        "red_tuning": f"error: --stored: red_tuning: no results at {tmp_path / 'r'}",
    }
    # A results_dir without a run of the preset: one line too, where the report's plot would have
    # failed on no data.
    (tmp_path / "other" / "runs").mkdir(parents=True)
    res = subprocess.run(
        [*base, "red_tuning", "--stored", *where[:1], str(tmp_path / "other"), *where[2:]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert res.returncode == 2, res.stderr
    assert (
        res.stderr.splitlines()[-1]
        == f"error: --stored: red_tuning: no run of preset red_tuning is stored in {tmp_path / 'other'}"
    )
    for name, line in cases.items():
        res = subprocess.run([*base, name, "--stored", *where], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert res.returncode == 2, res.stderr
        assert res.stderr.splitlines()[-1].startswith(line), res.stderr
    res = subprocess.run([*base, "dick_table", "--stored", "--rerun", *where], capture_output=True, text=True, cwd=ROOT)
    assert (res.returncode, res.stderr) == (2, "error: --stored runs nothing and --rerun reruns everything: give one\n")
    assert not (tmp_path / "reports").exists() and not (tmp_path / "r").exists()


@pytest.mark.check
def test_reproduce_help_and_list_name_every_reproduction():
    for args in (["--help"], ["list"]):
        res = subprocess.run(
            [sys.executable, "-m", "analysis", "reproduce", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
        for name, r in REPRODUCTIONS.items():
            assert re.search(rf"^\s+{name}\s+{re.escape(r.paper)}", res.stdout, re.M), (args, name)


def _children(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids += [int(k) for k in (task / "children").read_text().split()]
    return kids


def test_a_stopped_reproduction_stops_its_sweep(tmp_path):
    """SIGTERM to `python -m analysis reproduce` ends the `python -m sweeps` it runs, rather than
    leaving it running (and its jobs) without a parent."""
    import os
    import signal
    import time

    # The premise: red_tuning's 96 jobs alone (on 2 cores, after Ray's start) keep its sweep
    # running past the 1 s waited below.
    from sweeps.api import JobList, compose_config

    job = JobList(compose_config(["+experiment=red_tuning"]), [{}]).specs()[0].sim
    assert sim.estimate(job).wall_s * 96 / 2 >= ENGINE_FASTER * 1
    cmd = [sys.executable, "-m", "analysis", "reproduce", "red_tuning", "--results", str(tmp_path / "r")]
    proc = subprocess.Popen([*cmd, "--reports", str(tmp_path / "reports")], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not (sweep := _children(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sweep, "the reproduction started no sweep"
        time.sleep(1)  # the sweep is under way
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
        assert not Path(f"/proc/{sweep[0]}").exists(), "the sweep outlived the reproduction"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)

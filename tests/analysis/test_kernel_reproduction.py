"""`reproduce kernel_vs_engine` (issue 71) and `phase_kernel` (issue 72) on reduced grids: both
backends run every point, and the reports pair them. Needs root (the kernel backend); skips
saying why."""

from __future__ import annotations

import re

import duckdb
import matplotlib.pyplot as plt
import pytest

from analysis.db import connect
from analysis.reproductions.kernel_grid import kernel_grid
from analysis.reproductions.kernel_vs_engine import CHECKS, itself_text, kernel_halves, kernel_vs_engine, verdicts
from analysis.reproductions.phase_kernel import nearest, phase_kernel
from sweeps.backends import BACKENDS, kernel

NOT_HERE = kernel.missing()


def test_the_bounds_are_issue_72s():
    k = dict(utilization=0.99, loss=0.010, jain=0.90, delay=20.0, drops=100)
    assert verdicts(dict(k, utilization=0.975, loss=0.0124, jain=0.81, delay=23.9), k) == (True,) * 4
    assert verdicts(dict(k, utilization=0.96, loss=0.013, jain=0.79, delay=24.1), k) == (False,) * 4
    assert verdicts(k, dict(k, drops=5))[1] is None, "too few kernel drops to hold a loss rate to 25%"
    assert verdicts(dict(k, delay=0.5), dict(k, delay=1.4))[3], "1 ms absolute at short delays"
    assert len(CHECKS) == 4


def test_the_kernel_is_held_to_itself_half_its_seeds_against_the_other_half():
    """Seeds 1-2 against 3-4 of the kernel's runs, under the same bounds; the engine's and another
    version's runs are no part of it, and a point of one seed has no halves."""
    con = duckdb.connect()
    con.execute(
        """CREATE TABLE runs AS SELECT *, 'kernel_vs_engine' AS name, 'ok' AS status, 100 AS bottleneck_drops,
        NULL::BOOLEAN AS timing_suspect FROM (VALUES
        ('kernel', 't4', 'cubic', 2, 1.0, 1, 0.98, 0.010, 0.95, 20.0),
        ('kernel', 't4', 'cubic', 2, 1.0, 2, 0.98, 0.010, 0.85, 20.0),
        ('kernel', 't4', 'cubic', 2, 1.0, 3, 0.98, 0.012, 0.70, 20.0),
        ('kernel', 't4', 'cubic', 2, 1.0, 4, 0.98, 0.012, 0.80, 20.0),
        ('engine', '', 'cubic', 2, 1.0, 3, 0.50, 0.500, 0.10, 90.0),
        ('kernel', 't3', 'cubic', 2, 1.0, 5, 0.50, 0.500, 0.10, 90.0),
        ('kernel', 't4', 'bbr', 2, 1.0, 1, 0.98, 0.010, 0.95, 20.0))
        t(backend, backend_version, tcp, flows, buffer_policy_factor, seed, utilization, loss_rate,
          jain_fairness, mean_queue_delay_ms)"""
    )
    halves = kernel_halves(con, "t4")
    assert list(halves) == [("cubic", 2, 1.0)], "bbr ran one seed: no halves"
    a, b = halves[("cubic", 2, 1.0)]["a"], halves[("cubic", 2, 1.0)]["b"]
    assert (a["seeds"], b["seeds"]) == (2, 2) and a["jain"] == pytest.approx(0.90) and b["jain"] == pytest.approx(0.75)
    assert halves[("cubic", 2, 1.0)]["check"] == (True, True, False, True), "loss 20% apart; Jain 0.15"
    assert "**0 of 1 points within every bound**" in itself_text(halves) and "jain 1" in itself_text(halves)


@pytest.mark.skipif(NOT_HERE is not None, reason=NOT_HERE or "")
def test_kernel_vs_engine_pairs_every_point_on_both_backends(tmp_path):
    grid = ("tcp=cubic,bbr", "flows=2", "buffer_policy.factor=1", "seed=1", "duration_s=10", "warmup_s=3")
    report, plot = kernel_vs_engine(str(tmp_path / "results"), False, grid)
    assert sorted(r[0] for r in report.rows) == ["bbr", "cubic"], report.reading
    for r in report.rows:  # both measured every metric; whether they agree is the report's business
        assert all(0.5 < u <= 1.01 for u in (r[3], r[4])) and all(0 < j <= 1 for j in (r[7], r[8])), r
        assert r[9] is not None and r[10] is not None, r
    assert "points within every bound" in report.reading
    plot()
    plt.close("all")
    spans = (
        connect(str(tmp_path / "results"), documented=False)
        .execute("SELECT backend, epoch(started_at), epoch(started_at) + job_wall_s FROM runs WHERE status = 'ok'")
        .fetchall()
    )
    engine = [(a, b) for backend, a, b in spans if backend == "engine"]
    for backend, start, end in spans:  # a kernel run holds the node: no engine run beside it
        assert backend != "kernel" or not any(a < end and start < b for a, b in engine), (start, end, engine)


@pytest.mark.skipif(NOT_HERE is not None, reason=NOT_HERE or "")
def test_kernel_grid_puts_the_engine_the_kernel_and_ns3_side_by_side(tmp_path):
    """Issue 72, items 2 and 3: each point on the engine and the kernel, and on ns-3 where it is
    installed (BBR there without its long-term mode: a preset of its own)."""
    grid = ("tcp=cubic,bbr", "core_mbps=10", "flows=2", "buffer_policy.factor=1", "seed=1")
    report, plot = kernel_grid(str(tmp_path / "results"), False, (*grid, "duration_s=8", "warmup_s=3"))
    assert sorted(r[0] for r in report.rows) == ["bbr", "cubic"], report.reading
    ns3 = BACKENDS["ns3"].missing() is None
    for r in report.rows:
        kern, engine, other = (None if v == "n/a" else float(v) for v in r[4].split(" / "))
        assert kern is not None and engine is not None and 0.5 < kern <= 1.01 and 0.5 < engine <= 1.01, r
        assert (other is not None) == ns3, (r, ns3)
    assert "points within every bound" in report.reading
    assert (re.search(r"ns-3 [01] of 1", report.reading) is not None) == ns3, report.reading
    plot()
    plt.close("all")


def test_the_nearest_jitter_is_the_one_closest_to_the_kernel_in_jain_and_top_share():
    def at(jain: float, top: float) -> dict[str, float]:
        return dict(jain=jain, top=top, loss=0.01, util=1.0, seeds=1)

    data = {("kernel", 8, 0.0): at(0.90, 0.20), ("engine", 8, 0.0): at(0.50, 0.40)}
    data |= {("engine", 8, 0.4): at(0.88, 0.21), ("engine", 8, 2.0): at(0.97, 0.15)}
    ((jitter, dist),) = nearest(data).values()
    assert jitter == 0.4 and dist == pytest.approx((0.02**2 + 0.01**2) ** 0.5)


@pytest.mark.skipif(NOT_HERE is not None, reason=NOT_HERE or "")
def test_phase_kernel_runs_the_kernel_once_beside_the_engines_jitters(tmp_path):
    grid = ("flows=2", "tcp.send_jitter_ms=0,0.4", "seed=1", "duration_s=8", "warmup_s=3")
    report, plot = phase_kernel(str(tmp_path / "results"), False, grid)
    assert [tuple(r[:3]) for r in report.rows] == [("engine", 2, 0.0), ("engine", 2, 0.4), ("kernel", 2, 0.0)]
    for r in report.rows:
        assert 0.5 <= r[3] <= 1 and 0.5 <= r[4] <= 1 and r[7] == 1, r  # Jain and the top share of 2 flows
    assert "2 flows: Jain" in report.reading and "nearest at" in report.reading, report.reading
    plot()
    plt.close("all")

"""Issue 32's reproductions (analysis/reproductions/aqm.py, aqm_backends.py), each run for real on a
reduced grid of its preset; `make reproduce` runs the full ones."""

from __future__ import annotations

import importlib.util

import matplotlib.pyplot as plt
import pytest

from analysis import papers
from analysis.reproductions.aqm import aqm_buffer_independence, fq_codel_isolation, red_tuning
from analysis.reproductions.aqm_backends import aqm_backends
from analysis.reproductions.crosscheck import verdicts


def test_fq_codel_isolates_the_sparse_flow(tmp_path):
    grid = ("seed=1", "buffer_policy.factor=4", "queue=droptail,codel,fq_codel", "duration_s=30")
    report, plot = fq_codel_isolation(str(tmp_path / "results"), False, grid)
    sparse = {r[0]: r[2] for r in report.rows}  # the sparse flow's median queueing delay, ms
    assert set(sparse) == {"droptail", "codel", "fq_codel"}
    assert sparse["fq_codel"] < papers.AQM_TARGET_MS["fq_codel"] < sparse["codel"] < sparse["droptail"], sparse
    assert "holds at 1 of 1 buffer sizes" in report.reading
    plot()
    assert plt.gca().get_yscale() == "log"
    plt.close("all")


def test_aqm_holds_the_delay_where_drop_tail_grows_it(tmp_path):
    grid = (
        "tcp=sack",
        "flows=8",
        "core_mbps=100",
        "buffer_policy.factor=1,8",
        "queue=droptail,pie,fq_codel",
        "duration_s=30",
        "warmup_s=10",
    )
    report, plot = aqm_buffer_independence(str(tmp_path / "results"), False, grid)
    claim = {r[3]: r[8] for r in report.rows}
    assert claim == {"droptail": "grows", "pie": "yes", "fq_codel": "yes"}, report.rows
    plot()
    plt.close("all")


def test_red_queue_and_utilization_follow_its_thresholds(tmp_path):
    grid = ("flows=10", "seed=1", "queue=floyd97/th5,floyd97/th40", "queue.max_p=0.02,0.2", "duration_s=30")
    report, plot = red_tuning(str(tmp_path / "results"), False, grid)
    util = {(r[1], r[3]): r[4] for r in report.rows}
    queue = {(r[1], r[3]): r[5] for r in report.rows}
    for p in ("0.02", "0.2"):
        assert util["40", p] > util["5", p] and queue["40", p] > queue["5", p]
    assert util["5", "0.2"] < util["5", "0.02"]  # a large max_p overcontrols few flows
    plot()
    plt.close("all")


def test_the_cross_check_bounds_are_issue_32s():
    ns3 = dict(utilization=0.90, sojourn=10.0, rate=0.010)
    assert verdicts(dict(utilization=0.929, sojourn=11.9, rate=0.0124), ns3) == (True, True, True)
    assert verdicts(dict(utilization=0.94, sojourn=12.1, rate=0.0126), ns3) == (False, False, False)
    assert verdicts(ns3, dict(ns3, drops=10, marks=0))[2] is None  # too few events to check a rate
    # 1 ms absolute at short sojourns
    assert verdicts(dict(utilization=0.9, sojourn=1.9, rate=0.01), dict(ns3, sojourn=1.0))[1]


@pytest.mark.skipif(importlib.util.find_spec("ns3") is not None, reason="ns-3 is installed here")
def test_aqm_backends_without_ns3_says_so_and_runs_nothing(tmp_path):
    report, plot = aqm_backends(str(tmp_path / "results"), False)
    assert report.rows == [] and report.reading.startswith("Not run: ns-3 is not installed")
    assert not (tmp_path / "results").exists()
    plot()
    plt.close("all")


@pytest.mark.skipif(importlib.util.find_spec("ns3") is None, reason="ns-3 is not installed (pip install -e '.[ns3]')")
def test_aqm_backends_pairs_every_point_on_both_simulators(tmp_path):
    grid = ("core_mbps=10", "tcp=sack", "flows=4", "buffer_policy.factor=1", "seed=1", "queue=red,codel")
    report, plot = aqm_backends(str(tmp_path / "results"), False, grid)
    assert sorted(r[0] for r in report.rows) == ["codel", "codel +ECN", "droptail", "red", "red +ECN"]
    for r in report.rows:  # both simulators ran each point and measured it (agreement: the report)
        assert 0.5 < r[5] <= 1.01 and 0.5 < r[6] <= 1.01 and r[9] > 0 and r[10] > 0, r
        assert (r[7] is None) == (r[0] == "droptail") and r[8] > 0, r  # ns-3 has no drop-tail sojourn
    plot()
    plt.close("all")

"""Issue 58's reproductions, each run for real on a reduced grid of its preset (`make reproduce`
runs the full ones): phase effects, and Dick's 0.5x rows with ns-3's TCP rules against ns-3."""

from __future__ import annotations

import importlib.util

import matplotlib.pyplot as plt
import pytest

from analysis.reproductions.dick_ns3 import TOL, dick_ns3, gaps
from analysis.reproductions.phase_effects import JAIN_FAIR, claims, phase_effects


def test_send_jitter_breaks_drop_tails_phase_effects_and_leaves_aqm_alone(tmp_path):
    """8 CUBIC flows behind a 2 x BDP drop-tail share the link unevenly (Jain well under 0.85) until
    their sends wait up to a packet time at random; RED and CoDel are fair either way, and
    utilization does not move."""
    grid = ("queue=droptail,codel", "flows=8", "tcp.send_jitter_ms=0,0.4")
    report, plot = phase_effects(str(tmp_path / "results"), False, grid)
    c = claims({(r[0], r[1], r[2]): dict(zip(("jain", "jain_min", "util", "loss", "top"), r[3:])) for r in report.rows})
    assert c["still"][("droptail", 8)] < 0.7, report.rows
    assert c["jittered"][("droptail", 8)] >= JAIN_FAIR, report.rows
    assert c["loss_drop"][("droptail", 8)] > 0.2, report.rows
    assert c["still"][("codel", 8)] >= JAIN_FAIR and c["jain_range"]["codel"] < 0.05, report.rows
    assert max(c["util_range"].values()) < 0.01, report.rows
    plot()
    plt.close("all")


@pytest.mark.skipif(importlib.util.find_spec("ns3") is None, reason="ns-3 is not installed (pip install -e '.[ns3]')")
def test_with_ns3s_rules_the_engine_meets_ns3_on_dicks_shallowest_row(tmp_path):
    """N = 30, seed 1, in one sweep on both simulators: with tcp.compat=ns3 within the bound, and
    with our own rules above ns-3 (the SACK gap)."""
    report, plot = dick_ns3(str(tmp_path / "results"), False, ("flows=30", "seed=1"))
    assert [r[0] for r in report.rows] == [30], report.reading
    sides = ("ns-3", "ours, compat=ns3", "ours, own rules")
    data = {30: {side: {"util": v} for side, v in zip(sides, report.rows[0][2:5])}}
    assert abs(gaps(data, "ours, compat=ns3")[30]) <= TOL, report.rows
    assert gaps(data, "ours, own rules")[30] > gaps(data, "ours, compat=ns3")[30], report.rows
    plot()
    plt.close("all")

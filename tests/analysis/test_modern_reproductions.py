"""Issue 33's reproductions (analysis/reproductions/modern.py), each run for real on a reduced grid,
its claims checked from the data it stored."""

from __future__ import annotations

import matplotlib.pyplot as plt

from analysis.reproductions.bbr_loss import bbr_shallow_loss, quantization_bdp
from analysis.reproductions.dctcp import dctcp_threshold
from analysis.reproductions.modern import bbr_vs_cubic_buffer, cubic_single_flow_buffer
from analysis.reproductions.modern_backends import grid_sizes, misses, reading


def test_one_flow_needs_one_minus_beta_over_beta_of_a_bdp(tmp_path):
    grid = ("seed=1", "buffer_policy.factor=0.3", "duration_s=60", "warmup_s=20")
    report, plot = cubic_single_flow_buffer(str(tmp_path / "results"), False, grid)
    found = {r[0]: r[3] for r in report.rows}
    assert found["cubic_2622"] < found["cubic_rfc9438"] < found["sack"], found
    assert all(0.65 <= r[4] <= 1.35 for r in report.rows), report.rows
    assert "3 of 3" in report.reading
    plot()
    assert len(plt.gca().get_lines()) >= 6  # three curves, three rules
    plt.close("all")


def test_bbr_takes_shallow_buffers_and_cubic_deep_ones(tmp_path):
    grid = ("core_mbps=10", "buffer_policy.factor=0.5,16", "seed=1", "cubic_flows=1", "duration_s=30")
    report, plot = bbr_vs_cubic_buffer(str(tmp_path / "results"), False, grid)
    share = {float(r[2]): r[3] for r in report.rows}
    assert share[0.5] > 0.8 and share[16] < 0.5, share
    assert "1 of 1 points.\n- CUBIC takes most of it at 8 BDP and more: 1 of 1" in report.reading
    plot()
    plt.close("all")


def test_bbr_loses_more_than_cubic_in_shallow_buffers_and_stands_a_queue_in_deep_ones(tmp_path):
    # The preset's 60 s with 20 of warm-up: until the flows' first PROBE_RTT, near 10 s, their min RTTs
    # hold the queue their SYNs met (engine 0.32.0, as Linux), and the queue stands near 2 BDP.
    grid = ("core_mbps=100", "flows=4", "buffer_policy.factor=0.25,2", "seed=1")
    report, plot = bbr_shallow_loss(str(tmp_path / "results"), False, grid)
    rows = {float(r[2]): r for r in report.rows}
    assert rows[0.25][3] > max(0.02, 10 * rows[0.25][4]), rows[0.25]  # BBR's loss rate far above CUBIC's
    assert rows[2][3] < rows[0.25][3] / 10, rows
    # About one BDP of standing queue, plus Linux's quantization budget (small at 100 Mb/s).
    assert 1.0 <= rows[2][5] <= 1.0 + quantization_bdp(100, 4, 40, 1500) + 0.25, rows[2]
    assert "1 of 1 points;" in report.reading and "1 of 1 points (mean queues" in report.reading, report.reading
    plot()
    assert len(plt.gcf().axes) == 2
    plt.close("all")


def test_dctcp_keeps_the_link_busy_above_c_rtt_over_7_with_a_short_queue(tmp_path):
    grid = ("core_mbps=1000", "rtt_ms=0.1", "queue.k_pkts=5,20", "tcp=dctcp,sack")
    report, plot = dctcp_threshold(str(tmp_path / "results"), False, grid)
    rows = {(r[4], r[3]): r for r in report.rows}
    dctcp, drop = rows["DCTCP", 20], rows["Reno, drop-tail", ""]
    assert dctcp[5] >= 0.95 and rows["DCTCP", 5][5] >= 0.95, report.rows
    assert drop[6] > 5 * dctcp[6], (drop, dctcp)  # the drop-tail queue is many times DCTCP's
    assert dctcp[6] <= 20 + 2, dctcp  # DCTCP's queue stays near K (+ N)
    assert "2 of 2 points" in report.reading, report.reading
    plot()
    plt.close("all")


def test_the_cross_check_report_shows_each_miss_with_both_simulators_counters():
    """modern_backends (its grid needs ns-3, tests/sweeps/test_ns3_modern.py runs its senders): a
    missed point gets a row of both simulators' per-flow counters, a point within every bound
    none, and a sender with points not yet stored says how many."""
    metrics = {"utilization": 1.0, "sojourn": 20.0, "rate": 0.01, "timeouts": 1.0}
    missed = ("cubic_rfc9438", "sack", None, 10.0, 4, 0.5)
    within = ("cubic_rfc9438", "sack", None, 10.0, 4, 1.0)
    data = {
        missed: {"engine": metrics, "ns3": metrics, "check": (True, False, None)},
        within: {"engine": metrics, "ns3": metrics, "check": (True, True, True)},
    }
    counters = {"fr": 2.0, "to": 1.0, "rx": 3.0, "cwnd": 12.5}
    per_flow = {k: {"engine": counters, "ns3": {**counters, "to": 4.0}} for k in data}
    table = misses(data, per_flow)
    assert "| cubic_rfc9438 + sack | 10 | 4 | 0.5 | d | 2.000 | 2.000 | 4.000 | 1.000 |" in table
    assert "| 4 | 1 |" not in table
    assert grid_sizes() == (18, 6)
    text = reading(data, {})
    assert "- cubic_rfc9438 with sack: 1 of 2 (utilization alone: 2); 16 of the grid's 18 points not stored" in text
    assert "- bbr with sack_retain: none of the grid's 18 points stored on both yet" in text

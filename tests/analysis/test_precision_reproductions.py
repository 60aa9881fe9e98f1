"""Three reproductions at a stated precision (issue 57, part 4): each precision variant runs its
points' replications until their intervals meet the preset's target, and reaches the fixed
preset's conclusions (the fixed presets' tests assert the same on the same reduced grids)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from analysis.reproductions.aqm import aqm_buffer_independence
from analysis.reproductions.bbr_loss import bbr_shallow_loss, quantization_bdp
from analysis.reproductions.common import stored
from analysis.reproductions.dick import dick_table


def points(results: str, preset: str) -> list[tuple]:
    """(replications, stop_reason) of each point the preset's sweeps stored."""
    con = stored(results, "engine", preset)
    return con.execute("SELECT replications, stop_reason FROM points").fetchall()


def test_dick_table_at_a_precision_keeps_newreno_within_0_05_of_dick(tmp_path):
    results = str(tmp_path / "results")
    report, plot = dick_table(results, False, preset="dick_table_precision")
    assert len(report.rows) == 16
    # The fixed table: 14 of 16 within 0.05, both misses above Dick's. Measured in steady state
    # (the warm-up cut), 30 flows at 1x joins them (0.984 against his 0.923; the fixed table's
    # 0.972 averages in the start-up): the conclusion, ours at or above his, stays.
    assert sum(r[9] == "yes" for r in report.rows) >= 13
    assert all(r[8] > 0 for r in report.rows if r[9] == "no"), report.rows
    assert all(r[7] >= r[5] - 0.005 for r in report.rows), report.rows  # NewReno at or above Reno, as Dick's
    got = points(results, "dick_table_precision")
    assert len(got) == 32 and all(3 <= n <= 10 for n, _ in got)
    assert all(why in ("precision", "max_seeds") for _, why in got) and any(why == "precision" for _, why in got)
    plot()
    plt.close("all")


def test_bbr_shallow_loss_at_a_precision_keeps_its_conclusions(tmp_path):
    results = str(tmp_path / "results")
    grid = ("core_mbps=100", "flows=4", "buffer_policy.factor=0.25,2")
    report, plot = bbr_shallow_loss(results, False, grid, preset="bbr_shallow_loss_precision")
    rows = {float(r[2]): r for r in report.rows}
    assert rows[0.25][3] > max(0.02, 10 * rows[0.25][4]), rows[0.25]  # BBR's loss rate far above CUBIC's
    assert rows[2][3] < rows[0.25][3] / 10, rows
    assert 1.0 <= rows[2][5] <= 1.0 + quantization_bdp(100, 4, 40, 1500) + 0.25, rows[2]
    assert "1 of 1 points;" in report.reading and "1 of 1 points (mean queues" in report.reading, report.reading
    got = points(results, "bbr_shallow_loss_precision")
    assert len(got) == 4 and all(2 <= n <= 8 for n, _ in got), got
    plot()
    plt.close("all")


def test_aqm_buffer_independence_at_a_precision_keeps_its_claims(tmp_path):
    results = str(tmp_path / "results")
    grid = ("tcp=sack", "flows=8", "core_mbps=100", "buffer_policy.factor=1,8", "queue=droptail,pie,fq_codel")
    report, plot = aqm_buffer_independence(results, False, grid, name="aqm_buffer_independence_precision")
    claim = {r[3]: r[8] for r in report.rows}
    assert claim == {"droptail": "grows", "pie": "yes", "fq_codel": "yes"}, report.rows
    got = points(results, "aqm_buffer_independence_precision")
    assert len(got) == 6 and all(2 <= n <= 4 for n, _ in got), got
    plot()
    plt.close("all")

"""Issue 33's reproductions (analysis/reproductions/modern.py), each run for real on a reduced grid,
its claims checked from the data it stored."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from analysis.reproductions.modern import bbr_vs_cubic_buffer, cubic_single_flow_buffer


@pytest.fixture(autouse=True)
def no_mlflow(monkeypatch, tmp_path):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")


def test_one_flow_needs_one_minus_beta_over_beta_of_a_bdp(tmp_path):
    grid = ("seed=1", "buffer_policy.factor=0.3", "duration_s=60", "warmup_s=20")
    report, plot = cubic_single_flow_buffer(str(tmp_path / "results"), False, grid)
    found = {r[0]: r[3] for r in report.rows}
    assert found["cubic"] < found["cubic_rfc9438"] < found["sack"], found
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

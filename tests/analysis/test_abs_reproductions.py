"""The ABS paper's reproductions (issue 16) on reduced grids: each runs its preset through the command
line with fewer points and shorter runs, and asserts the claims its full report checks (`make
reproduce` runs the full grids)."""

from __future__ import annotations

import re

import pytest

from analysis import papers
from analysis.reproductions import abs_fig2_3, abs_tables, abs_timelines


def by_policy(report) -> dict[tuple[int, str], list]:
    return {(row[0], row[1]): row for row in report.rows}


def test_abs_table2_on_three_flow_counts(tmp_path):
    report, plot = abs_tables.abs_table2(
        str(tmp_path / "r"), False, ["flows=2,16,256", "duration_s=300", "warmup_s=150"]
    )
    rows = by_policy(report)
    assert len(rows) == 15 and "exited with status" not in report.reading
    for n in (2, 16, 256):
        for policy in ("bdp", "stanford"):  # the static rules resolve as the paper's (576-byte packets)
            assert rows[(n, policy)][2] == pytest.approx(papers.ABS_TABLE2[n][policy][0], rel=0.1), (n, policy)
    for policy in ("bdp", "stanford"):  # their loss grows with N, as the paper reports
        losses = [rows[(n, policy)][5] for n in (2, 16, 256)]
        assert losses == sorted(losses), (policy, losses)
    assert rows[(256, "stanford")][5] > 8  # on its way to the paper's 13.45% at N = 1024
    for n in (2, 16, 256):
        for policy in ("abs", "abs_magnitude"):
            row = rows[(n, policy)]
            assert row[-1] == "yes" or f"flows = {n} (" in report.reading, (n, policy, row)
    # Eq. (8) as printed cannot hold utilization; damped with |du| it can.
    assert rows[(2, "abs")][-2] == "loss" and rows[(2, "abs")][8] < 50
    assert rows[(2, "abs_magnitude")][-2] == "utilization" and rows[(2, "abs_magnitude")][9] >= 97
    assert abs(rows[(256, "abs")][5] - 2.0) <= 0.5 and abs(rows[(256, "abs_magnitude")][5] - 2.0) <= 0.5
    plot()


def test_abs_table3_on_two_capacities(tmp_path):
    report, _ = abs_tables.abs_table3(str(tmp_path / "r"), False, ["core_mbps=2,64", "duration_s=300", "warmup_s=150"])
    rows = by_policy(report)
    assert len(rows) == 10 and "exited with status" not in report.reading
    assert rows[(2, "bdp")][5] > 5 and rows[(2, "stanford")][5] > rows[(2, "bdp")][5]  # heavy loss at 2 Mb/s
    assert rows[(64, "bdp")][5] < 0.5
    for policy in ("abs", "abs_magnitude"):
        assert rows[(2, policy)][-2] == "loss" and abs(rows[(2, policy)][5] - 2.0) <= 0.5
    assert rows[(64, "abs_magnitude")][-2] == "utilization" and rows[(64, "abs_magnitude")][-1] == "yes"


def test_abs_fig2_3_shows_the_stable_and_the_oscillating_case(tmp_path):
    report, plot = abs_fig2_3.abs_fig2_3(str(tmp_path / "r"), False)  # the full preset: four runs of ~1 s
    rows = {(row[0], row[1]): row for row in report.rows}
    assert len(rows) == 4
    stable, wild = rows[("95% / 0.5%", "no")], rows[("70% / 5.0%", "no")]
    assert stable[-2] == "converges" and stable[8] is not None and stable[7] < 0.5
    assert wild[-2] == "oscillates" and wild[7] > 1 and wild[3] <= 10
    assert abs(stable[9] - 0.5) <= 0.1 and abs(wild[9] - 5.0) <= 0.5  # p held at p* either way
    assert all(row[11] < 1 for row in rows.values())  # training as printed moves the gains by < 1%
    assert "training as printed cannot change" in report.reading
    # Each trained gain is a function of its own buffer term: I(n)^2 - I(0)^2 = 2 gamma (b(n) - b(0)).
    gap = float(re.search(r"2 gamma \(b\(n\) - b\(0\)\) to within (\S+) of", report.reading).group(1))
    assert gap < 1e-6, gap
    # Larger steps (preset abs_fig3_gamma) do not give Fig. 3 either: the gains turn negative.
    assert "gamma = 3000:" in report.reading and "a gain turned negative" in report.reading
    assert "No step tried makes the (70%, 5%) case converge" in report.reading
    plot()


def test_abs_fig4_follows_the_load_steps(tmp_path):
    report, plot = abs_timelines.abs_fig4(str(tmp_path / "r"), False, [])
    assert len(report.rows) == 12
    rows = {(r[0], r[1]): r for r in report.rows}
    for gain, step, response, _intervals, _b_after, _spread, p_after, _u_after in report.rows:
        assert abs(p_after - 0.02) < 0.005, (gain, step, p_after)  # every gain holds p* per segment
        if gain == 3000:  # settled before the middle of each 48-s segment (seconds, not "a few intervals")
            assert response is not None and response < 24, (gain, step, response)
    # Less load, less buffer; the load returns, so does the buffer.
    assert rows[(3000, 96.0)][4] < rows[(3000, 48.0)][4] < rows[(3000, 192.0)][4]
    # A 100x gain only oscillates more once settled, and the report says so.
    assert min(rows[(300000, t)][5] for t in (48.0, 96.0)) > 2 * max(rows[(3000, t)][5] for t in (48.0, 96.0))
    assert "no gain gives a response within a few control intervals" in report.reading
    plot()


def test_abs_fig6_never_exceeds_the_memory_bound(tmp_path):
    report, _ = abs_timelines.abs_fig6(str(tmp_path / "r"), False, ["duration_s=600"])
    assert report.reading.count("never exceeds the bound") == 2, report.reading


def test_abs_fig9_holds_each_links_targets(tmp_path):
    report, plot = abs_timelines.abs_fig9(str(tmp_path / "r"), False, ["duration_s=120"])
    links = {(row[0], row[9], row[1]): row for row in report.rows}
    assert set(links) == {(d, t, link) for d in ("signed", "magnitude") for t in (20, 100) for link in (0, 1)}
    for (damping, t, link), row in links.items():
        u_star, p_star = abs_timelines.FIG9_TARGETS[link]
        assert row[5] <= p_star + 0.005, (damping, t, link, row)  # each link holds its own loss target
        if link == 1:
            assert row[6] >= u_star, (damping, t, row)
    # On link 0 utilization binds: only the |du| damping raises the buffer for it, and with T = 100 ms
    # it reaches u* (within the tables' 1 point); at 20 ms the swings of u(n) hold it below.
    assert links[("magnitude", 20, 0)][8] > 0.5 > links[("signed", 20, 0)][8]
    assert links[("magnitude", 20, 0)][6] > links[("signed", 20, 0)][6]
    assert links[("magnitude", 100, 0)][6] >= 0.94 > links[("magnitude", 20, 0)][6]
    assert "the weighting alone moves the mean by" in report.reading
    plot()

"""How long an atlas probe runs (analysis/atlas/cycle.py): a few of the sender's steady cycles,
after an allowance for slow start, the first cycle (for DCTCP a climb of up to W round trips: its
alpha starts at 1) and many AIMD flows' convergence to fair shares, and flagged `long_cycle`
where the cap cuts either."""

import math

import pytest

from analysis.atlas import cycle
from analysis.atlas.spec import Cell, load


@pytest.fixture(scope="module")
def small():
    return load(["+atlas=small"])


def test_dctcp_first_cycle_is_a_climb_of_w_rtts_and_its_steady_one_is_alphas(small):
    cell = Cell("dctcp", "droptail", 1, 100.0, 50.0)  # BDP 417 packets of 1,500 bytes
    bdp = small.bdp(cell)
    assert cycle.cycle_s(small, cell, bdp) == pytest.approx(16 * 0.05)
    assert cycle.first_cycle_s(small, cell, bdp) == pytest.approx(2 * bdp * 0.05)  # W = BDP + B
    keys = cycle.probe_keys(small, cell, bdp)
    slow_start = math.log2(2 * bdp) * 0.05
    assert keys["warmup_s"] == pytest.approx(small.start_window_s + slow_start + 2 * bdp * 0.05, abs=1e-3)
    assert keys["duration_s"] == pytest.approx(keys["warmup_s"] + 10.0, abs=1e-3)  # 100 RTTs, 10 s floor
    assert not cycle.long_cycle(small, cell, bdp)


def test_many_aimd_flows_wait_for_fair_shares_one_flow_and_bbr_do_not(small):
    """Chiu and Jain: each cycle scales the windows' spread by beta; to 5% takes 5 NewReno cycles
    and 9 of CUBIC's beta 0.7."""
    sack, cubic = Cell("sack", "droptail", 256, 1000.0, 200.0), Cell("cubic", "droptail", 256, 1000.0, 200.0)
    assert cycle.convergence_s(small, sack, 260) == pytest.approx(5 * cycle.cycle_s(small, sack, 260))
    assert cycle.convergence_s(small, cubic, 260) == pytest.approx(9 * cycle.cycle_s(small, cubic, 260))
    for cell in (Cell("cubic", "droptail", 1, 1000.0, 200.0), Cell("bbr", "droptail", 256, 1000.0, 200.0)):
        assert cycle.convergence_s(small, cell, 260) == 0.0


def test_cubic_cycle_is_the_sooner_of_k_and_the_reno_friendly_line(small):
    """RFC 9438: at 10 ms the Reno-friendly window (3 (1 - beta) / (1 + beta) a round trip)
    regains W_max long before K; at 200 ms with W = 66 packets, K comes first."""
    short, long_rtt = Cell("cubic", "droptail", 16, 1000.0, 10.0), Cell("cubic", "droptail", 256, 1000.0, 200.0)
    w = (small.bdp(short) + 100) / 16
    assert cycle.cycle_s(small, short, 100) == pytest.approx(w * 0.3 / (0.9 / 1.7) * 0.01)
    w = (small.bdp(long_rtt) + 260) / 256
    assert cycle.cycle_s(small, long_rtt, 260) == pytest.approx((w * 0.3 / 0.4) ** (1 / 3))


def test_other_senders_first_cycle_is_their_steady_one(small):
    for tcp in ("sack", "cubic", "bbr"):
        cell = Cell(tcp, "droptail", 16, 100.0, 50.0)
        assert cycle.first_cycle_s(small, cell, 100) == cycle.cycle_s(small, cell, 100)


def test_a_transient_longer_than_the_cap_is_a_long_cycle(small):
    """One DCTCP flow at 1 Gb/s and 200 ms: three steady cycles (9.6 s) fit the 60 s cap, but
    the climb after slow start (up to W round trips, about two hours) does not."""
    cell = Cell("dctcp", "codel", 1, 1000.0, 200.0)
    bdp = small.bdp(cell)
    assert small.cycles * cycle.cycle_s(small, cell, bdp) < cycle.cap_s(small, cell) == pytest.approx(60.0)
    assert cycle.long_cycle(small, cell, bdp)
    assert cycle.warm_s(small, cell, bdp) == pytest.approx(60.0), "the allowance alone stops at the cap"
    warm, measured = cycle.spans_s(small, cell, bdp)
    assert measured == pytest.approx(20.0), "100 round trips, the floor"
    assert warm == pytest.approx(40.0), "the rest of the cap: the probe runs 60 s in all"


def test_the_cap_bounds_a_whole_probe_but_each_part_of_a_check_probe(small):
    """16 SACK flows at 1 Gb/s and 200 ms: a 104 s cycle, so neither the allowance nor three
    cycles fit the 60 s cap. The probe ran 112 s (the allowance to the cap's edge, then the cap
    measured); it now runs the cap, half of it measured, and stays flagged. The check's long
    probes keep each part to their own cap."""
    import dataclasses

    cell = Cell("sack", "droptail", 16, 1000.0, 200.0)
    keys = cycle.probe_keys(small, cell, 260)
    assert (keys["duration_s"], keys["warmup_s"]) == (pytest.approx(60.0), pytest.approx(30.0))
    assert cycle.long_cycle(small, cell, 260)
    check = dataclasses.replace(small, cap_whole=False)
    warm, measured = cycle.spans_s(check, cell, 260)
    assert measured == pytest.approx(60.0) and warm == cycle.warm_s(small, cell, 260) > 30.0


def test_a_cap_shorter_than_the_start_window_still_measures_after_it():
    """At 100 Gb/s the 5-million-packet cap is 0.6 s: the whole probe cannot fit in it, and the
    allowance keeps the start window (every flow started) before the measured time."""
    full = load(["+atlas=full"])
    cell = Cell("cubic", "droptail", 1000, 100000.0, 200.0)
    assert cycle.cap_s(full, cell) == pytest.approx(0.6)
    keys = cycle.probe_keys(full, cell, 1000)
    assert keys["warmup_s"] == pytest.approx(full.start_window_s) and keys["duration_s"] == pytest.approx(1.3)


def test_every_cell_of_the_full_atlas_has_a_valid_first_probe():
    """`atlas estimate +atlas=full` builds each of its 9,600 cells' first probe as a run."""
    from analysis.atlas.cli import estimate

    cells, core_h = estimate(load(["+atlas=full"]))
    assert cells == 9600 and core_h > 0

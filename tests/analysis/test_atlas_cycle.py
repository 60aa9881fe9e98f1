"""How long an atlas probe runs (analysis/atlas/cycle.py): a few of the sender's steady cycles,
after an allowance for slow start and the first cycle, which for DCTCP is a halving and a climb
of W/2 round trips (its alpha starts at 1), and flagged `long_cycle` where the cap cuts either."""

import math

import pytest

from analysis.atlas import cycle
from analysis.atlas.spec import Cell, load


@pytest.fixture(scope="module")
def small():
    return load(["+atlas=small"])


def test_dctcp_first_cycle_is_a_halving_and_its_steady_one_is_alpha_s(small):
    cell = Cell("dctcp", "droptail", 1, 100.0, 50.0)  # BDP 417 packets of 1,500 bytes
    bdp = small.bdp(cell)
    assert cycle.cycle_s(small, cell, bdp) == pytest.approx(16 * 0.05)
    assert cycle.first_cycle_s(small, cell, bdp) == pytest.approx(2 * bdp / 2 * 0.05)  # W = BDP + B
    keys = cycle.probe_keys(small, cell, bdp)
    slow_start = math.log2(2 * bdp) * 0.05
    assert keys["warmup_s"] == pytest.approx(small.start_window_s + slow_start + bdp * 0.05, abs=1e-3)
    assert keys["duration_s"] == pytest.approx(keys["warmup_s"] + 10.0, abs=1e-3)  # 100 RTTs, 10 s floor
    assert not cycle.long_cycle(small, cell, bdp)


def test_other_senders_first_cycle_is_their_steady_one(small):
    for tcp in ("sack", "cubic", "bbr"):
        cell = Cell(tcp, "droptail", 16, 100.0, 50.0)
        assert cycle.first_cycle_s(small, cell, 100) == cycle.cycle_s(small, cell, 100)


def test_a_transient_longer_than_the_cap_is_a_long_cycle(small):
    """One DCTCP flow at 1 Gb/s and 200 ms: three steady cycles (9.6 s) fit the 60 s cap, but
    the climb after its first halving (W/2 round trips, about an hour) does not."""
    cell = Cell("dctcp", "codel", 1, 1000.0, 200.0)
    bdp = small.bdp(cell)
    assert small.cycles * cycle.cycle_s(small, cell, bdp) < cycle.cap_s(small, cell) == pytest.approx(60.0)
    assert cycle.long_cycle(small, cell, bdp)
    assert cycle.warm_s(small, cell, bdp) == pytest.approx(60.0), "the allowance stops at the cap"

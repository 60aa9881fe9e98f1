"""Open-loop Poisson traffic of fixed-size packets: the bottleneck is an M/D/1/K queue with
K = buffer_pkts (the buffer counts the packet in service, as ns-2's DropTail)."""

import math

import pytest

import sim
from analysis.rules import md1b_loss

CORE_MBPS = 1000.0
PKT_BYTES = 1000
PKTS_PER_S = CORE_MBPS * 1e6 / (PKT_BYTES * 8)


def test_reference_formula_matches_mm1_limit_shape():
    # Sanity of the reference itself: loss grows with load and falls with buffer.
    assert md1b_loss(0.8, 5) > md1b_loss(0.5, 5) > 0
    assert md1b_loss(0.8, 5) > md1b_loss(0.8, 10)
    assert md1b_loss(0.95, 11) == pytest.approx(0.02617, rel=1e-3)  # K = 11 places


@pytest.mark.parametrize("rho", [0.5, 0.8, 0.95])
@pytest.mark.parametrize("buffer_pkts", [5, 10, 20])
def test_poisson_loss_matches_md1k(rho, buffer_pkts):
    expected = md1b_loss(rho, buffer_pkts)
    # Enough packets for ~4000 expected drops (1.6% relative std), capped for runtime.
    pkts = min(max(4000 / expected, 2e6), 6e7) if expected > 1e-9 else 2e7
    duration = pkts / (rho * PKTS_PER_S)
    m = sim.run(
        flows=0,
        poisson_mbps=rho * CORE_MBPS,
        core_mbps=CORE_MBPS,
        pkt_bytes=PKT_BYTES,
        buffer_pkts=buffer_pkts,
        duration_s=duration + 1.0,
        warmup_s=1.0,
        seed=7,
    ).metrics()
    arrivals = m["bottleneck_arrivals"]
    drops = m["bottleneck_drops"]
    expected_drops = expected * arrivals
    if expected_drops >= 1000:
        assert m["loss_rate"] == pytest.approx(expected, rel=0.05)
    else:
        # Too rare to estimate within 5%: the count must still be Poisson-consistent.
        assert abs(drops - expected_drops) <= 4 * math.sqrt(expected_drops) + 2
    # The offered load is what we asked for.
    assert m["utilization"] == pytest.approx(rho * (1 - expected), rel=0.01)


def test_cbr_below_capacity_never_queues():
    m = sim.run(flows=0, cbr_mbps=500, core_mbps=1000, buffer_pkts=0, duration_s=5, warmup_s=1).metrics()
    assert m["loss_rate"] == 0
    assert m["mean_queue_pkts"] == 0
    assert m["utilization"] == pytest.approx(0.5, rel=1e-3)

"""The sizing rules and queueing formulas against the papers' worked examples."""

import math

import pytest

from analysis import rules


def test_enachescu_theorem1_worked_example():
    # Wmax 64 packets, rho 0.5, theta 0.9: "we need a buffer size of 15 packets".
    b = rules.enachescu_pkts(64, 0.5, 0.9)
    assert math.ceil(b) == 15
    assert b == pytest.approx(math.log2(64**2 / 0.2))


def test_bdp_and_stanford_worked_example():
    # 10 Gb/s, 1,000 flows, 100 ms, 1 KB: ~125,000 packets by BDP, ~3,950 by RTT x C / sqrt(N).
    assert rules.bdp_pkts(10_000, 100, 1000) == pytest.approx(125_000)
    assert rules.stanford_pkts(10_000, 100, 1000, 1000) == pytest.approx(3950, rel=0.005)


def test_mm1_drop_rate_worked_example():
    # "At 75% load and with 20 packet buffers, the drop rate would be 0.3%."
    assert rules.mm1_overflow(0.75, 20) == pytest.approx(0.003, rel=0.06)
    # The exact M/M/1/B blocking probability is below that tail approximation.
    assert rules.mm1b_loss(0.75, 20) < rules.mm1_overflow(0.75, 20)


def test_mm1b_and_md1b():
    assert rules.mm1b_loss(0.5, 0) == pytest.approx(1 / 3)  # M/M/1/1: rho / (1 + rho)
    assert rules.md1b_loss(0.8, 5) < rules.mm1b_loss(0.8, 5)  # deterministic service queues less
    assert rules.mm1b_loss(1.0, 5) == pytest.approx(1 / 6)  # K = 5 places at rho = 1: 1 / (K + 1)


def test_dick_newreno_rule_is_half_of_reno():
    assert rules.dick_newreno_pkts(45, 100) == pytest.approx(rules.bdp_pkts(45, 100) / 2)
    assert rules.dick_newreno_pkts(45, 100, losses=2) == pytest.approx(rules.bdp_pkts(45, 100))


def test_tcp_mm1b_model_needs_log_buffers():
    # Section 4.1: with C = N Wmax / (2 tau), log-sized buffers keep rho roughly constant as
    # Wmax grows, while a constant buffer lets it fall.
    def rho(wmax, buffer_pkts, n=10, rtt=100, pkt=1000):
        c_mbps = n * wmax * pkt * 8 / (rtt / 1e3) / 2 / 1e6
        return rules.tcp_mm1b_utilization(n, rtt, c_mbps, buffer_pkts, wmax, pkt)

    const = [rho(w, 5) for w in (10, 100, 1000)]
    logb = [rho(w, round(5 * math.log(w) / math.log(10))) for w in (10, 100, 1000)]
    assert const[0] > const[1] > const[2]
    assert logb[2] > const[2] + 0.1
    assert 0 < min(logb) and max(logb) < 1

"""The ns-2 cross-check: the mapping of our config to ns-2, the stored reference numbers, and (where
ns-2 is installed) one real ns-2 run beside our engine's."""

from __future__ import annotations

import dataclasses

import pytest

import sim
from analysis import ns2
from analysis.reproductions.stanford import FIG12_HALF_RULE_FLOWS, FIG12_NAME, STANFORD_FLOWS


def test_unsupported_fields_are_named():
    with pytest.raises(ValueError, match="^access_mbps: the ns-2 cross-check supports only the default"):
        ns2.ns2_args(sim.SimConfig(access_mbps=10.0))
    with pytest.raises(ValueError, match="^topology: the ns-2 cross-check supports only the default"):
        ns2.ns2_args(sim.SimConfig(topology="parking_lot", rtt_ms=100))
    with pytest.raises(ValueError, match="^tcp: the ns-2 cross-check supports reno, newreno, got 'paced'"):
        ns2.ns2_args(sim.SimConfig(tcp="paced"))
    with pytest.raises(ValueError, match="^seed: the ns-2 cross-check needs seed >= 1"):
        ns2.ns2_args(sim.SimConfig(seed=0))
    with pytest.raises(ValueError, match="^short_flow_pkts: the ns-2 cross-check needs >= 2"):
        ns2.ns2_args(sim.SimConfig(short_mbps=1.0, short_flow_pkts=1))


@pytest.mark.skipif(not ns2.available(), reason="ns-2 not installed (Debian: apt-get install ns2)")
def test_ns2_short_flows_offer_their_load():
    # Short flows alone on an uncongested link: ns-2's pooled agents carry the configured 20%.
    cfg = sim.SimConfig(tcp="reno", flows=0, short_mbps=20.0, short_flow_pkts=14, core_mbps=100.0,
                        buffer_pkts=10_000, rtt_ms=80.0, rtt_spread_ms=80.0, duration_s=30.0, warmup_s=5.0)
    theirs = ns2.utilization(cfg)
    ours = sim.run(cfg).summary.column("utilization")[0].as_py()
    assert theirs == pytest.approx(0.20, rel=0.05) and ours == pytest.approx(0.20, rel=0.05)


def test_args_carry_every_mapped_field():
    tcp = {"cc": "newreno", "recovery": "newreno", "limited_transmit": False, "init_cwnd_pkts": 2.0}
    args = ns2.ns2_args(sim.SimConfig(tcp=tcp, flows=7))
    pairs = dict(zip(args[::2], args[1::2]))
    assert pairs["agent"] == "Newreno" and pairs["flows"] == "7"
    assert pairs["limited_transmit"] == "0" and pairs["init_cwnd_pkts"] == "2"  # integers for ns-2's int vars
    assert set(pairs) == set(ns2.MAPPED.values())


def test_stored_reference_is_complete():
    stanford = ns2.load_reference("stanford_min_buffer")
    assert stanford and all(isinstance(stanford["min_buffer_pkts"][str(n)], int) for n in STANFORD_FLOWS)
    fig12 = ns2.load_reference(FIG12_NAME)
    assert fig12 and all(0 < fig12["half_rule_utilization"][str(n)] <= 1 for n in FIG12_HALF_RULE_FLOWS)
    dick = ns2.load_reference("dick_table")
    assert dick and all(len(dick[tcp]) == 16 and all(0 < u <= 1 for u in dick[tcp].values())
                        for tcp in ("reno", "newreno"))


@pytest.mark.skipif(not ns2.available(), reason="ns-2 not installed (Debian: apt-get install ns2)")
def test_ns2_and_engine_agree_on_a_small_dumbbell():
    cfg = sim.SimConfig(tcp="reno", flows=20, core_mbps=10.0, buffer_pkts=15, rtt_ms=100.0, rtt_spread_ms=40.0,
                        wmax_pkts=10_000, duration_s=100.0, warmup_s=20.0)
    seeds = (1, 2, 3)
    theirs = ns2.utilizations([dataclasses.replace(cfg, seed=s) for s in seeds])
    ours = [sim.run(dataclasses.replace(cfg, seed=s)).summary.column("utilization")[0].as_py() for s in seeds]
    assert 0.5 < sum(theirs) / 3 < 1.0
    assert abs(sum(theirs) / 3 - sum(ours) / 3) < 0.03, (theirs, ours)

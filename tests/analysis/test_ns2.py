"""The ns-2 cross-check: the mapping of our config to ns-2, the stored reference numbers, and (where
ns-2 is installed) one real ns-2 run beside our engine's."""

from __future__ import annotations

import dataclasses
from statistics import fmean

import pytest

import sim
from analysis import ns2
from analysis.reproductions.stanford import FIG12_HALF_RULE_FLOWS, FIG12_NAME, STANFORD_FLOWS


def test_unsupported_fields_are_named():
    with pytest.raises(ValueError, match="^poisson_mbps: the ns-2 cross-check supports only the default"):
        ns2.ns2_args(sim.SimConfig(poisson_mbps=10.0))
    with pytest.raises(ValueError, match="^tcp_c: the ns-2 cross-check supports only the default"):
        ns2.ns2_args(sim.SimConfig(tcp={"cc": "cubic", "recovery": "linux", "c": 0.8, "tick_ms": 1}))
    with pytest.raises(ValueError, match="^tcp.tick_ms: ns-2's TCP-Linux times RTTs in 1 ms jiffies"):
        ns2.ns2_args(sim.SimConfig(tcp="cubic"))
    with pytest.raises(ValueError, match="^topology: the ns-2 cross-check supports only the default"):
        ns2.ns2_args(sim.SimConfig(topology="parking_lot", rtt_ms=100))
    with pytest.raises(ValueError, match="^tcp: the ns-2 cross-check supports reno, newreno, sack, cubic, .*, "
                                         "got 'paced'"):
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
    assert set(pairs) == set(ns2.MAPPED.values()) | {"ca", "sink", "timestamps", "flow_rtts_ms", "flow_starts_s"}
    assert (pairs["ca"], pairs["sink"], pairs["access_mbps"]) == ("none", "TCPSink", "0")
    # Paired: ns-2 runs the RTTs and start times our engine drew for the seed.
    flows = sim.run(sim.SimConfig(tcp=tcp, flows=7, duration_s=2, warmup_s=1)).flows
    assert [float(x) for x in pairs["flow_rtts_ms"].split()] == flows["rtt_ms"].to_pylist()
    assert [float(x) for x in pairs["flow_starts_s"].split()] == flows["start_s"].to_pylist()


def test_linux_variants_run_as_tcp_linux_with_a_sack_receiver():
    for name in ns2.LINUX_MODULES:
        args = ns2.ns2_args(sim.SimConfig(tcp={"cc": name, "recovery": "linux", "tick_ms": 1}, access_mbps=1000.0))
        pairs = dict(zip(args[::2], args[1::2]))
        assert (pairs["agent"], pairs["ca"], pairs["sink"]) == ("Linux", name, "TCPSink/Sack1"), name
        assert pairs["timestamps"] == ("1" if name == "lp" else "0") and pairs["access_mbps"] == "1000"
    # Another recovery than the preset's has no agent to compare with.
    with pytest.raises(ValueError, match="^tcp_recovery: .*'linux'"):
        ns2.ns2_args(sim.SimConfig(tcp={"cc": "cubic", "recovery": "sack", "tick_ms": 1}))


def test_stored_reference_is_complete():
    stanford = ns2.load_reference("stanford_min_buffer")
    assert stanford and all(isinstance(stanford["min_buffer_pkts"][str(n)], int) for n in STANFORD_FLOWS)
    fig12 = ns2.load_reference(FIG12_NAME)
    assert fig12 and all(0 < fig12["half_rule_utilization"][str(n)] <= 1 for n in FIG12_HALF_RULE_FLOWS)
    fig1 = ns2.load_reference("abs_fig1")
    assert fig1 and set(fig1) - {"seeds", "ns2"} == set(ns2.AGENTS) - {"reno", "newreno"}
    # ns-2 counts a departure straddling the warm-up in full: utilization may exceed 1 by 1e-6.
    assert all(len(v) == 9 and all(0 < p["utilization"] <= 1.00001 and 0 <= p["loss_rate"] < 1 for p in v.values())
               for k, v in fig1.items() if k not in ("seeds", "ns2"))
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


@pytest.mark.skipif(not ns2.available(), reason="ns-2 not installed (Debian: apt-get install ns2)")
@pytest.mark.parametrize("tcp, buffer_pkts", [("bic", 16), ("htcp", 32), ("cubic", 64), ("highspeed", 256),
                                             ("sack", 128)])
def test_tcp_linux_and_engine_agree_on_abs_fig1(tcp, buffer_pkts):
    # ABS Fig. 1's set-up, from small buffers (where the recovery decides utilization) to large
    # ones (where the window law decides the loss rate); the mean of seeds 1-3 on each side, since
    # at 16 packets one run's utilization varies by 0.04 with the RTTs drawn.
    law = {"cc": "newreno", "recovery": "sack"} if tcp == "sack" else {"cc": tcp, "recovery": "linux"}
    cfg = sim.SimConfig(tcp={**law, "tick_ms": 1}, flows=10, core_mbps=100.0, rtt_ms=40.0,
                        rtt_spread_ms=20.0, pkt_bytes=1500, wmax_pkts=100_000, access_mbps=1000.0,
                        access_buffer_pkts=2500, buffer_pkts=buffer_pkts, duration_s=100.0, warmup_s=20.0)
    cfgs = [dataclasses.replace(cfg, seed=s) for s in (1, 2, 3)]
    theirs = ns2.runs(cfgs)
    ours = [sim.run(c).summary.to_pylist()[0] for c in cfgs]
    util, loss = ([fmean(r[key] for r in rows) for rows in (ours, theirs)] for key in ("utilization", "loss_rate"))
    assert abs(util[0] - util[1]) < 0.03, (theirs, ours)
    assert loss[0] == pytest.approx(loss[1], rel=0.25), (theirs, ours)
    assert all(r["access_loss_rate"] == 0 for r in ours)

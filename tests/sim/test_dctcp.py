"""DCTCP (issue 33; `tcp/dctcp.rs`): its reaction to the fraction of marks, end to end through a
step-marking queue, against Reno's ECN reaction on the same queue (Alizadeh et al. 2010, sections
3.3-3.4: at a marking threshold K well under the BDP, DCTCP keeps the link full and the queue at
K, where halving on every window of marks starves it). Unit tests of alpha and the cut are in
the Rust module."""

from __future__ import annotations

import pytest

import sim

# 10 flows over 1 Gb/s with a 0.5-ms RTT: a BDP of 42 packets; K = 5 is under C x RTT / 7 = 6.
DC = dict(flows=10, core_mbps=1000, rtt_ms=0.5, pkt_bytes=1500, wmax_pkts=100_000, duration_s=2, warmup_s=0.5)
DC_TCP = dict(recovery="sack", ecn=True, min_rto_ms=10, tick_ms=0)


def run(cc: str, k: int) -> dict:
    res = sim.run(**DC, tcp=dict(cc=cc, **DC_TCP), queue=dict(name="step", k_pkts=k), buffer_pkts=300)
    return res.summary.to_pylist()[0]


def test_dctcp_keeps_the_link_full_at_a_threshold_that_starves_reno():
    dctcp, reno = run("dctcp", 5), run("newreno", 5)
    assert dctcp["utilization"] > 0.95 > 0.9 > reno["utilization"], (dctcp, reno)
    assert 4 <= dctcp["mean_queue_pkts"] <= 6, dctcp  # the queue sits at K
    assert dctcp["loss_rate"] == reno["loss_rate"] == 0
    flows = sim.run(**DC, tcp=dict(cc="dctcp", **DC_TCP), queue=dict(name="step", k_pkts=5), buffer_pkts=300).flows
    assert all(n > 0 for n in flows["ecn_reductions"].to_pylist())


def test_dctcp_without_ecn_is_refused_naming_the_key():
    with pytest.raises(ValueError, match=r"^tcp.ecn: dctcp reacts to ECN marks: set tcp.ecn=true"):
        sim.SimConfig(tcp="dctcp")

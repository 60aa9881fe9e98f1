"""Today's Linux sender through the whole engine: RFC 9438 CUBIC with HyStart++, PRR and RACK-TLP,
and the `linux` preset. The laws' equations and the recoveries' rules are unit-tested in Rust
(`tcp/cubic_rfc9438.rs`, `tcp/hystart.rs`, `tcp/recovery/prr.rs`, `tcp/recovery/rack_tlp.rs`)."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import sim

ONE_FLOW = dict(flows=1, core_mbps=10, rtt_ms=100, wmax_pkts=10_000, seed=1)
"""One flow over 10 Mb/s and 100 ms: a BDP of 83 packets."""


def test_hystart_plus_plus_leaves_slow_start_before_the_deep_buffer_overflows():
    """RFC 9406: the delay rise ends slow start (through CSS) before the buffer fills, where
    standard slow start overshoots it by about the window."""
    drops = {}
    for slow_start in ("rfc9406", "standard"):
        tcp = {"cc": "cubic_rfc9438", "recovery": "sack", "slow_start": slow_start}
        res = sim.run(**ONE_FLOW, tcp=tcp, buffer_pkts=500, duration_s=12, warmup_s=0)
        drops[slow_start] = res.summary["bottleneck_drops"][0].as_py()
    assert drops["rfc9406"] < drops["standard"] / 3, drops


def test_beta_0_7_fills_the_link_with_half_a_bdp_of_buffer():
    """A single flow with multiplicative decrease beta keeps the link busy with (1 - beta) / beta
    BDP of buffer: 0.43 BDP for RFC 9438's 0.7, a full BDP for Reno's 0.5."""
    util = {}
    for name, tcp in {
        "rfc9438": {"cc": "cubic_rfc9438", "recovery": "sack"},
        "beta 0.5": {"cc": "cubic_rfc9438", "recovery": "sack", "beta": 0.5},
    }.items():
        res = sim.run(**ONE_FLOW, tcp=tcp, buffer_pkts=40, duration_s=120, warmup_s=20)
        util[name] = res.metrics()["utilization"]
    assert util["rfc9438"] > 0.98, util
    assert util["beta 0.5"] < util["rfc9438"] - 0.03, util


@pytest.mark.parametrize("recovery", ["prr", "rack_tlp"])
def test_the_new_recoveries_fill_the_link_with_few_timeouts(recovery):
    """32 NewReno flows with small windows (about 3 packets each): RACK-TLP and PRR recover by
    fast recovery, as RFC 6675 SACK does, with at most a few timeouts a minute."""
    res = sim.run(
        tcp={"cc": "newreno", "recovery": recovery},
        flows=32,
        core_mbps=10,
        rtt_ms=100,
        buffer_pkts=20,
        wmax_pkts=10_000,
        duration_s=60,
        warmup_s=10,
    )
    m = res.metrics()
    assert m["utilization"] > 0.85, m
    assert m["fast_retransmits"] > 1000 and m["timeouts"] <= 20, m


def test_the_linux_preset_is_a_label_and_its_settings():
    cfg = sim.SimConfig(tcp="cubic")
    row = cfg.to_dict()["tcp"]
    assert (row["cc"], row["recovery"], row["init_cwnd_pkts"], row["delayed_ack"]) == (
        "cubic_rfc9438",
        "rack_tlp",
        10.0,
        True,
    )
    res = sim.run(tcp="cubic", flows=4, core_mbps=10, rtt_ms=50, buffer_pkts=40, duration_s=15, warmup_s=5)
    assert res.summary["tcp"][0].as_py() == "cubic"
    assert res.metrics()["utilization"] > 0.95


def test_a_reordering_window_of_zero_or_less_is_refused_naming_the_key():
    for bad in (0.0, -0.25):
        with pytest.raises(ValueError, match=r"^tcp\.rack_reo_wnd_min_rtts: must be > 0, got"):
            sim.SimConfig(tcp={"cc": "newreno", "recovery": "rack_tlp", "rack_reo_wnd_min_rtts": bad})


def test_the_receiver_acks_each_skbs_end_so_deferral_keeps_the_link_busy():
    """Engine 0.31.0: a Linux sender's skb of 2 packets or more ends with PSH, which the receiver
    ACKs at once (Linux 6.6+). One CUBIC flow at 10 Mb/s and 10 ms in 4 packets then reads 0.965,
    the kernel 0.979 (docs/fidelity.md). Without those ACKs, delayed ACKs paired packets across
    skbs, the next ACK was always due within the deferral's 1-ms horizon, the window's growth
    left in bursts of 4 into the 4-packet buffer, and the flow read 0.665."""
    cfg = dict(tcp="cubic", flows=1, core_mbps=10, rtt_ms=10, buffer_pkts=4, seed=1, duration_s=20, warmup_s=5)
    res = sim.run(**cfg, pkt_bytes=1500, trace_max_events=200_000, trace_start_s=5)
    assert res.metrics()["utilization"] > 0.94
    enq = res.trace.filter(pc.is_in(res.trace["event"], pa.array(["enqueue", "drop"]))).column("time_s").to_numpy()
    runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[-1.0], enq, [1e9]])) > 1e-9))
    assert (runs >= 4).mean() < 0.01, "the kernel sends no run of 4 packets here"

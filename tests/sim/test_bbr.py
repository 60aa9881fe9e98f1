"""BBR v1 through the whole engine, on the claims the buffer-sizing papers test (Hock, Bless and
Zitterbart 2017; Scholz et al. 2018; Ware et al. 2019). Its state machine, filters and recovery
rules are unit-tested in Rust (`tcp/bbr.rs`, `tcp/minmax.rs`, `tcp/rate.rs`)."""

import pytest

import sim

PATH = dict(core_mbps=10, rtt_ms=40, wmax_pkts=100_000, duration_s=40, warmup_s=10, seed=1)
BDP = 50
"""Packets in flight that fill 10 Mb/s over 40 ms with 1000-byte packets."""


def shares(res) -> dict[str, float]:
    f = res.flows.to_pydict()
    total: dict[str, float] = {}
    for group, goodput in zip(f["tcp_group"], f["goodput_mbps"]):
        total[group] = total.get(group, 0.0) + goodput
    return {g: v / sum(total.values()) for g, v in total.items()}


def test_one_flow_fills_the_link_without_filling_the_buffer():
    """BBR paces at the bottleneck rate and caps inflight near its BDP estimate: a deep buffer
    stays almost empty, where CUBIC fills it."""
    queue = {}
    for tcp in ("bbr", "cubic"):
        m = sim.run(**PATH, tcp=tcp, flows=1, buffer_pkts=8 * BDP).metrics()
        assert m["utilization"] > 0.95, (tcp, m)
        queue[tcp] = m["mean_queue_pkts"]
    assert queue["bbr"] < 0.3 * BDP < 3 * BDP < queue["cubic"], queue


def test_several_flows_keep_a_standing_queue_of_about_a_bdp():
    """With several flows each one's max filter over-estimates its share, and cwnd_gain 2 lets
    the sum of the windows hold a standing queue of one BDP or more in a deep buffer."""
    m = sim.run(**PATH, tcp="bbr", flows=4, buffer_pkts=16 * BDP).metrics()
    assert 0.8 * BDP < m["mean_queue_pkts"] < 3 * BDP, m
    assert m["loss_rate"] == 0.0


@pytest.mark.parametrize("cubic_flows", [1, 4])
def test_bbr_takes_the_link_in_shallow_buffers_and_cubic_in_deep_ones(cubic_flows):
    """One BBR flow against CUBIC: most of the link below a BDP of buffer, less than half at 16
    BDP; the same whether one or four CUBIC flows compete (Ware et al. 2019)."""
    mix = f"bbr:1,cubic:{cubic_flows}"
    shallow = shares(sim.run(**PATH, tcp_mix=mix, flows=1 + cubic_flows, buffer_pkts=BDP // 2))
    deep = shares(sim.run(**PATH, tcp_mix=mix, flows=1 + cubic_flows, buffer_pkts=16 * BDP))
    assert shallow["bbr"] > 0.85, shallow
    assert deep["bbr"] < 0.5, deep


def test_shallow_buffers_lose_much_and_stay_full():
    """Many BBR flows into a tenth of a BDP: loss in the tens of percent and the link still busy.
    RACK-TLP repairs most of it by fast recovery; RFC 6675's SACK, which cannot see a lost
    retransmission, times out more often than it recovers, and the link idles."""
    m = sim.run(**PATH, tcp="bbr", flows=16, buffer_pkts=5).metrics()
    assert m["loss_rate"] > 0.05, m
    assert m["utilization"] > 0.95, m
    assert m["timeouts"] < m["fast_retransmits"] / 5, m
    sack = sim.run(**PATH, tcp={"cc": "bbr", "recovery": "sack", "release": "paced"}, flows=16, buffer_pkts=5)
    assert sack.metrics()["timeouts"] > sack.metrics()["fast_retransmits"], sack.metrics()


def test_bbr_without_pacing_is_refused_naming_the_release():
    with pytest.raises(ValueError, match=r"^tcp\.release: bbr paces its packets"):
        sim.SimConfig(tcp={"cc": "bbr", "recovery": "sack", "release": "window"})


def test_flow_and_link_metrics_account_for_bbr():
    """BBR's time in each state adds up to the measured window, mostly PROBE_BW with about 2%
    in PROBE_RTT (200 ms each 10 s); the link's group shares are the flows' goodput shares;
    RTT samples include the queue."""
    res = sim.run(**{**PATH, "duration_s": 65, "warmup_s": 5}, tcp_mix="bbr:1,cubic:1", flows=2, buffer_pkts=BDP)
    f = res.flows.to_pylist()
    bbr, cubic = f[0], f[1]
    states = [bbr[k] for k in ("bbr_startup_s", "bbr_drain_s", "bbr_probe_bw_s", "bbr_probe_rtt_s")]
    assert sum(states) == pytest.approx(60.0, abs=0.1), states
    assert 0.01 < bbr["bbr_probe_rtt_s"] / 60.0 < 0.05, states
    assert cubic["bbr_probe_bw_s"] is None and cubic["delivery_rate_mean_mbps"] is None
    assert 5.0 < bbr["delivery_rate_mean_mbps"] <= bbr["delivery_rate_max_mbps"] <= 10.5
    assert PATH["rtt_ms"] < bbr["rtt_mean_ms"] < bbr["rtt_p99_ms"] < PATH["rtt_ms"] + 2 * BDP * 0.8
    link = res.links.to_pylist()[0]
    assert link["tcp_groups"] == ["bbr", "cubic"]
    total = bbr["goodput_mbps"] + cubic["goodput_mbps"]
    assert link["group_shares"] == pytest.approx([bbr["goodput_mbps"] / total, cubic["goodput_mbps"] / total])


def test_the_time_series_carries_the_links_delivery_rate_samples():
    """Each sample interval's mean delivery-rate sample of the flows crossing the link: one BBR
    flow alone measures the link's rate once it fills it (PROBE_RTT's app-limited 200 ms may leave
    an interval without a sample), and a law without the estimator takes none (NULL)."""
    res = sim.run(**{**PATH, "duration_s": 12}, tcp="bbr", flows=1, buffer_pkts=2 * BDP)
    late = [r["delivery_rate_mbps"] for r in res.timeseries.to_pylist() if r["time_s"] > 2]
    rates = [r for r in late if r is not None]
    assert len(rates) >= 0.9 * len(late) > 0, late
    assert 9.0 < sum(rates) / len(rates) <= 10.5, rates
    res = sim.run(**{**PATH, "duration_s": 5, "warmup_s": 1}, tcp="cubic", flows=1, buffer_pkts=2 * BDP)
    assert {r["delivery_rate_mbps"] for r in res.timeseries.to_pylist()} == {None}


def test_sack_retain_keeps_bbr_paced_and_its_scoreboard_through_timeouts():
    """4 flows in a third of a BDP lose much and time out. `sack_retain` (as ns-3 runs SACK
    recovery) resends only the unSACKed packets after a timeout and paces what recovery sends, so
    the link stays busy; `sack` (ns-2's Sack1) bursts in recovery and goes back N, and the
    retransmissions its bursts lose cost further timeouts: the link idles for tenths of seconds."""
    util = {}
    for recovery in ("sack", "sack_retain"):
        tcp = dict(cc="bbr", recovery=recovery, release="paced", long_term=False)
        m = sim.run(**{**PATH, "duration_s": 20, "warmup_s": 5}, tcp=tcp, flows=4, buffer_pkts=17).metrics()
        util[recovery] = m["utilization"]
    assert util["sack_retain"] > 0.95 and util["sack_retain"] - util["sack"] > 0.1, util


def test_send_jitter_breaks_the_phase_lock_that_starves_paced_flows():
    """Eight paced flows behind a full drop-tail queue of 0.3 BDP (20 Mb/s, 50 ms): without
    jitter the same flows keep arriving as the queue is full, lose far more than their share, and
    BBR's long-term mode latches them at a low rate (Jain 0.653 over seeds 1-6 on 0.33.0; the
    kernel's bbr reads 0.78-0.82). 1.2 ms of `tcp.send_jitter_ms` (each paced packet its own
    wait) breaks the lock (0.734). It shows the mechanism; it is no model of a host: a wait longer than
    half a packet gap slows the sender, and one flow alone with it reads 0.55 (docs/fidelity.md)."""
    jain = {}
    for jitter in (0.0, 1.2):
        runs = [
            sim.run(
                tcp={**sim.SimConfig(tcp="bbr").to_dict()["tcp"], "send_jitter_ms": jitter},
                flows=8,
                core_mbps=20,
                rtt_ms=50,
                rtt_spread_ms=10,
                buffer_pkts=25,
                pkt_bytes=1500,
                wmax_pkts=100_000,
                duration_s=30,
                warmup_s=10,
                start_window_s=1,
                seed=seed,
            ).metrics()["jain_fairness"]
            for seed in range(1, 7)
        ]
        jain[jitter] = sum(runs) / len(runs)
    assert jain[0.0] < 0.67 and jain[1.2] > jain[0.0] + 0.06, jain


def test_linux_rtt_samples_from_timestamps_keep_one_flow_through_codel_at_its_rate():
    """`tcp.tsecr_rtt`: an ACK of a retransmission gives BBR the echoed timestamp's RTT, in whole
    ms. The echo is of the copy that filled the receiver's hole: after a timeout's go-back-N, the
    ACKs of packets whose originals had arrived must not give the resent copies' times. A first
    version did, and one flow at 200 ms through CoDel read 0.26 of the link (RTT samples of 106 ms
    on a 200-ms path, so a BDP half its size)."""
    util = {}
    for on in (False, True):
        tcp = {**sim.SimConfig(tcp="bbr").to_dict()["tcp"], "tsecr_rtt": on}
        run = dict(queue="codel", flows=1, core_mbps=10, rtt_ms=200, pkt_bytes=1500, buffer_pkts=167, seed=1)
        util[on] = sim.run(tcp=tcp, duration_s=120, warmup_s=30, **run).metrics()["utilization"]
    assert util[True] > 0.93 and abs(util[True] - util[False]) < 0.05, util  # 0.959 and 0.940

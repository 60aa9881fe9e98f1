"""Per-flow conservation at the end of a run (sent = delivered + dropped + in flight) and no
panic or hang at the edges of the parameter space."""

import pytest

import sim
from tests.sim.variants import variant


def assert_conserved(res):
    f = res.flows.to_pydict()
    assert len(f["flow_id"]) == res.config.flows
    for s, d, x, q in zip(f["sent_pkts"], f["delivered_pkts"], f["dropped_pkts"], f["in_flight_pkts"]):
        assert s == d + x + q
    assert sum(f["sent_pkts"]) > 0


@pytest.mark.parametrize("tcp", sim.VARIANTS)
@pytest.mark.parametrize("buffer_pkts", [0, 1])
def test_tiny_buffers(tcp, buffer_pkts):
    res = sim.run(**variant(tcp), flows=4, buffer_pkts=buffer_pkts, core_mbps=10, duration_s=20, warmup_s=2)
    assert_conserved(res)
    assert res.metrics()["loss_rate"] > 0


@pytest.mark.parametrize("tcp", sim.VARIANTS)
def test_one_flow_window_one(tcp):
    res = sim.run(**variant(tcp), flows=1, wmax_pkts=1, buffer_pkts=10, core_mbps=10, duration_s=10, warmup_s=1)
    assert_conserved(res)
    m = res.metrics()
    # One packet per RTT: 8 kb / 100 ms = 80 kb/s of a 10 Mb/s link; a delayed ACK (the linux
    # preset's) adds its timer to each round. The Poisson sender may exceed its window (by
    # design, up to 2 x wmax outstanding).
    row = res.summary.to_pylist()[0]
    round_ms = 100 + (row["tcp_delack_ms"] if row["tcp_delayed_ack"] else 0)
    if tcp == "poisson":
        assert 0.004 < m["utilization"] <= 0.016
    else:
        assert m["utilization"] == pytest.approx(0.008 * 100 / round_ms, rel=0.05)


def test_rtts_from_1ms_to_1s():
    rtts = [1.0, 10.0, 100.0, 500.0, 1000.0]
    res = sim.run(tcp="newreno", flows=5, rtts_ms=rtts, buffer_pkts=20, core_mbps=50, duration_s=30, warmup_s=5)
    assert_conserved(res)
    assert res.flows.column("rtt_ms").to_pylist() == rtts
    gp = res.flows.column("goodput_mbps").to_pylist()
    assert gp[0] > gp[-1]  # short RTTs win at a shared drop-tail queue


def test_5000_flows():
    res = sim.run(
        tcp="reno",
        flows=5000,
        buffer_pkts=50,
        core_mbps=1000,
        wmax_pkts=8,
        duration_s=3,
        warmup_s=1,
        start_window_s=0.5,
    )
    assert_conserved(res)
    assert res.metrics()["utilization"] > 0.5


def test_access_links_and_access_drops_are_counted():
    res = sim.run(
        tcp="reno",
        flows=3,
        access_mbps=5,
        access_buffer_pkts=2,
        core_mbps=100,
        buffer_pkts=100,
        wmax_pkts=500,
        duration_s=20,
        warmup_s=2,
    )
    assert_conserved(res)
    m = res.metrics()
    assert m["access_loss_rate"] > 0
    assert m["loss_rate"] == 0  # 3 x 5 Mb/s cannot congest 100 Mb/s
    assert m["utilization"] <= 0.15 + 1e-9


def test_byte_limited_buffer():
    pk = sim.run(tcp="reno", flows=10, buffer_pkts=10, core_mbps=10, duration_s=20, warmup_s=5).metrics()
    by = sim.run(
        tcp="reno", flows=10, buffer_bytes=10_000, buffer_pkts=0, core_mbps=10, duration_s=20, warmup_s=5
    ).metrics()
    # 10,000 bytes of 1,000-byte packets behave exactly as 10 packets.
    assert by["utilization"] == pk["utilization"]
    assert by["loss_rate"] == pk["loss_rate"]


@pytest.mark.parametrize("release", ["window", "paced", "poisson"])
def test_sack_with_every_release_delayed_acks_and_short_flows(release):
    # SACK's recovery sends by its own pipe rule whatever the release; ACK options travel beside
    # the ACKs (checked in order on delivery): no panic, packets conserved.
    tcp = {"cc": "highspeed", "recovery": "sack", "release": release, "delayed_ack": True}
    res = sim.run(tcp=tcp, flows=6, short_mbps=2, buffer_pkts=2, core_mbps=10, duration_s=20, warmup_s=2)
    assert_conserved(res)
    m = res.metrics()
    assert m["loss_rate"] > 0 and m["fast_retransmits"] > 0


@pytest.mark.parametrize("cc", ["newreno", "westwood", "lp"])
def test_linux_recovery_with_delayed_acks_short_flows_and_timeouts(cc):
    # The linux recovery marks losses from its scoreboard and keeps its place after a timeout (no
    # go-back-N): with a 2-packet buffer it times out often, and every packet is still accounted for.
    tcp = {"cc": cc, "recovery": "linux", "delayed_ack": True}
    res = sim.run(tcp=tcp, flows=6, short_mbps=2, buffer_pkts=2, core_mbps=10, duration_s=20, warmup_s=2)
    assert_conserved(res)
    m = res.metrics()
    assert m["loss_rate"] > 0 and m["fast_retransmits"] > 0 and m["timeouts"] > 0

"""Short TCP flows (`short_mbps`, `short_flow_pkts`): Poisson arrivals of fixed-size transfers
beside the long flows, as the traffic mix of Appenzeller et al. (Figs. 12-13)."""

import pytest

import sim
from tests.sim.variants import variant


def test_uncongested_short_flows_take_slow_start_rounds():
    # 14 packets from an initial window of 2 take three rounds (2 + 4 + 8): the last packet
    # reaches the receiver 2.5 RTTs after the first left, plus a few transmission times.
    res = sim.run(
        tcp="reno",
        flows=0,
        short_mbps=10,
        short_flow_pkts=14,
        core_mbps=100,
        buffer_pkts=10_000,
        rtt_ms=100,
        duration_s=60,
        warmup_s=10,
    )
    m = res.metrics()
    assert m["loss_rate"] == 0
    assert 250 <= m["short_afct_ms"] <= 256
    assert m["short_p99_fct_ms"] < 260
    # 10 Mb/s of 14-packet, 1000-byte flows: 89.3 arrivals/s over the 50 measured seconds.
    assert m["short_flows"] == pytest.approx(89.3 * 50, rel=0.05)
    assert m["short_flows"] - m["short_flows_done"] <= 30  # only those started in the last RTTs
    assert m["utilization"] == pytest.approx(0.10, rel=0.05)
    assert m["offered_load"] == pytest.approx(0.10)


def test_a_larger_first_window_saves_a_round():
    base = dict(flows=0, short_mbps=10, core_mbps=100, buffer_pkts=10_000, rtt_ms=100, duration_s=30, warmup_s=5)

    def afct(init_cwnd_pkts):
        return sim.run(**base, tcp={"cc": "newreno", "init_cwnd_pkts": init_cwnd_pkts}).metrics()["short_afct_ms"]

    two = afct(2)
    four = afct(4)  # 4 + 8 + 2: still 3 rounds
    ten = afct(10)  # 10 + 4: 2 rounds
    assert four == pytest.approx(two, abs=2)
    assert ten == pytest.approx(two - 100, abs=2)


@pytest.mark.parametrize("tcp", sim.VARIANTS)
def test_short_flows_beside_congested_long_flows(tcp):
    # A small buffer: losses, timeouts and reused connection slots, for every variant.
    kw = dict(
        **variant(tcp),
        flows=20,
        short_mbps=5,
        core_mbps=20,
        buffer_pkts=8,
        rtt_ms=60,
        rtt_spread_ms=40,
        wmax_pkts=1000,
        duration_s=40,
        warmup_s=5,
        seed=3,
    )
    res = sim.run(**kw)
    m = res.metrics()
    assert m["loss_rate"] > 0.005
    assert m["short_flows"] > 0.9 * 5e6 / (14 * 8000) * 35
    assert 0.9 * m["short_flows"] <= m["short_flows_done"] <= m["short_flows"]
    assert m["short_afct_ms"] > 2.5 * 40  # at least 2.5 of the shortest RTT
    assert m["short_p99_fct_ms"] > m["short_afct_ms"]
    # The per-flow table is the long flows', and each still conserves its packets.
    f = res.flows.to_pydict()
    assert len(f["flow_id"]) == 20
    for s, d, x, q in zip(f["sent_pkts"], f["delivered_pkts"], f["dropped_pkts"], f["in_flight_pkts"]):
        assert s == d + x + q
    again = sim.run(**kw).metrics()
    assert {k: v for k, v in again.items() if k not in ("wall_s", "events_per_s", "pkts_per_s")} == {
        k: v for k, v in m.items() if k not in ("wall_s", "events_per_s", "pkts_per_s")
    }


def test_short_flows_take_bandwidth_from_long_ones():
    kw = dict(tcp="reno", flows=10, core_mbps=20, buffer_pkts=50, rtt_ms=60, wmax_pkts=1000, duration_s=40, warmup_s=10)
    alone = sim.run(**kw).metrics()["goodput_mbps"]
    mixed = sim.run(**kw, short_mbps=4).metrics()["goodput_mbps"]
    assert alone > 18
    assert 0.6 * alone < mixed < alone - 2.5  # about 4 Mb/s fewer for the long flows


@pytest.mark.parametrize("field,value", [("short_mbps", -1.0), ("short_flow_pkts", 0)])
def test_bad_short_flow_fields_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        sim.run(flows=1, **{field: value})

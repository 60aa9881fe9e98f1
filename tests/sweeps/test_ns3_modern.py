"""The ns3 backend's modern senders (issue 33): RFC 9438 CUBIC as TcpCubic with HyStart, PRR as
TcpPrrRecovery, BBR as TcpBbr, and tcp_mix as a TypeId per sender node; what ns-3 lacks is refused
naming the key. The full cross-check grid is `modern_backends` (reports/modern_backends.md)."""

import pytest

import sim
from sweeps.backends import ns3

NO_NS3 = pytest.mark.skipif(ns3.missing() is not None, reason="ns-3 not installed (pip install -e '.[ns3]')")
PATH = dict(core_mbps=10.0, rtt_ms=40.0, wmax_pkts=10_000, duration_s=30.0, warmup_s=10.0, seed=1)


def test_ns3_refuses_what_its_modern_senders_lack():
    bbr_sack = {"cc": "bbr", "recovery": "sack", "release": "paced"}
    for fields, message in [
        (dict(tcp=bbr_sack), r"^tcp\.long_term: ns-3's TcpBbr has no long-term"),
        (dict(tcp={"cc": "cubic_rfc9438", "recovery": "rack_tlp"}), "^tcp_recovery: the ns3 backend supports only"),
        (dict(tcp="sack", tcp_mix="bbr:1,cubic:1", flows=2), r"^tcp_mix: group 'bbr' sets tcp\.init_cwnd_pkts"),
        (
            dict(tcp="cubic", tcp_mix="cubic_2622:1,cubic:1", flows=2),
            r"^tcp_mix: groups set ns-3's ns3::TcpCubic::Beta",
        ),
    ]:
        with pytest.raises(ValueError, match=message):
            ns3.check(sim.SimConfig(**fields))
    ns3.check(sim.SimConfig(tcp={**bbr_sack, "long_term": False}))  # mapped: no error
    ns3.check(sim.SimConfig(tcp="cubic", tcp_mix="bbr:1,cubic:1", flows=2))


def shares(flows: dict) -> dict[str, float]:
    total: dict[str, float] = {}
    for group, goodput in zip(flows["tcp_group"], flows["goodput_mbps"]):
        total[group] = total.get(group, 0.0) + goodput
    return {g: v / sum(total.values()) for g, v in total.items()}


@NO_NS3
@pytest.mark.parametrize("tcp", [{"cc": "cubic_rfc9438", "recovery": "sack"}, {"cc": "newreno", "recovery": "prr"}])
def test_ns3_rfc9438_cubic_and_prr_agree_with_ours(tcp):
    """4 flows over 10 Mb/s, 40 ms, a BDP of buffer: the issue's bounds on both."""
    cfg = sim.SimConfig(**PATH, tcp=tcp, flows=4, buffer_pkts=50)
    theirs, ours = ns3.run(cfg).metrics, sim.run(cfg).metrics()
    got = {k: (theirs[k], ours[k]) for k in ("utilization", "mean_queue_pkts", "loss_rate")}
    assert abs(theirs["utilization"] - ours["utilization"]) < 0.03, got
    assert theirs["mean_queue_pkts"] == pytest.approx(ours["mean_queue_pkts"], rel=0.2), got
    assert theirs["loss_rate"] == pytest.approx(ours["loss_rate"], rel=0.25), got


@NO_NS3
def test_ns3_bbr_takes_the_same_share_from_cubic_as_ours():
    """One BBR flow against one Linux CUBIC flow in half a BDP of buffer: BBR's share on both."""
    cfg = sim.SimConfig(**PATH, tcp="cubic", tcp_mix="bbr:1,cubic:1", flows=2, buffer_pkts=25)
    theirs, ours = shares(ns3.run(cfg).details["flows"].to_pydict()), shares(sim.run(cfg).flows.to_pydict())
    assert theirs["bbr"] > 0.8 and abs(theirs["bbr"] - ours["bbr"]) < 0.1, (theirs, ours)

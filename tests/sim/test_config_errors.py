"""Bad configs raise a ValueError naming the dotted key and what is allowed, in one line, before
anything runs."""

import math

import pytest

import sim

pytestmark = pytest.mark.check  # part of `make check`

PL = "parking_lot"


def parking_lot(**params):
    return {"name": PL, **params}


@pytest.mark.parametrize(
    "fields, field, hint",
    [
        (
            {"tcp": "vegas"},
            "tcp",
            "reno, newreno, sack, cubic, cubic_2622, highspeed, scalable, bic, htcp, westwood, lp, dctcp, bbr, "
            "reno_linux, paced, poisson, cubic_rfc9438",
        ),
        ({"buffer_pkts": -1}, "buffer_pkts", "[0,"),
        ({"core_mbps": 0}, "core_mbps", "> 0"),
        ({"warmup_s": 60, "duration_s": 60}, "warmup_s", "< duration_s"),
        ({"rtt_ms": math.nan}, "rtt_ms", "finite"),
        ({"flows": -3}, "flows", "[0,"),
        ({"wmax_pkts": 0}, "wmax_pkts", "[1,"),
        ({"access_mbps": -5.0}, "access_mbps", "> 0"),
        ({"rtts_ms": [100.0, 100.0], "flows": 3}, "rtts_ms", "one RTT per flow"),
        ({"buffer_policy": "abs9000"}, "buffer_policy", "allowed: fixed, bdp"),
        ({"buffer_policy": {"name": "schedule"}}, "buffer_policy.steps", "at least one"),
        ({"flows": 0}, "flows", "nothing to simulate"),
        # the sections: each choice names its registry
        ({"topology": "ring"}, "topology", "allowed: dumbbell, parking_lot"),
        ({"topology": {"name": "ring"}}, "topology.name", "allowed: dumbbell, parking_lot"),
        ({"tcp": {"cc": "vegas"}}, "tcp.cc", "allowed: newreno"),
        (
            {"tcp": {"recovery": "rack"}},
            "tcp.recovery",
            "allowed: reno, newreno, sack, sack_retain, linux, prr, rack_tlp",
        ),
        (
            {"tcp": {"recovery": "rack_tlp", "release": "poisson"}},
            "tcp.release",
            "must be window or paced with tcp.recovery rack_tlp",
        ),
        ({"tcp": {"cc": "cubic_rfc9438", "beta": 1.0}}, "tcp.beta", "[0.01, 0.99]"),
        ({"tcp": {"cc": "cubic_rfc9438", "slow_start": "hystart"}}, "tcp.slow_start", "allowed: rfc9406, standard"),
        ({"tcp": {"recovery": "linux", "release": "paced"}}, "tcp.release", "must be window with tcp.recovery linux"),
        ({"tcp": {"cc": "bbr", "recovery": "sack", "release": "window"}}, "tcp.release", "bbr paces its packets"),
        ({"tcp": {"release": "bursty"}}, "tcp.release", "allowed: window, paced, poisson"),
        ({"tcp": {"release": "paced", "send_jitter_ms": 0.4}}, "tcp.send_jitter_ms", "got release paced"),
        (
            {"tcp": {"cc": "cubic_2622", "recovery": "linux", "send_jitter_ms": 0.4}},
            "tcp.send_jitter_ms",
            "recovery linux",
        ),
        ({"tcp": {"send_jitter_ms": -1}}, "tcp.send_jitter_ms", ">= 0"),
        ({"tcp": {"tso_defer": True}}, "tcp.tso_defer", "recovery newreno with release window"),
        (
            {"tcp": {"cc": "newreno", "recovery": "rack_tlp", "release": "paced", "tso_defer": True}},
            "tcp.tso_defer",
            "applies to tcp.recovery rack_tlp with tcp.release window",
        ),
        ({"tcp": {"compat": "ns-3"}}, "tcp.compat", "allowed: none, ns3"),
        ({"tcp": {"beta": 0.5}}, "tcp.beta", "unknown key for tcp newreno"),
        # per-link settings of the parking lot
        (
            {"topology": parking_lot(routes=[{"links": [0]}, {"links": [1, 2]}])},
            "topology.routes.1.links",
            "link 2 does not exist; the links are 0, 1",
        ),
        ({"topology": parking_lot(routes=[{"links": [1, 0]}])}, "topology.routes.0.links", "consecutive"),
        ({"topology": parking_lot(links=[{"rate_mbps": 0}, {}])}, "topology.links.0.rate_mbps", "> 0"),
        ({"topology": parking_lot(links=[{}, {"buffer_pkts": -4}])}, "topology.links.1.buffer_pkts", "[0,"),
        ({"topology": parking_lot(links=[{}, {"buffer_bytes": -4}])}, "topology.links.1.buffer_bytes", "[0,"),
        ({"topology": parking_lot(links=[{"delay_ms": 30}, {"delay_ms": 30}])}, "rtt_ms", "twice the one-way"),
        ({"topology": parking_lot(links=[{"bandwidth": 3}, {}])}, "topology.links.0.bandwidth", "unknown key"),
        # strict types
        ({"flows": True}, "flows", "an integer"),
        ({"buffer_pkts": 1e3}, "buffer_pkts", "an integer"),
        ({"rtts_ms": "123", "flows": 3}, "rtts_ms", "a list"),
        ({"seed": 2**64}, "seed", "[-2^63, 2^63)"),
        (
            {"buffer_policy": {"name": "schedule", "steps": [(1, 2.7)]}},
            "buffer_policy.steps.0.buffer_pkts",
            "an integer",
        ),
    ],
)
def test_bad_config_names_the_field(fields, field, hint):
    with pytest.raises(ValueError) as e:
        sim.run(**fields)
    msg = str(e.value)
    assert msg.startswith(field + ":"), msg
    assert hint in msg, msg
    assert "\n" not in msg


def test_unknown_field_says_where_it_moved():
    with pytest.raises(ValueError, match="^bufer_pkts: unknown key"):
        sim.run(bufer_pkts=5)
    with pytest.raises(ValueError, match="^init_cwnd_pkts: unknown key; it is tcp.init_cwnd_pkts now"):
        sim.run(init_cwnd_pkts=10)


def test_wrong_type():
    with pytest.raises(ValueError, match="^flows: must be an integer"):
        sim.run(flows="many")


def test_simconfig_round_trip():
    cfg = sim.SimConfig(tcp="paced", flows=3, duration_s=5, warmup_s=1)
    assert cfg.validate() is cfg
    assert sim.SimConfig(**{k: v for k, v in cfg.to_dict().items()}) == cfg
    res = sim.run(cfg)
    m = res.metrics()
    assert (m["tcp"], m["tcp_cc"], m["tcp_recovery"], m["tcp_release"]) == ("paced", "newreno", "newreno", "paced")
    assert res.summary.schema.field("utilization").type == "double"
    assert res.summary.schema.field("timeouts").type == "int64"

"""Bad configs raise a ValueError naming the field and its allowed range, before anything runs."""

import math

import pytest

import sim


@pytest.mark.parametrize(
    "fields, field, hint",
    [
        ({"tcp": "vegas"}, "tcp", "reno, newreno, paced, poisson"),
        ({"buffer_pkts": -1}, "buffer_pkts", "[0,"),
        ({"core_mbps": 0}, "core_mbps", "> 0"),
        ({"warmup_s": 60, "duration_s": 60}, "warmup_s", "< duration_s"),
        ({"rtt_ms": math.nan}, "rtt_ms", "finite"),
        ({"flows": -3}, "flows", "[0,"),
        ({"wmax_pkts": 0}, "wmax_pkts", "[1,"),
        ({"access_mbps": -5.0}, "access_mbps", "> 0"),
        ({"rtts_ms": [100.0, 100.0], "flows": 3}, "rtts_ms", "one RTT per flow"),
        ({"controller": "abs9000"}, "controller", "none, schedule"),
        ({"flows": 0}, "flows", "nothing to simulate"),
    ],
)
def test_bad_config_names_the_field(fields, field, hint):
    with pytest.raises(ValueError) as e:
        sim.run(**fields)
    msg = str(e.value)
    assert msg.startswith(field + ":"), msg
    assert hint in msg
    assert "\n" not in msg


def test_unknown_field():
    with pytest.raises(ValueError, match="unknown field 'bufer_pkts'"):
        sim.run(bufer_pkts=5)


def test_wrong_type():
    with pytest.raises(ValueError):
        sim.run(flows="many")


def test_simconfig_round_trip():
    cfg = sim.SimConfig(tcp="paced", flows=3, duration_s=5, warmup_s=1)
    assert cfg.validate() is cfg
    res = sim.run(cfg)
    assert res.metrics()["tcp"] == "paced"
    assert res.summary.schema.field("utilization").type == "double"

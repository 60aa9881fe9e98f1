"""Variant mixes (`tcp_mix`): ABS Fig. 8's set-up (100 Mb/s, RTTs 40-60 ms, 10 flows each of reno,
highspeed, scalable, htcp and westwood); per-group goodput and loss stored in `flows`, every
flow's packets conserved, and bit-identical results in two processes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import sim

MIX = "reno:10,highspeed:10,scalable:10,htcp:10,westwood:10"
CFG = dict(
    tcp="reno",
    tcp_mix=MIX,
    flows=50,
    core_mbps=100,
    rtt_ms=50,
    rtt_spread_ms=20,
    pkt_bytes=1500,
    buffer_pkts=100,
    wmax_pkts=100000,
    duration_s=30,
    warmup_s=10,
)

SCRIPT = f"""
import hashlib, json, sim
from sim.result import WALL_CLOCK_METRICS
r = sim.run(sim.SimConfig(**{CFG!r}))
summary = r.summary.drop_columns([c for c in WALL_CLOCK_METRICS if c in r.summary.column_names])
print(json.dumps({{t: hashlib.sha256(str(x.to_pylist()).encode()).hexdigest()
                   for t, x in (("summary", summary), ("flows", r.flows), ("links", r.links))}}))
"""


def test_groups_are_stored_and_packets_conserved():
    r = sim.run(sim.SimConfig(**CFG))
    flows = r.flows.to_pylist()
    groups = [f["tcp_group"] for f in flows]
    assert groups == [g for g, n in (x.split(":") for x in MIX.split(",")) for _ in range(int(n))]
    for f in flows:
        assert f["sent_pkts"] == f["delivered_pkts"] + f["dropped_pkts"] + f["in_flight_pkts"], f
        assert f["goodput_mbps"] > 0 and f["loss_rate"] is not None
    by_group = {g: sum(f["goodput_mbps"] for f in flows if f["tcp_group"] == g) for g in set(groups)}
    total = r.summary.to_pylist()[0]["goodput_mbps"]
    assert sum(by_group.values()) == pytest.approx(total, rel=1e-9)
    # Reno without SACK loses to its SACK and high-speed neighbours on the same link.
    assert by_group["reno"] < min(by_group["scalable"], by_group["highspeed"]), by_group


def test_a_mix_is_bit_identical_across_processes():
    digests = [
        subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert json.loads(digests[0]) == json.loads(digests[1])


@pytest.mark.parametrize(
    "mix, message",
    [
        ("reno:10,scalable:9", "tcp_mix: counts add up to 19, but flows is 20"),
        ("reno:10,vegas:10", 'tcp_mix: group "vegas": unknown tcp "vegas"; allowed: reno, newreno, sack'),
        ("reno", 'tcp_mix: group "reno" must be name:count'),
    ],
)
def test_a_bad_mix_names_the_key(mix, message):
    with pytest.raises(ValueError) as e:
        sim.run(sim.SimConfig(tcp_mix=mix, flows=20))
    assert str(e.value).startswith(message), e.value

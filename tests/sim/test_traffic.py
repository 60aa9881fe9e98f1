"""Traffic groups (issue 15): the http, pareto, udp and bulk kinds draw what they are configured
to draw, an on/off schedule moves the flow count, the ABS mixes run from their presets with
per-class results, packets conserved and bit-identical results in two processes, and bad input
names its key."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest

import sim
from sweeps.api import JobList, compose_config


def preset(name: str, **point: Any) -> sim.SimConfig:
    """The engine config `python -m sweeps -m +experiment=NAME` runs at one point of its grid."""
    return JobList(compose_config([f"+experiment={name}"]), [point]).specs()[0].sim


def classes(res: sim.SimResult) -> dict[str, dict[str, Any]]:
    return {row["class"]: row for row in res.classes.to_pylist()}


def pareto_quantile_pkts(q: float, mean_bytes: float, shape: float, pkt_bytes: int) -> float:
    scale = mean_bytes * (shape - 1) / shape
    return math.ceil(scale / (1 - q) ** (1 / shape) / pkt_bytes)


def test_web_objects_and_pages_follow_their_laws_over_1000_seconds():
    # ABS's web model: Pareto objects (mean 10 KB, shape 1.2), 1-5 objects per page. 100-byte
    # packets make the sizes fine-grained enough to compare quantiles within 5%. The sample mean
    # of a shape-1.2 law converges as n^(-1/6), so the median and the 99th percentile are checked.
    res = sim.run(
        flows=0,
        core_mbps=100,
        rtt_ms=50,
        pkt_bytes=100,
        buffer_pkts=1000,
        duration_s=1000,
        warmup_s=10,
        traffic=[{"kind": "http", "sessions": 30}],
    )
    web = classes(res)["http"]
    assert web["flows"] > 40_000, web
    for q, col in ((0.5, "size_p50_pkts"), (0.99, "size_p99_pkts")):
        want = pareto_quantile_pkts(q, 10_000, 1.2, 100)
        assert web[col] == pytest.approx(want, rel=0.05), (col, web[col], want)
    assert web["flows"] / web["pages"] == pytest.approx(3.0, rel=0.05), "objects per page: uniform in [1, 5]"
    assert web["transfers_done"] > 0.99 * web["flows"]


def test_pareto_arrivals_offer_their_load_within_5_percent():
    # Shape 2.5 (finite variance): over 1000 s the offered load is within 1% of its setting in
    # expectation, so 5% is a real check.
    res = sim.run(
        flows=0,
        core_mbps=100,
        rtt_ms=50,
        buffer_pkts=1000,
        duration_s=1000,
        warmup_s=10,
        traffic=[{"kind": "pareto", "load_mbps": 5, "mean_bytes": 50_000, "shape": 2.5}],
    )
    p = classes(res)["pareto"]
    assert p["offered_mbps"] == pytest.approx(5.0, rel=0.05), p
    assert p["size_p50_pkts"] == pytest.approx(pareto_quantile_pkts(0.5, 50_000, 2.5, 1000), rel=0.05), p


def test_udp_streams_send_at_their_rate():
    res = sim.run(
        flows=0,
        core_mbps=10,
        rtt_ms=50,
        buffer_pkts=100,
        duration_s=100,
        warmup_s=10,
        traffic=[
            {"kind": "udp", "flows": 20, "rate_mbps": 0.1},
            {"kind": "udp", "flows": 5, "rate_mbps": 0.2, "pattern": "poisson", "pkt_bytes": 200},
        ],
    )
    u = classes(res)["udp"]
    assert u["flows"] == 25
    assert u["offered_mbps"] == pytest.approx(3.0, rel=0.02), u
    assert u["loss_rate"] == 0 and u["goodput_mbps"] == pytest.approx(3.0, rel=0.02)


def test_on_off_schedule_moves_the_flow_count_and_loss_falls_when_flows_leave():
    # ABS Fig. 4's traffic: 60 flows on 10 Mb/s, 20 leave at 48 s and 20 more at 96 s, they
    # return at 144 s and 192 s.
    res = sim.run(preset("abs_load_changes", buffer_pkts=100, seed=1))
    ts = [r for r in res.timeseries.to_pylist() if r["link_id"] == 0]

    def at(t: float) -> dict[str, Any]:
        return min(ts, key=lambda r: abs(r["time_s"] - t))

    for t, n in ((40, 60), (70, 40), (120, 20), (170, 40), (230, 60)):
        assert at(t)["active_flows"] == n, (t, at(t))
        assert 0 < at(t)["ca_flows"] <= n

    def loss(t0: float, t1: float) -> float:
        rows = [r for r in ts if t0 < r["time_s"] <= t1]
        return sum(r["drops"] for r in rows) / sum(r["arrivals"] for r in rows)

    assert loss(60, 96) < loss(20, 48) and loss(110, 144) < loss(60, 96), (loss(20, 48), loss(60, 96), loss(110, 144))
    assert loss(200, 240) > loss(110, 144)


MIXES = [("abs_mix", {"bulk": 20, "udp": 20}), ("abs_parking_lot_mix", {"bulk": 60, "udp": 30})]


@pytest.mark.parametrize("name, counts", MIXES)
def test_abs_mixes_run_with_per_class_results_and_conserve_packets(name, counts):
    res = sim.run(preset(name, buffer_pkts=100, seed=1, duration_s=60))
    c = classes(res)
    assert set(c) == {"bulk", "http", "udp"}
    for cls, n in counts.items():
        assert c[cls]["flows"] == n
    assert c["http"]["transfers_done"] > 100 and c["http"]["fct_p50_ms"] > 0
    assert all(row["goodput_mbps"] > 0 for row in c.values())
    for f in res.flows.to_pylist():
        assert f["sent_pkts"] == f["delivered_pkts"] + f["dropped_pkts"] + f["in_flight_pkts"], f
    for link in res.links.to_pylist():
        assert link["arrivals_total"] == link["departures_total"] + link["drops_total"] + link["held_at_end"], link


SCRIPT = """
import hashlib, json, sys
from sim.result import WALL_CLOCK_METRICS
import sim
from tests.sim.test_traffic import preset
r = sim.run(preset(sys.argv[1], buffer_pkts=100, seed=2, duration_s=40))
summary = r.summary.drop_columns([c for c in WALL_CLOCK_METRICS if c in r.summary.column_names])
print(json.dumps({t: hashlib.sha256(str(x.to_pylist()).encode()).hexdigest() for t, x in
                  (("summary", summary), ("flows", r.flows), ("links", r.links), ("classes", r.classes),
                   ("timeseries", r.timeseries))}))
"""


@pytest.mark.parametrize("name", [m for m, _ in MIXES])
def test_abs_mixes_are_bit_identical_across_processes(name):
    digests = [
        subprocess.run([sys.executable, "-c", SCRIPT, name], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert json.loads(digests[0]) == json.loads(digests[1])


@pytest.mark.parametrize(
    "group, message",
    [
        (
            {"kind": "pareto", "shape": 1.0},
            "traffic.0.shape: must be > 1 (a Pareto law of shape <= 1 has an infinite mean)",
        ),
        ({"kind": "udp", "rate_mbps": -0.1}, "traffic.0.rate_mbps: must be > 0"),
        ({"kind": "bulk", "schedule": []}, "traffic.0.schedule: must list at least one (time_s, active_flows) step"),
        ({"kind": "udp", "route": [0, 3]}, "traffic.0.route: link 3 does not exist; the links are 0"),
        ({"kind": "http", "sessions": 0}, "traffic.0.sessions: must be an integer in [1, 100000000], got 0"),
        ({"kind": "ftp"}, 'traffic.0.kind: unknown traffic "ftp"; allowed: bulk, http, pareto, udp'),
    ],
)
def test_bad_traffic_names_the_key_in_one_line(group, message):
    with pytest.raises(ValueError) as e:
        sim.SimConfig(traffic=[group])
    assert str(e.value).startswith(message) and "\n" not in str(e.value), e.value


def test_the_web_benchmark_is_the_abs_web_preset():
    from bench.engine import NEW_ONLY

    fields = NEW_ONLY["ABS web: 10Mb/s, 20 FTP + 28 HTTP sessions, 1200 s"]
    assert sim.SimConfig(**fields) == preset("abs_web", buffer_pkts=100, seed=1)

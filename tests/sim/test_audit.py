"""The engine-side defects of the fault and fuzz audit (issue 13), each reproduced, and a short
random-config fuzz (`sim.fuzz`; `python -m sim.fuzz --configs 900` for the long one)."""

from __future__ import annotations

import pytest

import sim
from sim import fuzz


@pytest.mark.parametrize(
    "fields, key",
    [
        # D1: a transmission of 8e15 s, and timers of 1e8 s, wrapped the u64 picosecond clock.
        (dict(flows=2, core_mbps=1e-12, duration_s=5, warmup_s=1), "core_mbps"),
        (dict(tcp=dict(cc="newreno", init_rto_s=1e8, max_rto_s=1e8)), "tcp.max_rto_s"),
        (dict(duration_s=1e9), "duration_s"),
        # Found by the fuzz: min_rto above max_rto panicked in a clamp; 1 ps policy ticks never ended.
        (dict(tcp=dict(cc="newreno", min_rto_ms=1e6)), "tcp.min_rto_ms"),
        (dict(buffer_policy=dict(name="schedule", interval_ms=1e-9, steps=[(0.0, 5)])), "buffer_policy.interval_ms"),
        # D8: type holes.
        (dict(flows=True), "flows"),
        (dict(rtts_ms="123"), "rtts_ms"),
        (dict(buffer_policy=dict(name="schedule", steps=[(1.0, 2.7)])), "buffer_policy.steps"),
        (dict(flows=2**63), "flows"),
        (dict(seed=2**64), "seed"),
        (dict(buffer_pkts=1e3), "buffer_pkts"),
    ],
)
def test_out_of_range_and_mistyped_values_are_refused_naming_the_key(fields, key):
    with pytest.raises(ValueError) as e:
        sim.run(**fields)
    assert str(e.value).startswith(f"{key}: ") or str(e.value).startswith(f"{key}."), str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    "fields",
    [
        # D7: bits were credited when a packet finished, so a 65 ms transmission landed in one 10 ms
        # sample (utilization 80) and a short warm-up could give a summary above 1.
        dict(flows=5, core_mbps=0.01, duration_s=20, warmup_s=1, sample_interval_s=0.01),
        dict(flows=5, core_mbps=1, pkt_bytes=65535, duration_s=10, warmup_s=0.3, sample_interval_s=0.05),
        dict(flows=2, core_mbps=0.01, pkt_bytes=65535, duration_s=200, warmup_s=20),
    ],
)
def test_utilization_never_exceeds_one(fields):
    res = sim.run(**fields)
    assert fuzz.check_result(res) == ""
    assert 0.9 < res.metrics()["utilization"] <= 1.0  # saturated links, measured exactly
    assert max(res.timeseries.column("utilization").to_pylist()) <= 1.0


def test_random_configs_never_panic_hang_or_leave_range():
    outcomes = fuzz.fuzz(150, seed=20261122, limit_s=2.0)
    failures = [(o.detail, o.config) for o in outcomes if o.kind == "failure"]
    assert not failures, failures[:3]
    kinds = {o.kind for o in outcomes}
    assert {"refused", "finished"} <= kinds, "the fuzz must exercise both accepted and refused configs"
    fuzzed = {k.split(".")[0] for o in outcomes for k in o.keys}
    assert {"tcp", "topology", "buffer_policy", "core_mbps"} <= fuzzed


def test_the_fuzz_checks_can_fail():
    """check_result flags a result out of range (a NaN summary is caught the same way)."""

    class Fake:
        summary = sim.run(flows=2, duration_s=3, warmup_s=1).summary
        links = summary  # has a utilization column too
        timeseries = summary

        def metrics(self):
            return {"utilization": float("nan")}

    import pyarrow as pa

    Fake.summary = Fake.summary.set_column(
        Fake.summary.schema.get_field_index("utilization"), "utilization", pa.array([1.5])
    )
    Fake.links = Fake.timeseries = Fake.summary
    problem = fuzz.check_result(Fake())
    assert "utilization outside [0, 1]" in problem and "nan" in problem

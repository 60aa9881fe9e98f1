"""Buffer policies (issue 16): static rules resolved per link from its flows, equal to the formulas
of `sim.rules` where both apply; adaptive controllers of the ABS family, with their state
per control interval in the `control` table; per-link policies on the parking lot; and bad settings
refused in one line naming the key. On ABS's Fig. 2/3 link (10 Mb/s, 20 flows) ABS holds the loss
rate at its target where that constraint binds."""

from __future__ import annotations

import math

import pytest

import sim
from analysis import rules

FIG2 = dict(
    flows=20,
    core_mbps=10,
    rtt_ms=90,
    rtt_spread_ms=120,
    pkt_bytes=1000,
    wmax_pkts=100_000,
    buffer_pkts=100,
    duration_s=400,
    warmup_s=200,
)
SHORT = dict(flows=16, core_mbps=16, rtt_ms=60, wmax_pkts=64, duration_s=4, warmup_s=1)


def resolved(**kw) -> float:
    return sim.run(**{**SHORT, **kw}).links.to_pylist()[0]["buffer_pkts"]


def _rule_pkts(rule: str, factor: float, flows: int = 16, core_mbps: float = 16, rtt_ms: float = 60) -> int:
    """The rule's formula on the link's nominal figures (SHORT's), rounded as the engine rounds."""
    if rule == "enachescu":
        rho = min(max(rules.offered_load(flows, 64, rtt_ms, core_mbps), 0.05), 0.95)
        return round(factor * rules.enachescu_pkts(64, rho, 0.9))
    b = rules.bdp_pkts(core_mbps, rtt_ms) if rule == "bdp" else rules.stanford_pkts(core_mbps, rtt_ms, flows)
    return round(factor * b)


@pytest.mark.parametrize(
    "policy, rule, factor",
    [
        ("bdp", "bdp", 1.0),
        ({"name": "stanford", "factor": 2.0}, "stanford", 2.0),
        ("stanford", "stanford", 1.0),
        ("enachescu", "enachescu", 1.0),
    ],
)
def test_static_rules_equal_the_formulas_with_equal_rtts(policy, rule, factor):
    assert resolved(buffer_policy=policy) == _rule_pkts(rule, factor)


@pytest.mark.parametrize("rule, factor, flows", [("stanford", 0.5, 30), ("stanford", 3.0, 120), ("bdp", 1.0, 30)])
def test_rtt_ms_sizes_for_a_nominal_rtt_whatever_the_flows_rtts(rule, factor, flows):
    # Dick's table (issue 31: what `buffer_rule=stanford buffer_scale=k` gave): RTTs spread over
    # 80-120 ms, the rule applied to the nominal 100 ms, not to the flows' harmonic mean.
    dick = dict(flows=flows, core_mbps=45, rtt_ms=100, rtt_spread_ms=40, wmax_pkts=10_000, duration_s=2, warmup_s=0)
    policy = {"name": rule, "factor": factor, "rtt_ms": 100}
    got = sim.run(**dick, buffer_policy=policy).links.to_pylist()[0]["buffer_pkts"]
    assert got == _rule_pkts(rule, factor, flows, 45, 100)
    doubled = sim.run(**dick, buffer_policy={**policy, "rtt_ms": 200}).links.to_pylist()[0]["buffer_pkts"]
    assert doubled == _rule_pkts(rule, factor, flows, 45, 200)
    assert _rule_pkts("stanford", 0.5, 30, 45, 100) == 51 and _rule_pkts("stanford", 3.0, 120, 45, 100) == 154


def test_static_rules_use_the_harmonic_mean_rtt_of_the_links_flows():
    res = sim.run(**{**SHORT, "rtt_spread_ms": 80}, buffer_policy="bdp")
    rtts = [r["rtt_ms"] for r in res.flows.to_pylist()]
    harmonic = len(rtts) / sum(1 / r for r in rtts)
    assert res.links.to_pylist()[0]["buffer_pkts"] == round(rules.bdp_pkts(16, harmonic))
    assert res.links.to_pylist()[0]["buffer_policy"] == "bdp"
    assert res.control.num_rows == 0  # a static rule is resolved once


def test_bscl_is_the_larger_of_eqs_17_and_18():
    def bscl(n: int, mbps: float, p_star: float = 0.02, alpha: float = 0.6) -> float:
        bdp = rules.bdp_pkts(mbps, 60)
        p = 1 - (1 - 1 / n) ** (alpha * n)
        return max((p * bdp - 2 * n * (1 - p)) / (2 - p), 0.87 / math.sqrt(p_star) * n - bdp)

    assert resolved(buffer_policy="bscl") == round(bscl(16, 16))  # eq. 17 binds
    assert resolved(buffer_policy="bscl", core_mbps=2) == round(bscl(16, 2))  # eq. 18 binds
    assert bscl(16, 2) > rules.bdp_pkts(2, 60)


def test_each_parking_lot_link_takes_its_own_policy_or_the_flat_one():
    topo = dict(name="parking_lot", links=[dict(), dict(buffer_policy=dict(name="adt", interval_ms=200, gain=10))])
    res = sim.run(flows=5, buffer_policy="bdp", topology=topo, rtt_ms=100, duration_s=3, warmup_s=1)
    links = res.links.to_pylist()
    assert [link["buffer_policy"] for link in links] == ["bdp", "adt"]
    assert links[0]["buffer_pkts"] == round(rules.bdp_pkts(100, 100))
    ctl = res.control.to_pylist()
    assert {r["link_id"] for r in ctl} == {1} and len(ctl) == 15  # 3 s / 200 ms
    assert [r["time_s"] for r in ctl[:2]] == pytest.approx([0.2, 0.4])


def test_the_control_table_records_abs_state_every_interval():
    ctl = dict(name="abs", interval_ms=200, target_util=0.95, target_loss=0.005)
    res = sim.run(**{**FIG2, "duration_s": 20, "warmup_s": 5}, buffer_policy=ctl)
    rows = res.control.to_pylist()
    assert len(rows) == 100
    for r in rows:
        assert r["b_pkts"] == max(r["b_u_pkts"], r["b_p_pkts"])  # eq. 9 without a memory bound
        assert r["buffer_pkts"] == max(1, round(r["b_pkts"]))
        assert r["u"] == r["input_utilization"] and r["p"] == r["loss_rate"]
    assert any(r["gain_loss"] != 3000 for r in rows)  # trained (eq. 16)


@pytest.mark.parametrize("train", [False, True])
def test_abs_holds_the_loss_target_where_it_binds(train):
    ctl = dict(
        name="abs", interval_ms=200, target_util=0.95, target_loss=0.005, gain_util=3000, gain_loss=3000, train=train
    )
    m = sim.run(**FIG2, buffer_policy=ctl).metrics()
    assert m["utilization"] >= 0.95
    assert m["loss_rate"] == pytest.approx(0.005, abs=0.001), m["loss_rate"]


def test_the_memory_schedule_caps_the_buffer():
    ctl = dict(
        name="abs", interval_ms=200, target_util=0.95, target_loss=0.001, memory_schedule=[(0.0, 80), (200.0, 40)]
    )
    res = sim.run(**{**FIG2, "duration_s": 300}, buffer_policy=ctl)
    ctl_rows = res.control.to_pylist()
    assert max(r["buffer_pkts"] for r in ctl_rows if r["time_s"] < 199.9) == 80  # it binds
    assert max(r["buffer_pkts"] for r in ctl_rows if r["time_s"] > 200.1) <= 40
    ts = res.timeseries.to_pylist()
    assert max(r["buffer_pkts"] for r in ts if 0.2 <= r["time_s"] < 199.9) <= 80


def test_adt_raises_the_buffer_until_utilization_reaches_its_target():
    # u is ABS's input rate over capacity (arrivals, dropped ones included), not departures.
    m = sim.run(
        **{**FIG2, "buffer_pkts": 2}, buffer_policy=dict(name="adt", interval_ms=200, target_util=0.9, gain=50)
    ).metrics()
    input_util = m["bottleneck_arrivals"] * FIG2["pkt_bytes"] * 8 / (FIG2["core_mbps"] * 1e6 * m["measured_s"])
    assert input_util == pytest.approx(0.9, abs=0.02), input_util
    assert m["utilization"] < input_util


def test_adt_measuring_departures_reaches_its_target_in_departures():
    adt = dict(name="adt", interval_ms=200, target_util=0.9, gain=50, util_measure="departure")
    res = sim.run(**{**FIG2, "buffer_pkts": 2}, buffer_policy=adt)
    assert res.metrics()["utilization"] == pytest.approx(0.9, abs=0.02)
    assert all(r["u"] == r["utilization"] for r in res.control.to_pylist())


def test_undamped_utilization_control_diverges_on_a_non_bottleneck_link():
    # Link 1 (100 Mb/s) follows a 10 Mb/s link 0: its utilization stays near 10% < u*, nothing is lost.
    def final_buffer(name: str) -> float:
        topo = dict(
            name="parking_lot",
            routes=[dict(links=[0, 1])],
            links=[dict(rate_mbps=10), dict(rate_mbps=100, buffer_policy=dict(name=name, interval_ms=200))],
        )
        res = sim.run(flows=10, buffer_pkts=50, topology=topo, rtt_ms=100, duration_s=60, warmup_s=10)
        return res.control.to_pylist()[-1]["buffer_pkts"]

    assert final_buffer("abs_u_undamped") > 10_000
    assert final_buffer("abs") < 1_000


@pytest.mark.parametrize(
    "fields, message",
    [
        (dict(buffer_policy="abs9000"), 'buffer_policy: unknown buffer_policy "abs9000"; allowed: fixed, bdp, '),
        (
            dict(buffer_policy=dict(name="abs", target_util=1.5)),
            "buffer_policy.target_util: must be in (0, 1], got 1.5",
        ),
        (dict(buffer_policy=dict(name="abs", target_util=0.0)), "buffer_policy.target_util: must be in (0, 1], got 0"),
        (dict(buffer_policy=dict(name="abs", target_loss=1.0)), "buffer_policy.target_loss: must be in [0, 1), got 1"),
        (dict(buffer_policy=dict(name="abs", gain_loss=-1.0)), "buffer_policy.gain_loss: must be"),
        (dict(buffer_policy=dict(name="adt", gain=-5.0)), "buffer_policy.gain: must be"),
        (
            dict(buffer_policy=dict(name="abs", interval_ms=20)),
            "buffer_policy.interval_ms: must be >= sample_interval_s (100 ms",
        ),
        (
            dict(buffer_policy=dict(name="abs_u_undamped", memory_schedule=[(0.0, -1)])),
            "buffer_policy.memory_schedule.0.pkts: must be",
        ),
        (dict(buffer_policy=dict(name="adt", util_measure="output")), "buffer_policy.util_measure: unknown value"),
        (dict(buffer_policy=dict(name="bscl", target_loss=0.0)), "buffer_policy.target_loss: must be in (0, 1)"),
        (
            dict(topology=dict(name="parking_lot", links=[{}, dict(buffer_policy=dict(name="abs", target_util=2))])),
            "topology.links.1.buffer_policy.target_util: must be in (0, 1]",
        ),
        (dict(controller="abs"), "controller: unknown key; it is buffer_policy now"),
    ],
)
def test_bad_policy_settings_name_the_key(fields, message):
    with pytest.raises(ValueError) as e:
        sim.SimConfig.from_fields(**fields)
    assert str(e.value).startswith(message) and "\n" not in str(e.value), e.value


def test_a_fast_interval_is_allowed_with_a_fast_sample():
    ctl = dict(name="abs", interval_ms=20)
    assert sim.SimConfig(buffer_policy=ctl, sample_interval_s=0.02).buffer_policy.interval_ms == 20

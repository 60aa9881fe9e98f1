"""Queue disciplines and ECN (issue 32): a discipline per link under the hard limit, CE marks echoed
end to end, and what each discipline does to the queue it manages. The disciplines' laws are unit
tested in Rust on scripted arrivals (`sim/src/queue/`); these run them in the network."""

from __future__ import annotations

import pytest

import sim

# 20 Mb/s, 20 NewReno flows, RTTs 60-100 ms, and a deep buffer (400 packets, about 2 BDPs) that
# drop-tail fills. Windows of 64 packets, as when these were written: uncapped, slow start
# overflows the 400-packet hard limit (CoDel: 488 drops there), where FQ-CoDel drops a batch from
# its fattest queue's head and CoDel the arrival, as Linux's do, so that one-queue FQ-CoDel is
# CoDel only below the limit.
DEEP = dict(
    flows=20, core_mbps=20, rtt_ms=80, rtt_spread_ms=40, duration_s=30, warmup_s=10, buffer_pkts=400, wmax_pkts=64
)


def run(queue, ecn: bool = False, **kw) -> sim.SimResult:
    return sim.run(**{**DEEP, **kw}, queue=queue, tcp={"cc": "newreno", "recovery": "newreno", "ecn": ecn})


def bottleneck(res: sim.SimResult) -> dict:
    return res.summary.to_pylist()[0]


def test_aqm_holds_the_delay_that_droptail_lets_grow_with_the_buffer():
    tail = bottleneck(run("droptail"))
    assert tail["bottleneck_early_drops"] == 0 and tail["mean_queue_delay_ms"] > 100
    for q in ("red", "codel", "pie", "fq_codel"):
        got = bottleneck(run(q))
        assert got["mean_queue_delay_ms"] < tail["mean_queue_delay_ms"] / 4, q
        assert got["bottleneck_early_drops"] == got["bottleneck_drops"] > 0, q  # never at the hard limit
        assert got["utilization"] > 0.85, q


@pytest.mark.parametrize(
    "queue",
    [{"name": n, "ecn": True} for n in ("red", "codel", "pie", "fq_codel")] + [{"name": "step"}],
)
def test_a_marking_queue_signals_with_ce_and_the_senders_reduce_without_loss(queue):
    res = run(queue, ecn=True)
    s = bottleneck(res)
    assert s["bottleneck_drops"] == 0 and s["bottleneck_marks"] > 100
    assert s["mark_rate"] == pytest.approx(s["bottleneck_marks"] / s["bottleneck_arrivals"])
    flows = res.flows.to_pylist()
    # At most one reduction a window: fewer reductions than marks, every flow reduced, none retransmitted.
    assert 0 < sum(f["ecn_reductions"] for f in flows) < s["bottleneck_marks"]
    assert all(f["ecn_reductions"] > 0 and f["retransmits"] == 0 for f in flows)
    link = res.links.to_pylist()[0]
    assert (link["queue"], link["marks"], link["early_drops"]) == (queue["name"], s["bottleneck_marks"], 0)


def test_fq_codel_with_one_queue_is_codel_and_with_many_is_fair():
    codel, one = run("codel"), run({"name": "fq_codel", "flows": 1})
    for col in ("utilization", "bottleneck_drops", "mean_queue_pkts", "p99_queue_delay_ms"):
        assert bottleneck(codel)[col] == bottleneck(one)[col], col
    fair = bottleneck(run("fq_codel"))
    assert fair["jain_fairness"] > 0.99 > bottleneck(codel)["jain_fairness"]


def test_ecn_senders_through_droptail_are_droptail():
    plain, capable = run("droptail"), run("droptail", ecn=True)
    for col in ("utilization", "bottleneck_drops", "mean_queue_pkts"):
        assert bottleneck(plain)[col] == bottleneck(capable)[col]


def test_the_time_series_carries_each_disciplines_state():
    red = run("red").timeseries.to_pylist()
    assert all(r["red_avg"] is not None and r["codel_count"] is None for r in red)
    assert max(r["red_avg"] for r in red) > 5  # above min_th: RED at work
    codel = run("codel").timeseries.to_pylist()
    assert all(r["red_avg"] is None and r["codel_count"] is not None for r in codel)
    assert any(r["codel_drop_next_s"] is not None for r in codel)
    assert all(r["codel_drop_next_s"] is None for r in run("droptail").timeseries.to_pylist())
    pie = run("pie").timeseries.to_pylist()
    assert all(r["pie_prob"] is not None and r["red_avg"] is None for r in pie)
    assert max(r["pie_prob"] for r in pie) > 0.01


def test_each_parking_lot_link_takes_its_own_queue_or_the_flat_one():
    topo = dict(name="parking_lot", links=[dict(), dict(queue=dict(name="codel", target_ms=2))])
    res = sim.run(flows=5, queue="red", topology=topo, rtt_ms=100, duration_s=3, warmup_s=1)
    assert [r["queue"] for r in res.links.to_pylist()] == ["red", "codel"]

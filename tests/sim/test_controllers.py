"""Buffer controllers of the ABS family (issue 16, first step): selectable in a config, refused in
one line when out of range, and on a 10 Mb/s link with 20 flows ABS holds the loss rate at its
target where that constraint binds (the paper's Fig. 2/3 set-up, u* = 95%, p* = 0.5%)."""

from __future__ import annotations

import pytest

import sim

FIG2 = dict(flows=20, core_mbps=10, rtt_ms=90, rtt_spread_ms=120, pkt_bytes=1000, wmax_pkts=100_000,
            buffer_pkts=100, duration_s=400, warmup_s=200)


@pytest.mark.parametrize("train", [False, True])
def test_abs_holds_the_loss_target_where_it_binds(train):
    ctl = dict(name="abs", interval_ms=200, target_util=0.95, target_loss=0.005, gain_util=3000, gain_loss=3000,
               train=train)
    m = sim.run(**FIG2, controller=ctl).metrics()
    assert m["utilization"] >= 0.95
    assert m["loss_rate"] == pytest.approx(0.005, abs=0.001), m["loss_rate"]


def test_the_memory_schedule_caps_the_buffer():
    ctl = dict(name="abs", interval_ms=200, target_util=0.95, target_loss=0.001, memory_schedule=[(0.0, 80), (200.0, 40)])
    ts = sim.run(**{**FIG2, "duration_s": 300}, controller=ctl).timeseries.to_pylist()
    # From the first control step (0.2 s) on; the run starts with buffer_pkts.
    assert max(r["buffer_pkts"] for r in ts if 0.2 <= r["time_s"] < 199.9) <= 80
    assert max(r["buffer_pkts"] for r in ts if r["time_s"] > 200.5) <= 40


def test_adt_raises_the_buffer_until_utilization_reaches_its_target():
    # u is ABS's input rate over capacity (arrivals, dropped ones included), not departures.
    m = sim.run(**{**FIG2, "buffer_pkts": 2}, controller=dict(name="adt", interval_ms=200, target_util=0.9,
                                                               gain=50)).metrics()
    input_util = m["bottleneck_arrivals"] * FIG2["pkt_bytes"] * 8 / (FIG2["core_mbps"] * 1e6 * m["measured_s"])
    assert input_util == pytest.approx(0.9, abs=0.02), input_util
    assert m["utilization"] < input_util


@pytest.mark.parametrize("ctl, message", [
    (dict(name="abs", target_util=1.5), "controller.target_util: must be"),
    (dict(name="abs", gain_loss=-1.0), "controller.gain_loss: must be"),
    (dict(name="adt", gain=-5.0), "controller.gain: must be"),
    (dict(name="abs_u_undamped", memory_schedule=[(0.0, -1)]), "controller.memory_schedule.0.pkts: must be"),
])
def test_bad_controller_settings_name_the_key(ctl, message):
    with pytest.raises(ValueError) as e:
        sim.SimConfig(controller=ctl)
    assert str(e.value).startswith(message) and "\n" not in str(e.value), e.value

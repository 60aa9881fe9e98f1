"""The records an external simulator's scenario writes, and their translation into the engine's
tables: one line per record, a tag then "key value" pairs (see ns2_dumbbell.tcl's header):

    sample  time_s T departures D arrivals A drops X qsum Q acked K cwnd_sum C started S ca F
    warm | end  departures D arrivals A drops X qsum Q short_started S short_done F
                [marks M early_drops E sojourn_sum J sojourn_n N]
    flow    id I at warm|end acked K rexmit_pkts R timeouts T cwnd_cuts C sent_pkts P [ecn_cuts W]
    held    pkts H

Counters are cumulative since time 0 and count packets of the bottleneck (D, A, X; Q is the
integral of the waiting packets in pkt*s; M the packets marked CE, E the drops that were not at the
limit, J the sum of the sojourn times in s of N dequeued packets) or of a flow (K: packets
acknowledged or received; W: ECN-Echo window reductions).
A key a simulator cannot measure is left out and becomes NULL. Shared by the ns2 and ns3
backends, so that both are read, and mapped onto the engine's schema, the same way."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import sim
from sim import SimConfig
from sweeps.backends.base import BackendResult, detail_table


def drawn_flows(cfg: SimConfig) -> sim.SimResult:
    """An engine run that just covers the start window: its flows and links tables give the RTTs
    and start times drawn for cfg's seed (they depend on the seed alone) and the static columns."""
    short_s = max(cfg.start_window_s * 1.01, 1e-3)
    return sim.run(
        dataclasses.replace(
            cfg, duration_s=short_s, warmup_s=0.0, sample_interval_s=min(cfg.sample_interval_s, short_s)
        )
    )


def parse_records(text: str) -> dict[str, Any]:
    """The records: {"sample": [...], "warm": {...}, "end": {...}, "flow": {("warm"|"end",
    id): {...}}, "held": {...}}. Numbers are floats; a line that does not parse is an error."""
    out: dict[str, Any] = {"sample": [], "flow": {}}
    for n, line in enumerate(text.splitlines(), 1):
        tag, *kv = line.split()
        if len(kv) % 2:
            raise RuntimeError(f"records line {n} is not 'tag key value ...': {line!r}")
        rec = {k: (v if k == "at" else float(v)) for k, v in zip(kv[::2], kv[1::2])}
        if tag == "sample":
            out["sample"].append(rec)
        elif tag == "flow":
            out["flow"][(rec["at"], int(rec["id"]))] = rec
        else:
            out[tag] = rec
    for tag in ("warm", "end", "held"):
        if tag not in out:
            raise RuntimeError(f"the simulator wrote no {tag!r} record (did the run end early?)")
    return out


def to_result(cfg: SimConfig, drawn: sim.SimResult, rec: dict[str, Any], wall_s: float) -> BackendResult:
    window_s = cfg.duration_s - cfg.warmup_s
    pkt_bits = cfg.pkt_bytes * 8.0
    warm, end = rec["warm"], rec["end"]
    d = {k: end[k] - warm[k] for k in ("departures", "arrivals", "drops", "qsum", "short_started", "short_done")}
    flows = _flows(cfg, drawn, rec, window_s, pkt_bits)
    goodputs = flows["goodput_mbps"]
    util = d["departures"] * pkt_bits / (cfg.core_mbps * 1e6 * window_s)
    loss = d["drops"] / d["arrivals"] if d["arrivals"] else 0.0
    cwnd = [s["cwnd_sum"] / s["started"] for s in rec["sample"] if s["time_s"] > cfg.warmup_s and s["started"]]
    metrics = {
        "utilization": util,
        "goodput_mbps": sum(goodputs) + 0.0,
        "loss_rate": loss,
        "mean_queue_pkts": d["qsum"] / window_s,
        "jain_fairness": _jain(goodputs),
        "timeouts": _sum(flows["timeouts"]),
        "fast_retransmits": _sum(flows["fast_retransmits"]),
        "retransmits": _sum(flows["retransmits"]),
        "mean_cwnd_pkts": sum(cwnd) / len(cwnd) if cwnd else None,
        "mean_rtt_ms": (sum(flows["rtt_ms"]) / len(flows["rtt_ms"])) if flows["rtt_ms"] else None,
        "short_flows": int(d["short_started"]),
        "short_flows_done": int(d["short_done"]),
        "bottleneck_link": 0,
        "buffer_pkts": drawn.metrics()["buffer_pkts"],  # what the engine resolves: what the backend ran
        "buffer_bytes": drawn.metrics()["buffer_bytes"],
        "bottleneck_arrivals": int(d["arrivals"]),
        "bottleneck_drops": int(d["drops"]),
        "bottleneck_pkts": int(d["departures"]),
        "measured_s": window_s,
        "wall_s": wall_s,
        "pkts_per_s": end["departures"] / wall_s if wall_s > 0 else None,
    }
    if not (cfg.access_mbps or 0) > 0:
        metrics["access_loss_rate"] = 0.0  # no access links, as the engine reports it
    aqm = _aqm_metrics(warm, end, d["arrivals"])
    metrics |= {"bottleneck_" + k if k in ("marks", "early_drops") else k: v for k, v in aqm.items()}
    link = {
        **{
            k: v
            for k, v in drawn.links.slice(0, 1).to_pydict().items()
            if k in ("link_id", "name", "rate_mbps", "delay_ms", "buffer_pkts", "buffer_policy", "queue", "flows")
        },
        "utilization": [util],
        "loss_rate": [loss],
        "goodput_mbps": [metrics["goodput_mbps"]],
        "mean_queue_pkts": [metrics["mean_queue_pkts"]],
        "arrivals": [int(d["arrivals"])],
        "drops": [int(d["drops"])],
        "departures": [int(d["departures"])],
        "arrivals_total": [int(end["arrivals"])],
        "drops_total": [int(end["drops"])],
        "departures_total": [int(end["departures"])],
        "held_at_end": [int(rec["held"]["pkts"])],
        **{k: [v] for k, v in aqm.items()},
    }
    bulk = {
        "class": ["bulk"],
        "flows": [cfg.flows],
        "goodput_mbps": [metrics["goodput_mbps"]],
        "offered_mbps": [_scaled(_sum(flows.pop("_sent_in_window")), pkt_bits / window_s / 1e6)],
    }
    details = {
        "timeseries": detail_table("timeseries", _timeseries(cfg, rec["sample"], pkt_bits)),
        "flows": detail_table("flows", flows),
        "links": detail_table("links", link),
        "classes": detail_table("classes", bulk),
        "control": detail_table("control", {}),
    }
    return BackendResult(metrics, details)


def _aqm_metrics(warm: dict[str, float], end: dict[str, float], arrivals: float) -> dict[str, Any]:
    """Marks, early drops and the mean sojourn over the window, where the simulator reports them."""
    if "marks" not in end:
        return {}
    marks, n = end["marks"] - warm["marks"], end["sojourn_n"] - warm["sojourn_n"]
    return {
        "marks": int(marks),
        "early_drops": int(end["early_drops"] - warm["early_drops"]),
        "mark_rate": marks / arrivals if arrivals else 0.0,
        "mean_queue_delay_ms": (end["sojourn_sum"] - warm["sojourn_sum"]) / n * 1e3 if n else None,
    }


def _flows(
    cfg: SimConfig, drawn: sim.SimResult, rec: dict[str, Any], window_s: float, pkt_bits: float
) -> dict[str, list]:
    static = drawn.flows.select(["flow_id", "route_id", "tcp_group", "link_ids", "rtt_ms", "start_s"]).to_pydict()
    cols: dict[str, list] = {
        **static,
        "goodput_mbps": [],
        "retransmits": [],
        "timeouts": [],
        "fast_retransmits": [],
        "sent_pkts": [],
        "_sent_in_window": [],
    }
    for i in range(len(static["flow_id"])):
        w, e = rec["flow"][("warm", i)], rec["flow"][("end", i)]
        timeouts = _delta(w, e, "timeouts")
        cuts = _delta(w, e, "cwnd_cuts")
        cols["goodput_mbps"].append(_delta(w, e, "acked") * pkt_bits / window_s / 1e6)
        cols["retransmits"].append(_delta(w, e, "rexmit_pkts"))
        cols["timeouts"].append(timeouts)
        cols["fast_retransmits"].append(None if cuts is None or timeouts is None else max(0, cuts - timeouts))
        cols["sent_pkts"].append(None if "sent_pkts" not in e else int(e["sent_pkts"]))
        if "ecn_cuts" in e:
            cols.setdefault("ecn_reductions", []).append(_delta(w, e, "ecn_cuts"))
        cols["_sent_in_window"].append(_delta(w, e, "sent_pkts"))
    return cols


def _delta(warm: dict[str, float], end: dict[str, float], key: str) -> int | None:
    """A flow counter over the measured window; None if the simulator does not report it."""
    return int(end[key] - warm[key]) if key in end and key in warm else None


def _sum(xs: list[Any]) -> Any:
    """The sum of a measured counter; None if any value is unmeasured."""
    return None if any(x is None for x in xs) else sum(xs)


def _timeseries(cfg: SimConfig, samples: list[dict[str, float]], pkt_bits: float) -> dict[str, list]:
    cols: dict[str, list] = {
        k: []
        for k in (
            "time_s",
            "link_id",
            "utilization",
            "goodput_mbps",
            "arrivals",
            "drops",
            "queue_mean_pkts",
            "buffer_pkts",
            "mean_cwnd_pkts",
            "active_flows",
            "ca_flows",
        )
    }
    prev = {"time_s": 0.0, "departures": 0.0, "arrivals": 0.0, "drops": 0.0, "qsum": 0.0, "acked": 0.0}
    for s in samples:
        dt = s["time_s"] - prev["time_s"]
        if dt <= 0:
            continue
        cols["time_s"].append(s["time_s"])
        cols["link_id"].append(0)
        cols["utilization"].append((s["departures"] - prev["departures"]) * pkt_bits / (cfg.core_mbps * 1e6 * dt))
        cols["goodput_mbps"].append((s["acked"] - prev["acked"]) * pkt_bits / dt / 1e6)
        cols["arrivals"].append(int(s["arrivals"] - prev["arrivals"]))
        cols["drops"].append(int(s["drops"] - prev["drops"]))
        cols["queue_mean_pkts"].append((s["qsum"] - prev["qsum"]) / dt)
        cols["buffer_pkts"].append(float(cfg.buffer_pkts))
        cols["mean_cwnd_pkts"].append(s["cwnd_sum"] / s["started"] if s["started"] else None)
        cols["active_flows"].append(int(s["started"]))
        cols["ca_flows"].append(int(s["ca"]))
        prev = s
    return cols


def _scaled(x: float | None, k: float) -> float | None:
    return None if x is None else x * k


def _jain(xs: list[float]) -> float | None:
    total, squares = sum(xs), sum(x * x for x in xs)
    return total * total / (len(xs) * squares) if xs and squares > 0 and math.isfinite(squares) else None

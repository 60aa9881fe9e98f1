"""What a kernel run measured (`kernel_run.py`), as the records `records.to_result` maps onto the
engine's tables (as ns-2's and ns-3's are), and the emulation's own error: the delay line's
lateness, the rate the bottleneck gave, and whether the run's timing is suspect (issue 71;
docs/kernel.md, "Timing")."""

from __future__ import annotations

from typing import Any

from sim import SimConfig
from sweeps.backends.kernel_testbed import ETHERNET_BYTES
from sweeps.backends.kernel_traffic import KEPT

HEADERS = 52
"""IP, TCP and the timestamp option: a packet of pkt_bytes carries pkt_bytes - 52 of data."""
LATENESS_SHARE = 0.1
RATE_TOLERANCE = 0.01
"""A run's timing is suspect when its delay line's lateness p99 is over this share of a bottleneck
packet's time, or its bottleneck's rate off the configured one by more than this (issue 71)."""
COUNTERS = ("packets", "drops", "backlog_pkts", "bytes")


def with_integral(queue: list[dict[str, float]]) -> list[dict[str, float]]:
    """The counters with `qsum` (the backlog's integral, packet-seconds, trapezoids) and
    `arrivals` (sent + dropped + waiting) added."""
    qsum, prev, out = 0.0, None, []
    for q in queue:
        if prev is not None:
            qsum += (q["time_s"] - prev["time_s"]) * (q["backlog_pkts"] + prev["backlog_pkts"]) / 2
        out.append({**q, "qsum": qsum, "arrivals": q["packets"] + q["drops"] + q["backlog_pkts"]})
        prev = q
    return out


def at(cum: list[dict[str, float]], t: float) -> dict[str, float]:
    """The cumulative counters at time t, linear between the two reads around it (a read every
    10 ms: the nearest one would miss up to 10 ms of a measured window)."""
    after = next((i for i, q in enumerate(cum) if q["time_s"] >= t), len(cum) - 1)
    if after == 0 or cum[after]["time_s"] < t:
        return cum[after]
    a, b = cum[after - 1], cum[after]
    w = (t - a["time_s"]) / (b["time_s"] - a["time_s"])
    return {k: a[k] + w * (b[k] - a[k]) for k in b}


def records(cfg: SimConfig, queue: list[dict], samples: list[list], n_flows: int) -> dict[str, Any]:
    """The measurements as `records.parse_records` returns a simulator's (see records.py)."""
    mss = cfg.pkt_bytes - HEADERS
    cum = with_integral(queue)
    flows = [(t, {int(k): dict(zip(KEPT, v)) for k, v in got.items() if k != "error"}) for t, got in samples]

    def flow_at(t: float) -> dict[int, dict[str, float]]:
        before = [f for ft, f in flows if ft <= t + 1e-6]
        return before[-1] if before else {}

    rec: dict[str, Any] = {"sample": [], "flow": {}}
    k = 1
    while k * cfg.sample_interval_s <= cfg.duration_s + 1e-9:
        t = k * cfg.sample_interval_s
        q, f = counters(at(cum, t)), flow_at(t)
        rec["sample"].append(
            {
                "time_s": t,
                **{x: q[x] for x in ("departures", "arrivals", "drops", "qsum")},
                "acked": sum(v["bytes_acked"] for v in f.values()) / mss,
                "cwnd_sum": sum(v["snd_cwnd"] for v in f.values()),
                "started": sum(1 for v in f.values() if v["bytes_acked"] > 0),
                "ca": sum(1 for v in f.values() if v["ca_state"] == 0),
            }
        )
        k += 1
    rec["warm"], rec["end"] = counters(at(cum, cfg.warmup_s)), counters(at(cum, cfg.duration_s))
    for tag, f in (("warm", flow_at(cfg.warmup_s)), ("end", flows[-1][1] if flows else {})):
        for i in range(n_flows):
            v = f.get(i, {"bytes_acked": 0, "total_retrans": 0, "data_segs_out": 0, "total_rto": 0})
            rec["flow"][(tag, i)] = {
                "acked": v["bytes_acked"] / mss,
                "rexmit_pkts": v["total_retrans"],
                "sent_pkts": v.get("data_segs_out", 0),
            }
            if v.get("total_rto") is not None:  # Linux 6.7 on: its RTOs, SYN's and repeats included
                rec["flow"][(tag, i)]["timeouts"] = v["total_rto"]
    rec["held"] = {"pkts": at(cum, cfg.duration_s)["backlog_pkts"]}
    return rec


def counters(q: dict[str, float]) -> dict[str, float]:
    """A read of the pfifo as the records' bottleneck counters."""
    return {
        "departures": q["packets"],
        "arrivals": q["arrivals"],
        "drops": q["drops"],
        "qsum": q["qsum"],
        "short_started": 0,
        "short_done": 0,
        "marks": 0,
        "early_drops": 0,
        "sojourn_sum": q["qsum"],  # Little's law: the waiting of the packets that left
        "sojourn_n": q["packets"],
    }


def busy_rate(cfg: SimConfig, queue: list[dict]) -> float | None:
    """The rate the bottleneck gave over the configured one, across the reads whose backlog alone
    lasted to the next read: the link was busy throughout (a shallow queue can drain and refill
    between two reads, and its idle spell is no error). A stretch of such reads counts its
    packets to within one, so the rate is judged (not None) only when the stretches are at most
    half of RATE_TOLERANCE of the packets counted."""
    pkt_s = cfg.pkt_bytes * 8 / (cfg.core_mbps * 1e6)
    bits = secs = 0.0
    stretches, was_busy = 0, False
    for a, b in zip(queue, queue[1:]):
        busy = b["time_s"] > a["time_s"] and a["backlog_pkts"] * pkt_s >= b["time_s"] - a["time_s"]
        if busy:
            ip_bytes = (b["bytes"] - a["bytes"]) - ETHERNET_BYTES * (b["packets"] - a["packets"])
            bits, secs, stretches = bits + 8 * ip_bytes, secs + b["time_s"] - a["time_s"], stretches + (not was_busy)
        was_busy = busy
    if secs == 0 or stretches > RATE_TOLERANCE / 2 * secs / pkt_s:
        return None
    return bits / secs / (cfg.core_mbps * 1e6)


def emulation_metrics(cfg: SimConfig, queue: list[dict], line: dict[str, Any]) -> dict[str, Any]:
    """The delay line's lateness, the rate the bottleneck gave while busy (`busy_rate`), the
    queue's 99th percentile, and why the timing is suspect, if it is."""
    ratio = busy_rate(cfg, queue)
    p99 = line["lateness_p99_ns"] / 1e3
    pkt_us = cfg.pkt_bytes * 8 / cfg.core_mbps
    why = []
    if p99 > LATENESS_SHARE * pkt_us:
        why.append(
            f"delay line lateness p99 {p99:.0f} us > {LATENESS_SHARE * pkt_us:.0f} us (a tenth of a packet's time)"
        )
    if ratio is not None and abs(ratio - 1) > RATE_TOLERANCE:
        why.append(f"the bottleneck gave {ratio:.3f} x its rate")
    window = [q["backlog_pkts"] for q in queue if cfg.warmup_s <= q["time_s"] <= cfg.duration_s]
    return {
        "emulation_lateness_p50_us": line["lateness_p50_ns"] / 1e3,
        "emulation_lateness_p99_us": p99,
        "emulation_lateness_max_us": line["lateness_max_ns"] / 1e3,
        "emulation_rate_ratio": ratio,
        "timing_suspect": "; ".join(why) or None,
        "p99_queue_pkts": float(sorted(window)[int(0.99 * (len(window) - 1))]) if window else None,
    }

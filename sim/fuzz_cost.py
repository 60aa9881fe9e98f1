"""Resource-hostile fuzz (`python -m sim.fuzz --hostile`, issue 36): huge windows and send
buffers, huge offered loads, tiny packets on fast links, a million flows, long runs, big traces.

Each config is first estimated (`sim.estimate`) and checked against FUZZ_LIMITS, sized so that
a fuzz of hundreds of configs takes minutes: it must then be refused in one line naming a key
(by the validator or a limit), or run, in a forked child so that an abort (a failed allocation
ends the process) is seen, within 3x of its estimate in wall time (plus SLACK_S for the fork
and the tables) and in peak RSS, and not below a third of it either (issue 56: an estimate far above the run
refuses good runs). A child still running at that bound is a hang; a child that dies, an abort.
docs/engine.md, "Cost estimate".
"""

from __future__ import annotations

import multiprocessing as mp
import random
import time
from typing import Any

import sim
from sim.cost import BASE_RSS_MB, check
from sim.fuzz_base import base_config, check_result, names_its_key

FUZZ_LIMITS = sim.Limits(max_events=3e7, max_memory_gb=4.0)
"""About 10 s of a core and 4 GB: what a fuzzed config may cost before it is refused."""
SLACK_S = 2.0
"""Wall time a finished run may take beyond 3x its estimate: the fork, the tables, a busy core."""


MIX_GROUPS = [p["name"] for p in sim.schema.unions()["tcp"]["presets"] if p["name"] not in ("paced", "poisson")]
"""Every sender preset but the two releases of NewReno: every window law, each with its recovery."""


def _extreme(cfg: dict[str, Any], rng: random.Random, kind: str) -> str:
    """Issue 56's extremes, where the estimate had been far off: a million flows at 100 Gb/s,
    open-loop load far above the link, thousands of paced BBR flows, the longest parking lot
    (and one past the limit), a mix of every law; and issue 73's: 100,000 and a million BBR,
    paced or CUBIC (behind FQ-CoDel) flows at 100 Gb/s."""
    if kind == "mega":
        cfg.update(flows=rng.choice([100_000, 1_000_000]), core_mbps=rng.choice([1e4, 1e5]), wmax_pkts=100_000)
        return "flows"
    if kind == "flood":
        key = rng.choice(["cbr_mbps", "poisson_mbps"])
        cfg[key] = rng.choice([1e3, 1e4, 1e5, 1e6])
        return key
    if kind == "bbr_many":
        cfg.update(tcp="bbr", flows=rng.choice([1000, 2000, 5000]), core_mbps=rng.choice([10.0, 100.0, 1000.0]))
        return "flows"
    if kind == "paced_mega":  # issue 73: paced senders at scale
        tcp = rng.choice(["bbr", "paced", "cubic"])
        cfg.update(tcp=tcp, flows=rng.choice([100_000, 1_000_000]), core_mbps=1e5, wmax_pkts=100_000)
        if tcp == "cubic":
            cfg["queue"] = "fq_codel"
        return "flows"
    if kind == "lot":
        n = rng.choice([16, 250, 1000])
        links = [{"delay_ms": 0.1} for _ in range(n)]
        routes = [{"links": list(range(n)), "flows": 2}] + [{"links": [i], "flows": 1} for i in range(n)]
        cfg["topology"] = {"name": "parking_lot", "links": links, "routes": routes}
        return "topology.links"
    each = rng.choice([1, 10])
    cfg.update(flows=each * len(MIX_GROUPS), tcp={"cc": "newreno", "ecn": True})  # ECN: for DCTCP's group
    cfg["tcp_mix"] = "+".join(f"{name}:{each}" for name in MIX_GROUPS)
    return "tcp_mix"


def _hostile(cfg: dict[str, Any], rng: random.Random) -> str:
    """Makes cfg hostile in one way; returns the key it is about."""
    extremes = ["mega", "flood", "bbr_many", "paced_mega", "lot", "mix"]
    kind = rng.choice(["window", "load", "udp", "tiny_pkts", "flows", "long", "short", "trace", "samples", *extremes])
    if kind in extremes:
        return _extreme(cfg, rng, kind)
    if kind == "window":
        cfg["wmax_pkts"] = rng.choice([2**20, 2**30])
        cfg["tcp"] = {"cc": rng.choice(["newreno", "cubic_2622", "bbr"]), "init_cwnd_pkts": rng.choice([1e4, 1e6, 1e9])}
        if rng.random() < 0.5:
            cfg["tcp"]["sndbuf_pkts"] = rng.choice([2**16, 2**20, 2**30])
        return "tcp.init_cwnd_pkts"
    if kind == "load":
        key = rng.choice(["poisson_mbps", "cbr_mbps"])
        cfg[key] = rng.choice([1e2, 1e4, 1e6, 1e7])
        return key
    if kind == "udp":
        flows, rate = rng.choice([10, 1000, 10_000]), rng.choice([1.0, 1e2, 1e4])
        cfg["traffic"] = [{"kind": "udp", "flows": flows, "rate_mbps": rate}]
        return "traffic.0.rate_mbps"
    if kind == "tiny_pkts":
        cfg.update(pkt_bytes=41, core_mbps=rng.choice([1e3, 1e4, 1e5]), wmax_pkts=rng.choice([64, 10_000]))
        return "pkt_bytes"
    if kind == "flows":
        cfg["flows"] = rng.choice([10_000, 100_000, 1_000_000])
        return "flows"
    if kind == "long":
        cfg["duration_s"] = rng.choice([100.0, 1e4, 1e6])
        return "duration_s"
    if kind == "short":
        cfg.update(short_mbps=rng.choice([10.0, 1e4]), short_flow_pkts=rng.choice([1, 14, 10**6]))
        return "short_mbps"
    if kind == "trace":
        cfg.update(trace_max_events=rng.choice([10**6, 10**8]), trace_start_s=0.0, core_mbps=rng.choice([10.0, 1e3]))
        return "trace_max_events"
    cfg["sample_interval_s"] = rng.choice([1e-6, 1e-4])
    return "sample_interval_s"


def vm_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status (VmRSS, VmHWM), in MB. VmHWM is
    the process image's own peak: unlike ru_maxrss, it does not carry a parent's peak across
    fork and exec."""
    with open("/proc/self/status") as f:
        line = next(ln for ln in f if ln.startswith(field + ":"))
    return int(line.split()[1]) / 1024


def _child(cfg: dict[str, Any], conn: Any) -> None:
    """Runs cfg; sends (wall s, peak MB as a process of its own, problem). A forked child starts
    with its parent's pages, so its peak is counted as the interpreter's (BASE_RSS_MB) plus what
    it grew by."""
    start_mb = vm_mb("VmRSS")
    t = time.perf_counter()
    res = sim.run(sim.SimConfig.from_fields(**cfg), limits=sim.Limits(max_events=float("inf"), max_memory_gb=1e9))
    problem = check_result(res)
    conn.send((time.perf_counter() - t, BASE_RSS_MB + vm_mb("VmHWM") - start_mb, problem))


def run_one(cfg: dict[str, Any], limits: sim.Limits = FUZZ_LIMITS, slack_s: float = SLACK_S) -> tuple[str, str]:
    """(kind, detail): kind is refused, finished or failure."""
    try:
        est = check(sim.SimConfig.from_fields(**cfg), limits)
    except ValueError as e:
        msg = str(e)
        return ("refused", msg) if names_its_key(msg) else ("failure", f"unnamed refusal: {msg!r}")
    bound_s = 3 * est.wall_s + slack_s
    parent, child = mp.get_context("fork").Pipe(duplex=False)
    proc = mp.get_context("fork").Process(target=_child, args=(cfg, child))
    proc.start()
    child.close()
    if not parent.poll(bound_s):
        proc.kill()
        proc.join()
        return "failure", f"hang: over {bound_s:.1f} s ({est})"
    try:
        wall, rss_mb, problem = parent.recv()
    except EOFError:
        proc.join()
        return "failure", f"abort: exit code {proc.exitcode} ({est})"
    proc.join()
    if problem:
        return "failure", problem
    if rss_mb > 3 * est.peak_memory_mb:
        return "failure", f"peak RSS {rss_mb:.0f} MB over 3x the estimate ({est})"
    # Issue 56: an estimate far above the run refuses good runs; within 3x both ways.
    if est.wall_s > 3 * wall + slack_s:
        return "failure", f"overestimated: {wall:.2f} s, under a third of the estimate ({est})"
    if est.peak_memory_mb > 3 * rss_mb:
        return "failure", f"overestimated: peak RSS {rss_mb:.0f} MB, under a third of the estimate ({est})"
    return "finished", f"{wall:.2f} s of {est.wall_s:.2f} estimated, {rss_mb:.0f} of {est.peak_memory_mb:.0f} MB"


def fuzz(
    n: int, seed: int, limits: sim.Limits = FUZZ_LIMITS, slack_s: float = SLACK_S
) -> list[tuple[dict[str, Any], str, str, str]]:
    """n hostile configs: (config, keys, kind, detail) each; `slack_s` as SLACK_S."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        cfg = base_config(rng)
        keys = [_hostile(cfg, rng) for _ in range(rng.choice([1, 1, 2]))]
        kind, detail = run_one(cfg, limits, slack_s)
        out.append((cfg, ",".join(keys), kind, detail))
    return out

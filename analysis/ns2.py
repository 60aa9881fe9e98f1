"""Cross-checking the engine against ns-2, the simulator the papers used: the same dumbbell run in
ns-2 2.35 (Debian's `ns2` package puts `ns` on PATH). ns-2 is not a dependency of buffersweep; a
maintainer runs `python -m analysis crosscheck NAME` where ns-2 is installed, and the numbers are
kept in ns2_reference.json beside this file, which the reports read."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import sim
from analysis.search import Search, bisect
from sim import SimConfig
from sim.result import config_row

TCL = Path(__file__).with_name("ns2_dumbbell.tcl")
REFERENCE = Path(__file__).with_name("ns2_reference.json")
LINUX_MODULES = ("cubic", "highspeed", "scalable", "bic", "htcp", "westwood", "lp")
# Our tcp preset -> ns-2's (Agent/TCP/<agent>, TCP-Linux's select_ca module, receiver Agent/<sink>).
# The presets of the Linux laws (with the `linux` recovery, which mirrors TCP-Linux's) run against
# ns-2's TCP-Linux (the ABS paper's simulator) with the module of the same name and a SACK receiver;
# `sack` (RFC 6675 with NewReno's law) against ns-2's own Sack1. A tcp config must be its preset's
# (cc, recovery and release): another recovery has no ns-2 agent to compare with.
AGENTS: dict[str, tuple[str, str, str]] = {
    "reno": ("Reno", "", "TCPSink"), "newreno": ("Newreno", "", "TCPSink"), "sack": ("Sack1", "", "TCPSink/Sack1"),
    **{m: ("Linux", m, "TCPSink/Sack1") for m in LINUX_MODULES}}
# Config columns (see sim.result.config_row) the Tcl script maps to ns-2, by the script's argument
# name; every other column must keep its default, or its preset's (the script has no open-loop
# sources, controllers, delayed ACKs, variant mixes or other topologies).
MAPPED = {"tcp": "agent", "flows": "flows", "buffer_pkts": "buffer_pkts", "wmax_pkts": "wmax_pkts",
          "core_mbps": "core_mbps", "rtt_ms": "rtt_ms", "rtt_spread_ms": "rtt_spread_ms", "pkt_bytes": "pkt_bytes",
          "duration_s": "duration_s", "warmup_s": "warmup_s", "seed": "seed", "start_window_s": "start_window_s",
          "tcp_init_cwnd_pkts": "init_cwnd_pkts", "tcp_min_rto_ms": "min_rto_ms", "tcp_max_rto_s": "max_rto_s",
          "tcp_init_rto_s": "init_rto_s", "tcp_tick_ms": "tick_ms", "tcp_limited_transmit": "limited_transmit",
          "tcp_max_burst_pkts": "max_burst_pkts", "short_mbps": "short_mbps", "short_flow_pkts": "short_flow_pkts",
          "access_mbps": "access_mbps", "access_buffer_pkts": "access_buffer_pkts"}
IGNORED = ("engine_version", "sample_interval_s", "trace_max_events", "trace_start_s")  # outputs only


def available() -> bool:
    return shutil.which("ns") is not None


def ns2_args(cfg: SimConfig) -> list[str]:
    """The Tcl script's arguments for cfg; ValueError naming the first field ns-2 cannot mirror."""
    row = config_row(cfg)
    if row["tcp"] not in AGENTS:
        raise ValueError(f"tcp: the ns-2 cross-check supports {', '.join(AGENTS)}, got {row['tcp']!r}")
    default = config_row(SimConfig(tcp=row["tcp"]))  # a law's parameters keep its preset's values
    for key, value in row.items():
        if key not in MAPPED and key not in IGNORED and value != default[key]:
            raise ValueError(f"{key}: the ns-2 cross-check supports only the default ({default[key]!r})")
    if cfg.seed < 1:
        raise ValueError(f"seed: the ns-2 cross-check needs seed >= 1 (ns-2 seeds 0 from the clock), got {cfg.seed}")
    if cfg.short_mbps > 0 and cfg.short_flow_pkts < 2:
        # The script sends n packets with `advanceby n - 1`; `advanceby 0` does not reopen a reused agent.
        raise ValueError(f"short_flow_pkts: the ns-2 cross-check needs >= 2, got {cfg.short_flow_pkts}")
    agent, ca, sink = AGENTS[row["tcp"]]
    if agent == "Linux" and row["tcp_tick_ms"] != 1:
        raise ValueError(f"tcp.tick_ms: ns-2's TCP-Linux times RTTs in 1 ms jiffies; set tcp.tick_ms=1, "
                         f"got {row['tcp_tick_ms']:g}")
    args = ["agent", agent, "ca", ca or "none", "sink", sink, "timestamps", str(int(ca == "lp"))]
    for key, name in list(MAPPED.items())[1:]:
        value = row[key]
        if value is None:
            value = 0  # access_mbps: no access link
        if isinstance(value, bool) or (isinstance(value, float) and value.is_integer()):
            value = int(value)  # Tcl reads ns-2's integer variables (singledup_, windowInit_) strictly
        args += [name, str(value)]
    return args + _drawn_flows(cfg)


def _drawn_flows(cfg: SimConfig) -> list[str]:
    """The long flows' RTTs and start times as our engine draws them for cfg's seed, for the
    script to use instead of drawing its own: the comparison is then paired, flow by flow. At
    8-32 packets in ABS Fig. 1's set-up one run's utilization varies by up to 0.1 with the ten
    RTTs drawn (measured, seeds 1-5), more than the differences the cross-check looks for.
    Read from a run that just covers the start window (the draws depend on the seed alone)."""
    short = dataclasses.replace(cfg, duration_s=max(cfg.start_window_s * 1.01, 1e-3), warmup_s=0.0)
    flows = sim.run(short).flows
    return ["flow_rtts_ms", " ".join(repr(x) for x in flows["rtt_ms"].to_pylist()),
            "flow_starts_s", " ".join(repr(x) for x in flows["start_s"].to_pylist())]


def run(cfg: SimConfig) -> dict[str, float]:
    """Bottleneck utilization and loss rate over [warmup_s, duration_s] of one ns-2 run."""
    res = subprocess.run(["ns", str(TCL), *ns2_args(cfg)], capture_output=True, text=True, check=True)
    out = res.stderr  # the script's result line; stdout carries TCP-LP's debug lines
    m = re.search(r"^utilization ([0-9.eE+-]+) drops \d+ loss_rate ([0-9.eE+-]+)", out, re.MULTILINE)
    if not m:
        raise RuntimeError(f"ns-2 printed no utilization: {out[-300:]!r}")
    return {"utilization": float(m.group(1)), "loss_rate": float(m.group(2))}


def utilization(cfg: SimConfig) -> float:
    """Bottleneck utilization over [warmup_s, duration_s] of one ns-2 run."""
    return run(cfg)["utilization"]


def runs(cfgs: list[SimConfig]) -> list[dict[str, float]]:
    """Runs in parallel, one ns process per core (ns-2 is single-threaded)."""
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return list(pool.map(run, cfgs))


def utilizations(cfgs: list[SimConfig]) -> list[float]:
    return [r["utilization"] for r in runs(cfgs)]


def min_buffer_search(configs: list[SimConfig], target: float, hi: list[int],
                      seeds: tuple[int, ...]) -> list[Search]:
    """The same bisection as analysis.search.min_buffer_search, each probe an ns-2 run of its
    point's config with buffer_pkts and seed replaced."""
    searches = [Search({"flows": c.flows}, -1, h) for c, h in zip(configs, hi)]
    config_of = {id(s): c for s, c in zip(searches, configs)}

    def in_ns2(probes: list[tuple[Search, int, int]]) -> list[float]:
        return utilizations([dataclasses.replace(config_of[id(s)], buffer_pkts=b, seed=seed) for s, b, seed in probes])
    return bisect(searches, target, seeds, in_ns2)


def load_reference(name: str) -> dict[str, Any] | None:
    if not REFERENCE.exists():
        return None
    return json.loads(REFERENCE.read_text()).get(name)


def save_reference(name: str, data: dict[str, Any]) -> None:
    """Atomic (temp file + rename), keeping the other cross-checks' entries."""
    every = json.loads(REFERENCE.read_text()) if REFERENCE.exists() else {}
    every[name] = data
    tmp = REFERENCE.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(every, indent=1, sort_keys=True) + "\n")
    tmp.replace(REFERENCE)

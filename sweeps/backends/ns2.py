"""The `ns2` backend: Debian's ns-2 2.35 (`apt-get install ns2`), the simulator of the papers,
with TCP-Linux (`Agent/TCP/Linux` + `select_ca`, the ABS paper's Linux congestion modules).

Each run is one `ns` process on `ns2_dumbbell.tcl` (one dumbbell: N long flows, optional access
links and Poisson short flows), which writes its counters to a file that `parse_records` reads.
What it measures is mapped onto the engine's tables; what ns-2 does not measure is NULL:
- summary and links: utilization, loss, mean queue (ns-2's queue integrator), arrivals, drops,
  departures, goodput, timeouts, retransmits, cwnd cuts; not the percentiles, queueing delays,
  offered load or event counts;
- flows: goodput, retransmits, timeouts and fast retransmits per flow; not per-flow loss or cwnd;
- queue: droptail, or red as ns-2's Queue/RED (thresholds, linterm_ = 1 / max_p, q_weight_,
  gentle_, wait_, bytes_ and queue_in_bytes_, mean_pktsize_, drop-tail at the hard limit; no ECN);
  its drops are counted together (no early / overflow split) and no sojourn is measured;
- timeseries: per sample_interval_s, from counters the script samples (not the queue maximum).

Counts are in packets, not bytes: ns-2's byte counters are 32-bit and wrap after 2 GB, and every
data packet is pkt_bytes long. Goodput counts what the sender saw acknowledged (ns-2's `ack_`),
half an RTT behind what the receiver got, which is what the engine counts. Fast retransmits are
ns-2's window cuts not caused by a timeout (`ncwndcuts1_ - nrexmit_`).

The long flows' RTTs and start times are the ones our engine draws for the config's seed, so
ns-2 and the engine run the very same flows: at 8-32 packets of buffer in ABS Fig. 1's set-up one
run's utilization varies by up to 0.1 with the ten RTTs drawn (measured, seeds 1-5), more than
the differences a comparison looks for."""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import sim
from sim import SimConfig
from sweeps.backends.base import Backend, BackendResult, check_unmapped, config_values, with_resolved_buffer
from sweeps.backends.records import drawn_flows, parse_records, to_result

TCL = Path(__file__).with_name("ns2_dumbbell.tcl")
INSTALL = "apt-get install ns2"
LINUX_MODULES = ("cubic", "highspeed", "scalable", "bic", "htcp", "westwood", "lp")
"""TCP-Linux's modules (select_ca) of our Linux 2.6.22 laws, each run by the preset of its name
(`cubic`'s is `cubic_2622`: our `cubic` is today's)."""
PRESET_OF_MODULE = {m: "cubic_2622" if m == "cubic" else m for m in LINUX_MODULES}
# Our tcp preset -> ns-2's (Agent/TCP/<agent>, TCP-Linux's select_ca module, receiver Agent/<sink>).
# The presets of the Linux laws (with the `linux` recovery, which mirrors TCP-Linux's) run on
# ns-2's TCP-Linux with the module of the same name and a SACK receiver; `sack` (RFC 6675 with
# NewReno's law) on ns-2's own Sack1. A tcp config must be its preset's (cc, recovery and
# release): another recovery has no ns-2 agent to mirror it.
AGENTS: dict[str, tuple[str, str, str]] = {
    "reno": ("Reno", "", "TCPSink"),
    "newreno": ("Newreno", "", "TCPSink"),
    "sack": ("Sack1", "", "TCPSink/Sack1"),
    **{PRESET_OF_MODULE[m]: ("Linux", m, "TCPSink/Sack1") for m in LINUX_MODULES},
}
# Config columns (see base.config_values) the Tcl script maps to ns-2, by the script's argument
# name; every other column must keep its default, or its preset's (the script has no open-loop
# sources, buffer policies, delayed ACKs, variant mixes or other topologies).
MAPPED = {
    "tcp": "agent",
    "flows": "flows",
    "buffer_pkts": "buffer_pkts",
    "wmax_pkts": "wmax_pkts",
    "core_mbps": "core_mbps",
    "rtt_ms": "rtt_ms",
    "rtt_spread_ms": "rtt_spread_ms",
    "pkt_bytes": "pkt_bytes",
    "duration_s": "duration_s",
    "warmup_s": "warmup_s",
    "seed": "seed",
    "start_window_s": "start_window_s",
    "tcp_init_cwnd_pkts": "init_cwnd_pkts",
    "tcp_min_rto_ms": "min_rto_ms",
    "tcp_max_rto_s": "max_rto_s",
    "tcp_init_rto_s": "init_rto_s",
    "tcp_tick_ms": "tick_ms",
    "tcp_limited_transmit": "limited_transmit",
    "tcp_max_burst_pkts": "max_burst_pkts",
    "tcp_send_jitter_ms": "send_jitter_ms",  # Agent/TCP's overhead_ (ns-2's own mechanism)
    "short_mbps": "short_mbps",
    "short_flow_pkts": "short_flow_pkts",
    "access_mbps": "access_mbps",
    "access_buffer_pkts": "access_buffer_pkts",
    "sample_interval_s": "sample_interval_s",
    "queue": "queue",
    "queue_min_th": "red_min_th",
    "queue_max_th": "red_max_th",
    "queue_max_p": "red_max_p",
    "queue_w_q": "red_w_q",
    "queue_gentle": "red_gentle",
    "queue_wait": "red_wait",
    "queue_bytes": "red_bytes",
    "queue_mean_pkt_bytes": "red_mean_pkt_bytes",
    "queue_ecn": "red_ecn",  # always false here (check)
}
QUEUES = ("droptail", "red")
"""The bottleneck disciplines the script mirrors: ns-2's DropTail and RED (`queue/red.cc`, which our
`red` follows); RED without ECN (ns-2's TCP-Linux has none)."""


def missing() -> str | None:
    return None if shutil.which("ns") else "ns-2 is not installed (no `ns` on PATH)"


SCRIPT_VERSION = "3d7e9234"
"""What ns-2 runs for a config, beside its package version: the script (`ns2_dumbbell.tcl`) and
this mapping, which decide the results as much as ns-2 does. It is in every ns-2 run's run_id;
give it a new value when an edit changes what ns-2 runs for a config accepted before.
`tests/sweeps/test_backends.py` holds it to `base.code_digest` of the script and this module, so
that docstrings and comments are free to change and code is not, unnoticed."""


@functools.lru_cache(maxsize=1)
def version() -> str:
    """Debian's package version and `SCRIPT_VERSION`."""
    try:
        pkg = (
            subprocess.run(
                ["dpkg-query", "-W", "-f=${Version}", "ns2"], capture_output=True, text=True, timeout=30
            ).stdout.strip()
            or "2.35"
        )
    except (OSError, subprocess.SubprocessError):
        pkg = "2.35"
    return f"{pkg}+{SCRIPT_VERSION}"


def check(cfg: SimConfig) -> None:
    """ValueError naming the first field of cfg that the script cannot mirror."""
    row = config_values(cfg)
    if row["tcp"] not in AGENTS:
        raise ValueError(f"tcp: the ns2 backend supports {', '.join(AGENTS)}, got {row['tcp']!r}")
    if row["queue"] not in QUEUES:
        raise ValueError(f"queue: the ns2 backend supports {', '.join(QUEUES)}, got {row['queue']!r}")
    if row["queue_ecn"]:
        raise ValueError("queue.ecn: the ns2 backend supports only false (ns-2's TCP-Linux has no ECN), got True")
    check_unmapped("ns2", row, MAPPED)
    if cfg.seed < 1:
        raise ValueError(f"seed: the ns2 backend needs seed >= 1 (ns-2 seeds 0 from the clock), got {cfg.seed}")
    if cfg.short_mbps > 0 and cfg.short_flow_pkts < 2:
        # The script sends n packets with `advanceby n - 1`; `advanceby 0` does not reopen a reused agent.
        raise ValueError(f"short_flow_pkts: the ns2 backend needs >= 2, got {cfg.short_flow_pkts}")
    if AGENTS[row["tcp"]][0] == "Linux" and row["tcp_tick_ms"] != 1:
        raise ValueError(
            f"tcp.tick_ms: ns-2's TCP-Linux times RTTs in 1 ms jiffies; set tcp.tick_ms=1, got {row['tcp_tick_ms']:g}"
        )


def script_args(cfg: SimConfig, drawn: sim.SimResult) -> list[str]:
    """The Tcl script's arguments for cfg (checked), with the long flows the engine drew."""
    row = config_values(cfg)
    agent, ca, sink = AGENTS[row["tcp"]]
    args = ["agent", agent, "ca", ca or "none", "sink", sink, "timestamps", str(int(ca == "lp"))]
    for key, name in list(MAPPED.items())[1:]:
        value = row[key]
        if value is None:
            value = 0  # access_mbps: no access link
        if isinstance(value, bool) or (isinstance(value, float) and value.is_integer()):
            value = int(value)  # Tcl reads ns-2's integer variables (singledup_, windowInit_) strictly
        args += [name, str(value)]
    return args + [
        "flow_rtts_ms",
        " ".join(repr(x) for x in drawn.flows["rtt_ms"].to_pylist()),
        "flow_starts_s",
        " ".join(repr(x) for x in drawn.flows["start_s"].to_pylist()),
    ]


def run(cfg: SimConfig) -> BackendResult:
    check(cfg)
    drawn = drawn_flows(cfg)
    cfg = with_resolved_buffer(cfg, drawn)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ns2-") as tmp:
        out = Path(tmp) / "records.txt"
        res = subprocess.run(
            ["ns", str(TCL), *script_args(cfg, drawn), "out", str(out)], capture_output=True, text=True, cwd=tmp
        )
        if res.returncode != 0 or not out.exists():
            raise RuntimeError(f"ns exited {res.returncode}: {(res.stderr or res.stdout)[-300:]!r}")
        records = parse_records(out.read_text())
    return to_result(cfg, drawn, records, time.perf_counter() - t0)


BACKEND = Backend(
    name="ns2",
    doc="Debian's ns-2 2.35 with TCP-Linux (sweeps/backends/ns2_dumbbell.tcl)",
    install=INSTALL,
    missing=missing,
    version=version,
    check=check,
    run=run,
)

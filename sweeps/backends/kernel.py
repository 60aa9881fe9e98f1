"""The `kernel` backend (issue 71; docs/kernel.md): the same dumbbell run on this host's own Linux
TCP, in real time, in network namespaces built for the run (`kernel_testbed.py`): the kernel's
cubic, reno or bbr module per socket, a bottleneck of htb and pfifo, the RTTs by a delay line
(`bsw-delayline`, Rust, beside the engine), long-lived flows of our own generator
(`kernel_traffic.py`), with the RTTs and start times the engine draws for the seed.

What it maps (everything else must keep its default, or its preset's, or the run is refused):
- tcp: `cubic` -> the kernel's cubic, `bbr` -> bbr, `reno_linux` -> reno (each preset's settings
  are Linux's); a tcp_mix of those; `tcp.init_cwnd_pkts` (the route's initcwnd),
  `tcp.delayed_ack` (false: the sink sets TCP_QUICKACK after every read), `tcp.ecn` (S's tcp_ecn);
- flows, rtt_ms, rtt_spread_ms, rtts_ms, start_window_s, seed (the engine's draws), wmax_pkts
  (TCP_WINDOW_CLAMP), pkt_bytes (the MTU), core_mbps, buffer_pkts or a static buffer policy
  (the buffer it resolves), queue=droptail (pfifo); an AQM this kernel has (probed once) or refused
  naming it; duration_s, warmup_s, sample_interval_s.
What it measures: utilization, loss, queue and queueing delay (Little's law) from the pfifo's
counters, sampled; per flow goodput, retransmits and RTOs from TCP_INFO; the delay line's lateness and
the rate the bottleneck gave (`emulation_*`, `timing_suspect`). The rest is NULL."""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import sim
from sim import SimConfig
from sweeps.backends import kernel_testbed as tb
from sweeps.backends.base import Backend, BackendResult, check_unmapped, config_values, with_resolved_buffer
from sweeps.backends.kernel_records import emulation_metrics, records
from sweeps.backends.kernel_run import DELAYLINE, FIRST_PORT, ROOT
from sweeps.backends.records import drawn_flows, to_result
from sweeps.raycfg import TESTBED_RESOURCE

TESTBED_VERSION = "t4"
"""What the testbed runs for a config (namespaces, qdiscs, delay line, generator, this mapping): in
every kernel run's run_id beside the kernel's release; a new value when an edit changes it."""
HTB_BURST_US = 50.0
"""The bottleneck's burst, as a time at its rate: enough for htb's timer to be late without the
link losing rate, little enough that an idle link gives no packet away (docs/kernel.md)."""
SENDERS = {"cubic": "cubic", "bbr": "bbr", "reno_linux": "reno"}
"""Our tcp preset -> the kernel's congestion control module (TCP_CONGESTION)."""
QUEUES = {"droptail": "pfifo"}
"""Our queue -> the kernel qdisc under the bottleneck's htb."""
AQM_QDISCS = {"codel": "codel", "fq_codel": "fq_codel", "pie": "pie", "red": "red", "step": "red"}
"""The kernel qdisc an AQM would take: a refusal names it, and says whether this kernel has it."""
MAPPED = (
    *("tcp", "tcp_mix", "flows", "buffer_pkts", "wmax_pkts", "core_mbps", "rtt_ms", "rtt_spread_ms", "rtts_ms"),
    *("pkt_bytes", "duration_s", "warmup_s", "seed", "start_window_s", "sample_interval_s", "queue"),
    *("tcp_init_cwnd_pkts", "tcp_delayed_ack", "tcp_ecn"),
)
"""Config columns (`base.config_values`) the testbed mirrors."""
RUN_SLACK_S = 120
"""Wall time a run may take beyond its duration_s (the testbed's set-up and removal) before it is
stopped."""
INSTALL = "run as root (CAP_NET_ADMIN, CAP_SYS_ADMIN) after `make install`, which builds bsw-delayline"


def missing() -> str | None:
    """Why the kernel backend cannot run here, in one line, or None."""
    if sys.platform != "linux":
        return "the kernel backend runs Linux's own TCP: Linux only"
    caps = _capabilities()
    if not (caps >> 12) & 1 or not (caps >> 21) & 1:
        return "the kernel backend needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to build network namespaces"
    if not Path("/dev/net/tun").exists():
        return "the kernel backend needs /dev/net/tun for its delay line"
    if not DELAYLINE.exists():
        return f"bsw-delayline is not built ({DELAYLINE}): `make install` builds it"
    if shutil.which("ip") is None:
        return "the kernel backend needs iproute2's `ip` (apt-get install iproute2)"
    return None


def _capabilities() -> int:
    """This process's effective capabilities (CapEff of /proc/self/status)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


@functools.lru_cache(maxsize=1)
def version() -> str:
    return f"linux-{platform.release()}+{TESTBED_VERSION}"


@functools.lru_cache(maxsize=1)
def modules() -> tuple[str, ...]:
    """The congestion control modules this kernel offers."""
    return tuple(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())


def check(cfg: SimConfig) -> None:
    """ValueError naming the first field of cfg the testbed cannot mirror."""
    row = config_values(cfg)
    groups = _groups(cfg, row)
    for label in groups:
        if label not in SENDERS:
            mapped = ", ".join(f"{ours} (its {theirs})" for ours, theirs in SENDERS.items())
            raise ValueError(f"tcp: the kernel backend runs {mapped}, with Linux's settings; got {label!r}")
        if SENDERS[label] not in modules():
            raise ValueError(f"tcp: this kernel lacks {SENDERS[label]} (it has {', '.join(modules())})")
    if row["queue"] not in QUEUES:
        raise ValueError(aqm_refusal(row["queue"]))
    if cfg.traffic or cfg.short_mbps or cfg.poisson_mbps or cfg.cbr_mbps:
        raise ValueError("traffic: the kernel backend runs long-lived flows only (no web, pareto or udp yet)")
    if (cfg.access_mbps or 0) > 0:
        raise ValueError("access_mbps: the kernel backend has no access links (its senders meet the router)")
    if not 576 <= cfg.pkt_bytes <= 9000:
        raise ValueError(f"pkt_bytes: the kernel backend's MTU must be in [576, 9000], got {cfg.pkt_bytes}")
    if cfg.flows > 1000:
        raise ValueError(f"flows: the kernel backend opens one socket a flow, at most 1000, got {cfg.flows}")
    check_unmapped("kernel", row, MAPPED)  # a law's own constants too: the kernel's module has its own


def aqm_refusal(queue: str) -> str:
    """Why queue `queue` does not run on the kernel backend, naming the qdisc it would take."""
    kind = AQM_QDISCS.get(queue)
    if kind is None:
        return f"queue: the kernel backend has no qdisc for {queue!r}; it runs droptail (as pfifo)"
    if not tb.has_qdisc(kind):
        return f"queue: this kernel has no {kind} qdisc (the kernel backend runs droptail, as pfifo here)"
    return (
        f"queue: this kernel has {kind}, but the kernel backend maps only droptail (as pfifo) so far "
        '(docs/kernel.md, "What it runs"); run it on the engine'
    )


def _groups(cfg: SimConfig, row: dict[str, Any]) -> list[str]:
    """The tcp labels the run's flows use."""
    if cfg.tcp_mix:
        return sorted({g.split(":")[0] for part in cfg.tcp_mix.replace("+", ",").split(",") for g in [part] if g})
    return [row["tcp"]]


def run(cfg: SimConfig, delay_line: list[str] | None = None) -> BackendResult:
    """One run; `delay_line`: another delay line's command (`bench.kernel` holds bsw-delayline
    against a Python one), given `--tun NAME --delays FILE`."""
    check(cfg)
    drawn = drawn_flows(cfg)
    cfg = with_resolved_buffer(cfg, drawn)
    t0 = time.perf_counter()
    flows = plan(cfg, drawn)
    got = measure({**request(cfg, flows), "delay_line": delay_line}, cfg.duration_s)
    res = to_result(cfg, drawn, records(cfg, got["queue"], got["samples"], len(flows)), time.perf_counter() - t0)
    res.metrics.update(emulation_metrics(cfg, got["queue"], got["line"]))
    return res


def request(cfg: SimConfig, flows: list[dict[str, Any]]) -> dict[str, Any]:
    """What `kernel_run` builds and runs: the bottleneck, the senders' settings and the flows."""
    row = config_values(cfg)
    bdp_bytes = cfg.core_mbps * 1e6 / 8 * max(f["rtt_ms"] for f in flows) / 1e3
    return {
        "rate_mbps": cfg.core_mbps,
        # htb takes a packet off the pfifo as its transmission starts; the engine's buffer, as
        # ns-2's queue-limit, counts that packet too (docs/kernel.md).
        "limit_pkts": max(1, int(cfg.buffer_pkts) - 1),
        "mtu": cfg.pkt_bytes,
        "burst_us": HTB_BURST_US,
        "init_cwnd": int(row["tcp_init_cwnd_pkts"]),
        "ecn": bool(row["tcp_ecn"]),
        "window_bytes": max(4 << 20, int(4 * (bdp_bytes + cfg.buffer_pkts * cfg.pkt_bytes))),  # never the cap
        "sink_args": [] if row["tcp_delayed_ack"] else ["--quickack"],
        "flows": flows,
        "sample_s": cfg.sample_interval_s,
        "duration_s": cfg.duration_s,
    }


def measure(req: dict[str, Any], duration_s: float) -> dict[str, Any]:
    """Runs `kernel_run` on `req` in a process of its own (its comment says why); on a timeout it
    is asked to stop (SIGTERM: it removes its testbed), then killed."""
    with tempfile.TemporaryDirectory(prefix="bsw-kernel-req-") as tmp:
        paths = (Path(tmp) / "request.json", Path(tmp) / "measured.json")
        paths[0].write_text(json.dumps(req))
        argv = [sys.executable, "-m", "sweeps.backends.kernel_run", *map(str, paths)]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            _, err = proc.communicate(timeout=duration_s + RUN_SLACK_S)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise TimeoutError(f"the kernel run took over {duration_s + RUN_SLACK_S:.0f} s of wall time") from None
        if proc.returncode != 0 or not paths[1].exists():
            lines = err.strip().splitlines()
            raise RuntimeError(lines[-1] if lines else f"the kernel run ended with exit {proc.returncode}")
        return json.loads(paths[1].read_text())


def plan(cfg: SimConfig, drawn: sim.SimResult) -> list[dict[str, Any]]:
    """Each flow's port, kernel module, start time, RTT and window clamp, as the engine drew them."""
    flows = drawn.flows.select(["flow_id", "tcp_group", "rtt_ms", "start_s"]).to_pylist()
    mss = cfg.pkt_bytes - 52  # IP, TCP and the timestamp option
    clamp = int(cfg.wmax_pkts * mss) if cfg.wmax_pkts * mss < 1 << 30 else 0
    return [
        {
            "port": FIRST_PORT + f["flow_id"],
            "cc": SENDERS.get(f["tcp_group"] or config_values(cfg)["tcp"], "cubic"),
            "start_s": f["start_s"],
            "rtt_ms": f["rtt_ms"],
            "clamp_bytes": clamp,
        }
        for f in flows
    ]


BACKEND = Backend(
    name="kernel",
    doc="this host's Linux TCP in network namespaces, in real time (sweeps/backends/kernel.py)",
    install=INSTALL,
    missing=missing,
    version=version,
    check=check,
    run=run,
    resources={"num_cpus": 1, "resources": {TESTBED_RESOURCE: 1}},
    whole_node=True,
)

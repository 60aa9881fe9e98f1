"""The `ns3` backend: ns-3 3.44 from PyPI (`pip install -e '.[ns3]'`, which pins ns3==3.44.post0;
about 1.5 min to build and 700 MB), driven in-process through its cppyy bindings.

The scenario is C++ (`ns3_dumbbell.cc`, compiled once per process with `cppyy.cppdef`): with it,
no Python runs inside `Simulator::Run()`. ns-3 costs a process about 9-16 s to import and set up
(../shared/notes/ns3.md), so a process keeps it loaded (`_scenario`) and runs many configs, with
`Simulator::Destroy()` between them; Ray reuses its worker processes across tasks, so every job
after a worker's first pays nothing of it.

What we map (everything else must keep its default, or its preset's, or the run is refused):
- tcp presets: `sack` = TcpNewReno with SACK; `newreno` = TcpNewReno without SACK (ns-3's no-SACK
  NewReno falls into a spurious-retransmission cycle after a timeout, ns3.md; compare `sack`);
  the Linux laws = TcpCubic (HyStart off, as Linux 2.6), TcpBic, TcpHighSpeed, TcpHtcp,
  TcpScalable, TcpWestwoodPlus and TcpLp, all with SACK; CUBIC's beta, C, fast convergence and
  TCP friendliness as TcpCubic's attributes (`LAW_ATTRIBUTES`); dctcp = TcpDctcp (its g and
  initial alpha; ns-3 gives it DCTCP's receiver and ECN). Recovery is ns-3's TcpClassicRecovery
  (window halving and NewReno-style inflation), not PRR; `tcp.recovery=sack` (ns-2's Sack1, the
  same RFC 6675 family) is accepted beside a law's preset recovery. ns-3 has no Reno: refused.
- pkt_bytes is the IP packet: the TCP segment is pkt_bytes - 52 (IP, TCP, timestamp option).
- init_cwnd, init_ssthresh, min_rto, tick (ClockGranularity), delayed ACKs (DelAckCount 2 or 1,
  DelAckTimeout), limited transmit; wmax as SndBufSize = RcvBufSize = wmax segments; init_rto as
  ConnTimeout (ns-3 times its first data RTO from the handshake's RTT sample).
- The long flows' RTTs and start times are the engine's draws for the seed, as in ns2.py.
- queue (the bottleneck's discipline; `qdisc_attributes`): red, codel, pie and fq_codel as ns-3's
  RedQueueDisc, CoDelQueueDisc, PieQueueDisc and FqCoDelQueueDisc with our parameters, and step
  as RedQueueDisc with QW=1 and MinTh=MaxTh=k_pkts, a forced mark (ns3.md); tcp.ecn as
  TcpSocketBase::UseEcn. fq_codel only with `backlog_test: flow` (ns-3 tests each flow's own
  queue; preset `queue=fq_codel_ns3`). The qdisc sits above a 1-packet device queue (ns-3 queues
  in a qdisc only when the device pushes back) and holds buffer_pkts - 2, so that with the device
  queue and the packet in transmission all hold buffer_pkts; its sojourn times leave out the wait
  in the device queue (docs/fidelity.md).
- buffer_pkts and access_buffer_pkts count the packet in transmission, as ours and ns-2's do: the
  device's DropTailQueue, which holds only the waiting ones, gets MaxSize = buffer_pkts - 1."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sim import SimConfig
from sim.result import config_row
from sweeps.backends.base import Backend, BackendResult, check_unmapped, with_resolved_buffer
from sweeps.backends.records import drawn_flows, parse_records, to_result

SCENARIO = Path(__file__).with_name("ns3_dumbbell.cc")
INSTALL = "pip install -e '.[ns3]'"
SOCKET_TYPES = {
    "sack": ("TcpNewReno", True),
    "newreno": ("TcpNewReno", False),
    "cubic": ("TcpCubic", True),
    "bic": ("TcpBic", True),
    "highspeed": ("TcpHighSpeed", True),
    "htcp": ("TcpHtcp", True),
    "scalable": ("TcpScalable", True),
    "westwood": ("TcpWestwoodPlus", True),
    "lp": ("TcpLp", True),
    "dctcp": ("TcpDctcp", True),
}
"""Our tcp preset -> (ns-3's congestion-control TypeId, SACK)."""
LAW_ATTRIBUTES = {
    "cubic": {"beta": "Beta", "c": "C", "fast_convergence": "FastConvergence", "tcp_friendliness": "TcpFriendliness"},
    "dctcp": {"g": "DctcpShiftG", "alpha_init": "DctcpAlphaOnInit"},
}
"""A law's parameters -> its ns-3 TypeId's attributes (ns-3 3.44 tcp-cubic.cc, tcp-dctcp.cc). CUBIC's
because the defaults differ: ns-3's TcpCubic has RFC 8312's beta 0.7, Linux 2.6's (ours) 819/1024."""
MAPPED = (
    "tcp",
    "flows",
    "buffer_pkts",
    "wmax_pkts",
    "core_mbps",
    "rtt_ms",
    "rtt_spread_ms",
    "pkt_bytes",
    "duration_s",
    "warmup_s",
    "seed",
    "start_window_s",
    "tcp_init_cwnd_pkts",
    "tcp_init_ssthresh_pkts",
    "tcp_min_rto_ms",
    "tcp_tick_ms",
    "tcp_init_rto_s",
    "tcp_delayed_ack",
    "tcp_delack_ms",
    "tcp_limited_transmit",
    "access_mbps",
    "access_buffer_pkts",
    "sample_interval_s",
    "tcp_ecn",
    "queue",
    "queue_min_th",
    "queue_max_th",
    "queue_max_p",
    "queue_w_q",
    "queue_gentle",
    "queue_wait",
    "queue_bytes",
    "queue_mean_pkt_bytes",
    "queue_ecn",
    "queue_target_ms",
    "queue_interval_ms",
    "queue_t_update_ms",
    "queue_alpha",
    "queue_beta",
    "queue_max_burst_ms",
    "queue_mark_ecn_th",
    "queue_derandomize",
    "queue_flows",
    "queue_quantum_bytes",
    "queue_drop_batch_pkts",
    "queue_backlog_test",
    "queue_k_pkts",
)
"""Config columns (sim.result.config_row) the scenario mirrors."""
HEADERS_BYTES = 52


def missing() -> str | None:
    if importlib.util.find_spec("ns3") is None or importlib.util.find_spec("cppyy") is None:
        return "ns-3 is not installed (no `ns3` Python package)"
    return None


@functools.lru_cache(maxsize=1)
def version() -> str:
    """The ns3 package's version and a digest of the scenario and this mapping."""
    digest = hashlib.sha256(SCENARIO.read_bytes() + Path(__file__).read_bytes()).hexdigest()[:8]
    return f"{importlib.metadata.version('ns3')}+{digest}"


def check(cfg: SimConfig) -> None:
    """ValueError naming the first field of cfg that the scenario cannot mirror."""
    row = config_row(cfg)
    if row["tcp"] not in SOCKET_TYPES:
        hint = " (ns-3 has no Reno; its NewReno is `newreno`, with SACK `sack`)" if row["tcp"] == "reno" else ""
        raise ValueError(f"tcp: the ns3 backend supports {', '.join(SOCKET_TYPES)}, got {row['tcp']!r}{hint}")
    # ns-3's recovery (TcpClassicRecovery over an RFC 6675 scoreboard) is what our `sack` recovery
    # models; a Linux law's own `linux` recovery (ns-2 TCP-Linux) is kept as its preset's default.
    law = tuple(f"tcp_{k}" for k in LAW_ATTRIBUTES.get(row["tcp"], {}))
    check_unmapped("ns3", row, MAPPED + law + (("tcp_recovery",) if row["tcp_recovery"] == "sack" else ()))
    if cfg.pkt_bytes <= HEADERS_BYTES:
        raise ValueError(
            f"pkt_bytes: the ns3 backend needs > {HEADERS_BYTES} (IP, TCP and timestamp headers), got {cfg.pkt_bytes}"
        )
    if float(row["tcp_init_cwnd_pkts"]) != int(row["tcp_init_cwnd_pkts"]):
        raise ValueError(f"tcp.init_cwnd_pkts: ns-3 takes whole segments, got {row['tcp_init_cwnd_pkts']}")
    if row["queue_bytes"]:
        raise ValueError("queue.bytes: the ns3 backend supports only packet mode (false), got True")
    if row["queue"] == "fq_codel" and row["queue_backlog_test"] != "flow":
        raise ValueError(
            f"queue.backlog_test: the ns3 backend supports only 'flow' (FqCoDelQueueDisc tests each flow's own "
            f"backlog; queue=fq_codel_ns3), got {row['queue_backlog_test']!r}"
        )
    if row["queue"] == "step" and row["queue_k_pkts"] < 2:
        raise ValueError(
            f"queue.k_pkts: the ns3 backend needs >= 2 (its RED marks only above one queued packet), "
            f"got {row['queue_k_pkts']}"
        )


def qdisc_attributes(cfg: SimConfig) -> tuple[str, dict[str, str]]:
    """The bottleneck's ns-3 queue disc and its attributes (as strings, set with Config::SetDefault)
    for cfg's queue; ("", {}) for droptail, which stays the device's DropTailQueue. Attribute
    names: ns-3 3.44's src/traffic-control/model/*-queue-disc.cc."""
    q, pkt = cfg.queue, cfg.pkt_bytes
    # Below the qdisc, the device queue holds one packet and the device the one it transmits.
    limit = {"MaxSize": f"{max(int(cfg.buffer_pkts) - 2, 1)}p"}
    mean_pkt = str(getattr(q, "mean_pkt_bytes", None) or pkt)
    red_base = {**limit, "MeanPktSize": mean_pkt, "LinkBandwidth": f"{cfg.core_mbps * 1e6:.0f}bps"}
    red_base |= {"ARED": "false", "AdaptMaxP": "false", "FengAdaptive": "false", "NLRED": "false"}
    on = {True: "true", False: "false"}

    def red(min_th: str, max_th: str, linterm: float, qw: str, *flags: bool) -> tuple[str, dict[str, str]]:
        names = ("Gentle", "Wait", "UseEcn", "UseHardDrop")
        attrs = {"MinTh": min_th, "MaxTh": max_th, "LInterm": f"{linterm:g}", "QW": qw}
        return "ns3::RedQueueDisc", red_base | attrs | {n: on[f] for n, f in zip(names, flags)}

    if q.name == "red":
        # UseHardDrop: above max_th (2 max_th when gentle) ECN-capable packets are dropped too.
        return red(f"{q.min_th:g}", f"{q.max_th:g}", 1 / q.max_p, f"{q.w_q:g}", q.gentle, q.wait, q.ecn, True)
    if q.name == "step":  # the average is the queue (QW=1); at K a forced mark, not a drop
        return red(str(q.k_pkts), str(q.k_pkts), 1, "1", False, False, True, False)
    if q.name == "codel":
        # "bytes left <= one packet" (ours) is ns-3's strict "< MinBytes".
        return "ns3::CoDelQueueDisc", limit | {
            "Target": f"{q.target_ms:g}ms",
            "Interval": f"{q.interval_ms:g}ms",
            "UseEcn": on[q.ecn],
            "MinBytes": str(pkt + 1),
        }
    if q.name == "pie":
        return "ns3::PieQueueDisc", limit | {
            "QueueDelayReference": f"{q.target_ms:g}ms",
            "Tupdate": f"{q.t_update_ms:g}ms",
            "A": f"{q.alpha:g}",
            "B": f"{q.beta:g}",
            "MaxBurstAllowance": f"{q.max_burst_ms:g}ms",
            "UseEcn": on[q.ecn],
            "MarkEcnThreshold": f"{q.mark_ecn_th:g}",
            "UseDerandomization": on[q.derandomize],
            "MeanPktSize": mean_pkt,
            "UseDequeueRateEstimator": "false",
            "UseCapDropAdjustment": "true",
        }
    if q.name == "fq_codel":
        return "ns3::FqCoDelQueueDisc", limit | {
            "Target": f"{q.target_ms:g}ms",
            "Interval": f"{q.interval_ms:g}ms",
            "Flows": str(q.flows),
            "DropBatchSize": str(q.drop_batch_pkts),
            "UseEcn": on[q.ecn],
            "Perturbation": "0",
            "EnableSetAssociativeHash": "false",
            # Each flow's CoDelQueueDisc takes its defaults: the one-packet test as for codel.
            "ns3::CoDelQueueDisc::MinBytes": str(pkt + 1),
        }
    return "", {}


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 to /dev/null: the lines come from C++, which Python's sys.stderr does not see."""
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


@functools.lru_cache(maxsize=1)
def _scenario() -> Any:
    """bsw::Run, compiled once per process (the import and compile take 9-16 s)."""
    import cppyy

    with _quiet_stderr():  # cppyy prints two harmless `runStaticInitializersOnce` lines (ns3.md)
        from ns import ns  # noqa: F401  (loads ns-3's libraries and include paths into cppyy)
    cppyy.cppdef(SCENARIO.read_text())
    return cppyy.gbl.bsw


def _params(cfg: SimConfig, rtts_ms: list[float], starts_s: list[float]) -> Any:
    bsw = _scenario()
    row = config_row(cfg)
    kind, sack = SOCKET_TYPES[row["tcp"]]
    p = bsw.Params()
    p.socketType, p.sack = f"ns3::{kind}", sack
    p.flows, p.bufferPkts, p.wmaxPkts = cfg.flows, int(cfg.buffer_pkts), int(cfg.wmax_pkts)
    p.coreMbps, p.accessMbps = cfg.core_mbps, float(cfg.access_mbps or 0.0)
    p.accessBufferPkts, p.pktBytes = int(cfg.access_buffer_pkts), cfg.pkt_bytes
    p.segmentBytes = cfg.pkt_bytes - HEADERS_BYTES
    p.durationS, p.warmupS, p.sampleIntervalS, p.seed = cfg.duration_s, cfg.warmup_s, cfg.sample_interval_s, cfg.seed
    p.initCwndPkts = float(row["tcp_init_cwnd_pkts"])
    p.initSsthreshPkts = float(row["tcp_init_ssthresh_pkts"] or 0.0)
    p.minRtoMs, p.tickMs, p.connTimeoutS = row["tcp_min_rto_ms"], row["tcp_tick_ms"], row["tcp_init_rto_s"]
    p.delayedAck, p.delackMs = bool(row["tcp_delayed_ack"]), row["tcp_delack_ms"]
    p.limitedTransmit = bool(row["tcp_limited_transmit"])
    p.ecn = bool(row["tcp_ecn"])
    p.qdisc, attrs = qdisc_attributes(cfg)
    for k, v in attrs.items():
        p.qdiscAttrNames.push_back(k)
        p.qdiscAttrValues.push_back(v)
    p.quantumBytes = int(row["queue_quantum_bytes"] or cfg.pkt_bytes) if row["queue"] == "fq_codel" else 0
    for ours, theirs in LAW_ATTRIBUTES.get(row["tcp"], {}).items():
        value = getattr(cfg.tcp, ours)
        p.lawAttrNames.push_back(theirs)
        p.lawAttrValues.push_back(("true" if value else "false") if isinstance(value, bool) else f"{value!r}")
    for x in rtts_ms:
        p.rttsMs.push_back(x)
    for x in starts_s:
        p.startsS.push_back(x)
    return p


def run(cfg: SimConfig) -> BackendResult:
    check(cfg)
    drawn = drawn_flows(cfg)
    cfg = with_resolved_buffer(cfg, drawn)
    params = _params(cfg, drawn.flows["rtt_ms"].to_pylist(), drawn.flows["start_s"].to_pylist())
    t0 = time.perf_counter()
    records = parse_records(str(_scenario().Run(params)))
    return to_result(cfg, drawn, records, time.perf_counter() - t0)


BACKEND = Backend(
    name="ns3",
    doc="ns-3 3.44 from PyPI, in-process through cppyy (sweeps/backends/ns3_dumbbell.cc)",
    install=INSTALL,
    missing=missing,
    version=version,
    check=check,
    run=run,
    resources={"num_cpus": 1, "memory": 1 << 30},
)

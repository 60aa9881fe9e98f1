"""Golden fingerprints: a digest of every column of every output table of the reference configs,
committed per ENGINE_VERSION in fingerprints.json. A change to any digest without a version bump
fails, because the run_id (and so every cache) keys on the version.

    python -m tests.sim.test_fingerprints --record   # after bumping ENGINE_VERSION (sim/Cargo.toml)
    python -m tests.sim.test_fingerprints --extend   # new output columns, every recorded one unchanged

Version 0.1.0 was captured with the engine before its reshape into links, routes and the
cc / recovery / release split. Every later version must reproduce every earlier one bit for bit,
on every column the earlier one had, except the columns a version lists in CHANGED_IN with its
reason: the lineage of every result since 0.1.0 is then explicit.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

import sim
from sim.result import CONFIG_FIELDS, WALL_CLOCK_METRICS, config_row

pytestmark = pytest.mark.check  # part of `make check`

FILE = Path(__file__).with_name("fingerprints.json")

_DUMB = dict(core_mbps=20, rtt_ms=80, rtt_spread_ms=40, wmax_pkts=64, duration_s=20, warmup_s=5)
REFERENCE: dict[str, dict[str, Any]] = {
    "reno": dict(tcp="reno", flows=20, buffer_pkts=30, **_DUMB),
    "newreno": dict(tcp="newreno", flows=20, buffer_pkts=10, **_DUMB),
    "paced": dict(
        tcp="paced", flows=20, buffer_pkts=10, **{**_DUMB, "rtt_ms": 100, "rtt_spread_ms": 50, "wmax_pkts": 32}
    ),
    "poisson": dict(
        tcp="poisson", flows=20, buffer_pkts=10, **{**_DUMB, "rtt_ms": 100, "rtt_spread_ms": 50, "wmax_pkts": 32}
    ),
    "newreno_knobs": dict(
        tcp=dict(
            cc="newreno",
            recovery="newreno",
            release="window",
            delayed_ack=True,
            delack_ms=40,
            limited_transmit=False,
            max_burst_pkts=3,
            tick_ms=0.0,
            init_cwnd_pkts=10.0,
            init_ssthresh_pkts=20.0,
            min_rto_ms=300.0,
            init_rto_s=1.0,
            max_rto_s=10.0,
        ),
        flows=10,
        buffer_pkts=15,
        core_mbps=20,
        rtt_ms=60,
        rtt_spread_ms=30,
        wmax_pkts=100,
        duration_s=20,
        warmup_s=5,
    ),
    "short_flows": dict(
        tcp="reno", flows=10, short_mbps=5, short_flow_pkts=14, buffer_pkts=20, **{**_DUMB, "rtt_ms": 60}
    ),
    "short_paced_access": dict(
        tcp="paced",
        flows=6,
        short_mbps=4,
        short_flow_pkts=20,
        access_mbps=8,
        access_buffer_pkts=30,
        buffer_pkts=10,
        **{**_DUMB, "rtt_ms": 60},
    ),
    "open_loop": dict(
        tcp="newreno",
        flows=5,
        poisson_mbps=4,
        cbr_mbps=2,
        open_loop_bytes=500,
        buffer_pkts=10,
        core_mbps=10,
        rtt_ms=80,
        wmax_pkts=64,
        duration_s=20,
        warmup_s=5,
    ),
    "open_loop_only": dict(
        tcp="reno", flows=0, wmax_pkts=64, poisson_mbps=8, buffer_pkts=5, core_mbps=10, duration_s=20, warmup_s=5
    ),
    "schedule": dict(
        tcp="reno",
        flows=15,
        buffer_pkts=50,
        core_mbps=10,
        rtt_ms=100,
        rtt_spread_ms=40,
        wmax_pkts=64,
        duration_s=20,
        warmup_s=3,
        buffer_policy=dict(name="schedule", interval_ms=100, steps=[(0.0, 5), (8.0, 40), (14.0, 2)]),
    ),
    "access": dict(
        tcp="reno",
        flows=8,
        access_mbps=3,
        access_buffer_pkts=5,
        buffer_pkts=20,
        **{**_DUMB, "rtt_spread_ms": 20, "wmax_pkts": 200},
    ),
    "byte_buffer": dict(tcp="newreno", flows=10, buffer_bytes=15000, buffer_pkts=0, pkt_bytes=1500, **_DUMB),
    "trace": dict(
        tcp="reno",
        flows=4,
        buffer_pkts=8,
        core_mbps=10,
        rtt_ms=50,
        wmax_pkts=64,
        duration_s=10,
        warmup_s=2,
        trace_max_events=3000,
        trace_start_s=3.0,
    ),
    "rtts_list": dict(
        tcp="newreno",
        flows=4,
        rtts_ms=[10.0, 50.0, 120.0, 300.0],
        buffer_pkts=20,
        core_mbps=20,
        wmax_pkts=500,
        duration_s=20,
        warmup_s=5,
        seed=7,
    ),
    # Added with 0.2.0 (no 0.1.0 equivalent): the parking lot.
    "parking_lot": dict(
        tcp="newreno",
        flows=6,
        rtt_ms=80,
        rtt_spread_ms=40,
        wmax_pkts=64,
        duration_s=20,
        warmup_s=5,
        buffer_pkts=40,
        access_mbps=100,
        short_mbps=2,
        poisson_mbps=1,
        topology=dict(
            name="parking_lot", links=[dict(rate_mbps=50, delay_ms=5), dict(rate_mbps=20, delay_ms=15, buffer_pkts=25)]
        ),
    ),
    # Added with 0.4.0: SACK recovery, the Linux window laws, and a variant mix.
    "sack": dict(tcp="sack", flows=20, buffer_pkts=10, **_DUMB),
    "highspeed": dict(tcp="highspeed", flows=4, buffer_pkts=40, **{**_DUMB, "wmax_pkts": 2000, "core_mbps": 200}),
    "cubic": dict(tcp="cubic_2622", flows=4, buffer_pkts=40, **{**_DUMB, "wmax_pkts": 2000, "core_mbps": 200}),
    "scalable": dict(tcp="scalable", flows=4, buffer_pkts=40, **{**_DUMB, "wmax_pkts": 2000, "core_mbps": 200}),
    "bic": dict(tcp="bic", flows=4, buffer_pkts=40, **{**_DUMB, "wmax_pkts": 2000, "core_mbps": 200}),
    "htcp": dict(
        tcp=dict(cc="htcp", recovery="sack", tick_ms=1),
        flows=4,
        buffer_pkts=40,
        **{**_DUMB, "wmax_pkts": 2000, "core_mbps": 200},
    ),
    "westwood": dict(tcp="westwood", flows=6, buffer_pkts=20, **{**_DUMB, "wmax_pkts": 2000, "core_mbps": 50}),
    "lp": dict(tcp="lp", tcp_mix="lp:2,reno:2", flows=4, buffer_pkts=40, **{**_DUMB, "wmax_pkts": 2000}),
    "mix": dict(
        tcp="reno", tcp_mix="reno:3,newreno:2,sack:2,highspeed:2,scalable:1", flows=10, buffer_pkts=12, **_DUMB
    ),
    # Added with 0.6.0: the linux recovery (the Linux laws' presets use it since).
    "linux_reno": dict(tcp=dict(cc="newreno", recovery="linux"), flows=20, buffer_pkts=10, **_DUMB),
    # Added with 0.10.0: traffic groups (udp streams, pareto transfers) beside flat short flows.
    "traffic": dict(
        tcp="reno",
        flows=8,
        buffer_pkts=30,
        short_mbps=1,
        core_mbps=10,
        rtt_ms=60,
        rtt_spread_ms=40,
        wmax_pkts=64,
        duration_s=20,
        warmup_s=5,
        traffic=[
            dict(kind="udp", flows=5, rate_mbps=0.2),
            dict(kind="udp", flows=2, rate_mbps=0.5, pattern="poisson", pkt_bytes=200),
            dict(kind="pareto", load_mbps=2, mean_bytes=20000, shape=1.5, tcp="cubic_2622"),
        ],
    ),
    # Added with 0.11.0: http sessions and a bulk on/off schedule, on parking-lot routes.
    "traffic_web": dict(
        tcp="newreno",
        flows=3,
        buffer_pkts=25,
        rtt_ms=80,
        rtt_spread_ms=40,
        wmax_pkts=64,
        duration_s=20,
        warmup_s=5,
        topology=dict(name="parking_lot", links=[dict(rate_mbps=10, delay_ms=5), dict(rate_mbps=6, delay_ms=10)]),
        traffic=[
            dict(kind="http", sessions=6, route=[0, 1], pages_max=50),
            dict(kind="bulk", flows=4, route=[1], tcp="sack", schedule=[(6.0, 2), (12.0, 0), (15.0, 4)]),
            dict(kind="udp", flows=3, rate_mbps=0.3, route=[0]),
        ],
    ),
    # Added with 0.12.0: the ABS controller (gain training and a memory bound).
    "abs_controller": dict(
        tcp="reno",
        flows=20,
        buffer_pkts=50,
        core_mbps=10,
        rtt_ms=90,
        rtt_spread_ms=60,
        wmax_pkts=10_000,
        duration_s=30,
        warmup_s=5,
        buffer_policy=dict(
            name="abs", interval_ms=200, target_util=0.95, target_loss=0.01, memory_schedule=[(0.0, 300), (20.0, 60)]
        ),
    ),
    # Added with 0.7.0: CUBIC through timeouts (its packets-per-ACK estimate is frozen outside Open).
    "cubic_timeouts": dict(tcp="cubic_2622", flows=20, buffer_pkts=3, **_DUMB),
    # Added with 0.15.0: queue disciplines, dropping and marking (ECN senders hold the window in CWR),
    # and DCTCP (its receiver echoes CE per packet, through delayed ACKs).
    "fq_codel": dict(tcp="sack", queue="fq_codel", flows=20, buffer_pkts=60, **_DUMB),
    "dctcp": dict(
        tcp=dict(cc="dctcp", recovery="sack", ecn=True, delayed_ack=True, delack_ms=1),
        queue=dict(name="step", k_pkts=8),
        flows=8,
        buffer_pkts=100,
        core_mbps=200,
        rtt_ms=1,
        wmax_pkts=1000,
        duration_s=2,
        warmup_s=0.5,
    ),
    "codel_ecn": dict(
        tcp=dict(cc="cubic_2622", recovery="sack", ecn=True),
        queue=dict(name="codel", ecn=True),
        flows=20,
        buffer_pkts=60,
        **_DUMB,
    ),
    # A Linux 6.x sender (RFC 9438 CUBIC with HyStart++, RACK-TLP with PRR), deep and shallow.
    "linux": dict(tcp="cubic", flows=20, buffer_pkts=30, **{**_DUMB, "wmax_pkts": 1000}),
    "linux_shallow": dict(tcp="cubic", flows=20, buffer_pkts=4, **{**_DUMB, "wmax_pkts": 1000}),
    # Added in 0.25.0: Reno's AIMD as Linux runs it (delayed ACKs, RACK-TLP with PRR).
    "reno_linux": dict(tcp="reno_linux", flows=20, buffer_pkts=10, **{**_DUMB, "wmax_pkts": 1000}),
    "newreno_prr": dict(tcp=dict(cc="newreno", recovery="prr"), flows=20, buffer_pkts=10, **_DUMB),
    # BBR v1 with RACK-TLP, paced, against CUBIC in a shallow buffer; and with RFC 6675 SACK.
    "bbr_vs_linux": dict(tcp_mix="bbr:5,cubic:5", flows=10, buffer_pkts=15, **{**_DUMB, "wmax_pkts": 1000}),
    "bbr_sack": dict(
        tcp=dict(cc="bbr", recovery="sack", release="paced"), flows=8, buffer_pkts=60, **{**_DUMB, "wmax_pkts": 1000}
    ),
    # Added in 0.16.0: SACK recovery that keeps its scoreboard across timeouts (as ns-3), paced
    # under BBR, and with NewReno in a buffer shallow enough for timeouts.
    "bbr_sack_retain": dict(
        tcp=dict(cc="bbr", recovery="sack_retain", release="paced"),
        flows=8,
        buffer_pkts=60,
        **{**_DUMB, "wmax_pkts": 1000},
    ),
    "newreno_sack_retain": dict(tcp=dict(cc="newreno", recovery="sack_retain"), flows=20, buffer_pkts=3, **_DUMB),
    # Added in 0.18.0: a run that stops on precision (issue 57), naming a time average and the
    # two ratios (loss, delay), which 0.18.0 estimates as ratios of sums.
    "precision": dict(
        tcp="reno",
        flows=20,
        buffer_pkts=30,
        precision=dict(
            metrics=["utilization", "loss_rate", "mean_queue_delay_ms"], halfwidth=[0.02, 0.005, 5], max_duration_s=60
        ),
        **_DUMB,
    ),
}

NULL_WAS_NAN = {
    ("summary", "jain_fairness"),
    ("summary", "mean_cwnd_pkts"),
    ("summary", "mean_rtt_ms"),
    ("summary", "short_afct_ms"),
    ("summary", "short_p99_fct_ms"),
    ("timeseries", "mean_cwnd_pkts"),
    ("flows", "mean_cwnd_pkts"),
}
"""Columns whose not-applicable value was NaN in 0.1.0 and is NULL since 0.2.0 (0.2.0's only
intended difference; compared with NULL read as NaN)."""

_UTILIZATION = {
    ("summary", "utilization"),
    ("summary", "effective_utilization"),
    ("timeseries", "utilization"),
    ("links", "utilization"),
}
_FLOW_COUNTS = {
    ("flows", c)
    for c in (
        "delivered_pkts",
        "dropped_pkts",
        "fast_retransmits",
        "goodput_mbps",
        "in_flight_pkts",
        "mean_cwnd_pkts",
        "retransmits",
        "sent_pkts",
        "timeouts",
    )
}
_LINK_COUNTS = {
    ("links", c)
    for c in (
        "arrivals",
        "arrivals_total",
        "departures",
        "departures_total",
        "drops",
        "drops_total",
        "goodput_mbps",
        "held_at_end",
        "loss_rate",
        "mean_queue_delay_ms",
        "mean_queue_pkts",
        "p99_queue_delay_ms",
        "p99_queue_pkts",
    )
}
_SUMMARY_COUNTS = {
    ("summary", c)
    for c in (
        "access_loss_rate",
        "bottleneck_arrivals",
        "bottleneck_drops",
        "bottleneck_pkts",
        "events",
        "fast_retransmits",
        "goodput_mbps",
        "jain_fairness",
        "loss_rate",
        "mean_cwnd_pkts",
        "mean_queue_delay_ms",
        "mean_queue_pkts",
        "p99_queue_delay_ms",
        "p99_queue_pkts",
        "retransmits",
        "short_afct_ms",
        "short_flows_done",
        "short_p99_fct_ms",
        "timeouts",
    )
}
_SERIES_COUNTS = {
    ("timeseries", c)
    for c in ("arrivals", "drops", "goodput_mbps", "mean_cwnd_pkts", "queue_max_pkts", "queue_mean_pkts")
}
_TRACE = {("trace", c) for c in ("event", "flow", "queue_pkts", "seq", "time_s")}
_ACCESS_AND_SHORT = {
    ("summary", c) for c in ("access_loss_rate", "short_afct_ms", "short_flows_done", "short_p99_fct_ms")
}
"""Summary counts of access links and short flows, which a dumbbell of long flows does not have."""
ALL_COLUMNS: set[tuple[str, str]] = {("*", "*")}
"""Every column: a change of behaviour that shows in all of a config's outputs (see ONLY_IN)."""
CHANGED_IN: dict[str, tuple[set[tuple[str, str]], str]] = {
    "0.3.0": (
        _UTILIZATION,
        (
            "utilization is busy time over elapsed time: a transmission straddling the end "
            "of warm-up or of a sample is split, so no interval exceeds 1 (issue 13, D7)"
        ),
    ),
    "0.8.0": (
        _FLOW_COUNTS | _LINK_COUNTS | _SUMMARY_COUNTS | _SERIES_COUNTS | _TRACE,
        (
            "ns-2's DropTail limit (buffer_pkts counts the packet in service: B - 1 wait) and RFC 6298's RTO "
            "(the minimum applies before the backoff), both as ns-2 2.35 does (issue 14: ABS Fig. 1 at 8 "
            "packets)"
        ),
    ),
    "0.9.0": (
        _FLOW_COUNTS | _LINK_COUNTS | _SUMMARY_COUNTS | _SERIES_COUNTS | _TRACE,
        (
            "a packet arriving at a topology link at the instant its transmission ends meets the queue before "
            "the departure, as ns-2's event order gives (issue 14: two Reno flows at 8 packets locked one out); "
            "the Linux laws grow only on an ACK before which the window was full (tcp_is_cwnd_limited)"
        ),
    ),
    "0.13.0": (
        {
            ("links", "buffer_pkts"),
            ("summary", "events"),
            ("summary", "controller"),
            ("summary", "controller_interval_ms"),
            ("summary", "topology_links"),
        },
        (
            "buffer policies (issue 16): links.buffer_pkts is the buffer the run starts with, after a policy's "
            "time-0 step (the schedule reference: 5, was the configured 50); an adaptive policy's interval may "
            "not be below sample_interval_s, so the schedule reference calls it every 100 ms instead of 50 "
            "(the same steps at the same times; fewer events); a parking-lot link's config gains its "
            "buffer_policy; the flat policy defaults to fixed, not NULL"
        ),
    ),
    "0.19.0": (
        _UTILIZATION
        | _FLOW_COUNTS
        | _LINK_COUNTS
        | _SERIES_COUNTS
        | (_SUMMARY_COUNTS - _ACCESS_AND_SHORT)
        | {("classes", c) for c in ("goodput_mbps", "loss_rate", "offered_mbps")}
        | {("flows", c) for c in ("loss_rate", "rtt_mean_ms", "rtt_p99_ms")}
        | {("links", c) for c in ("early_drops", "p50_queue_delay_ms")}
        | {("summary", c) for c in ("bottleneck_early_drops", "p50_queue_delay_ms")}
        | {("timeseries", "ca_flows")},
        (
            "fq_codel's DRR quantum defaults to Linux's 1514 bytes (psched_mtu: MTU plus Ethernet header), "
            "was the packet size (issue 58): with 1000-byte packets a flow sends up to two packets a round"
        ),
    ),
    "0.20.0": (
        ALL_COLUMNS,
        (
            "BBR's losses with the sack, sack_retain and prr recoveries are counted when RFC 6675's IsLost marks "
            "them, on the ACK that shows them, not when they are resent, so its rate samples deduct them as "
            "Linux's tp->lost does; PROBE_RTT's entry saves the larger window, as Linux (issue 58 part 3)"
        ),
    ),
    "0.21.0": (
        {("flows", "tcp_group"), ("links", "tcp_groups")}
        | {("summary", c) for c in ("tcp", "tcp_cc", "tcp_mix", "traffic")},
        (
            "names only (issue 69): the tcp preset linux is cubic, and the 2.6.22 law and preset that were "
            "cubic are cubic_2622; every number is unchanged. The summary's buffer_pkts and buffer_bytes are "
            "the buffer that ran, the config's are config_buffer_pkts and _bytes (RENAMED_BEFORE)"
        ),
    ),
    "0.22.0": (
        ALL_COLUMNS,
        (
            "the bbr preset runs with Linux's settings, as the kernel's bbr does (issue 71): initial window 10, "
            "min RTO 200 ms, delayed ACKs at 40 ms, exact RTT samples (were ns-2's: 2, 200 ms, none, 10 ms ticks)"
        ),
    ),
    "0.23.0": (
        ALL_COLUMNS,
        (
            "BBR's min RTT filter is renewed only by a strictly lower RTT, as Linux's (issue 72): equal samples "
            "of an empty queue had kept a flow out of PROBE_RTT (one flow at 0.3 BDP: 0.999 of the link, the "
            "kernel 0.975, now 0.974)"
        ),
    ),
    "0.24.0": (
        ALL_COLUMNS,
        (
            "RACK-TLP's paced departures follow Linux's earliest departure time (tcp_update_skb_after_send): a "
            "send's lateness, up to half a packet's time, comes off the next gap (issue 72; send_clock.rs)"
        ),
    ),
    "0.25.0": (
        ALL_COLUMNS,
        (
            "the cubic preset's Reno-friendly rate stays alpha_cubic past cwnd_prior, as Linux's tcp_cubic "
            "(cubic_rfc9438's new alpha_one=false; RFC 9438 4.3 sets it to 1): 8 flows in 0.3 BDP lost 41% more "
            "than the kernel's cubic, now 18% (issue 72)"
        ),
    ),
    "0.26.0": (
        ALL_COLUMNS,
        (
            "the reno_linux preset grows by the packets each ACK acknowledges, as Linux's tcp_reno_cong_avoid "
            "(the newreno law's new count_acked): with delayed ACKs a packet a round trip, as the kernel's reno, "
            "not half (issue 72). traffic_web's summary echoes the new key in its groups' settings"
        ),
    ),
    "0.27.0": (
        ALL_COLUMNS,
        (
            "the Linux presets (cubic, bbr, reno_linux) open with a handshake (tcp.handshake): the SYN's RTT is "
            "the first sample, so the RTO starts near 200 ms, not init_rto_s' 3 s, and BBR paces its initial "
            "window (bbr_init). A flow whose whole first window was dropped had waited 3, then 6 s, and starved "
            "(issue 72). traffic and traffic_web echo the new key in their groups' settings"
        ),
    ),
    "0.28.0": (
        ALL_COLUMNS,
        (
            "BBR's paced skbs hold bbr_tso_segs_goal packets (2 above 1.2 Mb/s), which leave back to back, as "
            "Linux's GSO skbs do (send_clock.rs): 32 flows' Jain 0.62-0.78 -> 0.83-0.96 (kernel 0.62-0.95) "
            "(issue 72)"
        ),
    ),
    "0.29.0": (
        ALL_COLUMNS,
        (
            "CUBIC's W_max and fast-convergence test count whole packets, as Linux's tcp_cubic and ns-3's "
            "TcpCubic: one flow in 0.3 BDP had alternated cycles with and without fast convergence on "
            "fractions of a packet; its queue read 6.8 ms, the kernel's 7.6-8.6, now 8.8 (issue 72)"
        ),
    ),
    "0.30.0": (
        ALL_COLUMNS,
        (
            "the window presets cubic and reno_linux send new data in Linux's TSO skbs and defer a send short of "
            "one (tcp.tso_defer; tcp_tso_autosize, tcp_tso_should_defer): one CUBIC flow at 100 Mb/s and 10 ms in "
            "16 packets reads 0.907, not 0.954 (the kernel 0.88). Their summaries echo the new key (issue 72)"
        ),
    ),
    "0.31.0": (
        ALL_COLUMNS,
        (
            "under tcp.tso_defer an skb of 2 packets or more ends with PSH, which the receiver ACKs at once, as "
            "Linux does since 6.6: one CUBIC flow at 10 Mb/s and 10 ms in 4 packets reads 0.965, not 0.665 (the "
            "kernel 0.979) (issue 72)"
        ),
    ),
    "0.32.0": (
        ALL_COLUMNS,
        (
            "under tcp.handshake the SYN crosses the route's queues, may be dropped and is resent after 1 s, "
            "and data starts at the SYN-ACK: BBR's first min RTT includes the queue the SYN waited in, as Linux's "
            "does. 8 BBR flows at 20 Mb/s, 50 ms and 1 BDP read Jain 0.73, not 0.82, on seeds 1-3 (the kernel "
            "0.70) (issue 72)"
        ),
    ),
    "0.33.0": (
        ALL_COLUMNS,
        (
            "the Linux presets set tcp.tsecr_rtt: a rate sample's RTT is Linux's, and an ACK of a retransmission "
            "that SACKs nothing new gives the timestamp it echoes, in whole ms, which BBR's min RTT filter takes "
            "(the kernel's ss shows 54.000 ms on a 54.6-ms path). Only BBR's results change; the Linux presets' "
            "summaries echo the key (issue 72)"
        ),
    ),
}
"""Per version, the (table, column)s it changed on purpose and why; every other column of every
earlier version is reproduced bit for bit."""

ONLY_IN: dict[str, set[str]] = {
    "0.20.0": {"bbr_sack", "bbr_sack_retain"},
    "0.21.0": {"bbr_vs_linux", "codel_ecn", "cubic", "cubic_timeouts", "linux", "linux_shallow", "traffic"},
    "0.22.0": {"bbr_vs_linux"},
    "0.23.0": {"bbr_sack", "bbr_sack_retain", "bbr_vs_linux"},
    "0.24.0": {"bbr_vs_linux"},
    "0.25.0": {"bbr_vs_linux", "linux", "linux_shallow"},
    "0.26.0": {"reno_linux", "traffic_web"},
    "0.27.0": {"bbr_vs_linux", "linux", "linux_shallow", "reno_linux", "traffic", "traffic_web"},
    "0.28.0": {"bbr_vs_linux"},
    "0.29.0": {"linux", "linux_shallow"},
    "0.30.0": {"bbr_vs_linux", "linux", "linux_shallow", "reno_linux", "traffic", "traffic_web"},
    "0.31.0": {"bbr_vs_linux", "linux", "linux_shallow", "reno_linux", "traffic", "traffic_web"},
    "0.32.0": {"bbr_vs_linux", "linux", "linux_shallow", "reno_linux"},
    "0.33.0": {"bbr_vs_linux", "linux", "linux_shallow", "reno_linux", "traffic", "traffic_web"},
}
"""Versions whose CHANGED_IN holds for these reference configs only; the others stay bit-identical."""

RENAMED_PREFIXES = {("summary", "controller"): "buffer_policy"}
"""Config columns renamed since they were captured (0.13.0: the `controller` section and its columns
controller_* are `buffer_policy`): an earlier capture's column is compared with its new name's values."""


RENAMED_BEFORE = {
    "0.21.0": {("summary", "buffer_pkts"): "config_buffer_pkts", ("summary", "buffer_bytes"): "config_buffer_bytes"}
}
"""Columns a version renamed, by the version: 0.21.0's summary reports the buffer that ran as
buffer_pkts and buffer_bytes, and echoes the config's as config_buffer_pkts and _bytes (issue 69)."""


def _renamed(table: str, column: str, version: str) -> str:
    for v, renames in RENAMED_BEFORE.items():
        if _key(version) < _key(v) and (table, column) in renames:
            return renames[(table, column)]
    for (t, old), new in RENAMED_PREFIXES.items():
        if t == table and column.startswith(old):
            return new + column[len(old) :]
    return column


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def changed_since(version: str, config: str) -> set[tuple[str, str]]:
    """The columns of `config` some version after `version` (up to the current one) changed on purpose."""
    return {
        c
        for v, (cols, _) in CHANGED_IN.items()
        if _key(version) < _key(v) <= _key(sim.ENGINE_VERSION) and config in ONLY_IN.get(v, {config})
        for c in cols
    }


def _allowed(table: str, column: str, allowed: set[tuple[str, str]]) -> bool:
    return (table, column) in allowed or ("*", "*") in allowed


def _enc(v: Any) -> bytes:
    if v is None:
        return b"N"
    if isinstance(v, (bool, int, float)):
        return struct.pack("<d", float(v))  # float64 bits: exact, NaN included
    if isinstance(v, str):
        return b"S" + v.encode()
    if isinstance(v, (list, tuple)):
        return b"[" + b",".join(_enc(x) for x in v) + b"]"
    if isinstance(v, dict):
        return b"{" + b",".join(k.encode() + b":" + _enc(x) for k, x in v.items()) + b"}"
    raise TypeError(type(v))


def column_digest(values: list) -> str:
    h = hashlib.sha256()
    for v in values:
        h.update(_enc(v))
        h.update(b"|")
    return h.hexdigest()[:16]


def outputs(res: sim.SimResult) -> dict[str, dict[str, list]]:
    """Every output table as columns (the summary without its wall-clock metrics and version)."""
    skip = set(WALL_CLOCK_METRICS) | {"engine_version"}
    tables = {
        "summary": {k: v for k, v in res.summary.to_pydict().items() if k not in skip},
        "timeseries": res.timeseries.to_pydict(),
        "flows": res.flows.to_pydict(),
        "links": res.links.to_pydict(),
        "classes": res.classes.to_pydict(),
    }
    if res.trace is not None:
        tables["trace"] = res.trace.to_pydict()
    return tables


CONFIG_NAMES = tuple(f.name for f in CONFIG_FIELDS)


def recorded_changes(
    recorded: dict[str, dict[str, str]], now: dict[str, dict[str, str]], version: str = sim.ENGINE_VERSION
) -> list[str]:
    """The columns recorded for `version` whose digest differs now (under their names of today).
    The summary's config columns echo the config (checked on their own); a config record that
    gains a field (a parking-lot link's `queue`, NULL) is a config change, not a result change."""
    out = []
    for t, cols in recorded.items():
        for c, d in cols.items():
            c_now = _renamed(t, c, version)
            if now.get(t, {}).get(c_now) != d and not (t == "summary" and c_now in CONFIG_NAMES):
                out.append(f"{t}.{c}")
    return out


def new_parameters(res: sim.SimResult, recorded: dict[str, str]) -> set[str]:
    """Config columns of the summary that a recording does not have and that are NULL or at their
    default here: the parameters of a component added since (a new law's knobs) or a new section
    at its default (`queue=droptail`), which change no result (every result column is compared)."""
    config = {f.name for f in CONFIG_FIELDS}
    summary = res.summary.to_pydict()
    default = config_row(sim.SimConfig())
    return {c for c in config & set(summary) - set(recorded) if all(v is None or v == default[c] for v in summary[c])}


def fingerprint(res: sim.SimResult, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Per-column digests of every table, and a digest of each table's schema (names and types);
    `skip` leaves out summary columns (see `new_parameters`)."""
    tables = {
        "summary": res.summary,
        "timeseries": res.timeseries,
        "flows": res.flows,
        "links": res.links,
        "classes": res.classes,
        "trace": res.trace,
    }
    # The summary's config columns are the config schema's (generated; a nested record may gain a
    # field, as a parking-lot link its `queue`): their values are compared, their types are not.
    config = {f.name for f in CONFIG_FIELDS} | skip
    schema = {
        name: column_digest([f"{f.name}:{f.type}" for f in t.schema if name != "summary" or f.name not in config])
        for name, t in tables.items()
        if t is not None
    }
    cols = {
        t: {c: column_digest(v) for c, v in cs.items() if t != "summary" or c not in skip}
        for t, cs in outputs(res).items()
    }
    return {"schema": schema, "tables": cols}


def legacy_view(res: sim.SimResult, legacy: dict[str, dict[str, str]], version: str) -> dict[str, dict[str, str]]:
    """The digests of the columns an earlier version's capture has (NULL read as NaN where a
    0.1.0 column was NaN)."""
    out: dict[str, dict[str, str]] = {}
    for t, cols in outputs(res).items():
        for c in legacy.get(t, {}):
            values = cols[_renamed(t, c, version)]
            if version == "0.1.0" and (t, c) in NULL_WAS_NAN:
                values = [float("nan") if v is None else v for v in values]
            out.setdefault(t, {})[c] = column_digest(values)
    return out


def _stored() -> dict[str, Any]:
    return json.loads(FILE.read_text())


@pytest.fixture(scope="module")
def results() -> dict[str, sim.SimResult]:
    return {name: sim.run(**kw) for name, kw in REFERENCE.items()}


@pytest.mark.parametrize("version", ["0.1.0", "0.2.0"])
def test_results_are_bit_identical_to_earlier_engines_except_the_listed_changes(results, version):
    """0.1.0 is the engine before its reshape; each later version may change only its CHANGED_IN."""
    old = _stored()["versions"][version]["configs"]
    assert set(old) <= set(REFERENCE)
    for name, captured in old.items():
        allowed = changed_since(version, name)
        view = legacy_view(results[name], captured["tables"], version)
        for table, cols in captured["tables"].items():
            changed = [c for c, d in cols.items() if view[table][c] != d and not _allowed(table, c, allowed)]
            assert not changed, f"{name}: {table} columns differ from engine {version}: {changed}"


def test_the_listed_changes_did_change_something(results):
    """Each CHANGED_IN entry is real: some reference config's column differs from the version before."""
    versions = sorted(_stored()["versions"], key=_key)
    for v, (cols, why) in CHANGED_IN.items():
        if _key(v) > _key(sim.ENGINE_VERSION):
            continue
        before = versions[versions.index(v) - 1]
        old = _stored()["versions"][before]["configs"]
        differs = {
            (t, c)
            for name, cap in old.items()
            if name in ONLY_IN.get(v, {name})
            for t, c_d in legacy_view(results[name], cap["tables"], before).items()
            for c, d in c_d.items()
            if d != cap["tables"][t][c]
        }
        assert differs if cols == ALL_COLUMNS else cols & differs, (
            f"{v} lists {sorted(cols)} as changed ({why}) but none differs from {before}"
        )


def test_fingerprints_match_the_engine_version(results):
    versions = _stored()["versions"]
    assert sim.ENGINE_VERSION in versions, (
        f"no fingerprints for ENGINE_VERSION {sim.ENGINE_VERSION}: record them with "
        "`python -m tests.sim.test_fingerprints --record`"
    )
    stored = versions[sim.ENGINE_VERSION]["configs"]
    assert set(stored) == set(REFERENCE), "reference configs and stored fingerprints differ: record them"
    for name, res in results.items():
        now = fingerprint(res, frozenset(new_parameters(res, stored[name]["tables"]["summary"])))
        changed = recorded_changes(stored[name]["tables"], now["tables"])
        echoed = {c: v[0] for c, v in res.summary.select(list(CONFIG_NAMES)).to_pydict().items()}
        assert echoed == {c: config_row(sim.SimConfig(**REFERENCE[name]))[c] for c in CONFIG_NAMES}
        changed += [f"{t} (schema)" for t, d in stored[name]["schema"].items() if now["schema"].get(t) != d]
        changed += [
            f"{t}.{c} (new)"
            for t, cols in now["tables"].items()
            for c in cols
            if c not in stored[name]["tables"].get(t, {})
        ]
        assert not changed, (
            f"{name}: results changed without an ENGINE_VERSION bump ({', '.join(changed[:8])}). If the change is "
            "intended, bump the version in sim/Cargo.toml (run_ids and caches key on it) and record new "
            "fingerprints with `python -m tests.sim.test_fingerprints --record`."
        )


def test_a_version_scoped_to_some_configs_leaves_the_others_as_the_version_before(results):
    """A version in ONLY_IN changed those configs' results and no other's: every other reference
    config reproduces the previous version's fingerprints, column for column."""
    versions = sorted(_stored()["versions"], key=_key)
    for v, scope in ONLY_IN.items():
        if _key(v) > _key(sim.ENGINE_VERSION):
            continue
        v_before = versions[versions.index(v) - 1]
        before = _stored()["versions"][v_before]["configs"]
        for name in set(before) - scope:
            recorded = before[name]["tables"]
            now = fingerprint(results[name], frozenset(new_parameters(results[name], recorded["summary"])))
            later = changed_since(v, name)  # what versions after v changed on purpose
            changed = [
                c for c in recorded_changes(recorded, now["tables"], v_before) if not _allowed(*c.split("."), later)
            ]
            assert not changed, f"{v} changed {name}, outside its scope {scope}: {changed}"


def test_a_changed_result_is_caught(results):
    """The check above can fail: a different seed changes the digests."""
    other = sim.run(**{**REFERENCE["reno"], "seed": 2})
    assert (
        fingerprint(other)["tables"]["summary"]["utilization"]
        != fingerprint(results["reno"])["tables"]["summary"]["utilization"]
    )


def record() -> None:
    data = _stored()
    versions = data["versions"]
    new = {name: fingerprint(sim.run(**kw)) for name, kw in REFERENCE.items()}
    if sim.ENGINE_VERSION in versions and versions[sim.ENGINE_VERSION]["configs"] != new:
        old = versions[sim.ENGINE_VERSION]["configs"]
        if set(old) == set(new) or "--force" not in sys.argv:
            sys.exit(
                f"fingerprints of {sim.ENGINE_VERSION} exist and differ: bump ENGINE_VERSION first "
                "(or pass --force after adding a reference config)"
            )
    versions[sim.ENGINE_VERSION] = {"configs": new}
    FILE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(new)} configs for {sim.ENGINE_VERSION} in {FILE}")


def extend() -> None:
    """Adds the digests of new output columns (and the new schemas) to the current version's
    fingerprints, refusing if any recorded column changed: new metrics are not a result change,
    and from now on they are guarded too."""
    data = _stored()
    stored = data["versions"][sim.ENGINE_VERSION]["configs"]
    for name, kw in REFERENCE.items():
        res = sim.run(**kw)
        now = fingerprint(res, frozenset(new_parameters(res, stored[name]["tables"]["summary"])))
        changed = recorded_changes(stored[name]["tables"], now["tables"])
        if changed:
            sys.exit(f"{name}: recorded columns changed ({', '.join(changed[:8])}): bump ENGINE_VERSION instead")
        for t, cols in now["tables"].items():
            for c, d in cols.items():
                stored[name]["tables"].setdefault(t, {}).setdefault(c, d)
        stored[name]["schema"] = now["schema"]
    FILE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"extended the fingerprints of {sim.ENGINE_VERSION} with the new columns in {FILE}")


if __name__ == "__main__" and "--record" in sys.argv:
    record()
elif __name__ == "__main__" and "--extend" in sys.argv:
    extend()


def test_metrics_are_the_summary_tables_row_exactly(results):
    """metrics() returns the summary row as the engine gave it, without building the summary
    table (0.5 ms of a tiny run); it must be the table's row to the type, on every reference run."""

    def typed(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: typed(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [typed(v) for v in x]
        return (type(x).__name__, x) if x == x else (type(x).__name__, "nan")

    for name, res in results.items():
        assert typed(res.metrics()) == typed(res.summary.to_pylist()[0]), name

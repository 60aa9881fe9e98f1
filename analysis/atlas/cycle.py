"""How long an atlas probe runs (issue 70): long enough for a few of the sender's own cycles at the
probe's buffer, since a probe shorter than one reads slow start and the first sawtooth, not the
steady state the answer is about (docs/atlas.md, "Probes"). With W = (BDP + B) / N a flow's
window at a congestion event, one cycle is
- NewReno and the other AIMD senders (reno, sack, paced): W/2 round trips, the window's climb
  back at a packet a round trip (RFC 5681);
- CUBIC: the time to regain W_max, RFC 9438's K = cbrt(W (1 - beta) / C) (section 4.2), or
  sooner in the Reno-friendly region, where the window grows 3 (1 - beta) / (1 + beta) a round
  trip (section 4.3);
- DCTCP: 1/g round trips, the time its alpha (an EWMA of gain g, RFC 8257 section 3.3) takes to
  follow the marking;
- BBR: its 10 s ProbeRTT period (Linux tcp_bbr.c, bbr_min_rtt_win_sec), the longest of its own.
A probe measures `cycles` of them, at least `duration_rtts` round trips and `min_duration_s`, at
most `max_probe_s` and `max_probe_pkts` packets' time; it runs that plus an allowance for the
transient (slow start and the first cycle), the two within that cap together, and MSER-5 cuts the
warm-up it finds (`precision.warmup=auto`, docs/precision.md). DCTCP's first cycle is not its
steady one: its alpha starts at 1 (Linux tcp_dctcp.c, dctcp_alpha_on_init = DCTCP_MAX_ALPHA), so
its first cut halves the window, and the climb back from slow start's losses takes up to W round
trips. Many AIMD flows leave slow start far from their fair shares; each cycle scales the spread
between two windows by beta (Chiu and Jain, "Analysis of the increase and decrease algorithms for
congestion avoidance", 1989), so the allowance adds the cycles that bring it to CONVERGED of
itself."""

from __future__ import annotations

import math
from typing import Any

from analysis.atlas.rules import sender
from analysis.atlas.spec import AtlasSpec, Cell

CUBIC_C = 0.4
"""RFC 9438's C (segments / s^3)."""
BBR_PROBE_RTT_S = 10.0
"""BBR v1's min-RTT window: it enters ProbeRTT at least this often."""
DCTCP_G = 1 / 16
"""DCTCP's alpha gain (RFC 8257, Linux dctcp_shift_g 4)."""
CONVERGED = 0.05
"""The spread between AIMD flows' windows, as a fraction of slow start's, the allowance waits for:
ln 0.05 / ln beta cycles, 5 for NewReno and 9 for CUBIC's 0.7. Measured (10 seeds, 300 s): 100
CUBIC flows at 1 Gb/s and 100 ms settle 35-50 s in, 256 at 200 ms 30-60 s in (docs/atlas.md)."""
SAMPLES = 600
"""Time-series samples a probe takes (its sample interval is its length over this): enough for
MSER-5 and the 300 samples past it that an interval needs, few enough to store."""


def cycle_s(spec: AtlasSpec, cell: Cell, buffer_pkts: float) -> float:
    """One cycle of the cell's sender at `buffer_pkts`, in seconds (the module's comment)."""
    cc, beta, _ = sender(cell.tcp)
    rtt_s = cell.rtt_ms / 1e3
    w = (spec.bdp(cell) + buffer_pkts) / cell.flows
    if cc == "bbr":
        return BBR_PROBE_RTT_S
    if cc == "dctcp":
        return rtt_s / DCTCP_G
    if cc.startswith("cubic") and beta:  # the sooner of the cubic curve and the Reno-friendly line
        reno_friendly_s = w * (1 - beta) / (3 * (1 - beta) / (1 + beta)) * rtt_s
        return min((w * (1 - beta) / CUBIC_C) ** (1 / 3), reno_friendly_s)
    return w / 2 * rtt_s  # NewReno's AIMD, and any other law: the slowest climb


def first_cycle_s(spec: AtlasSpec, cell: Cell, buffer_pkts: float) -> float:
    """The sender's first cycle after slow start: DCTCP's is a climb of up to W round trips (the
    module's comment); every other sender's is its steady one."""
    if sender(cell.tcp)[0] != "dctcp":
        return cycle_s(spec, cell, buffer_pkts)
    return (spec.bdp(cell) + buffer_pkts) / cell.flows * cell.rtt_ms / 1e3


def convergence_s(spec: AtlasSpec, cell: Cell, buffer_pkts: float) -> float:
    """The cycles many AIMD flows take to share the link fairly (CONVERGED); none for one flow,
    BBR (no multiplicative decrease) or DCTCP (its decrease follows the marking, not a beta)."""
    cc, beta, _ = sender(cell.tcp)
    if cell.flows == 1 or cc in ("bbr", "dctcp") or not beta or not 0 < beta < 1:
        return 0.0
    return math.ceil(math.log(CONVERGED) / math.log(beta)) * cycle_s(spec, cell, buffer_pkts)


def transient_s(spec: AtlasSpec, cell: Cell, buffer_pkts: float) -> float:
    """The start window, slow start to the window (log2 W round trips), the first cycle and the
    flows' convergence to their fair shares."""
    w = (spec.bdp(cell) + buffer_pkts) / cell.flows
    slow_start = math.log2(max(2.0, w)) * cell.rtt_ms / 1e3
    first = first_cycle_s(spec, cell, buffer_pkts)
    return spec.start_window_s + slow_start + first + convergence_s(spec, cell, buffer_pkts)


def cap_s(spec: AtlasSpec, cell: Cell) -> float:
    """The longest a probe of the cell measures: `max_probe_s`, and `max_probe_pkts` packets at
    the link's rate."""
    if spec.max_probe_pkts is None:
        return spec.max_probe_s
    pkts_per_s = cell.core_mbps * 1e6 / (8 * spec.pkt_bytes())
    return min(spec.max_probe_s, spec.max_probe_pkts / pkts_per_s)


def measured_s(spec: AtlasSpec, cell: Cell, buffer_pkts: float) -> float:
    """The time a probe measures: `cycles` cycles, within the preset's floor and cap."""
    floor = max(spec.min_duration_s, spec.duration_rtts * cell.rtt_ms / 1e3)
    return min(cap_s(spec, cell), max(floor, spec.cycles * cycle_s(spec, cell, buffer_pkts)))


def warm_s(spec: AtlasSpec, cell: Cell, buffer_pkts: float) -> float:
    """The allowance for the transient before the measured time, at most the cap (`cap_s`)."""
    return min(cap_s(spec, cell), transient_s(spec, cell, buffer_pkts))


def spans_s(spec: AtlasSpec, cell: Cell, buffer_pkts: float) -> tuple[float, float]:
    """(allowance, measured time) of a probe under `probe: cycles`. With `cap_whole` the two
    together stay within the cap: a probe that cannot hold the transient and `cycles` cycles sees
    a transient whatever it spends (it is flagged long_cycle), so it keeps the measured time, at
    least half the cap, and the allowance gets the rest (1 Gb/s NewReno and CUBIC probes ran up to
    2x the cap: 10 of the small atlas's 118 core-minutes), but never less than the start window:
    a probe must measure after every flow has started (a 100 Gb/s cap is 0.6 s)."""
    warm, measured, cap = warm_s(spec, cell, buffer_pkts), measured_s(spec, cell, buffer_pkts), cap_s(spec, cell)
    if not spec.cap_whole or warm + measured <= cap:
        return warm, measured
    measured = min(measured, max(cap / 2, cap - warm))
    return max(cap - measured, spec.start_window_s), measured


def long_cycle(spec: AtlasSpec, cell: Cell, buffer_pkts: float) -> bool:
    """The probe saw a transient, not the steady state: under `probe: cycles` its allowance was
    short of the transient, or its measured time of `cycles` cycles; under `probe: fixed` it
    measured less than one cycle."""
    if spec.probe != "cycles":
        fixed = length(spec, cell, int(buffer_pkts))
        return cycle_s(spec, cell, buffer_pkts) > fixed["duration_s"] - fixed["warmup_s"]
    warm, measured = spans_s(spec, cell, buffer_pkts)
    return spec.cycles * cycle_s(spec, cell, buffer_pkts) > measured or transient_s(spec, cell, buffer_pkts) > warm


def probe_keys(spec: AtlasSpec, cell: Cell, buffer_pkts: float) -> dict[str, Any]:
    """The run keys of a probe of `cell` at `buffer_pkts`: its length, and the in-run precision
    that cuts its warm-up by MSER-5 and reports utilization over the rest. The run goes to its
    end (a half-width no run meets): the decisions are the seeds' (`analysis/atlas/search.py`)."""
    warm, measured = spans_s(spec, cell, buffer_pkts)
    duration = round(warm + measured, 3)
    return {
        "duration_s": duration,
        "warmup_s": round(warm, 3),
        "sample_interval_s": round(duration / SAMPLES, 6),
        "precision.metrics": ["utilization"],
        "precision.halfwidth": [1e-9],
        "precision.warmup": "auto",
    }


def length(spec: AtlasSpec, cell: Cell, buffer_pkts: int) -> dict[str, Any]:
    """How long a probe of `cell` at `buffer_pkts` runs and what it measures: `probe: cycles`
    (`probe_keys`), or `probe: fixed`: `duration_rtts` round trips (at least `min_duration_s`),
    the first `warmup_fraction` unmeasured."""
    if spec.probe == "cycles":
        return probe_keys(spec, cell, buffer_pkts)
    duration = max(spec.min_duration_s, spec.duration_rtts * cell.rtt_ms / 1e3)
    return {"duration_s": duration, "warmup_s": round(duration * spec.warmup_fraction, 6)}

"""The queueing theory behind the buffer-sizing rules (the rules themselves are `sim.rules`,
re-exported here). Units are in the names: rates in Mb/s, times in ms, sizes in packets."""

from __future__ import annotations

import math

from sim.rules import (  # noqa: F401  (re-exported: the reports read the rules from here)
    bdp_pkts,
    dick_newreno_pkts,
    enachescu_pkts,
    offered_load,
    stanford_pkts,
)


def mm1_overflow(rho: float, buffer_pkts: float) -> float:
    """P(an M/M/1 queue holds >= B packets) = rho^B: the drop rate of Enachescu et al.'s
    section 2 intuition ("at 75% load and with 20 packet buffers, 0.3%")."""
    return rho**buffer_pkts


def queue_places(buffer_pkts: int) -> int:
    """K of an M/x/1/K model of a link with `buffer_pkts` of buffer: the packet in service counts,
    as in ns-2's DropTail and our engine (a buffer of 0 or 1 leaves one place, the server)."""
    return max(buffer_pkts, 1)


def mm1b_loss(rho: float, buffer_pkts: int) -> float:
    """Loss probability of M/M/1/K with K = queue_places(buffer_pkts):
    (1 - rho) rho^K / (1 - rho^(K+1))."""
    k = queue_places(buffer_pkts)
    if rho == 1:
        return 1 / (k + 1)
    return (1 - rho) * rho**k / (1 - rho ** (k + 1))


def md1b_loss(rho: float, buffer_pkts: int) -> float:
    """Loss probability of M/D/1/K with K = queue_places(buffer_pkts).

    Embedded Markov chain at departures (states 0..K-1, arrivals per service ~ Poisson(rho)),
    then the time-average probability of a full system, 1 - 1 / (pi_0 + rho), which Poisson
    arrivals see (PASTA)."""
    k = queue_places(buffer_pkts)
    a = [math.exp(-rho) * rho**j / math.factorial(j) for j in range(k + 1)]
    p = [[0.0] * k for _ in range(k)]
    for i in range(k):
        base = 0 if i == 0 else i - 1
        for j in range(base, k):
            p[i][j] = a[j - base] if j < k - 1 else 1.0 - sum(a[: k - 1 - base])
    pi = [1.0 / k] * k
    for _ in range(100_000):
        new = [sum(pi[i] * p[i][j] for i in range(k)) for j in range(k)]
        done = max(abs(x - y) for x, y in zip(new, pi)) < 1e-16
        pi = new
        if done:
            break
    return 1.0 - 1.0 / (pi[0] + rho)


def tcp_mm1b_utilization(
    flows: int, rtt_ms: float, core_mbps: float, buffer_pkts: int, wmax_pkts: float = math.inf, pkt_bytes: int = 1000
) -> float:
    """Enachescu et al. section 4.1: utilization rho when N flows follow the TCP equation
    R = (1 / RTT) sqrt(3 / (2p)) (capped at Wmax / RTT) and the bottleneck drops like M/M/1/B,
    p = mm1b_loss(rho, B). The fixed point rho = N R / C is unique (the offered rate falls as
    rho rises); found by bisection."""
    c_pps = core_mbps * 1e6 / (8 * pkt_bytes)
    tau = rtt_ms / 1e3

    def excess(rho: float) -> float:
        p = mm1b_loss(rho, buffer_pkts)
        window = min(wmax_pkts, math.sqrt(1.5 / p)) if p > 0 else wmax_pkts
        return flows * window / tau - rho * c_pps

    lo, hi = 1e-9, 1.0 - 1e-12
    if excess(hi) > 0:
        return hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2

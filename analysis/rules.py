"""Buffer-sizing rules and the queueing theory behind them.

Units are in the names: rates in Mb/s, times in ms, sizes in packets of `pkt_bytes` bytes.
"""

from __future__ import annotations

import math


def bdp_pkts(core_mbps: float, rtt_ms: float, pkt_bytes: int = 1000) -> float:
    """The bandwidth-delay rule of thumb: B = RTT x C."""
    return core_mbps * 1e6 * rtt_ms / 1e3 / (8 * pkt_bytes)


def stanford_pkts(core_mbps: float, rtt_ms: float, flows: int, pkt_bytes: int = 1000) -> float:
    """Appenzeller et al. (2004): B = RTT x C / sqrt(N) for N desynchronised long flows."""
    return bdp_pkts(core_mbps, rtt_ms, pkt_bytes) / math.sqrt(max(flows, 1))


def enachescu_pkts(wmax_pkts: float, rho: float, theta: float) -> float:
    """Enachescu et al. (2006) Theorem 1: B >= log_{1/rho}(Wmax^2 / (2 (1 - theta))) packets
    give effective utilization theta when Poisson-like sources offer load rho < 1."""
    if not 0 < rho < 1:
        raise ValueError(f"rho: must be in (0, 1) (an over-provisioned link), got {rho}")
    if not 0 < theta < 1:
        raise ValueError(f"theta: must be in (0, 1), got {theta}")
    return math.log(wmax_pkts**2 / (2 * (1 - theta))) / math.log(1 / rho)


def dick_newreno_pkts(core_mbps: float, rtt_ms: float, losses: int = 1, pkt_bytes: int = 1000) -> float:
    """Dick (2005): one NewReno flow losing k packets per cycle needs B = k x C x RTT / 2."""
    return losses * bdp_pkts(core_mbps, rtt_ms, pkt_bytes) / 2


def offered_load(flows: int, wmax_pkts: float, rtt_ms: float, core_mbps: float, pkt_bytes: int = 1000) -> float:
    """Peak load of N window-limited flows: N x Wmax / RTT relative to C."""
    return flows * wmax_pkts * pkt_bytes * 8 / (rtt_ms / 1e3) / (core_mbps * 1e6)


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


RULES = ("fixed", "bdp", "stanford", "enachescu")


def resolve_buffer_pkts(
    rule: str,
    scale: float,
    *,
    buffer_pkts: int,
    core_mbps: float,
    rtt_ms: float,
    flows: int,
    wmax_pkts: float,
    pkt_bytes: int,
    theta: float = 0.9,
) -> int:
    """The buffer a sweep point uses: `fixed` keeps buffer_pkts; the others are scale x rule,
    rounded. For `enachescu`, rho is the peak offered load, clipped to [0.05, 0.95] (the
    theorem needs rho < 1; an under-provisioned link is treated as rho = 0.95)."""
    if rule == "fixed":
        return buffer_pkts
    if rule == "bdp":
        b = bdp_pkts(core_mbps, rtt_ms, pkt_bytes)
    elif rule == "stanford":
        b = stanford_pkts(core_mbps, rtt_ms, flows, pkt_bytes)
    elif rule == "enachescu":
        rho = min(max(offered_load(flows, wmax_pkts, rtt_ms, core_mbps, pkt_bytes), 0.05), 0.95)
        b = enachescu_pkts(wmax_pkts, rho, theta)
    else:
        raise ValueError(f"buffer_rule: unknown rule {rule!r}; allowed: {', '.join(RULES)}")
    return max(0, round(scale * b))

"""The static buffer-sizing rules, as formulas of a link's nominal figures (the engine's static
policies compute the same per link, from the flows that cross it; docs/engine.md). Units are in
the names: rates in Mb/s, times in ms, sizes in packets of `pkt_bytes` bytes."""

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

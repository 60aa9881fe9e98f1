"""The classic buffer-sizing rules at an atlas cell, in packets (None where a rule does not apply),
from `sim.rules` (docs/atlas.md, "The rules"):
- bdp: RTT x C, every cell;
- stanford: RTT x C / sqrt(N) (Appenzeller, Keslassy and McKeown, SIGCOMM 2004), every cell;
- spang: RTT x C x (1 - beta) / beta, the single-flow rule for a sender that cuts its window to
  beta x W at a loss (as the project states Spang, Arslan and McKeown, 2021), one-flow cells of the
  loss-based senders with a beta;
- enachescu: log_{1/rho}(W^2 / (2 (1 - theta))) (Enachescu et al., CCR 2006, Theorem 1), paced
  senders, with rho = theta = sqrt(target) (effective utilization rho x theta = the target) and
  W = 2 x BDP / N, a flow's largest window. The atlas's links are saturated, outside the
  theorem's over-provisioned domain: the rule is judged as the O(log W) scaling it states;
- dick: RTT x C / 2, one NewReno flow losing one packet a cycle (Dick, 2005), one-flow NewReno cells."""

from __future__ import annotations

import functools
import math

from analysis.atlas.spec import Cell
from analysis.rules import bdp_pkts, dick_newreno_pkts, enachescu_pkts, stanford_pkts

NEWRENO = ("reno", "newreno")


@functools.cache
def sender(tcp: str) -> tuple[str, float | None, bool]:
    """(window law, decrease factor beta or None, paced) of a `tcp` preset."""
    from sweeps.schema import group_options

    conf = group_options("tcp")[tcp]
    beta = getattr(conf, "beta", None)
    if beta is None and conf.cc in NEWRENO:
        beta = 0.5
    return conf.cc, beta, conf.release == "paced"


def rules(pkt: int, cell: Cell, target: float) -> dict[str, float | None]:
    """Each rule's buffer (packets) at `cell` for `target`, with `pkt`-byte packets."""
    bdp = bdp_pkts(cell.core_mbps, cell.rtt_ms, pkt)
    cc, beta, paced = sender(cell.tcp)
    out: dict[str, float | None] = {
        "bdp": bdp,
        "stanford": stanford_pkts(cell.core_mbps, cell.rtt_ms, cell.flows, pkt),
        "spang": bdp * (1 - beta) / beta if beta and cc != "dctcp" and cell.flows == 1 else None,
        "enachescu": None,
        "dick": dick_newreno_pkts(cell.core_mbps, cell.rtt_ms, 1, pkt) if cc in NEWRENO and cell.flows == 1 else None,
    }
    if paced and 0 < target < 1:
        out["enachescu"] = enachescu_pkts(max(2.0, 2 * bdp / cell.flows), math.sqrt(target), math.sqrt(target))
    return {k: (None if v is None or not math.isfinite(v) else v) for k, v in out.items()}

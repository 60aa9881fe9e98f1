"""`python -m analysis crosscheck NAME`: a reproduction's set-up run again in ns-2 2.35 (see
analysis/ns2.py), stored in analysis/ns2_reference.json for that reproduction's report to show
beside our engine's numbers."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from omegaconf import OmegaConf

from analysis import ns2, rules
from analysis.reproductions.stanford import (FIG12_HALF_RULE_FLOWS, FIG12_NAME, STANFORD_CORE_MBPS,
                                           STANFORD_FLOWS, STANFORD_PROFILES, STANFORD_RTT_MS, STANFORD_SEEDS,
                                           fig12_half_rule_points, fig12_overrides, stanford_overrides)
from sim import SimConfig
from sweeps.api import JobList, compose_config
from sweeps.precheck import CONF_DIR


def _configs(overrides: list[str], points: list[dict[str, Any]]) -> list[SimConfig]:
    """The engine configs the sweep would run for these points, composed by Hydra as it would."""
    return [spec.sim for spec in JobList(compose_config(overrides), points).specs()]


def stanford_min_buffer() -> dict[str, Any]:
    """ns-2's minimum buffer for 95% per flow count, for the first RTO profile (ns-2 2.35's own)."""
    name, label, extra = STANFORD_PROFILES[0]
    cfgs = _configs(stanford_overrides("results", name, extra), [{"flows": n} for n in STANFORD_FLOWS])
    hi = math.ceil(rules.bdp_pkts(STANFORD_CORE_MBPS, STANFORD_RTT_MS))
    searches = ns2.min_buffer_search(cfgs, 0.95, [hi] * len(cfgs), STANFORD_SEEDS)
    return {"profile": label, "seeds": list(STANFORD_SEEDS),
            "min_buffer_pkts": {str(s.point["flows"]): s.min_buffer_pkts for s in searches}}


def stanford_min_buffer_fig12() -> dict[str, Any]:
    """ns-2's utilization with half the rule's buffer in the paper's Fig. 12 set-up (mean of the seeds):
    a bisection at 400 Mb/s would take hours of ns-2, and this alone says whether the need scales as
    1/sqrt(N) (flat) or faster (rising)."""
    points = fig12_half_rule_points()
    util = ns2.utilizations(_configs(fig12_overrides("results"), points))
    k = len(STANFORD_SEEDS)
    return {"seeds": list(STANFORD_SEEDS), "half_rule_utilization": {
        str(n): sum(u for p, u in zip(points, util) if p["flows"] == n) / k for n in FIG12_HALF_RULE_FLOWS}}


def dick_table() -> dict[str, Any]:
    """ns-2's utilization (mean of the sweep's seeds) at every row of Dick's table, Reno and NewReno."""
    sweep = OmegaConf.load(CONF_DIR / "experiment" / "dick_table.yaml").hydra.sweeper.params
    flows = [int(x) for x in str(sweep.flows).split(",")]
    scales = [float(x) for x in str(sweep.buffer_scale).split(",")]
    seeds = [int(x) for x in str(sweep.seed).split(",")]
    out: dict[str, Any] = {"seeds": seeds}
    for tcp in str(sweep.tcp).split(","):
        points = [{"flows": n, "buffer_scale": x, "seed": s} for n in flows for x in scales for s in seeds]
        util = ns2.utilizations(_configs(["+experiment=dick_table", f"tcp={tcp}"], points))
        k = len(seeds)
        out[tcp] = {f"{p['flows']}/{p['buffer_scale']:g}": sum(util[i:i + k]) / k
                    for i, p in zip(range(0, len(points), k), points[::k])}
    return out


def abs_fig1() -> dict[str, Any]:
    """ns-2's TCP-Linux (and Sack1 for NewReno) on ABS Fig. 1's grid: utilization and loss rate per
    variant and buffer."""
    sweep = OmegaConf.load(CONF_DIR / "experiment" / "abs_fig1.yaml").hydra.sweeper.params
    buffers = [int(x) for x in str(sweep.buffer_pkts).split(",")]
    seeds = [int(x) for x in str(sweep.seed).split(",")]
    out: dict[str, Any] = {"seeds": seeds}
    for tcp in str(sweep.tcp).split(","):
        points = [{"buffer_pkts": b, "seed": s} for b in buffers for s in seeds]
        res = ns2.runs(_configs(["+experiment=abs_fig1", f"tcp={tcp}"], points))
        k = len(seeds)
        out[tcp] = {str(b): {m: sum(r[m] for r in res[i:i + k]) / k for m in ("utilization", "loss_rate")}
                    for i, b in zip(range(0, len(points), k), buffers)}
    return out


CROSSCHECKS: dict[str, Callable[[], dict[str, Any]]] = {
    "abs_fig1": abs_fig1,
    "stanford_min_buffer": stanford_min_buffer,
    FIG12_NAME: stanford_min_buffer_fig12,
    "dick_table": dick_table,
}


def crosscheck(name: str) -> int:
    data = CROSSCHECKS[name]()
    data["ns2"] = "2.35 (Debian package ns2)"
    ns2.save_reference(name, data)
    print(f"wrote {name} to {ns2.REFERENCE}")
    return 0

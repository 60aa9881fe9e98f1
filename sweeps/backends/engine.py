"""The default backend: buffersweep's Rust engine (`sim`)."""

from __future__ import annotations

import sim
from sim import SimConfig
from sim.result import SUMMARY_METRICS
from sweeps.backends.base import Backend, BackendResult


def run(cfg: SimConfig, limits: sim.Limits | None = None) -> BackendResult:
    res = sim.run(cfg, limits=limits)
    row = res.metrics()
    details = {
        "timeseries": res.timeseries,
        "flows": res.flows,
        "links": res.links,
        "classes": res.classes,
        "control": res.control,
    }
    return BackendResult({k: row[k] for k in SUMMARY_METRICS}, details)


def _check(cfg: SimConfig) -> None:
    """The engine mirrors everything its config accepts (SimConfig has validated it)."""


BACKEND = Backend(
    name="engine",
    doc="buffersweep's Rust engine (sim/)",
    install="pip install -e .",
    missing=lambda: None,
    version=lambda: sim.ENGINE_VERSION,
    check=_check,
    run=run,
    takes_limits=True,
)

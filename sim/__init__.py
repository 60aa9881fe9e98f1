"""buffersweep's packet-level simulator: a Rust engine behind a small typed API.

import sim
res = sim.run(tcp="paced", flows=40, buffer_pkts=10, wmax_pkts=32, core_mbps=100)
res.metrics()["utilization"]
"""

from sim._core import ENGINE_VERSION
from sim.config import POLICIES, TOPOLOGIES, VARIANTS, SimConfig
from sim.cost import Estimate, Limits, estimate
from sim.result import SimResult, run

__all__ = [
    "ENGINE_VERSION",
    "POLICIES",
    "TOPOLOGIES",
    "VARIANTS",
    "Estimate",
    "Limits",
    "SimConfig",
    "SimResult",
    "estimate",
    "run",
]

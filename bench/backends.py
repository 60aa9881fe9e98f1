"""`python -m bench.backends` (part of `make bench`): one dumbbell on every installed
backend, bottleneck packets per wall-second side by side, and for ns-3 the first run in a process
(import, compile and set-up included) beside the next ones, which reuse the process."""

from __future__ import annotations

import dataclasses
import time

from rich.console import Console
from rich.table import Table

import sim
from sweeps.backends import BACKENDS, ns3

CONFIG = sim.SimConfig(
    tcp="sack",
    flows=20,
    core_mbps=45.0,
    buffer_pkts=50,
    rtt_ms=100.0,
    rtt_spread_ms=40.0,
    pkt_bytes=1000,
    duration_s=60.0,
    warmup_s=20.0,
)
"""Dick's link (45 Mb/s, RTT 80-120 ms) with 20 SACK NewReno flows: every backend can run it."""
REPEATS = 3


def main() -> None:
    console = Console(width=150)
    table = Table(
        title=f"one run of {CONFIG.flows} flows, {CONFIG.core_mbps:g} Mb/s, {CONFIG.duration_s:g} s "
        "simulated, per backend",
        title_justify="left",
    )
    for col in (
        "backend",
        "version",
        "first run (s)",
        "next runs (s, mean)",
        "bottleneck pkts / wall-s",
        "utilization",
    ):
        table.add_column(col, justify="right")
    engine_rate = None
    for name, backend in BACKENDS.items():
        why = backend.missing()
        if why:
            table.add_row(name, "-", "-", "-", f"not installed: {backend.install}", "-")
            continue
        try:
            backend.check(CONFIG)
        except ValueError as e:  # the kernel runs in real time and its own senders: bench.kernel
            table.add_row(name, backend.version(), "-", "-", f"refuses this config: {e}", "-")
            continue
        walls, util, pkts = [], None, 0
        for k in range(REPEATS + 1):
            cfg = dataclasses.replace(CONFIG, seed=1 + k)
            t0 = time.perf_counter()
            res = backend.run(cfg)
            walls.append(time.perf_counter() - t0)
            util, pkts = res.metrics["utilization"], res.metrics["bottleneck_pkts"] or 0
        pkts_total = pkts * CONFIG.duration_s / (CONFIG.duration_s - CONFIG.warmup_s)
        rate = pkts_total / (sum(walls[1:]) / REPEATS)
        engine_rate = engine_rate or rate
        table.add_row(
            name,
            backend.version(),
            f"{walls[0]:.2f}",
            f"{sum(walls[1:]) / REPEATS:.3f}",
            f"{rate:,.0f} ({engine_rate / rate:,.0f}x slower than engine)" if name != "engine" else f"{rate:,.0f}",
            f"{util:.3f}",
        )
    console.print(table)
    if ns3.missing() is None:
        console.print(
            f"ns-3 compiled its scenario {ns3._scenario.cache_info().misses} time(s) for "
            f"{REPEATS + 1} runs: one process, reused (Ray reuses its workers the same way)."
        )


if __name__ == "__main__":
    main()

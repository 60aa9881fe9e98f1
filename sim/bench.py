"""Engine benchmark: `python -m sim.bench` (or `make bench`).

Runs the reference scenarios, each in its own process so that peak RSS is per scenario, and
prints simulated seconds, bottleneck packets and events per wall-second, wall time and peak RSS.
Targets (one core of the 2-core dev machine): >= 2,000,000 bottleneck packets per wall-second
on the first two; cost ~ packets x log(flows); memory O(flows + buffer): 10,000 flows < 500 MB.
"""

from __future__ import annotations

import json
import subprocess
import sys

from rich.console import Console
from rich.table import Table

SCENARIOS: dict[str, dict] = {
    "dick 45Mb/s 60 flows B=73 newreno": dict(
        tcp="newreno", flows=60, buffer_pkts=73, core_mbps=45, rtt_ms=100, rtt_spread_ms=20,
        wmax_pkts=10_000, duration_s=150, warmup_s=30, start_window_s=5),
    "enachescu 100Mb/s 40 flows B=10 paced": dict(
        tcp="paced", flows=40, buffer_pkts=10, core_mbps=100, rtt_ms=100, rtt_spread_ms=50,
        wmax_pkts=32, duration_s=200, warmup_s=50, start_window_s=5),
    "1Gb/s 1000 flows B=20 access 10Mb/s reno": dict(
        tcp="reno", flows=1000, buffer_pkts=20, core_mbps=1000, access_mbps=10, rtt_ms=100,
        rtt_spread_ms=50, wmax_pkts=10_000, duration_s=60, warmup_s=10, start_window_s=5),
}
# Scaling in flows under the same per-flow conditions (2 Mb/s of capacity per flow, wmax 32,
# ~5M bottleneck packets each): cost per packet should grow no faster than log(flows).
for _n in (10, 100, 1000, 10_000):
    SCENARIOS[f"scaling {_n} flows, {2 * _n} Mb/s"] = dict(
        tcp="newreno", flows=_n, core_mbps=2.0 * _n, buffer_pkts=max(20, _n // 10), wmax_pkts=32, rtt_ms=100,
        rtt_spread_ms=50, duration_s=max(10.0, 5e6 / (2.0 * _n * 1e6 / 8000)), warmup_s=2, start_window_s=1)
# The traffic mix of Appenzeller et al.'s Fig. 12: ~200,000 short flows (slot reuse keeps memory flat).
SCENARIOS["400Mb/s 300 long + 80Mb/s short flows B=129 reno"] = dict(
    tcp="reno", flows=300, buffer_pkts=129, core_mbps=400, short_mbps=80, rtt_ms=80, rtt_spread_ms=80,
    wmax_pkts=100_000, duration_s=300, warmup_s=30, start_window_s=5)
SCENARIOS["memory: 10000 flows, 1 Gb/s"] = dict(
    tcp="newreno", flows=10_000, buffer_pkts=100, core_mbps=1000, rtt_ms=100, rtt_spread_ms=50,
    wmax_pkts=10_000, duration_s=30, warmup_s=5, start_window_s=5)

CHILD = """
import json, resource, sys, sim
m = sim.run(**json.loads(sys.argv[1])).metrics()
m["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(m))
"""


def run_one(fields: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(fields)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    table = Table(title="sim engine benchmark (one core)")
    for col in ("scenario", "sim s", "util", "bottleneck pkts/s", "ns/pkt", "events/s", "wall s", "peak RSS MB"):
        table.add_column(col, justify="right" if col != "scenario" else "left")
    console = Console(width=150)
    with console.status("running scenarios..."):
        for name, fields in SCENARIOS.items():
            m = run_one(fields)
            table.add_row(name, f"{fields['duration_s']:.0f}", f"{m['utilization']:.3f}",
                          f"{m['pkts_per_s']:,.0f}", f"{1e9 / m['pkts_per_s']:.0f}", f"{m['events_per_s']:,.0f}",
                          f"{m['wall_s']:.2f}",
                          f"{m['peak_rss_mb']:.0f}")
    console.print(table)


if __name__ == "__main__":
    main()

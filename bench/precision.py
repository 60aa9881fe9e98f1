"""What precision costs and saves (issue 57), old and new side by side in one run:
1. replications in parallel: one point's 8 replications on every core, and one after another
   (one core), in wall time;
2. min-buffer at a fixed 30 s against the same search at +-0.005 (95%), in packets simulated.

`python -m bench.precision`; results in docs/precision.md."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPLICATION = ["core_mbps=500", "flows=20", "buffer_pkts=200", "duration_s=600", "rtt_spread_ms=40"]
REPLICATIONS = 8
SEARCH = ["target=0.95", "flows=100,200,300", "core_mbps=100"]
AT_PRECISION = [
    "precision.metrics=[utilization]",
    "precision.halfwidth=0.005",
    "precision.max_duration_s=120",
    "sample_interval_s=0.02",
]


def _run(args: list[str]) -> tuple[float, str]:
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=3600)
    if res.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed ({res.returncode}): {res.stderr[-2000:]}")
    return time.monotonic() - t0, res.stdout + res.stderr


def replications() -> None:
    """The same 8 replications (a target out of reach: all of them run) on 2 cores and on 1."""
    point = [*REPLICATION, "precision.metrics=[utilization]", "precision.halfwidth=1e-9"]
    point += [f"precision.min_seeds={REPLICATIONS}", f"precision.max_seeds={REPLICATIONS}", "mlflow.enabled=false"]
    walls = {}
    for cpus in (1, 2):
        with tempfile.TemporaryDirectory() as d:
            _, out = _run(["-m", "sweeps", *point, f"ray.num_cpus={cpus}", f"results_dir={Path(d) / 'r'}"])
            ran = re.search(r"ran (\d+) jobs in ([\d.]+) s", out)
            assert ran and int(ran.group(1)) == REPLICATIONS, out[-2000:]
            walls[cpus] = float(ran.group(2))
    print(f"{REPLICATIONS} replications of one point: one after another {walls[1]:.1f} s, in parallel on 2 cores ")
    print(f"  {walls[2]:.1f} s: {walls[1] / walls[2]:.2f}x (Ray's start-up apart)")


def search() -> None:
    with tempfile.TemporaryDirectory() as d:
        results = [f"results_dir={Path(d) / 'r'}", "mlflow.enabled=false"]
        for label, extra in (("fixed 30 s", []), ("+-0.005 (95%)", AT_PRECISION)):
            wall, out = _run(["-m", "analysis", "min-buffer", *SEARCH, *extra, *results])
            print(f"min-buffer {' '.join(SEARCH)}, {label}: {wall:.0f} s")
            for line in out.splitlines():
                if line.startswith(("│", "undecidable:", "unreachable:")):
                    print("  " + line)


if __name__ == "__main__":
    replications()
    search()

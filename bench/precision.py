"""What precision costs and saves (issue 57), old and new side by side in one run:
1. replications in parallel: one point's 8 replications on every core, and one after another
   (one core), in wall time;
2. three presets against their precision variants, in packets simulated and wall time;
3. min-buffer at a fixed 30 s against the same search at +-0.005 (95%), in packets simulated.

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


ROUNDS = 3
"""Serial and parallel runs alternate this many times: this VM's CPU speed drifts by a quarter
from minute to minute (the same job takes 2.6-4.3 s of CPU time), so one pair can say 1.6x or 2.3x."""


def _replicate(point: list[str], cpus: int) -> tuple[float, float]:
    """One sweep of the point on `cpus` cores: its wall time and its jobs' summed wall time."""
    from analysis.db import connect

    with tempfile.TemporaryDirectory() as d:
        _, out = _run(["-m", "sweeps", *point, f"ray.num_cpus={cpus}", f"results_dir={d}"])
        ran = re.search(r"ran (\d+) jobs in ([\d.]+) s", out)
        assert ran and int(ran.group(1)) == REPLICATIONS, out[-2000:]
        (busy,) = connect(d).execute("SELECT sum(job_wall_s) FROM runs").fetchone()
    return float(ran.group(2)), busy


def replications() -> None:
    """The same 8 replications (a target out of reach: all of them run) on 1 core and on 2,
    alternating. Besides the ratio of wall times, the parallel sweep's busy time over its wall
    time says how much of the two cores it used, whatever the machine's speed that minute."""
    point = [*REPLICATION, "precision.metrics=[utilization]", "precision.halfwidth=1e-9"]
    point += [f"precision.min_seeds={REPLICATIONS}", f"precision.max_seeds={REPLICATIONS}", "mlflow.enabled=false"]
    ratios = []
    for _ in range(ROUNDS):
        (serial, _), (parallel, busy) = _replicate(point, 1), _replicate(point, 2)
        ratios.append(serial / parallel)
        print(f"{REPLICATIONS} replications of one point: one after another {serial:.1f} s, in parallel on 2 cores")
        print(f"  {parallel:.1f} s: {serial / parallel:.2f}x; cores in use {busy / parallel:.2f}", end="")
        print(" (Ray's start-up apart)")
    print(f"  median over {ROUNDS} rounds: {sorted(ratios)[ROUNDS // 2]:.2f}x")


PRESETS = [
    ("dick_table", []),
    ("bbr_shallow_loss", ["core_mbps=100"]),
    ("aqm_buffer_independence", ["tcp=cubic_2622", "flows=8", "core_mbps=100"]),
]
"""Fixed presets whose precision variant (NAME_precision) is measured beside them, on these grids."""


def presets() -> None:
    """Each preset and its precision variant on the same grid: packets simulated and wall time."""
    from analysis.db import connect

    for preset, grid in PRESETS:
        with tempfile.TemporaryDirectory() as d:
            cost = {}
            for name in (preset, f"{preset}_precision"):
                args = ["-m", "sweeps", "-m", f"+experiment={name}", f"results_dir={d}", "mlflow.enabled=false"]
                wall, _ = _run([*args, "--yes", *grid])
                sql = "SELECT sum(pkts_per_s * wall_s), count(*) FROM runs WHERE name = ?"
                packets, n = connect(d).execute(sql, [name]).fetchone()
                cost[name] = packets
                print(f"{name} {' '.join(grid)}: {n} runs, {packets / 1e6:.1f} M packets, {wall:.0f} s")
            print(f"  the precision variant simulates {cost[preset] / cost[f'{preset}_precision']:.2f}x fewer packets")


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
    presets()
    search()

"""Cluster benchmark: `python -m cluster.bench` (part of `make bench`).

The same CPU-bound sweep (32 jobs of about 1.1 s) on a local cluster with one worker node and
with two (1 CPU each): wall time, speed-up (target >= 1.8x on the 2-core machine) and the
per-job overhead (wall x workers - summed job time, per job). Run it as root for a private
network namespace (so Ray binds 127.0.0.1): `unshare -n sh -c 'ip link set lo up && ...'`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from rich.console import Console
from rich.table import Table

from cluster import local

GRID = ["seed=range(1,33)", "flows=40", "core_mbps=100", "duration_s=500", "warmup_s=5", "ray.batch_size=1",
        "mlflow.enabled=false"]


def run(workers: int, tmp: Path) -> tuple[float, float, float, int]:
    state_dir = tmp / f"state{workers}"
    state = local.up(workers, state_dir)
    try:
        t0 = time.monotonic()
        res = subprocess.run([sys.executable, "-m", "sweeps", "-m", *GRID, f"results_dir={tmp / f'r{workers}'}",
                              f"ray.address={state.address}"], capture_output=True, text=True,
                             env=dict(os.environ, RAY_AUTH_MODE="disabled"))
        wall = time.monotonic() - t0
        if res.returncode != 0:
            raise RuntimeError(res.stderr)
    finally:
        local.down(state_dir)
    job_s, n = duckdb.connect().execute(
        f"SELECT sum(job_wall_s), count(*) FROM read_parquet('{tmp}/r{workers}/runs/**/*.parquet')").fetchone()
    m = re.search(r"ran \d+ jobs in ([\d.]+) s", res.stderr)
    return wall, float(m.group(1)) if m else float("nan"), job_s, n


def main() -> None:
    console = Console(width=150)
    with tempfile.TemporaryDirectory(prefix="bsw-bench-") as d, console.status("running on 1 and 2 nodes..."):
        results = {w: run(w, Path(d)) for w in (1, 2)}
    table = Table(title="CPU-bound sweep on the local cluster (32 jobs, 1 CPU per worker node)")
    for col in ("worker nodes", "command wall s", "speed-up", "execution s", "speed-up", "sum of job s",
                "overhead per job s"):
        table.add_column(col, justify="right")
    for w, (wall, exec_s, job_s, n) in results.items():
        table.add_row(str(w), f"{wall:.1f}", f"{results[1][0] / wall:.2f}x", f"{exec_s:.1f}",
                      f"{results[1][1] / exec_s:.2f}x", f"{job_s:.1f}", f"{(exec_s * w - job_s) / n:.3f}")
    console.print(table)


if __name__ == "__main__":
    main()

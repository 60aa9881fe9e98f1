"""Cluster benchmark: `python -m cluster.bench [--rounds R]` (part of `make bench`).

The same CPU-bound sweep (32 jobs of about 1.1 s) on a local cluster with one worker node and
with two (1 CPU each): wall time, speed-up (target >= 1.8x on the 2-core machine) and the
per-job overhead (execution wall x workers - summed job time, per job). Run it as root for a
private network namespace (so Ray binds 127.0.0.1): `unshare -n sh -c 'ip link set lo up && ...'`.

The dev machine is a VM whose speed drifts by 10-20% from one minute to the next (the same
job measured 1.05 s and 1.21 s a few minutes apart), which is as large as the effect measured.
So the 1-node and 2-node runs alternate, R rounds of each, and the speed-up is reported per
round (1-node run / the 2-node run right after it) and as the median over rounds. Each round
also runs the same 32 simulations in one and in two plain processes (multiprocessing, no Ray):
that is the most this machine gives, the ceiling against which Ray's overhead is judged.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb
from rich.console import Console
from rich.table import Table

import sim
from cluster import local

JOBS = 32
GRID = [f"seed=range(1,{JOBS + 1})", "flows=40", "core_mbps=100", "duration_s=500", "warmup_s=5",
        "ray.batch_size=1", "mlflow.enabled=false"]


@dataclass
class Run:
    workers: int
    command_s: float  # the whole `python -m sweeps` command, interpreter start-up included
    execution_s: float  # first submission to last result, as the sweep reports it
    job_s: float  # the jobs' own summed wall time, measured inside the workers
    jobs: int
    nodes: int  # distinct nodes that ran jobs

    @property
    def overhead_per_job_s(self) -> float:
        return (self.execution_s * self.workers - self.job_s) / self.jobs


def run(workers: int, tmp: Path) -> Run:
    state_dir = tmp / f"state{workers}"
    results = tmp / f"r{workers}-{time.monotonic_ns()}"
    state = local.up(workers, state_dir)
    try:
        t0 = time.monotonic()
        res = subprocess.run([sys.executable, "-m", "sweeps", "-m", *GRID, f"results_dir={results}",
                              f"ray.address={state.address}"], capture_output=True, text=True,
                             env=dict(os.environ, RAY_AUTH_MODE="disabled"))
        wall = time.monotonic() - t0
        if res.returncode != 0:
            raise RuntimeError(res.stderr)
    finally:
        local.down(state_dir)
    job_s, n, nodes = duckdb.connect().execute(
        f"SELECT sum(job_wall_s), count(*), count(DISTINCT node_id) "
        f"FROM read_parquet('{results}/runs/**/*.parquet')").fetchone()
    m = re.search(r"ran \d+ jobs in ([\d.]+) s", res.stderr)
    return Run(workers, wall, float(m.group(1)) if m else float("nan"), job_s, n, nodes)


def _simulate(cfg: sim.SimConfig) -> None:
    """Module-level so the pool's processes can unpickle it."""
    sim.run(cfg)


def plain(workers: int) -> float:
    """Wall time of the same simulations in `workers` plain processes (pool start-up excluded)."""
    from sweeps.api import JobList, compose_config
    from sweeps.schema import build_spec

    base = compose_config([g for g in GRID if not g.startswith("seed=")])
    jobs = JobList(base, [{"seed": s} for s in range(1, JOBS + 1)])
    configs = [build_spec(jobs.job(p)).sim for p in jobs.points]
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_simulate, configs[:workers]))  # warm the processes (imports) before timing
        t0 = time.monotonic()
        list(pool.map(_simulate, configs, chunksize=1))
        return time.monotonic() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m cluster.bench")
    ap.add_argument("--rounds", type=int, default=3, help="alternating 1-node / 2-node rounds (default 3)")
    args = ap.parse_args(argv)
    console = Console(width=150)
    rounds: list[tuple[Run, Run]] = []
    ceiling: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bsw-bench-") as d:
        for r in range(args.rounds):
            with console.status(f"round {r + 1}/{args.rounds}: 1 and 2 plain processes, 1 node, 2 nodes..."):
                p1, p2 = plain(1), plain(2)
                ceiling.append(p1 / p2)
                rounds.append((run(1, Path(d)), run(2, Path(d))))
    table = Table(title=f"CPU-bound sweep on the local cluster ({JOBS} jobs of ~1.1 s, 1 CPU per worker node)")
    for col in ("round", "worker nodes", "nodes used", "command s", "execution s", "speed-up (execution)",
                "speed-up (command)", "sum of job s", "overhead per job s"):
        table.add_column(col, justify="right")
    for k, (one, two) in enumerate(rounds, 1):
        for run_ in (one, two):
            first = run_ is one
            table.add_row(str(k) if first else "", str(run_.workers), str(run_.nodes), f"{run_.command_s:.1f}",
                          f"{run_.execution_s:.1f}", "" if first else f"{one.execution_s / two.execution_s:.2f}x",
                          "" if first else f"{one.command_s / two.command_s:.2f}x", f"{run_.job_s:.1f}",
                          f"{run_.overhead_per_job_s:.3f}")
    console.print(table)
    exec_up = [one.execution_s / two.execution_s for one, two in rounds]
    cmd_up = [one.command_s / two.command_s for one, two in rounds]
    console.print(
        f"speed-up, 2 nodes vs 1: median {statistics.median(exec_up):.2f}x over the sweep's execution "
        f"(range {min(exec_up):.2f}-{max(exec_up):.2f}), median {statistics.median(cmd_up):.2f}x for the whole "
        f"command; per-job overhead median {statistics.median(o.overhead_per_job_s for o, _ in rounds):.3f} s "
        f"(1 node), {statistics.median(t.overhead_per_job_s for _, t in rounds):.3f} s (2 nodes); "
        f"job time on 2 nodes / on 1 node: {statistics.median(t.job_s / o.job_s for o, t in rounds):.2f} (median)")
    console.print(
        f"ceiling without Ray, 2 plain processes vs 1 on the same jobs: median {statistics.median(ceiling):.2f}x "
        f"(rounds: {', '.join(f'{c:.2f}x' for c in ceiling)}); Ray reaches "
        f"{statistics.median(exec_up) / statistics.median(ceiling):.0%} of it")


if __name__ == "__main__":
    main()

"""Cluster benchmark: `python -m bench.cluster [--rounds R] [--jobs N] [--sim-duration-s S]`
(part of `make bench`).

The same CPU-bound sweep (24 jobs of about 3 s: 40 Reno flows on 100 Mb/s for 1,500 simulated
seconds) on a local cluster of one node and of two (1 CPU each, the head being one of them):
wall time, speed-up (target >= 1.8x on the 2-core machine) and the per-job overhead (execution
wall x nodes - summed job time, per job). Run it as root for a private network namespace (so
Ray binds 127.0.0.1): `unshare -n sh -c 'ip link set lo up && ...'`.

On two cores every Ray daemon (raylets, GCS, agents, log monitors, the driver) takes its CPU
from the simulations once both nodes compute: about 0.2 of a core with a head without CPUs
plus a dashboard. So the head computes and runs no dashboard, and jobs last seconds: with
~1.1 s jobs (`--jobs 32 --sim-duration-s 500`) the per-job costs (task lease, result transfer,
the driver's bookkeeping) weigh three times more and two rounds measured 1.83x and 1.59x.

The dev machine is a VM whose speed drifts by 10-20% from one minute to the next, as much as
the effect measured. So the 1-node and 2-node runs alternate, R rounds of each, and the
speed-up is reported per round (1-node run / the 2-node run right after it) and as the median.
The same simulations in one and in two plain processes (multiprocessing, no Ray) give the
machine's ceiling, against which Ray's overhead is judged.
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
from cluster import auth, local
from sweeps.raycfg import cluster_env

JOBS = 24
SIM_DURATION_S = 1500


def grid(jobs: int, sim_duration_s: float) -> list[str]:
    return [
        f"seed=range(1,{jobs + 1})",
        "flows=40",
        "core_mbps=100",
        f"duration_s={sim_duration_s:g}",
        "warmup_s=5",
        "ray.batch_size=1",
        "mlflow.enabled=false",
    ]


@dataclass
class Run:
    nodes_up: int
    command_s: float  # the whole `python -m sweeps` command, interpreter start-up included
    execution_s: float  # first submission to last result, as the sweep reports it
    job_s: float  # the jobs' own summed wall time, measured inside the workers
    jobs: int
    nodes: int  # distinct nodes that ran jobs

    @property
    def overhead_per_job_s(self) -> float:
        return (self.execution_s * self.nodes_up - self.job_s) / self.jobs


def run(nodes: int, tmp: Path, grid_: list[str]) -> Run:
    """The sweep on a cluster of `nodes` 1-CPU nodes. The head is one of them (it computes too)
    and runs no dashboard: the sweep attaches as a driver and needs no Jobs API, and on two
    cores every extra daemon is taken from the simulations."""
    state_dir = tmp / f"state{nodes}"
    results = tmp / f"r{nodes}-{time.monotonic_ns()}"
    state = local.up(nodes - 1, state_dir, head_cpus=1, dashboard=False)
    try:
        t0 = time.monotonic()
        res = subprocess.run(
            [sys.executable, "-m", "sweeps", "-m", *grid_, f"results_dir={results}", f"ray.address={state.address}"],
            capture_output=True,
            text=True,
            env=dict(os.environ, **cluster_env(auth.token_path(state_dir))),
        )
        wall = time.monotonic() - t0
        if res.returncode != 0:
            raise RuntimeError(res.stderr)
    finally:
        local.down(state_dir)
    job_s, n, used = (
        duckdb.connect()
        .execute(
            f"SELECT sum(job_wall_s), count(*), count(DISTINCT node_id) "
            f"FROM read_parquet('{results}/runs/**/*.parquet')"
        )
        .fetchone()
    )
    m = re.search(r"ran \d+ jobs in ([\d.]+) s", res.stderr)
    return Run(nodes, wall, float(m.group(1)) if m else float("nan"), job_s, n, used)


def _simulate(cfg: sim.SimConfig) -> None:
    """Module-level so the pool's processes can unpickle it."""
    sim.run(cfg)


def plain(workers: int, jobs_n: int, sim_duration_s: float) -> float:
    """Wall time of the same simulations in `workers` plain processes (pool start-up excluded)."""
    from sweeps.api import JobList, compose_config
    from sweeps.schema import build_spec

    base = compose_config([g for g in grid(jobs_n, sim_duration_s) if not g.startswith("seed=")])
    jobs = JobList(base, [{"seed": s} for s in range(1, jobs_n + 1)])
    configs = [build_spec(jobs.job(p)).sim for p in jobs.points]
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_simulate, configs[:workers]))  # warm the processes (imports) before timing
        t0 = time.monotonic()
        list(pool.map(_simulate, configs, chunksize=1))
        return time.monotonic() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.cluster")
    ap.add_argument("--rounds", type=int, default=3, help="alternating 1-node / 2-node rounds (default 3)")
    ap.add_argument("--jobs", type=int, default=JOBS, help=f"jobs in the sweep (default {JOBS})")
    ap.add_argument(
        "--sim-duration-s",
        type=float,
        default=SIM_DURATION_S,
        help=f"simulated seconds per job (default {SIM_DURATION_S}: about 3 s of CPU each)",
    )
    args = ap.parse_args(argv)
    grid_ = grid(args.jobs, args.sim_duration_s)
    console = Console(width=150)
    rounds: list[tuple[Run, Run]] = []
    with tempfile.TemporaryDirectory(prefix="bsw-bench-") as d:
        with console.status("the machine's ceiling: the same simulations in 1 and 2 plain processes..."):
            ceiling = plain(1, args.jobs, args.sim_duration_s) / plain(2, args.jobs, args.sim_duration_s)
        for r in range(args.rounds):
            with console.status(f"round {r + 1}/{args.rounds}: 1 node, then 2 nodes..."):
                rounds.append((run(1, Path(d), grid_), run(2, Path(d), grid_)))
    mean_job_s = statistics.mean(one.job_s / one.jobs for one, _ in rounds)
    table = Table(
        title=f"CPU-bound sweep on the local cluster ({args.jobs} jobs of ~{mean_job_s:.1f} s, "
        "1 CPU per node, the head included)"
    )
    for col in (
        "round",
        "nodes",
        "nodes used",
        "command s",
        "execution s",
        "speed-up (execution)",
        "speed-up (command)",
        "sum of job s",
        "overhead per job s",
    ):
        table.add_column(col, justify="right")
    for k, (one, two) in enumerate(rounds, 1):
        for run_ in (one, two):
            first = run_ is one
            table.add_row(
                str(k) if first else "",
                str(run_.nodes_up),
                str(run_.nodes),
                f"{run_.command_s:.1f}",
                f"{run_.execution_s:.1f}",
                "" if first else f"{one.execution_s / two.execution_s:.2f}x",
                "" if first else f"{one.command_s / two.command_s:.2f}x",
                f"{run_.job_s:.1f}",
                f"{run_.overhead_per_job_s:.3f}",
            )
    console.print(table)
    exec_up = [one.execution_s / two.execution_s for one, two in rounds]
    cmd_up = [one.command_s / two.command_s for one, two in rounds]
    console.print(
        f"speed-up, 2 nodes vs 1: median {statistics.median(exec_up):.2f}x over the sweep's execution "
        f"(range {min(exec_up):.2f}-{max(exec_up):.2f}; target >= 1.8x), median {statistics.median(cmd_up):.2f}x "
        f"for the whole command; per-job overhead median "
        f"{statistics.median(o.overhead_per_job_s for o, _ in rounds):.3f} s (1 node), "
        f"{statistics.median(t.overhead_per_job_s for _, t in rounds):.3f} s (2 nodes); "
        f"job time on 2 nodes / on 1 node: {statistics.median(t.job_s / o.job_s for o, t in rounds):.2f} (median)"
    )
    console.print(
        f"ceiling without Ray, 2 plain processes vs 1 on the same jobs: {ceiling:.2f}x; Ray reaches "
        f"{statistics.median(exec_up) / ceiling:.0%} of it"
    )


if __name__ == "__main__":
    main()

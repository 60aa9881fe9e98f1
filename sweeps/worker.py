"""What a Ray worker does: simulate a batch of jobs, each on its backend (the engine by default).
Nothing else: no files, no tracking. An exception in a job is caught and returned as a failed
result, so the batch goes on. A batch's detail tables cross to the driver packed (`Packed`)."""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

import sim
from sweeps import arrowpack, backends


@dataclass
class Job:
    index: int
    run_id: str
    fields: dict[str, Any]
    fail: bool = False
    crash: bool = False
    backend: str = "engine"
    timeout_s: float | None = None
    """limits.job_timeout_s: the engine stops the run after it (backends that take limits)."""
    run_memory_mb: float | None = None
    """limits.run_memory_mb (none under debug.starve_when): past it the engine stops the run."""


@dataclass
class JobResult:
    index: int
    run_id: str
    status: str
    error: str | None
    traceback: str | None
    node_id: str
    started_at: float
    job_wall_s: float
    summary: dict[str, Any] | None
    details: dict[str, pa.Table] | None
    """The run's detail tables (timeseries, flows, links), for the store's DETAIL_TABLES."""


def node_id() -> str:
    import ray

    # get_runtime_context() would start a Ray instance when called outside Ray (inline runs).
    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local"


@dataclass
class Packed:
    """A batch's results on their way from a Ray worker to the driver, each detail table of every
    job in one Arrow IPC stream (`arrowpack`)."""

    results: list[JobResult]
    """details set to None where `tables` holds them."""
    tables: dict[str, arrowpack.Packed]


def pack(results: list[JobResult]) -> Packed:
    names = next((list(r.details) for r in results if r.details is not None), [])
    tables = {name: arrowpack.pack([r.details[name] if r.details else None for r in results]) for name in names}
    if any(p is None for p in tables.values()) or any(r.details and set(r.details) != set(names) for r in results):
        return Packed(results, {})  # tables of different shapes (backends): sent as they are
    return Packed([replace(r, details=None) for r in results], tables)  # type: ignore[arg-type]


def unpack(p: Packed) -> list[JobResult]:
    if p.tables:
        columns = {name: arrowpack.unpack(t) for name, t in p.tables.items()}
        for i, res in enumerate(p.results):
            if columns[next(iter(columns))][i] is not None:
                res.details = {name: col[i] for name, col in columns.items()}
    return p.results


def run_batch(jobs: list[Job], attempt: int) -> Packed:
    """A Ray task: `run_jobs`, packed for the trip to the driver."""
    return pack(run_jobs(jobs, attempt))


def run_jobs(jobs: list[Job], attempt: int) -> list[JobResult]:
    node = node_id()
    out = []
    for job in jobs:
        started = time.time()
        t0 = time.perf_counter()
        try:
            if job.crash and attempt == 0:
                os._exit(17)  # debug.crash_when: simulate a worker that dies
            if job.fail:
                raise RuntimeError("debug.fail_when matched this job")
            backend, cfg = backends.get(job.backend), sim.SimConfig.from_fields(**job.fields)
            # The sweep checked the estimated cost before it started (launch._validate).
            limits = sim.Limits(
                max_memory_gb=float("inf"),
                max_events=float("inf"),
                job_timeout_s=job.timeout_s,
                run_memory_mb=job.run_memory_mb,
            )
            res = backend.run(cfg, limits) if backend.takes_limits else backend.run(cfg)
            out.append(
                JobResult(
                    job.index,
                    job.run_id,
                    "ok",
                    None,
                    None,
                    node,
                    started,
                    time.perf_counter() - t0,
                    res.metrics,
                    res.details,
                )
            )
        except Exception as e:  # noqa: BLE001 - recorded as a failed run
            out.append(
                JobResult(
                    job.index,
                    job.run_id,
                    "failed",
                    str(e) if isinstance(e, TimeoutError) else f"{type(e).__name__}: {e}",
                    traceback.format_exc(),
                    node,
                    started,
                    time.perf_counter() - t0,
                    None,
                    None,
                )
            )
    return out

"""The Ray task loop of a sweep (`drive`): batches of jobs submitted as Ray tasks, at most
`max_in_flight` at a time, batch sizes from measured job times, and the two ways a task can
fail without its jobs failing. A worker or a node that died has its batch resubmitted (up to
`ray.max_retries`), unless Ray's memory monitor killed it and one of its jobs alone is estimated
to need more than a worker's share of the RAM: that batch is stored as failed at once. When the
embedded local Ray node dies (its raylet fate-shares with its dashboard agent, which the OOM
killer may pick), no job has failed: the loop says so in one line, restarts the embedded Ray,
at most MAX_RESTARTS times, and resubmits every batch it held; past that, or on an external
cluster, it raises RayLost (exit 3, "rerun to resume") and stores nothing for those jobs.
docs/sweeps.md, "Faults"."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from typing import Any

from rich.console import Console

from sweeps.errors import RayLost
from sweeps.worker import Job, JobResult, run_batch, unpack

TARGET_TASK_S = 0.5  # adaptive batching aims at tasks of about this length
MAX_RESTARTS = 2
"""Restarts of the embedded Ray in one sweep before giving up (exit 3)."""
NODE_SETTLE_S = 3.0
"""How long a worker's death waits for the embedded node's processes to show whether the
node died with it: in test_faults the raylet was seen dead 0.0-0.1 s after the error reached
the driver, while the GCS still called the node alive (the race that made that test flaky)."""

Batch = tuple[list[Job], dict[int, Any], int]
"""Jobs, their (spec, overrides) by index, and the attempt."""


def _node_died(e: BaseException) -> bool:
    """The task's node died under it, or the driver's own raylet did (not a worker crash)."""
    from ray.exceptions import LocalRayletDiedError, NodeDiedError

    return isinstance(e, (LocalRayletDiedError, NodeDiedError))


def oom_is_transient(e: BaseException, batch: list[Job], meta: dict[int, Any], cpus: int) -> bool:
    """Whether a batch whose worker Ray's memory monitor killed (OutOfMemoryError) may succeed if
    run again: yes unless one of its jobs alone is estimated to need more than a worker's share
    of the machine's memory (its RAM over its cores); such a job would be killed again, and is
    stored as failed at once. Jobs without an estimate (other backends) are retried."""
    from ray.exceptions import OutOfMemoryError

    from sim.cost import ram_gb

    if not isinstance(e, OutOfMemoryError):
        return True
    share_mb = ram_gb() * 1024 / max(1, cpus)
    return all(_peak_mb(meta[j.index][0]) <= share_mb for j in batch)


def _peak_mb(spec: Any) -> float:
    import sim
    from sweeps.backends import DEFAULT

    return sim.estimate(spec.sim).peak_memory_mb if spec.params["backend"] == DEFAULT else 0.0


def _local_node_alive(settle_s: float = NODE_SETTLE_S) -> bool:
    """The driver's own node (the embedded one, or the cluster node it attached through). The
    GCS marks a node dead only after its health checks miss (seconds), so a node this process
    started is judged by its own processes (raylet, GCS, agents), polled for `settle_s`: the
    raylet may still be exiting when its workers' deaths reach the driver."""
    import time

    import ray

    node = getattr(ray._private.worker, "_global_node", None)  # private, but the only instant answer
    if node is not None and node.all_processes:
        deadline = time.monotonic() + settle_s
        while not node.dead_processes():
            if time.monotonic() >= deadline:
                return True
            time.sleep(0.1)
        return False
    try:
        me = ray.get_runtime_context().get_node_id()
        return any(n["NodeID"] == me and n["Alive"] for n in ray.nodes())
    except Exception:  # noqa: BLE001 - a GCS that cannot answer is a dead node here
        return False


def _remotes() -> dict[str, Any]:
    """One remote function per backend, with its Ray resources (ns-3 holds ~0.7 GB a process); a
    `whole_node` backend's asks for every CPU of the smallest node that has its resources."""
    import ray

    from sweeps.backends import BACKENDS

    out = {}
    for name, b in BACKENDS.items():
        res = dict(b.resources)
        if b.whole_node:
            res["num_cpus"] = max(res.get("num_cpus", 1), _node_cpus(res.get("resources", {})))
        out[name] = ray.remote(max_retries=0, **res)(run_batch)
    return out


def _node_cpus(custom: dict[str, float]) -> int:
    """The CPUs of the smallest live node holding the `custom` resources (1 if none does)."""
    import ray

    cpus = [
        int(n["Resources"].get("CPU", 1))
        for n in ray.nodes()
        if n["Alive"] and all(n["Resources"].get(k, 0) >= v for k, v in custom.items())
    ]
    return max(1, min(cpus)) if cpus else 1


def _restart(ray_cfg: dict[str, Any]) -> None:
    import ray

    from sweeps.raycfg import start_ray

    ray.shutdown()
    start_ray(ray_cfg)


def failed_results(batch: list[Job], error: str) -> list[JobResult]:
    import time

    now = time.time()
    return [JobResult(j.index, j.run_id, "failed", error, None, "unknown", now, 0.0, None, None) for j in batch]


def drive(
    jobs: Iterator[tuple[Job, Any, list[str]] | None],
    ray_cfg: dict[str, Any],
    counts: Any,
    collect: Any,
    update: Any,
    console: Console,
    restart: bool,
) -> None:
    """Runs `jobs` on Ray, handing each batch's results to `collect`. A None from `jobs` means
    "nothing yet": the loop waits for a result and asks again. `restart`: the embedded Ray this
    sweep started may be restarted if its node dies."""
    import ray
    from ray.exceptions import RayError, RayTaskError

    remotes = _remotes()
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    max_in_flight = ray_cfg.get("max_in_flight") or 4 * cpus
    fixed_batch = ray_cfg.get("batch_size") or 0
    batch_size = fixed_batch or 1
    max_retries = ray_cfg.get("max_retries", 3)
    retry: deque[Batch] = deque()
    pending: dict[Any, Batch] = {}
    exhausted = False
    restarts = 0
    job_s: deque[float] = deque(maxlen=200)
    held: list[tuple[Job, Any, list[str]]] = []  # a job of another backend than its batch's

    def submit(batch: list[Job], meta: dict[int, Any], attempt: int) -> None:
        pending[remotes[batch[0].backend].remote(batch, attempt)] = (batch, meta, attempt)
        counts.running += len(batch)

    def next_batch() -> tuple[list[Job], dict[int, Any], bool]:
        """The next batch of up to batch_size jobs of one backend, and whether the jobs ran out."""
        batch: list[Job] = []
        meta: dict[int, Any] = {}
        for item in itertools.chain([held.pop()] if held else [], jobs):
            if item is None:  # nothing to run until a result arrives (`sweeps.mrip`)
                return batch, meta, False
            job, spec, overrides = item
            if batch and job.backend != batch[0].backend:
                held.append((job, spec, overrides))
                return batch, meta, False
            batch.append(job)
            meta[job.index] = (spec, overrides)
            if len(batch) >= batch_size:
                return batch, meta, False
        return batch, meta, True

    def node_lost(e: BaseException, batch: Batch) -> None:
        """The local node died: every batch held goes back, unfailed, to a restarted Ray."""
        nonlocal remotes, restarts
        lost = [batch, *pending.values()]
        pending.clear()
        counts.running = 0
        why = f"{type(e).__name__}, {sum(len(b[0]) for b in lost)} jobs in flight"
        if not restart or restarts >= MAX_RESTARTS:
            raise RayLost(f"Ray's local node died ({why}); restarted {restarts} times already")
        restarts += 1
        console.print(f"Ray's local node died ({why}); restarting it ({restarts} of {MAX_RESTARTS})")
        _restart(ray_cfg)
        remotes = _remotes()
        retry.extendleft(reversed(lost))

    while True:
        while len(pending) < max_in_flight:
            if retry:
                submit(*retry.popleft())
                continue
            if exhausted:
                break
            batch, meta, exhausted = next_batch()
            if not batch:
                break
            submit(batch, meta, 0)
        update()
        if not pending:
            return
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
        for ref in ready:
            if ref not in pending:  # dropped by a restart while this loop held it
                continue
            batch, meta, attempt = pending.pop(ref)
            counts.running -= len(batch)
            try:
                results = unpack(ray.get(ref))
            except RayTaskError as e:  # the batch function itself failed: record every job
                results = failed_results(batch, f"{type(e).__name__}: {e}")
            except RayError as e:
                if not _local_node_alive(NODE_SETTLE_S if _node_died(e) or restart else 0.0):
                    node_lost(e, (batch, meta, attempt))
                    break
                transient = oom_is_transient(e, batch, meta, cpus)
                if attempt < max_retries and transient:  # a worker, or a node of a cluster, died: resubmit
                    counts.retried += len(batch)
                    retry.append((batch, meta, attempt + 1))
                    continue
                why = "" if transient else " (a job's estimated peak memory is over a worker's share of the RAM)"
                results = failed_results(batch, f"worker died {attempt + 1} times: {type(e).__name__}{why}")
            collect(results, meta, attempt)
            job_s.extend(r.job_wall_s for r in results)
            if not fixed_batch and job_s:
                mean = sum(job_s) / len(job_s)
                batch_size = int(min(256, max(1, TARGET_TASK_S / max(mean, 1e-4))))

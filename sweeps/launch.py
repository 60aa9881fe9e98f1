"""The sweep driver: validates every job, skips what is stored, streams the rest through Ray in
bounded, adaptively sized batches, retries batches whose worker or node died, writes results
to Parquet as they arrive, logs them to MLflow, and shows progress.

Workers only simulate (`sweeps.worker`); this process is the single writer of results and
tracking, so a cluster needs no shared filesystem.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Protocol

import pyarrow as pa
from omegaconf import DictConfig, OmegaConf
from rich.console import Console

import sim
import sim.cost
from sim.result import config_row
from sweeps.backends import DEFAULT as DEFAULT_BACKEND
from sweeps.backends.base import CONTRACT_VERSION
from sweeps.drive import drive
from sweeps.errors import EXIT_INFRASTRUCTURE, RayLost, UsageError, exit_failure, exit_usage
from sweeps.heartbeat import Heartbeat
from sweeps.mrip import Mrip, MripGrid, replicated, store_points, stored_values
from sweeps.reaper import watch_driver
from sweeps.report import (
    Counts,
    Execution,
    close_tracker,
    progress_bar,
    progress_line,
    summary,
)
from sweeps.schema import OPERATIONAL, RunSpec, build_spec
from sweeps.store import DETAIL_TABLES, RUNS_SCHEMA, SCHEMAS, Store, StoreLocked
from sweeps.worker import Job, JobResult, run_jobs

FLUSH_EVERY_S = 2.0
FLUSH_EVERY_JOBS = 2000


class JobSource(Protocol):
    def __len__(self) -> int: ...
    def jobs(self) -> Iterator[tuple[int, list[str], dict[str, Any]]]: ...
    def swept(self) -> dict[str, list[Any]]: ...


class OneJob:
    """A single run (`python -m sweeps` without -m): the composed config is the job."""

    def __init__(self, job: dict[str, Any], overrides: list[str]) -> None:
        self._job, self._overrides = job, overrides

    def __len__(self) -> int:
        return 1

    def jobs(self) -> Iterator[tuple[int, list[str], dict[str, Any]]]:
        yield 0, self._overrides, self._job

    def swept(self) -> dict[str, list[Any]]:
        return {}


def sweep_id_of(name: str | None, grid: JobSource) -> str:
    """Same grid (same experiment, same axes and values) = same sweep: a rerun resumes it."""
    grid = getattr(grid, "inner", grid)  # a replicated grid (`MripGrid`) is its grid's sweep
    axes = getattr(grid, "axes", None)
    if hasattr(grid, "identity"):
        desc = grid.identity()
    elif axes is not None:
        desc = [[a.key, [str(v) for v in a.values]] for a in axes if not a.key.startswith(OPERATIONAL)]
    else:
        desc = sorted(o for o in next(iter(grid.jobs()))[1] if not o.lstrip("+").startswith(OPERATIONAL))
    payload = json.dumps({"name": name, "axes": desc}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def _settings(config: DictConfig) -> dict[str, Any]:
    from hydra.core.hydra_config import HydraConfig

    top = OmegaConf.to_container(config, resolve=True)
    assert isinstance(top, dict)
    top.pop("hydra", None)
    top["job_name"] = HydraConfig.get().job.name if HydraConfig.initialized() else "sweeps"
    return top


PARALLEL_VALIDATION_MIN_JOBS = 20_000
"""Grids this large are validated by a forked process per core: building 100,000 configs took
20 s in one process, most of the time before a 100,000-job sweep's first result."""
_FORKED: Any = None  # (grid, limits), inherited by the validating processes


def _checked(job: dict[str, Any], limits: sim.Limits) -> tuple[str, tuple[float, str] | None]:
    """The job's run_id, and if its windows cap its utilization, (the cap, what to say)."""
    spec = build_spec(job)
    if spec.params["backend"] != DEFAULT_BACKEND:
        return spec.run_id, None
    est = sim.cost.check(spec.sim, limits)
    warning = est.window_warning()
    return spec.run_id, None if warning is None else (est.window_cap_utilization, warning)


Checked = tuple[list[str], list[tuple[float, str, int]]]
"""run_ids in grid order, and (window cap, what to say, job) of the window-limited jobs."""


def _validate_slice(start: int, stop: int) -> tuple[Checked, tuple[int, str] | None]:
    """`_checked` for jobs start..stop-1 of the inherited grid, or the first job's error."""
    grid, limits = _FORKED
    run_ids, capped = [], []
    for i in range(start, stop):
        try:
            run_id, cap = _checked(grid.job_at(i), limits)
        except (ValueError, UsageError) as e:
            return (run_ids, capped), (i, str(e))
        run_ids.append(run_id)
        if cap is not None:
            capped.append((*cap, i))
    return (run_ids, capped), None


def _warn_window_limited(n: int, capped: list[tuple[float, str, int, str]], console: Console) -> None:
    """One line before any job runs when windows cap some of the n jobs' utilization (issue 56:
    200 CUBIC flows at 1 Gb/s read 0.64 in every run with a 32-packet window, and nothing said
    why); `capped` holds (cap, what to say, job, its overrides), the lowest cap said."""
    if not capped:
        return
    _, warning, i, overrides = min(capped)
    where = f" (job {i}: {overrides})" if n > 1 else ""
    some = f"{len(capped)} of {n} jobs{where}: " if n > 1 else ""
    console.print(f"warning: {some}{warning}", markup=False, highlight=False)


def _validate(grid: JobSource, limits: sim.Limits, console: Console) -> list[str]:
    """Builds every job's spec once (no side effects), refusing a job whose estimated cost is over
    `limits` (the engine's jobs: `sim.cost`) and warning of window-limited ones; returns run_ids
    in grid order."""
    import os

    n, cores = len(grid), os.cpu_count() or 1
    if n >= PARALLEL_VALIDATION_MIN_JOBS and cores > 1 and hasattr(grid, "job_at"):
        import multiprocessing as mp

        global _FORKED
        _FORKED = (grid, limits)
        bounds = [n * k // cores for k in range(cores + 1)]
        try:  # fork: nothing has started a thread yet (Ray and MLflow start later)
            with mp.get_context("fork").Pool(cores) as pool:
                parts = pool.starmap(_validate_slice, zip(bounds, bounds[1:]))
        finally:
            _FORKED = None
        errors = [err for _, err in parts if err is not None]
        if errors:
            i, msg = min(errors)
            exit_usage(f"{msg} (job {i}: {' '.join(grid[i])})")  # type: ignore[index]
        capped = [(*c, " ".join(grid[c[2]])) for (_, part), _ in parts for c in part]  # type: ignore[index]
        _warn_window_limited(n, capped, console)
        return [r for (ids, _), _ in parts for r in ids]
    run_ids, capped = [], []
    for i, overrides, job in grid.jobs():
        try:
            run_id, cap = _checked(job, limits)
        except (ValueError, UsageError) as e:
            where = f" (job {i}: {' '.join(overrides)})" if overrides else ""
            exit_usage(f"{e}{where}")
        run_ids.append(run_id)
        if cap is not None:
            capped.append((*cap, i, " ".join(overrides)))
    _warn_window_limited(n, capped, console)
    return run_ids


class ResultBuffer:
    """Finished runs waiting for the next flush."""

    def __init__(self, tracked: bool, name: str | None = None) -> None:
        self.tracked = tracked  # MLflow logs each run's time series and flows table
        self.name = name  # the sweep's: a run without `name=` is stored under it (hydra.job.name)
        self.clear()

    def clear(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.details: dict[str, list[pa.Table]] = {t: [] for t in DETAIL_TABLES}
        self.ts: list[pa.Table | None] = []
        self.flows: list[pa.Table | None] = []
        self.since = time.monotonic()

    def add(self, res: JobResult, spec: RunSpec, overrides: list[str], attempt: int, sweep_id: str) -> None:
        exec_id = uuid.uuid4().hex[:16]
        row: dict[str, Any] = {**config_row(spec.sim), **(res.summary or {})}
        row.update(
            run_id=res.run_id,
            exec_id=exec_id,
            status=res.status,
            error=res.error,
            traceback=res.traceback,
            attempt=attempt,
            node_id=res.node_id,
            started_at=datetime.fromtimestamp(res.started_at, tz=UTC),
            job_wall_s=res.job_wall_s,
            job_index=res.index,
            overrides=" ".join(overrides),
            sweep_id=sweep_id,
            backend_version=spec.backend_version,
            config_id=spec.config_id,
            **spec.params,
        )
        row["name"] = row["name"] or self.name
        if spec.params["backend"] != DEFAULT_BACKEND:
            row["engine_version"] = CONTRACT_VERSION  # what its inputs took from the engine
        self.rows.append(row)
        for table, t in (res.details or {}).items():
            self.details[table].append(_keyed(t, res.run_id, exec_id))
        tracked = res.details is not None and self.tracked  # what MLflow logs of the run
        self.ts.append(res.details["timeseries"] if tracked else None)
        self.flows.append(res.details["flows"] if tracked else None)

    def due(self) -> bool:
        return bool(self.rows) and (
            len(self.rows) >= FLUSH_EVERY_JOBS or time.monotonic() - self.since >= FLUSH_EVERY_S
        )

    def flush(self, store: Store, sweep_id: str, tracker: Any) -> None:
        if not self.rows:
            return
        runs = runs_table(self.rows)
        details = {
            t: pa.concat_tables(parts) if parts else SCHEMAS[t].empty_table() for t, parts in self.details.items()
        }
        store.flush(sweep_id, runs, details)
        rows, ts, flows = self.rows, self.ts, self.flows
        self.clear()  # stored: a Ctrl-C while the logger's queue is full must not store them twice
        if tracker is not None:
            tracker.submit(rows, ts, flows)  # what an interruption leaves unlogged, a rerun logs


def runs_table(rows: list[dict[str, Any]]) -> pa.Table:
    """The runs rows as a table; a key the schema lacks is an error (pyarrow would drop it).
    `sweep_id` is the partition's name, not a column of the files."""
    names = set(RUNS_SCHEMA.names) | {"sweep_id"}
    for row in rows:
        extra = set(row) - names
        if extra:
            raise ValueError(f"runs row has keys the schema lacks: {sorted(extra)}")
    return pa.Table.from_pylist(rows, schema=RUNS_SCHEMA)


def _keyed(t: pa.Table, run_id: str, exec_id: str) -> pa.Table:
    n = len(t)
    return t.add_column(0, "exec_id", pa.array([exec_id] * n, pa.string())).add_column(
        0, "run_id", pa.array([run_id] * n, pa.string())
    )


def _ray_init(ray_cfg: dict[str, Any]) -> bool:
    """Starts an embedded local Ray, or attaches to `ray.address`. Returns True if we started it."""
    from sweeps.raycfg import start_ray

    return start_ray(ray_cfg)


CONFIRM_ABOVE = 10_000
"""Grids larger than this are confirmed first (`confirm=false` or `--yes` skips it)."""


JOBS_PER_S = {False: 250.0, True: 120.0}
"""Jobs stored per second the estimate assumes for near-empty jobs, with MLflow off and on
(`python -m bench.orchestration` on 2 cores, 2026-11-26: 269-341 and 128-190)."""
ESTIMATE_SAMPLE = 200
"""Jobs whose estimated cost (`sim.estimate`) the grid's is extrapolated from, spread evenly."""


def _estimate_s(grid: JobSource, n: int, cpus: int, mlflow: bool) -> float:
    """A rough run time: the engine's estimated wall time of ESTIMATE_SAMPLE jobs spread over the
    grid, scaled to its n jobs and shared by its cores, plus each job's orchestration at JOBS_PER_S."""
    job_at = getattr(grid, "job_at", None)  # a grid builds any job by its index; others list theirs
    if job_at is not None:
        sample = [job_at(i) for i in range(0, n, max(1, n // ESTIMATE_SAMPLE))][:ESTIMATE_SAMPLE]
    else:
        sample = [job for _, _, job in itertools.islice(grid.jobs(), ESTIMATE_SAMPLE)]
    walls = []
    for job in sample:
        try:
            walls.append(sim.estimate(build_spec(job).sim).wall_s)
        except (ValueError, UsageError):
            continue  # _validate names it
    engine_s = n * (sum(walls) / max(len(walls), 1)) / max(cpus, 1)
    return engine_s + n / JOBS_PER_S[mlflow]


def duration_text(seconds: float) -> str:
    """Seconds, minutes or hours, whichever reads best: 40 s, 11 min, 2.5 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:,.1f} h"


def _confirm(grid: JobSource, n: int, s: dict[str, Any]) -> None:
    import os
    import sys

    cpus = s["ray"].get("num_cpus") or os.cpu_count() or 1
    mlflow = bool(s["mlflow"].get("enabled", True))
    took = duration_text(_estimate_s(grid, n, cpus, mlflow))
    what = (
        f"{n:,} jobs, roughly {took} on {cpus} local cores (sim.estimate's time a job, "
        f"and {JOBS_PER_S[mlflow]:g} jobs/s stored"
        f"{' and logged' if mlflow else ''}; less on a cluster)"
    )
    if not sys.stdin.isatty():
        exit_usage(f"grid: {what}; confirm with confirm=false (or --yes) to run it")
    sys.stderr.write(f"This grid has {what}.\nRun it? [y/N] ")  # plain text: no markup in a prompt
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise SystemExit(1)


def _check_services(s: dict[str, Any], inline: bool) -> None:
    """One line and exit 2 within seconds if Ray's address or MLflow's server cannot be reached."""
    from sweeps.reach import check_mlflow, check_ray

    address = s["ray"].get("address")
    if address and not inline:
        from sweeps.raycfg import token_env

        check_ray(address)
        token_env("ray.address")  # a cluster runs with token auth: no token, one line and exit 2
    if s["mlflow"]["enabled"]:
        from sweeps.tracking import tracking_uri

        check_mlflow(tracking_uri(s["mlflow"]["tracking_uri"]))


def run_sweep(
    grid: JobSource,
    config: DictConfig,
    inline: bool = False,
    quiet: bool = False,
    watch: Callable[[Counts], None] | None = None,
) -> list:
    """Runs the grid: validated, then stored and logged (see the module's comment). `quiet`: no
    progress or summary on stderr (a search that runs sweeps says what it waits for itself);
    errors still print. `watch(counts)` gets the sweep's live counts once planned, for a caller's
    own progress line to read."""
    s = _settings(config)
    console = Console(stderr=True, soft_wrap=True, quiet=quiet)
    n = len(grid)
    if n == 0:
        exit_usage("empty grid: a sweep axis has no values")
    if replicated(grid):
        try:
            grid = MripGrid(grid)
        except UsageError as e:
            exit_usage(str(e))
        except (ValueError, TypeError):
            pass  # a precision value of the wrong type: _validate names its key
        n = len(grid)
        inline = False  # a single run's replications too run at once, on Ray
    if n > CONFIRM_ABOVE and s.get("confirm", True):
        _confirm(grid, n, s)
    _check_services(s, inline)
    run_ids = _validate(grid, sim.Limits(**s["limits"]), console)
    try:
        store = Store(s["results_dir"])
    except (OSError, ValueError, pa.ArrowException) as e:  # a URI's filesystem that cannot be opened
        exit_usage(f"results_dir: cannot open {s['results_dir']!r} ({' '.join(str(e).split())})")
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(store.writer_lock())
            store.check_writable()
        except StoreLocked as e:
            exit_usage(f"results_dir: {e}; wait for it to finish, or give another results_dir")
        except OSError as e:
            exit_usage(
                f"results_dir: cannot write to {s['results_dir']!r} ({e.strerror or e}); give a writable directory"
            )
        started: dict[str, Any] = {}  # what _run_locked set up that must be ended on an error
        try:
            return _run_locked(grid, s, store, run_ids, console, inline, started, watch)
        except OSError as e:  # writing results failed mid-sweep: no space, a vanished mount, ...
            _end_after_error(started)
            exit_failure(
                f"results_dir: {e.strerror or e} while storing results in {store.root}; the runs stored "
                "before are intact (every write is atomic): fix it and rerun the command to resume"
            )
        except BaseException:
            _end_after_error(started)
            raise


def _end_after_error(started: dict[str, Any]) -> None:
    tracker = started.get("tracker")
    if tracker is not None:
        try:
            tracker.abort()
        except Exception:  # noqa: BLE001 - the original error is the one to report
            pass


def _plan(store: Store, run_ids: list[str], force: bool, console: Console) -> tuple[Counts, set[int]]:
    """Which jobs run: those not stored ok (all with `force`), each run_id once."""
    for src, dest in store.recover():
        console.print(f"[yellow]warning: {src} is not a readable Parquet file; moved to {dest}")
    stored = store.dedupe()
    seen: set[str] = set()
    todo: set[int] = set()
    counts = Counts(len(run_ids))
    for i, rid in enumerate(run_ids):
        if (stored.get(rid) == "ok" and not force) or rid in seen:
            counts.cached += 1
        else:
            todo.add(i)
        seen.add(rid)
    return counts, todo


def _open_tracker(
    grid: JobSource, s: dict[str, Any], store: Store, name: str, sweep_id: str, started: dict[str, Any]
) -> Any:
    """The sweep's MLflow parent run; registered in `started` (aborted on an error) before it logs."""
    from sweeps.tracking import Tracker, tracking_uri

    tracker = Tracker(
        tracking_uri(s["mlflow"]["tracking_uri"]),
        s["mlflow"]["experiment"] or name,
        sweep_id,
        list(grid.swept()),
        n_jobs=len(grid),
        run_plots=bool(s["mlflow"].get("run_plots", False)),
    )
    started["tracker"] = tracker
    backfill(store, sweep_id, tracker)
    return tracker


def _job_of(i: int, overrides: list[str], job: dict[str, Any], s: dict[str, Any]) -> tuple[Job, RunSpec, list[str]]:
    """Job i of the grid as a worker runs it, with its spec and overrides."""
    spec, debug = build_spec(job), s.get("debug") or {}
    faults = (spec.fault("fail_when", debug), spec.fault("crash_when", debug))
    limits = s["limits"]
    memory_mb = 0.0 if spec.fault("starve_when", debug) else limits.get("run_memory_mb")
    work = Job(i, spec.run_id, spec.sim.to_dict(), *faults, spec.params["backend"], limits["job_timeout_s"], memory_mb)
    return work, spec, overrides


def _execute(
    grid: JobSource,
    s: dict[str, Any],
    store: Store,
    todo: set[int],
    counts: Counts,
    console: Console,
    inline: bool,
    sweep_id: str,
    name: str,
    tracker: Any,
    mrip: Mrip | None = None,
) -> Execution:
    """Runs the pending jobs (inline or on Ray) under a progress bar, buffering results to the
    store; with `mrip`, the replications it asks for (`Mrip.feed`) instead of `todo`."""
    buffer = ResultBuffer(tracked=tracker is not None, name=name)

    def make(i: int, overrides: list[str], job: dict[str, Any]) -> tuple[Job, RunSpec, list[str]]:
        return _job_of(i, overrides, job, s)

    def pending_jobs() -> Iterator[tuple[Job, RunSpec, list[str]] | None]:
        # Specs are rebuilt here rather than kept from validation: ~60 us each, while keeping
        # them would hold ~150 MB for a 100,000-job grid.
        if mrip is not None:
            assert isinstance(grid, MripGrid)
            yield from mrip.feed(lambda i: make(i, grid.overrides_at(i), grid.job_at(i)))
            return
        for i, overrides, job in grid.jobs():
            if i in todo:
                yield make(i, overrides, job)

    started_ray = False
    watcher = None
    interrupted = False
    lost = ""
    beat = Heartbeat(console, lambda: progress_line(sweep_id, name, counts, beat.t0, mrip), live=False)
    with beat, progress_bar(console) as progress:
        task = progress.add_task(
            name, total=counts.total, completed=counts.cached, ok=0, failed=0, cached=counts.cached, running=0, note=""
        )

        def update() -> None:
            progress.update(
                task,
                total=counts.total,
                note=mrip.status() if mrip is not None else "",
                completed=counts.cached + counts.ok + counts.failed,
                ok=counts.ok,
                failed=counts.failed,
                cached=counts.cached,
                running=counts.running,
            )

        def collect(results: list[JobResult], meta: dict[int, tuple[RunSpec, list[str]]], attempt: int) -> None:
            for res in results:
                spec, overrides = meta[res.index]
                buffer.add(res, spec, overrides, attempt, sweep_id)
                if res.status == "ok":
                    counts.ok += 1
                else:
                    counts.failed += 1
                if mrip is not None:
                    mrip.record(res.run_id, res.status == "ok", res.summary)
                    counts.total = mrip.planned()
            if buffer.due():
                buffer.flush(store, sweep_id, tracker)
            update()

        t_start = time.monotonic()
        ray_s = 0.0
        t_run = stop_s = 0.0
        work = bool(todo) if mrip is None else not mrip.done()
        try:
            if work and inline:
                for item in pending_jobs():
                    assert item is not None  # inline, every replication asked for has its result
                    job, spec, overrides = item
                    collect(run_jobs([job], 0), {job.index: (spec, overrides)}, 0)
            elif work:
                console.print("starting Ray..." if not s["ray"].get("address") else "attaching to Ray...")
                started_ray = _ray_init(s["ray"])
                if mrip is not None:
                    import ray

                    mrip.ahead = max(1, int(ray.cluster_resources().get("CPU", 1)))
                watcher = watch_driver() if started_ray else None  # ends Ray's agents if we are killed
                ray_s = time.monotonic() - t_start
                t_start = time.monotonic()
                drive(pending_jobs(), s["ray"], counts, collect, update, console, restart=started_ray)
        except KeyboardInterrupt:
            interrupted = True
        except RayLost as e:
            lost = str(e)
        finally:
            try:
                buffer.flush(store, sweep_id, tracker)
            finally:
                t_run = time.monotonic() - t_start
                if started_ray:
                    import ray

                    ray.shutdown()  # 1-1.5 s, as long as start-up's share of a 1,000-job sweep
                if watcher is not None:
                    watcher.terminate()
                    watcher.wait()
                stop_s = time.monotonic() - t_start - t_run
    return Execution(interrupted or bool(lost), t_start, t_run, ray_s, lost, stop_s)


def _run_locked(
    grid: JobSource,
    s: dict[str, Any],
    store: Store,
    run_ids: list[str],
    console: Console,
    inline: bool,
    started: dict[str, Any],
    watch: Callable[[Counts], None] | None = None,
) -> list:
    """The sweep proper, with the results_dir's writer lock held."""
    n = len(grid)
    name = s.get("name") or s["job_name"]
    sweep_id = sweep_id_of(name, grid)
    counts, todo = _plan(store, run_ids, bool(s.get("force")), console)
    mrip = None
    if isinstance(grid, MripGrid):
        mrip = Mrip(grid, run_ids, {} if s.get("force") else stored_values(store, run_ids))
        counts = Counts(mrip.planned())
        counts.cached = mrip.cached
    if watch is not None:
        watch(counts)
    rounds = getattr(grid, "search", None) is not None  # a search's round: one part of its sweep
    store.write_members(sweep_id, name, run_ids, append=rounds)
    tracker = None
    # A fully cached sweep too, if it stored runs of its own: MLflow may lack what a crash left out.
    if s["mlflow"]["enabled"] and (todo or sweep_id in store.sweep_ids()):
        tracker = _open_tracker(grid, s, store, name, sweep_id, started)
        if todo:
            tracker.start_loggers()
        if tracker.replaced:
            console.print(
                f"MLflow: {tracker.replaced} child runs left incomplete or twice by an earlier attempt "
                "deleted; their runs are logged again"
            )
    if mrip is None:
        console.print(
            f"sweep {sweep_id} ({name}): {n} jobs, {counts.cached} cached, {len(todo)} to run -> {store.root}"
        )
    else:
        seeds = sorted({(p.min_seeds, p.max_seeds) for p in mrip.points})
        bounds = ", ".join(f"{lo}-{hi}" for lo, hi in seeds)
        console.print(
            f"sweep {sweep_id} ({name}): {len(mrip.points)} points of {bounds} replications, "
            f"{mrip.cached} stored -> {store.root}"
        )
    ex = _execute(grid, s, store, todo, counts, console, inline, sweep_id, name, tracker, mrip)
    points = store_points(mrip, store, sweep_id, console) if mrip is not None else None
    if not ex.interrupted:
        store.dedupe()
        store.rewrite(sweep_id, fresh_only=rounds)  # a search's 38th round: 12 s to compact all, 0.3 s its own
    if tracker is not None:
        started.pop("tracker")  # closed below, whatever happens next
        close_tracker(tracker, console, store, sweep_id, counts, ex, points)
    executed = counts.ok + counts.failed
    if executed:
        t_all = time.monotonic() - ex.t_start - ex.ray_stop_s
        console.print(
            f"ran {executed} jobs in {ex.t_run:.2f} s ({executed / max(ex.t_run, 1e-9):.1f} jobs/s); "
            f"stored and logged in {t_all:.2f} s ({executed / max(t_all, 1e-9):.1f} jobs/s)"
            + (f"; Ray start-up {ex.ray_s:.1f} s, shut-down {ex.ray_stop_s:.1f} s" if ex.ray_s else "")
        )
    summary(console, store, sweep_id, counts, ex.interrupted, set(grid.swept()))
    if ex.ray_lost:
        print(f"error: {ex.ray_lost}: the runs stored so far are kept; rerun to resume", file=sys.stderr)
        raise SystemExit(EXIT_INFRASTRUCTURE)
    if ex.interrupted:
        raise SystemExit(130)
    if counts.failed:
        raise SystemExit(1)
    return []


def backfill(store: Store, sweep_id: str, tracker: Any) -> int:
    """Logs stored runs of this sweep that MLflow does not have complete (a driver killed between
    its Parquet flush and its MLflow logging, or while logging); returns how many."""
    index = store.read("runs", sweep_id, columns=["run_id", "exec_id", "status"]).to_pylist()
    execs = {r["exec_id"] for r in index if tracker.logged.get(r["run_id"], ("", ""))[1] not in (r["status"], "ok")}
    if not execs:
        return 0
    missing = store.read("runs", sweep_id, execs).to_pylist()  # whole rows of these alone
    ts, flows = store.read("timeseries", sweep_id, execs), store.read("flows", sweep_id, execs)

    def by_exec(t: pa.Table) -> dict[str, pa.Table]:
        rows: dict[str, list[int]] = {}
        for i, e in enumerate(t.column("exec_id").to_pylist()):
            rows.setdefault(e, []).append(i)
        t = t.drop_columns(["run_id", "exec_id"])
        return {e: t.take(pa.array(idx, pa.int64())) for e, idx in rows.items()}

    ts_of, flows_of = by_exec(ts), by_exec(flows)
    for r in missing:
        r["sweep_id"] = sweep_id
    tracker.submit(missing, [ts_of.get(r["exec_id"]) for r in missing], [flows_of.get(r["exec_id"]) for r in missing])
    return len(missing)

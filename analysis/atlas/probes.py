"""An atlas's probes as one sweep a round: each (cell, buffer, seed) a job of the cell's own
composed config, all rounds under one sweep_id (the atlas's), so they are stored once, reused by
any later build, and logged to MLflow as the children of one parent run (docs/atlas.md)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from analysis.atlas.cycle import length
from analysis.atlas.spec import AtlasSpec, Cell
from sweeps.api import compose_config
from sweeps.grid import set_path
from sweeps.schema import build_spec

METRICS = ("utilization", "loss_rate", "p50_queue_delay_ms", "p99_queue_delay_ms", "jain_fairness")
"""What the atlas keeps of each probe (means over seeds), utilization first: it decides."""

Asked = tuple[Cell, int, int]
"""(cell, buffer_pkts, seed)."""


class AtlasJobs:
    """The sweep of one round: a `sweeps.launch.JobSource` whose jobs each start from their cell's
    composed config (a sweep's grid shares one), with one identity for every round."""

    def __init__(self, spec: AtlasSpec, asked: list[Asked], bases: dict[tuple[str, ...], dict[str, Any]]) -> None:
        self.spec, self.asked, self._bases = spec, asked, bases
        for cell, _, _ in asked:
            groups = tuple(spec.groups(cell))
            if groups not in bases:
                bases[groups] = composed((*spec.base, *groups, *sweep_keys(spec)))

    def __len__(self) -> int:
        return len(self.asked)

    def overrides(self, asked: Asked) -> dict[str, Any]:
        cell, buffer_pkts, seed = asked
        return {
            **self.spec.point(cell),
            **length(self.spec, cell, buffer_pkts),
            "buffer_pkts": buffer_pkts,
            "seed": seed,
        }

    def job(self, asked: Asked) -> dict[str, Any]:
        job = dict(self._bases[tuple(self.spec.groups(asked[0]))])
        for key, value in self.overrides(asked).items():
            set_path(job, key, value)
        return job

    def jobs(self) -> Iterator[tuple[int, list[str], dict[str, Any]]]:
        for i, a in enumerate(self.asked):
            shown = [*self.spec.groups(a[0]), *(f"{k}={v}" for k, v in self.overrides(a).items() if k in SHOWN)]
            yield i, shown, self.job(a)

    def swept(self) -> dict[str, list[Any]]:
        return {k: [] for k in ("tcp", "queue", "flows", "core_mbps", "rtt_ms", "buffer_pkts", "seed")}

    @property
    def search(self) -> str:
        """The search whose round this is (`sweeps.launch`: its members add up, its parts compact per round)."""
        return self.identity()

    def identity(self) -> str:
        return f"atlas:{self.spec.name}"

    def run_ids(self) -> list[str]:
        return [build_spec(self.job(a)).run_id for a in self.asked]


@functools.cache
def composed(overrides: tuple[str, ...]) -> dict[str, Any]:
    """The config Hydra composes from `overrides`, as a plain dict (about a second each: once per
    sender and discipline). Jobs copy what they change (`set_path`), never this."""
    container = OmegaConf.to_container(compose_config(list(overrides)), resolve=True)
    assert isinstance(container, dict)
    container.pop("hydra", None)
    return container


@functools.cache
def _sweep_config(overrides: tuple[str, ...]) -> Any:
    """A round's sweep settings, composed once a build (0.9 s each; `run_sweep` only reads them)."""
    return compose_config(list(overrides))


SHOWN = ("flows", "core_mbps", "rtt_ms", "rtt_spread_ms", "queue.k_pkts", "buffer_pkts", "seed", "duration_s")
"""A probe's keys in its stored `overrides` (its length and precision keys are in its config)."""


def sweep_keys(spec: AtlasSpec) -> list[str]:
    """Every probe's sweep keys: stored in the atlas's sweep, and logged to MLflow by the atlas
    itself, one run a cell (`publish`), not one a probe (5,388 probes took 850 MB of MLflow)."""
    return [f"results_dir={spec.results_dir}", f"name=atlas_{spec.name}", "mlflow.enabled=false"]


def measure(
    spec: AtlasSpec,
    asked: list[Asked],
    bases: dict,
    stored_ok: set[str],
    quiet: bool = True,
    watch: Callable[[Any], None] | None = None,
) -> tuple[list[dict[str, float] | None], int, int]:
    """Runs what is not stored yet (`quiet`: without the sweep's own progress, the build's says
    more; `watch`: its live counts); returns each asked run's metrics (None if it failed), the runs actually simulated
    and the packets they simulated."""
    from analysis.db import connect
    from sweeps.launch import run_sweep

    grid = AtlasJobs(spec, asked, bases)
    run_ids = grid.run_ids()
    unknown = [r for r in run_ids if r not in stored_ok]
    if unknown and Path(spec.results_dir).is_dir():  # stored by an earlier build: not run again
        done = connect(spec.results_dir, documented=False).execute(
            "SELECT DISTINCT run_id FROM runs WHERE run_id IN (SELECT unnest(?)) AND status = 'ok'", [unknown]
        )
        stored_ok |= {r[0] for r in done.fetchall()}
    new = {r for r in run_ids if r not in stored_ok}
    if new:
        cfg = _sweep_config((*spec.base, *spec.groups(asked[0][0]), *sweep_keys(spec)))
        try:
            run_sweep(grid, cfg, quiet=quiet, watch=watch)
        except SystemExit as e:
            if e.code not in (0, 1, None):  # 1: some runs failed, and they read as NaN below
                raise
    cols = ", ".join((*METRICS, "pkts_per_s * wall_s"))
    rows = connect(spec.results_dir, documented=False).execute(
        f"SELECT run_id, {cols} FROM runs WHERE run_id IN (SELECT unnest(?)) AND status = 'ok'", [run_ids]
    )
    got = {r[0]: r[1:] for r in rows.fetchall()}
    stored_ok |= set(got)
    out = [None if got.get(rid) is None else dict(zip(METRICS, got[rid])) for rid in run_ids]
    packets = sum(int(got[r][-1] or 0) for r in new if r in got)
    return out, len(new), packets


@contextlib.contextmanager
def atlas_ray(spec: AtlasSpec) -> Iterator[None]:
    """Ray for every round: attached to `ray.address` if given (a cluster), else embedded; what
    it started, it stops."""
    import ray

    from sweeps.raycfg import start_ray

    ray_cfg = OmegaConf.to_container(compose_config([*spec.base, *sweep_keys(spec)]).ray, resolve=True)
    assert isinstance(ray_cfg, dict)
    started = start_ray(ray_cfg)
    try:
        yield
    finally:
        if started:
            ray.shutdown()

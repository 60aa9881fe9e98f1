"""Running sweeps from Python (analysis: bisection rounds, grids that are not cartesian
products) through the same driver as the command line: same validation, caching, Parquet
store and MLflow tracking."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf

from sweeps.grid import set_path
from sweeps.precheck import CONF_DIR
from sweeps.schema import RunSpec, build_spec, register


def compose_config(overrides: list[str]) -> DictConfig:
    """The config `python -m sweeps <overrides>` would run, composed by Hydra."""
    register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=overrides)


class JobList:
    """An explicit list of jobs: the composed base config with per-job changes (dotted keys).
    `search`: the identity of a search whose rounds are one sweep, each list a round of it (its
    sweep_id keys on the search, and its members add up)."""

    def __init__(self, base: DictConfig, points: list[dict[str, Any]], search: str | None = None) -> None:
        container = OmegaConf.to_container(base, resolve=True)
        assert isinstance(container, dict)
        container.pop("hydra", None)
        self._base = container
        self.points = points
        self.search = search

    def __len__(self) -> int:
        return len(self.points)

    def job(self, point: dict[str, Any]) -> dict[str, Any]:
        job = dict(self._base)
        for key, value in point.items():
            set_path(job, key, value)
        return job

    def jobs(self) -> Iterator[tuple[int, list[str], dict[str, Any]]]:
        for i, point in enumerate(self.points):
            yield i, [f"{k}={v}" for k, v in point.items()], self.job(point)

    def swept(self) -> dict[str, list[Any]]:
        keys = {k for p in self.points for k in p}
        return {k: sorted({str(p.get(k)) for p in self.points}) for k in keys}

    def identity(self) -> str:
        if self.search is not None:
            return self.search
        return hashlib.sha256(json.dumps(self.points, sort_keys=True, default=str).encode()).hexdigest()

    def specs(self) -> list[RunSpec]:
        return [build_spec(self.job(p)) for p in self.points]

    def run_ids(self) -> list[str]:
        return [spec.run_id for spec in self.specs()]


@functools.lru_cache(maxsize=8)
def _composed(overrides: tuple[str, ...]) -> DictConfig:
    return compose_config(list(overrides))


def run_points(
    base_overrides: list[str], points: list[dict[str, Any]], quiet: bool = False, search: str | None = None
) -> tuple[int, list[str]]:
    """Runs the jobs (skipping stored ones); returns (exit status, run_ids in point order).
    `quiet`: without the sweep's progress and summary (see `run_sweep`); `search`: the sweep is
    a round of this search's (`JobList`)."""
    from sweeps.launch import run_sweep

    cfg = _composed(tuple(base_overrides))
    jobs = JobList(cfg, points, search)
    try:
        run_sweep(jobs, cfg, quiet=quiet)
        status = 0
    except SystemExit as e:
        status = int(e.code or 0)
    return status, jobs.run_ids()


def job_run_ids(base_overrides: list[str], points: list[dict[str, Any]]) -> list[str]:
    """The run_ids `run_points` would give the jobs, without running anything."""
    return JobList(_composed(tuple(base_overrides)), points).run_ids()

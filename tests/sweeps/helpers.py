from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds

from tests.conftest import ROOT


def sweep(
    tmp: Path,
    *args: str,
    timeout: float = 300,
    ray_address: str | None = None,
    results_dir: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Runs `python -m sweeps` in `tmp`, with results and MLflow under `tmp` (and `env` added)."""
    cmd = [
        sys.executable,
        "-m",
        "sweeps",
        *args,
        f"results_dir={results_dir or tmp / 'results'}",
        f"mlflow.tracking_uri=sqlite:///{tmp / 'mlflow.db'}",
    ]
    if ray_address:
        cmd.append(f"ray.address={ray_address}")
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)


def runs(tmp: Path):
    return ds.dataset(tmp / "results" / "runs", partitioning="hive").to_table()


def mlflow_children(tmp: Path, experiment: str) -> tuple[int, list]:
    from mlflow.tracking import MlflowClient

    c = MlflowClient(f"sqlite:///{tmp / 'mlflow.db'}")
    e = c.get_experiment_by_name(experiment)
    found, token = [], None
    while True:  # pages: the fault test holds 10,001 runs, over one page's 10,000
        page = c.search_runs([e.experiment_id], max_results=5000, page_token=token)
        found += list(page)
        token = page.token
        if not token:
            break
    parents = [r for r in found if r.data.tags.get("buffersweep_role") == "parent"]
    children = [r for r in found if r.data.tags.get("buffersweep_role") == "child"]
    assert all(r.data.tags["mlflow.parentRunId"] in {p.info.run_id for p in parents} for r in children)
    return len(parents), children

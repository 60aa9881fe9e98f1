"""Submitting a sweep to a Ray cluster as a job (Jobs SDK): the project is the job's
working_dir (without results, virtualenvs, build trees and tracking stores); its driver runs
`python -m sweeps -m <overrides>` on the head, where it is the single writer of results and
tracking. Workers only simulate, so no shared filesystem is needed."""

from __future__ import annotations

import asyncio
import os
import sys
import time

from ray.job_submission import JobStatus, JobSubmissionClient

from cluster.local import PROJECT_ROOT
from sweeps.raycfg import apply_env, token_env

EXCLUDES = [
    ".venv",
    "venv",
    "target",
    "sim/target",
    "results",
    "mlflow.db",
    "mlflow.db-*",
    "mlruns",
    ".git",
    ".cluster",
    "reports",
    "**/__pycache__",
    ".pytest_cache",
    "outputs",
    "multirun",
]
DEFAULT_DASHBOARD = "http://127.0.0.1:28265"


MLFLOW_PASSED = ("MLFLOW_TRACKING_URI", "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD")
"""Passed on to the job's driver if set here. The job's environment is visible to whoever holds
the cluster's token (the dashboard shows it): the Ray token is not passed, the driver inherits
the head's."""


def client(address: str | None) -> JobSubmissionClient:
    """A Jobs API client that sends the cluster's token (Ray adds it to every request once this
    process runs in token mode)."""
    apply_env(token_env("--address"))
    # The working_dir must carry the built extension (sim/_core*.so), which .gitignore lists;
    # the EXCLUDES above keep out everything that should not travel.
    os.environ["RAY_RUNTIME_ENV_IGNORE_GITIGNORE"] = "1"
    return JobSubmissionClient(address or os.environ.get("RAY_ADDRESS") or DEFAULT_DASHBOARD)


def entrypoint(overrides: list[str]) -> str:
    """`python -m sweeps -m ...`; results and tracking default to absolute locations (a job's
    working directory is a temporary copy, deleted with the job)."""
    args = list(overrides)
    keys = {a.split("=", 1)[0].lstrip("+~") for a in args if "=" in a}
    if "results_dir" not in keys:
        args.append(f"results_dir={PROJECT_ROOT / 'results'}")
    if "mlflow.tracking_uri" not in keys and not os.environ.get("MLFLOW_TRACKING_URI"):
        args.append(f"mlflow.tracking_uri=sqlite:///{PROJECT_ROOT / 'mlflow.db'}")
    if "-m" not in args and "--multirun" not in args:
        args.insert(0, "-m")
    return " ".join(["python", "-m", "sweeps", *(_quote(a) for a in args)])


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def submit(overrides: list[str], address: str | None = None, follow: bool = True) -> tuple[str, JobStatus]:
    c = client(address)
    env = {"RAY_AUTH_MODE": "token", **{k: os.environ[k] for k in MLFLOW_PASSED if os.environ.get(k)}}
    job_id = c.submit_job(
        entrypoint=entrypoint(overrides),
        runtime_env={"working_dir": str(PROJECT_ROOT), "excludes": EXCLUDES, "env_vars": env},
    )
    print(f"submitted job {job_id}", flush=True)
    if not follow:
        return job_id, c.get_job_status(job_id)
    asyncio.run(_tail(c, job_id))
    status = wait(c, job_id)
    print(f"job {job_id}: {status.value}", flush=True)
    return job_id, status


async def _tail(c: JobSubmissionClient, job_id: str) -> None:
    async for chunk in c.tail_job_logs(job_id):
        sys.stdout.write(chunk)
        sys.stdout.flush()


def wait(c: JobSubmissionClient, job_id: str, timeout: float = 24 * 3600) -> JobStatus:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = c.get_job_status(job_id)
        if status.is_terminal():
            return status
        time.sleep(0.5)
    return c.get_job_status(job_id)


def logs(job_id: str, address: str | None = None) -> str:
    return client(address).get_job_logs(job_id)


def stop(job_id: str, address: str | None = None) -> bool:
    return client(address).stop_job(job_id)

"""An MLflow tracking server on the head node for sweeps submitted from elsewhere: 127.0.0.1 by
default, one worker process and no job runner (measured: 4 workers cost 1.85 GiB and 40 ms per
request on a kept-alive connection; one worker about 0.4 GiB and 4 ms). Bound to any other
address it runs MLflow's basic-auth app, with credentials given (MLFLOW_TRACKING_USERNAME and
_PASSWORD) or generated, or it does not start (docs/cluster.md, "Security")."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
from pathlib import Path

from cluster import auth
from cluster.local import DEFAULT_STATE_DIR, PROJECT_ROOT, ClusterState, wait_port
from sweeps.errors import exit_usage


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: whatever it resolves to, treat it as reachable from off this machine


def start(
    state_dir: Path = DEFAULT_STATE_DIR,
    host: str = "127.0.0.1",
    port: int = 5000,
    backend: str | None = None,
    generate_credentials: bool = False,
) -> tuple[str, tuple[str, str] | None]:
    """Starts the server; returns its URI and the admin's credentials (None: no auth, loopback)."""
    state = ClusterState.load(state_dir)
    if state is None:
        raise RuntimeError(f"no cluster recorded in {state_dir}: `python -m cluster up` first")
    creds = auth.mlflow_credentials(state_dir, generate_credentials)
    if creds is None and not loopback(host):
        exit_usage(
            f"--host: {host} is off loopback, and an MLflow server there needs credentials: set "
            "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, or pass --generate-credentials"
        )
    backend = backend or f"sqlite:///{PROJECT_ROOT / 'mlflow.db'}"
    # Artifacts beside a SQLite store (as sweeps put them), else in the project's mlruns/.
    home = Path(backend[len("sqlite:///") :]).parent if backend.startswith("sqlite:///") else PROJECT_ROOT
    artifacts = (home / "mlruns").as_uri()
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    app = []
    if creds:
        env.update(auth.mlflow_auth_env(state_dir, *creds))
        app = ["--app-name", "basic-auth"]
    cmd = [str(Path(sys.executable).parent / "mlflow"), "server", "--host", host, "--port", str(port), *app]
    cmd += ["--workers", "1", "--backend-store-uri", backend, "--default-artifact-root", artifacts]
    with open(state_dir / "mlflow.log", "w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    state.mlflow_pid = proc.pid
    state.mlflow_uri = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    state.save(state_dir)
    try:
        wait_port(port, 60, alive=lambda: proc.poll() is None)
    except TimeoutError as e:
        lines = (state_dir / "mlflow.log").read_text().strip().splitlines() or [""]
        why = next((x for x in reversed(lines) if "Error" in x or "Exception" in x), lines[-1])
        raise RuntimeError(
            f"the MLflow server did not start ({e}): {why} (its log: {state_dir / 'mlflow.log'})"
        ) from None
    return state.mlflow_uri, creds

"""A cluster's secrets, kept in its state folder with mode 0600 (docs/cluster.md, "Security"):
the Ray auth token that `cluster up` starts every node with, and the MLflow server's basic-auth
credentials when it is bound off loopback. Secrets come from Python's `secrets`, as Ray's own
`ray get-auth-token --generate` does; files are written atomically and are never wider than
0600, even for an instant."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from sweeps.raycfg import TOKEN_FILE

MLFLOW_CREDENTIALS = "mlflow_credentials"
"""`username:password` of the MLflow server's admin (`cluster mlflow --generate-credentials`)."""
MLFLOW_AUTH_CONFIG = "mlflow_auth.ini"
MLFLOW_AUTH_DB = "mlflow_auth.db"


def write_secret(path: Path, text: str) -> Path:
    """Writes `text` to `path` atomically, readable and writable by this user only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # a leftover tmp file keeps its old mode through O_CREAT
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path


def token_path(state_dir: Path) -> Path:
    return state_dir / TOKEN_FILE


def new_token(state_dir: Path) -> Path:
    """A fresh token (256 random bits, hex, as Ray generates them) for a cluster being started:
    every `cluster up` rotates it."""
    return write_secret(token_path(state_dir), secrets.token_hex(32))


def forget(state_dir: Path) -> None:
    """The cluster is down: its token and MLflow credentials go with it."""
    for name in (TOKEN_FILE, MLFLOW_CREDENTIALS, MLFLOW_AUTH_CONFIG, MLFLOW_AUTH_DB):
        (state_dir / name).unlink(missing_ok=True)


def mlflow_credentials(state_dir: Path, generate: bool) -> tuple[str, str] | None:
    """The MLflow admin's (username, password): MLFLOW_TRACKING_USERNAME and _PASSWORD if both
    are set (what sweeps send), else generated (and saved) if `generate`, else None."""
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if user and password:
        return user, password
    if not generate:
        return None
    user, password = "buffersweep", secrets.token_urlsafe(24)
    write_secret(state_dir / MLFLOW_CREDENTIALS, f"{user}:{password}\n")
    return user, password


def mlflow_auth_env(state_dir: Path, user: str, password: str) -> dict[str, str]:
    """The environment of MLflow's basic-auth app: its config (`basic_auth.ini`'s keys: nobody
    but the admin has any permission) and the admin's credentials (as variables, which MLflow
    prefers to the file's and which need no escaping). The user store is made afresh at each
    start, so the admin's password is the one given now (MLflow ignores a configured password
    once the admin exists)."""
    write_secret(state_dir / MLFLOW_AUTH_DB, "")  # empty (SQLite makes it a database), 0600: it holds password hashes
    config = write_secret(
        state_dir / MLFLOW_AUTH_CONFIG,
        "[mlflow]\n"
        "default_permission = NO_PERMISSIONS\n"
        f"database_uri = sqlite:///{state_dir.resolve() / MLFLOW_AUTH_DB}\n"
        "authorization_function = mlflow.server.auth:authenticate_request_basic_auth\n",
    )
    return {
        "MLFLOW_FLASK_SERVER_SECRET_KEY": secrets.token_hex(32),  # signs its CSRF tokens (one worker)
        "MLFLOW_AUTH_CONFIG_PATH": str(config),
        "MLFLOW_AUTH_ADMIN_USERNAME": user,
        "MLFLOW_AUTH_ADMIN_PASSWORD": password,
    }

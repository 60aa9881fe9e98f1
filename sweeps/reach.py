"""Fails fast, in one line, when a service a sweep needs cannot be reached: Ray's client would
retry an unreachable address for about 2 minutes and MLflow's for longer, both in silence."""

from __future__ import annotations

import os
import socket
import urllib.error
import urllib.request
from urllib.parse import urlparse

from sweeps.errors import exit_usage

TIMEOUT_S = 5.0


def check_ray(address: str) -> None:
    """`ray.address` as host:port or ray://host:port ("auto" and "local" are Ray's to resolve)."""
    if address in ("auto", "local"):
        return
    parsed = urlparse(address if "://" in address else f"tcp://{address}")
    if not parsed.hostname or not parsed.port:
        exit_usage(f"ray.address: {address!r} is not HOST:PORT (or ray://HOST:PORT, auto)")
    try:
        socket.create_connection((parsed.hostname, parsed.port), timeout=TIMEOUT_S).close()
    except OSError as e:
        exit_usage(
            f"ray.address: cannot reach {parsed.hostname}:{parsed.port} ({e.strerror or e}); is the "
            "cluster up? (leave ray.address unset for an embedded local Ray)"
        )


def check_mlflow(uri: str) -> None:
    """An http(s) tracking server must answer its /health endpoint; file and database URIs are
    checked by MLflow itself when it opens them."""
    if not uri.startswith(("http://", "https://")):
        return
    try:
        urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=TIMEOUT_S).close()
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", None) or e
        exit_usage(f"mlflow.tracking_uri: cannot reach {uri} ({reason}); start the server, or set mlflow.enabled=false")
    _check_mlflow_credentials(uri)


def _check_mlflow_credentials(uri: str) -> None:
    """A server with MLflow's basic-auth app (`cluster mlflow` off loopback) answers /health to
    anyone but the API only with credentials: ask the API once with the ones sweeps would send."""
    import base64

    req = urllib.request.Request(f"{uri.rstrip('/')}/api/2.0/mlflow/experiments/search?max_results=1")
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if user and password:
        req.add_header("Authorization", "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode())
    try:
        urllib.request.urlopen(req, timeout=TIMEOUT_S).close()
    except urllib.error.HTTPError as e:
        if e.code in (401, 403):
            given = "refused the credentials in" if user and password else "wants credentials: set"
            exit_usage(f"mlflow.tracking_uri: {uri} {given} MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD")
    except (urllib.error.URLError, OSError):
        pass  # reachable a moment ago: MLflow itself reports what follows

"""How the project starts or reaches Ray, in one place (docs/cluster.md, "Security").

- An embedded local Ray (no `ray.address`) runs with token authentication off and binds only to
  127.0.0.1 (`loopback_only`): nothing off this machine can reach it, and it lives as long as the
  command that started it.
- Every cluster (attached with `ray.address`/RAY_ADDRESS, `cluster up`, `ray up`, KubeRay) runs
  with RAY_AUTH_MODE=token. The token is passed explicitly to every process (RAY_AUTH_TOKEN or
  RAY_AUTH_TOKEN_PATH), because Ray 2.60's own defaults for where it looks differ between
  `ray.init`, `ray start` and `ray job submit`."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sweeps.errors import exit_usage

TESTBED_RESOURCE = "kernel_testbed"
"""A node's one real-time testbed (the kernel backend's): a Ray resource of 1 on every node, so
that two kernel runs never share a machine's CPUs and distort each other's timing."""

EMBEDDED_AUTH_MODE = "disabled"
LOCAL_CLUSTER_DIR = Path(__file__).resolve().parent.parent / ".cluster"
"""`python -m cluster up`'s default state folder; its token is TOKEN_FILE in it."""
TOKEN_FILE = "auth_token"
RAY_DEFAULT_TOKEN = Path.home() / ".ray" / "auth_token"


def ray_env() -> dict[str, str]:
    """The environment of an embedded local Ray (loopback only)."""
    return {"RAY_AUTH_MODE": EMBEDDED_AUTH_MODE}


def cluster_env(token_path: Path) -> dict[str, str]:
    """The environment of a cluster's nodes and of everything that reaches it."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token_path)}


def token_env(key: str = "ray.address") -> dict[str, str]:
    """RAY_AUTH_MODE=token and where the token is, for reaching a cluster: RAY_AUTH_TOKEN, else
    the file at RAY_AUTH_TOKEN_PATH, else the local cluster's (`cluster up`), else Ray's default
    ~/.ray/auth_token. None of them: one line naming the missing token, exit 2."""
    if os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return {"RAY_AUTH_MODE": "token"}
    given = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if given:
        if not Path(given).is_file():
            exit_usage(f"RAY_AUTH_TOKEN_PATH: no Ray auth token file at {given}")
        return cluster_env(Path(given))
    for path in (LOCAL_CLUSTER_DIR / TOKEN_FILE, RAY_DEFAULT_TOKEN):
        if path.is_file():
            return cluster_env(path)
    exit_usage(
        f"{key}: no Ray auth token: set RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH (a cluster from "
        f"`python -m cluster up` keeps it in {LOCAL_CLUSTER_DIR / TOKEN_FILE})"
    )


def apply_env(env: dict[str, str]) -> None:
    """Sets Ray's auth variables in this process, and makes an already-imported Ray read them
    again (it caches its config and token; what ray's own test helpers reset)."""
    os.environ.update(env)
    raylet = sys.modules.get("ray._raylet")
    if raylet is not None:
        raylet.Config.initialize("")
        raylet.AuthenticationTokenLoader.instance().reset_cache()


LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


@contextlib.contextmanager
def loopback_only() -> Iterator[None]:
    """Keeps an embedded local Ray on 127.0.0.1 (its GCS, raylet, workers and agents otherwise
    listen on every interface, unauthenticated). Ray binds its servers to loopback exactly when
    its node IP is loopback, and takes the node IP from the interface unless
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER is off (`ray/_private/services.py` get_node_ip_address,
    `ray_constants.ENABLE_RAY_CLUSTER`, read when Ray is imported). Start the embedded instance
    inside this block: its processes inherit the variable, and the environment is restored after
    it, so that the `ray start` of a cluster launched later from the same process (`cluster/`,
    the tests) is not made single-node."""
    before = os.environ.get(LOOPBACK_ENV)
    os.environ[LOOPBACK_ENV] = "0"
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:  # Ray already imported in this process (a test, a notebook)
        constants.ENABLE_RAY_CLUSTER = False  # stays so: this process now drives a loopback node
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(LOOPBACK_ENV, None)
        else:
            os.environ[LOOPBACK_ENV] = before


def start_ray(ray_cfg: dict[str, Any]) -> bool:
    """Starts an embedded local Ray (on loopback), or attaches to `ray.address`; does nothing if
    Ray is already initialized. Returns True if it started one."""
    loaded = sys.modules.get("ray")
    if loaded is not None and loaded.is_initialized():
        return False  # before init_kwargs: Ray's auth config is not reset under a live connection
    kwargs = init_kwargs(ray_cfg)
    embedded = "address" not in kwargs
    with loopback_only() if embedded else contextlib.nullcontext():
        import ray

        ray.init(**kwargs)
    return True


def init_kwargs(ray_cfg: dict[str, Any]) -> dict[str, Any]:
    """`ray.init` arguments (`start_ray` uses them), with Ray's auth variables set: a cluster's
    token, or none for an embedded local Ray."""
    address = ray_cfg.get("address") or os.environ.get("RAY_ADDRESS")
    if address:
        # An existing cluster (a Ray job's driver has RAY_ADDRESS set): attach only, with its token.
        apply_env(token_env("ray.address" if ray_cfg.get("address") else "RAY_ADDRESS"))
        return {"address": address, "log_to_driver": True}
    apply_env(ray_env())
    # WARNING: Ray's INFO lines ("Started a local Ray instance") would cut into the progress bar.
    kwargs: dict[str, Any] = {"log_to_driver": True, "include_dashboard": False, "logging_level": "WARNING"}
    if ray_cfg.get("num_cpus"):
        kwargs["num_cpus"] = ray_cfg["num_cpus"]
    kwargs["resources"] = {TESTBED_RESOURCE: 1}
    # Workers import the project from its source tree (editable install) on this machine; a
    # cluster gets it through the job's working_dir (cluster/submit.py).
    return kwargs

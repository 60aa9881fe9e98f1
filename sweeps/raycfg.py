"""How the project starts or reaches Ray, in one place. Token authentication is disabled
everywhere (RAY_AUTH_MODE=disabled) because Ray 2.60 enables it inconsistently across
`ray.init`, `ray start` and `ray job submit` (see cluster/README.md); clusters are reached on
loopback or a private network."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

AUTH_MODE = "disabled"


def ray_env() -> dict[str, str]:
    return {"RAY_AUTH_MODE": AUTH_MODE}


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
    kwargs = init_kwargs(ray_cfg)
    embedded = "address" not in kwargs
    with loopback_only() if embedded else contextlib.nullcontext():
        import ray

        if ray.is_initialized():
            return False
        ray.init(**kwargs)
    return True


def init_kwargs(ray_cfg: dict[str, Any]) -> dict[str, Any]:
    """`ray.init` arguments (`start_ray` uses them)."""
    os.environ.update(ray_env())
    address = ray_cfg.get("address") or os.environ.get("RAY_ADDRESS")
    if address:
        # An existing cluster (a Ray job's driver has RAY_ADDRESS set): attach only.
        return {"address": address, "log_to_driver": True}
    # WARNING: Ray's INFO lines ("Started a local Ray instance") would cut into the progress bar.
    kwargs: dict[str, Any] = {"log_to_driver": True, "include_dashboard": False, "logging_level": "WARNING"}
    if ray_cfg.get("num_cpus"):
        kwargs["num_cpus"] = ray_cfg["num_cpus"]
    # Workers import the project from its source tree (editable install) on this machine; a
    # cluster gets it through the job's working_dir (cluster/submit.py).
    return kwargs

"""How the project starts or reaches Ray, in one place. Token authentication is disabled
everywhere (RAY_AUTH_MODE=disabled) because Ray 2.60 enables it inconsistently across
`ray.init`, `ray start` and `ray job submit` (see cluster/README.md); clusters are reached on
loopback or a private network."""

from __future__ import annotations

import os
import sys
from typing import Any

AUTH_MODE = "disabled"


def ray_env() -> dict[str, str]:
    return {"RAY_AUTH_MODE": AUTH_MODE}


def _loopback_only() -> None:
    """Keeps an embedded local Ray on 127.0.0.1 (its GCS, raylet, workers and agents otherwise
    listen on every interface, unauthenticated). Ray binds its servers to loopback exactly when
    its node IP is loopback, and takes the node IP from the interface unless
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER is off (`ray/_private/services.py` get_node_ip_address,
    `ray_constants.ENABLE_RAY_CLUSTER`, read when Ray is imported): so call this before `import
    ray`. It makes the instance single-node, which an embedded one is; a cluster head is started
    by `ray start` (cluster/), never through here."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:  # Ray already imported in this process (a test, a notebook)
        constants.ENABLE_RAY_CLUSTER = False


def init_kwargs(ray_cfg: dict[str, Any]) -> dict[str, Any]:
    """`ray.init` arguments; call before importing Ray (see `_loopback_only`)."""
    os.environ.update(ray_env())
    address = ray_cfg.get("address") or os.environ.get("RAY_ADDRESS")
    if address:
        # An existing cluster (a Ray job's driver has RAY_ADDRESS set): attach only.
        return {"address": address, "log_to_driver": True}
    _loopback_only()
    # WARNING: Ray's INFO lines ("Started a local Ray instance") would cut into the progress bar.
    kwargs: dict[str, Any] = {"log_to_driver": True, "include_dashboard": False, "logging_level": "WARNING"}
    if ray_cfg.get("num_cpus"):
        kwargs["num_cpus"] = ray_cfg["num_cpus"]
    # Workers import the project from its source tree (editable install) on this machine; a
    # cluster gets it through the job's working_dir (cluster/submit.py).
    return kwargs

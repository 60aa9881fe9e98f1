"""How the project starts or reaches Ray, in one place. Token authentication is disabled
everywhere (RAY_AUTH_MODE=disabled) because Ray 2.60 enables it inconsistently across
`ray.init`, `ray start` and `ray job submit` (see cluster/README.md); clusters are reached on
loopback or a private network."""

from __future__ import annotations

import os
from typing import Any

AUTH_MODE = "disabled"


def ray_env() -> dict[str, str]:
    return {"RAY_AUTH_MODE": AUTH_MODE}


def init_kwargs(ray_cfg: dict[str, Any]) -> dict[str, Any]:
    os.environ.update(ray_env())
    address = ray_cfg.get("address") or os.environ.get("RAY_ADDRESS")
    if address:
        # An existing cluster (a Ray job's driver has RAY_ADDRESS set): attach only.
        return {"address": address, "log_to_driver": True}
    kwargs: dict[str, Any] = {"log_to_driver": True, "include_dashboard": False}
    if ray_cfg.get("num_cpus"):
        kwargs["num_cpus"] = ray_cfg["num_cpus"]
    # Workers import the project from its source tree (editable install) on this machine; a
    # cluster gets it through the job's working_dir (cluster/submit.py).
    return kwargs

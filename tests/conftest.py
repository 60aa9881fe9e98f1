"""Shared fixtures: real services started for the tests and stopped by PID afterwards."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cluster.local import alive, wait_port

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


ENGINE_FASTER = 3.0
"""How much faster than `sim.estimate` says the engine may run a job: the estimate assumes 3 M
events a wall-second, and a quiet core does 5-9 M."""
ENGINE_SLOWER = 2.0
"""How much slower: a core shared with the other test worker and the VM's neighbours."""


def assert_lasts(seconds: float, **fields) -> float:
    """A test's premise that a run of `fields` lasts at least `seconds` of wall time, asserted
    from its estimate with ENGINE_FASTER of margin rather than assumed of the machine (issue 56:
    a timeout test's "minute-long" run took 0.5 s and the test failed). Returns the estimate."""
    import sim

    est = sim.estimate(**fields).wall_s
    assert est >= ENGINE_FASTER * seconds, f"premise: {fields}: {est:.2f} s estimated < {ENGINE_FASTER:g} x {seconds}"
    return est


def assert_quick(seconds: float, **fields) -> float:
    """The premise that a run of `fields` ends within `seconds` of wall time (ENGINE_SLOWER of
    margin on its estimate). Returns the estimate."""
    import sim

    est = sim.estimate(**fields).wall_s
    assert est * ENGINE_SLOWER <= seconds, f"premise: {fields}: {est:.2f} s estimated > {seconds} / {ENGINE_SLOWER:g}"
    return est


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_group(proc: subprocess.Popen, grace_s: float = 3.0) -> None:
    """Stops a process started with start_new_session=True and everything in its process group
    (by PGID: only what the test started). `ray start --block` ignores SIGTERM at times."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and alive(proc.pid):
            time.sleep(0.1)
    proc.wait(30)


@pytest.fixture(scope="session")
def ray_head(tmp_path_factory):
    """A one-node Ray cluster (2 CPUs) for sweeps to attach to: `ray.address=<address>`. Like
    every cluster it runs with token auth; its token's file is RAY_AUTH_TOKEN_PATH for the rest
    of the session, so that what attaches (in this process or a child) finds it."""
    from cluster.auth import new_token
    from sweeps.raycfg import cluster_env

    port = free_port()
    tmp = tmp_path_factory.mktemp("ray")
    token = cluster_env(new_token(tmp))
    os.environ["RAY_AUTH_TOKEN_PATH"] = token["RAY_AUTH_TOKEN_PATH"]
    env = dict(os.environ, **token)
    log = open(tmp / "ray.log", "w")
    proc = subprocess.Popen(
        [
            str(BIN / "ray"),
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=2",
            "--node-ip-address=127.0.0.1",
            f"--temp-dir={tmp}",
            "--include-dashboard=false",
            "--object-store-memory=200000000",
            "--memory=2000000000",
            '--resources={"kernel_testbed": 1}',
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_port(port)
        yield f"127.0.0.1:{port}"
    finally:
        stop_group(proc)
        log.close()

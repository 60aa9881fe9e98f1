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
    """A one-node Ray cluster (2 CPUs) for sweeps to attach to: `ray.address=<address>`."""
    port = free_port()
    tmp = tmp_path_factory.mktemp("ray")
    env = dict(os.environ, RAY_AUTH_MODE="disabled")
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

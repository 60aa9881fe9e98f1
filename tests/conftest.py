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

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port}")


def stop_group(proc: subprocess.Popen, grace_s: float = 3.0) -> None:
    """Stops a process started with start_new_session=True and everything in its process group
    (by PGID: only what the test started). `ray start --block` ignores SIGTERM at times."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _group_alive(proc.pid):
        time.sleep(0.1)


def _group_alive(pgid: int) -> bool:
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


@pytest.fixture(scope="session")
def ray_head(tmp_path_factory):
    """A one-node Ray cluster (2 CPUs) for sweeps to attach to: `ray.address=<address>`."""
    port = free_port()
    tmp = tmp_path_factory.mktemp("ray")
    env = dict(os.environ, RAY_AUTH_MODE="disabled")
    log = open(tmp / "ray.log", "w")
    proc = subprocess.Popen(
        [str(BIN / "ray"), "start", "--head", "--block", f"--port={port}", "--num-cpus=2",
         "--node-ip-address=127.0.0.1", f"--temp-dir={tmp}", "--include-dashboard=false",
         "--object-store-memory=200000000", "--memory=2000000000"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_port(port)
        yield f"127.0.0.1:{port}"
    finally:
        stop_group(proc)
        log.close()

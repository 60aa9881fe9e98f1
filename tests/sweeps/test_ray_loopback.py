"""Audit D2: the embedded local Ray listened on every interface (GCS, raylet, workers, agents)
with authentication off. Every socket a sweep's Ray listens on must be on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

# Runs in a fresh process: starts Ray the way a sweep does, runs a task, and lists the listening
# TCP sockets of this process and its descendants (Ray's GCS, raylet, workers and agents).
SCRIPT = r"""
import json, os, re, subprocess
from sweeps.launch import _ray_init
assert _ray_init({"num_cpus": 1})
import ray
assert ray.get(ray.remote(lambda: 1).remote()) == 1

def descendants(pid):
    out = {pid}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            kids = open(f"/proc/{pid}/task/{task}/children").read().split()
        except OSError:
            continue
        for k in kids:
            out |= descendants(int(k))
    return out

mine = descendants(os.getpid())
listeners = []
for line in subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout.splitlines():
    pids = {int(p) for p in re.findall(r"pid=(\d+)", line)}
    if pids & mine:
        listeners.append(line.split()[3])
print(json.dumps(listeners))
ray.shutdown()
"""


def _loopback(addr: str) -> bool:
    host = addr.rsplit(":", 1)[0].strip("[]")
    return host.startswith("127.") or host in ("::1", "localhost") or host.startswith("::ffff:127.")


def test_an_embedded_ray_listens_on_loopback_only():
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_ADDRESS")}
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(env, PYTHONPATH=str(ROOT), RAY_AUTH_MODE="disabled"),
    )
    assert res.returncode == 0, res.stderr[-3000:]
    listeners = json.loads(res.stdout.strip().splitlines()[-1])
    assert len(listeners) >= 3, listeners  # GCS, raylet, a worker at least: the check saw them
    assert [a for a in listeners if not _loopback(a)] == [], listeners

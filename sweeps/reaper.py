"""Ends what a sweep driver started if the driver is killed (kill -9 included), so that nothing
it started outlives it.

Ray's GCS and raylet share the fate of the driver that started them, and our MLflow loggers
watch their parent, but Ray's dashboard and runtime-env agents, orphaned, first try to report
the raylet's death to the dead GCS and give up only after its 60 s timeout
(`ray/_private/process_watcher.py`, `publish_error_to_driver`): audit D6 found them still
running. No library does this for processes we do not start ourselves, so a small watcher
process (its own session, so a Ctrl-C of the driver's terminal does not reach it) snapshots the
driver's descendants every second and, once the driver is gone, kills the last snapshot's
processes by PID (each checked against its start time, so a reused PID is never hit).
"""

from __future__ import annotations

import os
import subprocess
import sys

WATCHER = r"""
import os, signal, sys, time

def start_time(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[19]
    except OSError:
        return None

def descendants(pid):
    out = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            kids = open(f"/proc/{pid}/task/{task}/children").read().split()
        except OSError:
            continue
        for k in map(int, kids):
            if k != os.getpid():
                out[k] = start_time(k)
                out.update(descendants(k))
    return out

driver, started = int(sys.argv[1]), sys.argv[2]
known = {}
while start_time(driver) == started:
    known.update(descendants(driver))
    known = {p: t for p, t in known.items() if start_time(p) == t}
    time.sleep(1.0)
for pid, t in known.items():
    if start_time(pid) == t:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
"""


def watch_driver() -> subprocess.Popen | None:
    """Starts the watcher for this process (Linux /proc only); returns it, or None elsewhere."""
    if not os.path.exists(f"/proc/{os.getpid()}/task"):
        return None
    started = open(f"/proc/{os.getpid()}/stat").read().rsplit(")", 1)[1].split()[19]
    return subprocess.Popen(
        [sys.executable, "-c", WATCHER, str(os.getpid()), started],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

"""The MLflow UI in a real browser (issue 13): after a sweep, the runs URL it prints opens, in
headless Chromium, on the sweep's child runs with their swept params and metrics as columns.
Skipped without Chromium (Debian's `chromium`; .ci/run installs it)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.sweeps.helpers import sweep

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Flags for a closed network: without the background ones Chromium keeps trying Google's hosts.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=20000",
    "--window-size=1600,1000",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chromium(tmp_path, url: str, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"chromium-{time.monotonic_ns()}"
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, url], capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (apt-get install chromium)")
def test_the_printed_runs_url_shows_the_child_runs_with_params_and_metrics(tmp_path, ray_head):
    res = sweep(tmp_path, "-m", "tcp=reno,paced", "flows=2,4", "duration_s=3", "warmup_s=1", ray_address=ray_head)
    assert res.returncode == 0, res.stderr
    url = re.search(r"runs (http://\S+viewStateShareKey=\w+)", res.stderr).group(1)
    port = _free_port()
    ui = subprocess.Popen(
        [
            os.path.join(os.path.dirname(sys.executable), "mlflow"),
            "ui",
            "--backend-store-uri",
            f"sqlite:///{tmp_path / 'mlflow.db'}",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",  # one server process, not the default 4 (each imports MLflow: seconds on 2 cores)
            "1",
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and ui.poll() is None, "mlflow ui did not start"
                time.sleep(0.5)
        url = url.replace("127.0.0.1:5000", f"127.0.0.1:{port}")
        dom = _chromium(tmp_path, url, "--dump-dom").stdout
    finally:
        os.killpg(ui.pid, signal.SIGTERM)  # mlflow ui and its server workers, by process group
        ui.wait(timeout=30)
    assert "Training runs" in dom  # the model-training view, not the GenAI overview
    for name in ("tcp=reno flows=2", "tcp=reno flows=4", "tcp=paced flows=2", "tcp=paced flows=4"):
        assert name in dom, f"child run {name!r} not shown"
    assert ">tcp<" in dom and ">flows<" in dom, "swept params are not columns"
    assert ">utilization<" in dom and ">loss_rate<" in dom, "metrics are not columns"
    assert re.search(r"<strong>4</strong>\s*matching runs", dom), "the view should list this sweep's 4 child runs"

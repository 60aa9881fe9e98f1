"""The MLflow UI in a real browser (issues 13 and 34): after a sweep, the runs URL it prints opens,
in headless Chromium, on the sweep's child runs with their swept params and metrics as columns; a
child run's chart (the link in its description) reads in simulated milliseconds; the parent run
lists the sweep's summary plot. Skipped without Chromium (Debian's `chromium`; .ci/run installs it)."""

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

from sweeps.tracking import chart_route
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


POINTS = ["flows=2,4", "precision.metrics=[utilization]", "precision.halfwidth=0.01", "precision.min_seeds=3"]
POINTS += ["precision.max_seeds=4", "duration_s=5", "warmup_s=1", "core_mbps=10", "name=points"]


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (apt-get install chromium)")
def test_the_printed_runs_url_shows_the_child_runs_with_params_and_metrics(tmp_path, ray_head):
    res = sweep(tmp_path, "-m", "tcp=reno,paced", "flows=2,4", "duration_s=3", "warmup_s=1", ray_address=ray_head)
    assert res.returncode == 0, res.stderr
    url = re.search(r"runs (http://\S+viewStateShareKey=\S+)", res.stderr).group(1)
    assert url.endswith("&workflowType=machine_learning"), url  # MLflow 3.17's model-training pages
    # Issue 69: a replicated sweep's link shows its points, each with its interval, over its replications.
    replicated = sweep(tmp_path, "-m", *POINTS, ray_address=ray_head)
    assert replicated.returncode == 0, replicated.stderr
    points_url = re.search(r"runs (http://\S+viewStateShareKey=\S+)", replicated.stderr).group(1)
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
        points_url = points_url.replace("127.0.0.1:5000", f"127.0.0.1:{port}")
        points_dom = _chromium(tmp_path, points_url, "--dump-dom").stdout
        _chromium(tmp_path, points_url, f"--screenshot={tmp_path / 'points.png'}")  # to look at by hand
        child, parent, exp = _one_child_and_parent(tmp_path)
        base = f"http://127.0.0.1:{port}/"
        chart = _chromium(tmp_path, base + chart_route(exp, child), "--dump-dom").stdout
        artifacts = _chromium(tmp_path, f"{base}#/experiments/{exp}/runs/{parent}/artifacts", "--dump-dom").stdout
    finally:
        os.killpg(ui.pid, signal.SIGTERM)  # mlflow ui and its server workers, by process group
        ui.wait(timeout=30)
    assert ">Runs<" in dom and "Detect Issues" not in dom  # the model-training view, not the GenAI overview
    for name in ("tcp=reno flows=2", "tcp=reno flows=4", "tcp=paced flows=2", "tcp=paced flows=4"):
        assert name in dom, f"child run {name!r} not shown"
    assert ">tcp<" in dom and ">flows<" in dom, "swept params are not columns"
    assert ">utilization<" in dom and ">loss_rate<" in dom, "metrics are not columns"
    assert re.search(r"<strong>4</strong>\s*matching runs", dom), "the view should list this sweep's 4 child runs"
    # The chart is Plotly's SVG: its x axis is the step, whose ticks run to the 3-s run's 3000 ms.
    assert 'class="xtitle"' in chart and 'data-unformatted="Step"' in chart, "no chart with a step axis"
    tick = r'class="xtick"><text[^>]*data-unformatted="([\d,.]+)"'
    ticks = [float(t.replace(",", "")) for t in re.findall(tick, chart)]
    assert ticks and 2000 <= max(ticks) <= 3000, f"x ticks {ticks}: the axis should read in simulated ms to 3000"
    assert "sweep_summary.png" in artifacts, "the parent run does not list the sweep's plot"
    for flows in (2, 4):  # each point's group: the point's run (its interval), then its replications
        group = points_dom.split(f"Group: flows={flows}")[1]
        assert re.search(rf"point flows={flows}: [34] replications counted", group), f"point flows={flows} not shown"
        assert all(f"flows={flows} seed={k}" in group for k in (1, 2, 3)), f"replications of flows={flows}"
    assert ">utilization_halfwidth<" in points_dom and ">replications<" in points_dom, "no interval columns"


def _one_child_and_parent(tmp_path) -> tuple[str, str, str]:
    """One child run's MLflow id, the parent's, and their experiment's."""
    from mlflow.tracking import MlflowClient

    c = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp = c.get_experiment_by_name("sweeps").experiment_id
    child = c.search_runs([exp], "tags.buffersweep_role = 'child'", max_results=1)[0]
    note = child.data.tags["mlflow.note.content"]
    assert chart_route(exp, child.info.run_id) in note, "the child's description should link its chart"
    return child.info.run_id, child.data.tags["mlflow.parentRunId"], exp

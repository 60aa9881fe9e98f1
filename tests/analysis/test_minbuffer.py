"""`python -m analysis min-buffer`: the minimum-buffer search on any grid, from the command line,
its probes stored as runs (issue 13)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import analysis.db
from tests.conftest import ROOT


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "analysis", "min-buffer", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(ROOT), RAY_AUTH_MODE="disabled"),
    )


def test_min_buffer_bisects_each_point_and_stores_its_probes(tmp_path):
    results = tmp_path / "results"
    res = cli(
        "target=0.9",
        "flows=2,8",
        "core_mbps=5",
        "rtt_ms=40",
        "rtt_spread_ms=10",
        "duration_s=10",
        "warmup_s=2",
        f"results_dir={results}",
        "mlflow.enabled=false",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    found = {int(n): int(b) for n, b in re.findall(r"│\s+(\d+) │\s+(\d+) │\s+25 │", res.stdout)}
    assert set(found) == {2, 8}, res.stdout
    con = analysis.db.connect(results)
    for flows, b in found.items():
        util = dict(
            con.execute(
                "SELECT buffer_pkts, utilization FROM runs WHERE name = 'min_buffer' AND flows = ? AND status = 'ok'",
                [flows],
            ).fetchall()
        )
        assert util[b] >= 0.9, util  # the answer reaches the target...
        assert util[b - 1] < 0.9, util  # ...and one packet less does not (both were probed)
    assert found[8] <= found[2]  # more flows need less buffer


@pytest.mark.parametrize(
    "args, words",
    [
        (["flows=2,4", "buffer_pkts=3"], ["buffer_pkts", "searches"]),
        (["target=2", "flows=2,4"], ["target", "(0, 1]"]),
        (["flws=2,4"], ["flws", "did you mean flows"]),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, words):
    res = cli(*args, cwd=tmp_path)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1 and all(w in lines[0] for w in words), res.stderr[-2000:]

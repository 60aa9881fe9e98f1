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
    # flows, min buffer, x BDP, utilization, BDP (25 packets)
    found = {int(n): int(b) for n, b in re.findall(r"│\s+(\d+) │\s+(\d+) │[^│]+│[^│]+│\s+25 │", res.stdout)}
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


def test_one_point_and_unreachable_targets_are_answered(tmp_path):
    """Issue 56: min-buffer refused a single point, and doubled an unreachable target's buffer 27
    times into a traceback. One SACK flow behind CoDel (10 Mb/s, 50 ms) holds about 0.83 at any
    buffer: the search stops when doubling the buffer gains nothing, and says so."""
    results = tmp_path / "results"
    common = [f"results_dir={results}", "mlflow.enabled=false", "duration_s=20", "warmup_s=5"]
    res = cli("target=0.95", "tcp=sack", "queue=codel", "flows=1", "core_mbps=10", "rtt_ms=50", *common, cwd=tmp_path)
    assert res.returncode == 1, res.stderr[-3000:]
    assert "Traceback" not in res.stderr
    assert re.search(r"unreachable: utilization 0\.8\d+ at 127 packets and 0\.8\d+ at 63: more buffer", res.stdout)
    assert res.stdout.count("│") >= 6 and "round" not in res.stdout, "one table on stdout, progress on stderr"
    # Windows that cap utilization below the target: said before any probe, none stored.
    res = cli("target=0.9", "flows=2", "wmax_pkts=4", "core_mbps=10", "rtt_ms=100", *common, cwd=tmp_path)
    assert res.returncode == 1, res.stderr[-3000:]
    assert "unreachable: the windows cap utilization at about 0.06" in res.stdout, res.stdout
    runs = analysis.db.connect(results).execute("SELECT count(*) FROM runs WHERE wmax_pkts = 4").fetchone()[0]
    assert runs == 0


def test_with_a_precision_every_decision_rests_on_an_interval_clear_of_the_target(tmp_path):
    """Issue 57, part 3: a probe meets the target only when its interval lies above it, misses only
    when below (each run stops as soon as it is clear, `precision.decide_at`); a point whose probe
    stays within noise is named undecidable."""
    results = tmp_path / "results"
    common = ["flows=2,8", "core_mbps=5", "rtt_ms=40", "rtt_spread_ms=10", "duration_s=10", "warmup_s=2"]
    precision = ["precision.metrics=[utilization]", "precision.halfwidth=0.01", "precision.max_duration_s=60"]
    res = cli("target=0.9", *common, *precision, "sample_interval_s=0.02", f"results_dir={results}", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    found = {int(n): int(b) for n, b in re.findall(r"│\s+(\d+) │\s+(\d+) │[^│]+│[^│]+±[^│]+│\s+25 │", res.stdout)}
    undecidable = {int(n) for n in re.findall(r"^undecidable: flows=(\d+):", res.stdout, re.M)}
    assert set(found) | undecidable == {2, 8} and not set(found) & undecidable, res.stdout
    con = analysis.db.connect(results)
    probes = con.execute(
        "SELECT flows, buffer_pkts, utilization, utilization_halfwidth, stop_reason FROM runs WHERE status = 'ok'"
    ).fetchall()
    assert probes and all(r[4] in ("decided", "precision", "max_duration", "duration") for r in probes)
    for _, _, u, hw, stop in probes:
        if stop == "decided":
            assert abs(u - 0.9) > hw, (u, hw)
    by = {(f, b): (u, hw) for f, b, u, hw, _ in probes}
    for flows, b in found.items():
        u, hw = by[(flows, b)]
        assert u - hw > 0.9  # the answer's interval lies above the target...
        u, hw = by[(flows, b - 1)]
        assert u + hw < 0.9  # ...and one packet less lies below it


def test_replications_decide_each_probe_across_seeds(tmp_path):
    """Issue 70: with precision.max_seeds the search's probes are replicated points (seeds 1, 2,
    ...), and its answer's ends are decided by intervals across them."""
    results = tmp_path / "results"
    common = ["flows=4", "core_mbps=5", "rtt_ms=40", "rtt_spread_ms=20", "duration_s=20", "warmup_s=4"]
    precision = ["precision.metrics=[utilization]", "precision.halfwidth=0.02", "precision.max_seeds=4"]
    res = cli("target=0.9", *common, *precision, f"results_dir={results}", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    con = analysis.db.connect(results)
    points = con.execute("SELECT replications FROM points").fetchall()
    assert points and all(n >= 2 for (n,) in points), points
    assert con.execute("SELECT count(DISTINCT seed) FROM runs").fetchone()[0] >= 2


def test_a_search_is_one_sweep_and_a_repeat_simulates_nothing(tmp_path):
    """Issue 69: every probe was a sweep of its own (58 sweeps after a few searches, `--sweep
    latest` a probe), a cached search took 50 s and said "14 probes run", and off a terminal the
    search printed nothing until its answer. Now a search's rounds are one sweep, a repeat starts
    none, and stderr gets a plain progress line every BUFFERSWEEP_PROGRESS_S (20 s; 1 s here)."""
    results = tmp_path / "results"
    common = ["core_mbps=5", "rtt_ms=40", "rtt_spread_ms=10", "duration_s=10", "warmup_s=2", f"results_dir={results}"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), RAY_AUTH_MODE="disabled", BUFFERSWEEP_PROGRESS_S="1")

    def run(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "analysis", "min-buffer", *args, *common, "mlflow.enabled=false"]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)

    first = run("target=0.9", "flows=2,8")
    assert first.returncode == 0, first.stderr[-3000:]
    beat = r"^\[\d+:\d\d\] min-buffer: round \d+ running .* points decided, elapsed .*, eta"
    beats = re.findall(beat, first.stderr, re.M)
    assert beats, f"no progress line off a terminal: {first.stderr[-2000:]}"
    assert re.search(r"min-buffer: 2 points in \d+ rounds, .*; \d+ probes run$", first.stderr, re.M), first.stderr
    second = run("target=0.8", "flows=2")
    assert second.returncode == 0, second.stderr[-3000:]
    con = analysis.db.connect(results)
    sweeps = con.execute(
        "SELECT sweep_id, any_value(name), count(*) FROM runs GROUP BY ALL ORDER BY max(started_at)"
    ).fetchall()
    assert len(sweeps) == 2 and {s[1] for s in sweeps} == {"min_buffer"}, sweeps
    latest = analysis.db.connect(results, sweep="latest").execute("SELECT count(*) FROM runs").fetchone()[0]
    assert latest == sweeps[-1][2] > 1, "`--sweep latest` is the last search, all its probes"
    again = run("target=0.9", "flows=2,8")
    assert again.returncode == 0 and again.stdout == first.stdout, again.stderr[-3000:]
    assert re.search(r"; nothing simulated, \d+ probes found stored$", again.stderr, re.M), again.stderr
    assert "starting Ray" not in again.stderr
    assert len(analysis.db.connect(results).execute("SELECT DISTINCT sweep_id FROM runs").fetchall()) == 2


def test_a_search_is_the_same_search_whether_or_not_it_logs_to_mlflow():
    """`reproduce --no-mlflow` adds `mlflow.enabled=false` to a search's base: its rounds still
    add to the search's one sweep; a setting of what is simulated makes another search."""
    from analysis.rounds import search_identity

    base, points = ["tcp=reno", "results_dir=r"], [{"flows": 4}]
    same = search_identity(base, points, 0.95)
    assert search_identity([*base, "mlflow.enabled=false"], points, 0.95) == same
    assert search_identity([*base, "rtt_ms=40"], points, 0.95) != same

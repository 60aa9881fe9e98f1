"""The buffer atlas end to end (issue 59): a small atlas built with real Ray, Parquet, DuckDB and
MLflow; rebuilt with one more flows value, running only the new cells' probes; queried at a cell,
between cells and outside; refused on bad input; its page drawn in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

from analysis.db import connect
from tests.conftest import ROOT
from tests.sweeps.test_kernel import NEEDS_ROOT
from tests.sweeps.test_mlflow_ui import CHROMIUM, FLAGS

AXES = ["tcp=sack", "queue=droptail,codel", "core_mbps=10", "rtt_ms=10,20", "min_duration_s=5", "duration_rtts=50"]
AXES += ["seeds=[1,2,3,4]", "min_seeds=2", "max_probe_s=10"]  # short probes: a test's build takes a minute


def atlas(tmp, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "analysis", "atlas", *args]
    if args[0] == "build":
        cmd += [f"results_dir={tmp / 'results'}", f"mlflow.tracking_uri=sqlite:///{tmp / 'mlflow.db'}"]
    else:
        cmd += [f"results_dir={tmp / 'results'}"]
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT), BUFFERSWEEP_PROGRESS_S="2")
    return subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)


def rows(tmp) -> list[dict]:
    cur = connect(tmp / "results").execute(
        "SELECT * FROM atlas WHERE atlas = 'small' ORDER BY flows, queue, rtt_ms, target"
    )
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("atlas")
    first = atlas(tmp, "build", "+atlas=small", "flows=1,4", *AXES)
    assert first.returncode == 0, first.stderr
    before = rows(tmp)
    second = atlas(tmp, "build", "+atlas=small", "flows=1,4,8", *AXES)
    assert second.returncode == 0, second.stderr
    return tmp, first, before, second.stdout


def simulated(stdout: str) -> int:
    return int(re.search(r"\((\d+) simulated now", stdout).group(1))


def cell_runs(table: list[dict]) -> dict[tuple, int]:
    return {(r["queue"], r["flows"], r["rtt_ms"]): r["runs"] for r in table}


def test_every_answer_is_a_point_in_a_bracket_its_seeds_support(built):
    tmp, first, before, _ = built
    assert len(before) == 2 * 2 * 2 * 3  # queues x flows x RTTs x targets
    for r in before:
        flags = set((r["flags"] or "").split(","))
        assert (r["min_buffer_pkts"] is None) == bool({"unreachable", "failed", "undecided"} & flags), r
        if r["min_buffer_pkts"] is not None:
            assert r["lo_pkts"] < r["min_buffer_pkts"] <= r["hi_pkts"] and r["confidence"] == 0.95, r
            assert r["min_buffer_bdp"] == pytest.approx(r["min_buffer_pkts"] / r["bdp_pkts"])
            assert r["utilization"] - r["utilization_halfwidth"] >= r["target"], "hi surely meets the target"
            assert r["seeds"] >= 2 and r["probe_s"] >= 5
    assert simulated(first.stdout) == sum(cell_runs(before).values())
    assert re.search(r"^\[\d+:\d\d\] atlas small: round \d+ \(\d+:\d\d", first.stderr, re.M), "progress off a terminal"
    sql = subprocess.run(
        [sys.executable, "-m", "analysis", "sql", "SELECT count(*) AS n FROM atlas WHERE atlas = 'small'"]
        + ["--results", str(tmp / "results"), "--format", "csv"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert [v.strip('"') for v in sql.stdout.split()] == ["n", str(2 * 3 * 2 * 3)]  # after the rebuild: 3 flows


def test_one_more_flows_value_runs_only_the_new_cells_probes(built):
    tmp, _, before, out = built
    after = rows(tmp)
    new = {k: v for k, v in cell_runs(after).items() if k[1] == 8}
    assert simulated(out) == sum(new.values()) > 0
    old = [{k: v for k, v in r.items()} for r in after if r["flows"] != 8]
    assert old == before, "the old cells' answers are the same, from their stored probes"
    # Every round's runs are members of the atlas's one sweep (each round had replaced the list).
    con = connect(tmp / "results")
    members, stored = con.execute(
        "SELECT (SELECT count(DISTINCT run_id) FROM members WHERE name = 'atlas_small'), "
        "(SELECT count(DISTINCT run_id) FROM runs WHERE name = 'atlas_small')"
    ).fetchone()
    assert members == stored == sum(cell_runs(after).values())


def test_mlflow_holds_a_run_a_cell_not_a_run_a_probe(built):
    from mlflow.tracking import MlflowClient

    tmp, _, _, _ = built
    c = MlflowClient(f"sqlite:///{tmp / 'mlflow.db'}")
    e = c.get_experiment_by_name("atlas_small")
    found = c.search_runs([e.experiment_id], max_results=5000)
    parents = [r for r in found if r.data.tags.get("buffersweep_role") == "parent"]
    assert len(parents) == 1 and parents[0].data.tags["atlas"] == "small"
    cells = [r for r in found if r.data.tags.get("mlflow.parentRunId") == parents[0].info.run_id]
    assert len(found) == 1 + len(cells) and len(cells) == len(cell_runs(rows(tmp))) == 12
    one = next(r for r in cells if r.info.run_name == "tcp=sack queue=droptail flows=4 core_mbps=10 rtt_ms=10")
    row = next(r for r in rows(tmp) if (r["queue"], r["flows"], r["rtt_ms"], r["target"]) == ("droptail", 4, 10, 0.95))
    assert one.data.metrics["0.95/min_buffer_pkts"] == row["min_buffer_pkts"]
    series = c.get_metric_history(one.info.run_id, "probe/utilization")
    assert len(series) == row["probes"] and {m.step for m in series} >= {row["hi_pkts"]}
    names = {a.path for a in c.list_artifacts(parents[0].info.run_id)}
    assert {"atlas_small.html", "small.parquet", "atlas_small_0.95.png"} <= names


def test_query_answers_a_point_and_a_bracket_at_a_cell_between_cells_and_refuses_outside(built):
    from analysis.atlas import query

    tmp, _, _, _ = built
    cell = next(r for r in rows(tmp) if (r["queue"], r["flows"], r["rtt_ms"], r["target"]) == ("droptail", 4, 10, 0.95))
    point = ["tcp=sack", "queue=droptail", "core_mbps=10", "target=0.95"]
    exact = atlas(tmp, "query", *point, "flows=4", "rtt_ms=10")
    assert exact.returncode == 0, exact.stderr
    lo, hi = cell["lo_pkts"], cell["hi_pkts"]
    assert f"measured minimum buffer {cell['min_buffer_pkts']:,} packets" in exact.stdout
    assert f"95% bracket ({lo:,}, {hi:,}] packets" in exact.stdout and "1,500-byte packets" in exact.stdout
    assert "rule stanford" in exact.stdout and "rule bdp" in exact.stdout
    got = json.loads(atlas(tmp, "query", *point, "flows=4", "rtt_ms=10", "--format", "json").stdout)
    assert (got["kind"], round(got["buffer_pkts"]), got["pkt_bytes"]) == ("measured", cell["min_buffer_pkts"], 1500)
    same = query("sack", "droptail", 4, 10, 10, 0.95, results_dir=tmp / "results")
    assert json.loads(json.dumps(same, default=str)) == got, "the Python call returns what --format json prints"
    inside = atlas(tmp, "query", *point, "flows=2", "rtt_ms=15")
    assert inside.returncode == 0 and "interpolated" in inside.stdout, inside.stdout + inside.stderr
    assert len(re.findall(r"  cell flows=\d+ core_mbps=10 rtt_ms=\d+: .*weight", inside.stdout)) == 4
    assert "interpolation error on this slice (leave one out" in inside.stdout or "x BDP" in inside.stdout
    outside = atlas(tmp, "query", *point, "flows=100", "rtt_ms=20")
    lines = outside.stderr.strip().splitlines()
    assert outside.returncode == 2 and len(lines) == 1 and outside.stdout == "", outside.stdout + outside.stderr
    assert lines[0].startswith("error: flows: 100 is outside the atlas (1, 4, 8)")
    assert "Nearest cell at rtt_ms 20: flows=8, core_mbps=10.0, rtt_ms=20.0" in lines[0]


def test_loo_error_predicts_each_cell_from_its_neighbours():
    from analysis.atlas.lookup import loo_error

    def row(flows, b):
        return {"flows": flows, "core_mbps": 10, "rtt_ms": 10, "min_buffer_bdp": b}

    err = loo_error([row(1, 1.0), row(4, 0.5), row(16, 0.25), row(64, 0.2)], ["flows"])
    # 4 flows: predicted sqrt(1 x 0.25) = 0.5, exact; 16: sqrt(0.5 x 0.2) = 0.316 against 0.25.
    assert err["cells"] == 2 and err["median_factor"] == pytest.approx((1 + 0.316227766 / 0.25) / 2, rel=0.1)


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["build", "+atlas=small", "tcp=vegas"], "tcp"),
        (["build", "+atlas=small", "queue=sfq"], "queue"),
        (["build", "+atlas=small", "targets=[0.9,1.2]"], "targets"),
        (["build", "+atlas=small", "seed=1,2"], "seed"),
        (["build", "+atlas=small", "seed=3"], "seed"),
        (["build", "+atlas=small", "decide=vote"], "decide"),
        (["build", "+atlas=small", "seeds=[1]"], "seeds"),
        (["build", "+atlas=huge"], "atlas"),
        (
            ["query", "tcp=sack", "queue=droptail", "flows=4", "core_mbps=10", "rtt_ms=10", "target=0.95", "mss=9"],
            "mss",
        ),
        (["query", "tcp=sack", "queue=droptail", "flows=4", "core_mbps=10", "rtt_ms=10", "target=0"], "target"),
        (["query", "tcp=reno", "queue=droptail", "flows=4", "core_mbps=10", "rtt_ms=10", "target=0.95"], "tcp"),
    ],
)
def test_bad_input_gets_one_line_naming_the_key_and_exit_2(built, args, key):
    tmp, _, _, _ = built
    res = atlas(tmp, *args, timeout=120)
    assert res.returncode == 2 and res.stderr.startswith(f"error: {key}:"), res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_the_shipped_atlas_answers_a_fresh_clone_and_says_its_engine(tmp_path):
    """Issue 70: `atlas query` answers with no build, from the table in analysis/atlas/shipped/,
    whose file names the engine version its rows say; a moved engine is said."""
    import pyarrow.parquet as pq

    import sim
    from analysis.atlas_schema import SHIPPED, shipped_name

    files = sorted(SHIPPED.glob("*.parquet"))
    assert files, "no shipped atlas"
    for f in files:
        name, version = shipped_name(f)
        assert set(pq.read_table(f, columns=["engine_version"]).column(0).to_pylist()) == {version}, f
        assert set(pq.read_table(f, columns=["atlas"]).column(0).to_pylist()) == {name}, f

    def issue_point(tcp: str) -> subprocess.CompletedProcess:  # no results_dir: the shipped table answers
        return subprocess.run(
            [sys.executable, "-m", "analysis", "atlas", "query", f"tcp={tcp}", "queue=droptail", "flows=100"]
            + ["core_mbps=1000", "rtt_ms=100", "target=0.95"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )

    res = issue_point("cubic")
    assert res.returncode == 0, res.stderr
    assert re.search(
        r"interpolated minimum buffer [\d,]+ packets .* 95% bracket \([\d,]+, [\d,]+\] packets", res.stdout
    )
    version = shipped_name(files[0])[1]
    assert f"from atlas small (engine {version}, 1,500-byte packets)" in res.stdout
    assert (f"this engine is {sim.ENGINE_VERSION}" in res.stdout) == (version != sim.ENGINE_VERSION)
    assert not (tmp_path / "results").exists(), "a query writes nothing"
    old_name = issue_point("linux")  # the issue's own words: CUBIC's name up to engine 0.20.0
    assert old_name.returncode == 2 and old_name.stderr.startswith("error: tcp: 'linux' was renamed: use tcp=cubic ")


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (apt-get install chromium)")
def test_the_page_draws_the_atlas_values_in_chromium(built):
    tmp, _, _, _ = built
    page = tmp / "results" / "atlas" / "small" / "atlas_small.html"

    def dom(url: str, *extra: str) -> str:
        profile = tmp / f"chromium-{time.monotonic_ns()}"
        cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, url]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout

    shown = dom(page.as_uri() + "#tcp=sack&queue=codel&target=0.99&rtt=20", "--dump-dom")
    dom(page.as_uri() + "#tcp=sack&queue=droptail&target=0.95&rtt=10", f"--screenshot={tmp / 'atlas.png'}")
    assert 'data-ready="yes"' in shown
    data = json.loads(re.search(r'id="atlas-data">(.*?)</script>', shown, re.S).group(1))
    cells = [d for d in data if (d["tcp"], d["queue"], d["target"], d["rtt_ms"]) == ("sack", "codel", 0.99, 20)]
    drawn = re.findall(r'class="cell" data-value="([^"]*)"', shown)
    expected = sorted(f"{d['min_buffer_bdp']:.3g}" if d["min_buffer_bdp"] else "" for d in cells)
    assert len(drawn) == len(cells) == 3 and sorted(_py3g(v) for v in drawn) == expected, "the hash picks the view"
    assert "#tcp=sack&amp;queue=codel&amp;target=0.99&amp;rtt=20" in shown or "queue=codel" in shown
    assert shown.count('class="series"') >= 1 and shown.count('class="rule"') >= 2, "the atlas's line and the rules'"
    flagged = [d for d in cells if d["flags"]]
    assert shown.count('class="flagged"') == len(flagged), "flagged cells are hatched"
    assert "x BDP" in shown and "95% bracket" in shown, "the colour scale, and the bracket in each cell's title"
    labels = [float(v) for v in re.findall(r'<text[^>]*class="axis"[^>]*>([0-9.e+-]+)</text>', shown)]
    answered = [d["min_buffer_bdp"] for d in cells if d["min_buffer_bdp"]]
    assert not answered or min(labels) <= min(answered), "the line chart's axis reaches its smallest answer"


def _py3g(js: str) -> str:
    """JavaScript's toPrecision(3) ("0.480") as Python's :.3g ("0.48")."""
    return f"{float(js):.3g}" if js else ""


def test_the_report_states_each_claim_from_the_table(built):
    """`reproduce atlas` on the reduced grid (all its probes stored already): every claim row is
    computed from the table, and the rules' verdicts add up, a rule safe only above the bracket."""
    from analysis.atlas.judge import verdicts
    from analysis.reproductions.atlas import atlas as reproduction

    tmp, _, _, _ = built
    grid = ("flows=1,4,8", *AXES)
    report, _ = reproduction(str(tmp / "results"), False, grid)
    assert len(report.rows) == 7 and all(r[3] in ("yes", "no") for r in report.rows)
    table = rows(tmp)
    one = sorted(
        r["min_buffer_bdp"]
        for r in table
        if (r["queue"], r["flows"], r["target"]) == ("droptail", 1, 0.99) and r["min_buffer_bdp"]
    )
    dick = next(r for r in report.rows if r[1] == "Dick 2005")
    median = (one[len(one) // 2] + one[(len(one) - 1) // 2]) / 2
    assert dick[2] == f"median {median:.2f} x BDP over {len(one)} cells"
    bdp = verdicts(table)[("bdp", 0.95)]
    answered = [r for r in table if r["target"] == 0.95 and r["min_buffer_pkts"]]
    assert bdp["cells"] == len(answered)
    assert bdp["safe"] == sum(r["rule_bdp_pkts"] >= r["hi_pkts"] for r in answered) / len(answered)
    assert "0 runs" in report.reading or "simulated 0 runs" in report.reading


def test_reproduce_without_mlflow_logs_no_cell(built, tmp_path):
    """`reproduce atlas --no-mlflow`: the build's own cells stay out of MLflow too (its store,
    this test's $MLFLOW_TRACKING_URI, is never created); with MLflow they are logged there."""
    from analysis.reproductions.atlas import atlas as reproduction
    from analysis.reproductions.common import MLFLOW

    tmp, _, _, _ = built
    store = tmp_path / "mlflow.db"
    for logs in (False, True):
        token = MLFLOW.set(logs)
        try:
            reproduction(str(tmp / "results"), False, ("flows=1,4,8", *AXES))
        finally:
            MLFLOW.reset(token)
        assert store.exists() == logs


def test_the_check_probes_each_bracket_long_on_other_seeds(built):
    """`atlas check`: each picked cell's brackets probed again at both ends with long runs on
    seeds the atlas never ran; the long answer is in the bracket when they miss at lo and meet at hi."""
    from analysis.atlas.check import verdict

    tmp, _, _, _ = built
    res = atlas(
        tmp, "check", "+atlas=small", "cells=2", "check_seeds=2", "long_s=10", "max_long_s=10", "flows=1,4,8", *AXES
    )
    assert res.returncode in (0, 1), res.stderr
    summary = re.search(r"(\d+) of (\d+) answers' long probes agree with their bracket", res.stdout)
    assert summary and int(summary.group(2)) == 2 * 3, res.stdout
    row = {"target": 0.95, "lo_pkts": 10, "hi_pkts": 12}
    assert verdict(row, {10: (0.94, 0.01), 12: (0.96, 0.01)}) == "in"
    assert verdict(row, {10: (0.94, 0.01), 12: (0.945, 0.01)}) == "above"
    assert verdict(row, {10: (0.951, 0.01), 12: (0.96, 0.01)}) == "below"
    assert verdict({"target": 0.95, "lo_pkts": 64, "hi_pkts": None}, {64: (0.9, 0.01)}) == "unreachable"


def test_the_shipped_atlas_is_checked_from_a_new_directory(tmp_path):
    """`atlas check` with no build and no results yet checks the shipped table's brackets (it once
    stopped with a traceback: no results at results_dir), and stores its probes there."""
    cell = ["tcp=cubic", "queue=droptail", "flows=1", "core_mbps=10", "rtt_ms=10", "targets=[0.95]"]
    res = atlas(tmp_path, "check", "+atlas=small", "cells=1", "check_seeds=1", "long_s=2", "max_long_s=2", *cell)
    assert res.returncode in (0, 1), res.stderr
    line = r"cubic droptail flows=1 core_mbps=10 rtt_ms=10 target 0.95: atlas \d+ in \("
    assert re.search(line, res.stdout), res.stdout
    assert re.search(r"of 1 answers' long probes agree", res.stdout), res.stdout
    (probes,) = connect(tmp_path / "results").execute("SELECT count(*) FROM runs WHERE seed >= 101").fetchone()
    assert probes == 2, probes  # the bracket's two ends, on a check seed, stored beside nothing else


@NEEDS_ROOT
def test_the_kernel_checks_a_bracket_at_both_ends_and_the_report_reads_it(tmp_path):
    """`atlas check backend=kernel` (issue 72): a CUBIC cell's bracket, each end run on this host's
    own cubic in real time; the verdicts stored, and `reproduce atlas`'s section drawn from them."""
    import pyarrow.parquet as pq

    from analysis.atlas.check import checks_path
    from analysis.reproductions.atlas import kernel_notes

    cell = ["tcp=cubic", "queue=droptail", "flows=2", "core_mbps=10", "rtt_ms=20", "targets=[0.99]"]
    short = ["seeds=[1,2]", "min_seeds=2", "min_duration_s=3", "duration_rtts=50", "max_probe_s=5"]
    built = atlas(tmp_path, "build", "+atlas=small", *cell, *short)
    assert built.returncode == 0, built.stderr
    res = atlas(tmp_path, "check", "+atlas=small", "backend=kernel", "cells=1", "check_seeds=1", "long_s=4", *cell)
    assert res.returncode in (0, 1), res.stderr
    assert re.search(r"of 1 answers' long probes agree", res.stdout), res.stdout
    (checked,) = pq.read_table(checks_path(str(tmp_path / "results"), "small", "kernel")).to_pylist()
    assert checked["verdict"] in ("in", "above", "below") and 0.3 < checked["hi_utilization"] <= 1.005, checked
    assert checked["lo_pkts"] < checked["hi_pkts"] and checked["lo_utilization"] is not None, checked
    # The engine ran the kernel's probes too: the same seeds and length, so the two are comparable.
    assert checked["long_s"] == 4 and checked["engine_verdict"] in ("in", "above", "below"), checked
    assert 0.3 < checked["engine_hi_utilization"] <= 1.0 and checked["engine_lo_utilization"] is not None, checked
    notes = "\n".join(kernel_notes(str(tmp_path / "results"), "small", rows(tmp_path)))
    assert f"| cubic | droptail | 2 | 10 | 20 | 0.99 | {checked['min_buffer_pkts']} |" in notes, notes
    assert re.search(r"the engine gives the kernel's verdict in [01] of 1 cells", notes), notes
    other = [{**r, "engine_version": "0.0.0"} for r in rows(tmp_path)]  # as if rebuilt on another engine
    assert "1 checks of answers this build no longer gives left out" in "\n".join(
        kernel_notes(str(tmp_path / "results"), "small", other)
    )


def test_a_cell_checked_again_replaces_its_earlier_check_and_keeps_the_others(tmp_path):
    """`store`: checking one cell again (say with longer probes) replaces that answer's row, keeps
    every other, and an older row without a newer column reads it as empty."""
    import pyarrow.parquet as pq

    from analysis.atlas.check import checks_path, store
    from analysis.atlas.spec import load

    spec = load(["+atlas=small", f"results_dir={tmp_path}", "backend=kernel"])
    keys = {"queue": "droptail", "traffic": "none", "target": 0.95, "engine_version": "0.1.0", "core_mbps": 10.0}
    old = [
        {**keys, "tcp": t, "flows": 1, "rtt_ms": 10.0, "lo_pkts": 3, "hi_pkts": 4, "verdict": "above"}
        for t in ("cubic", "bbr")
    ]
    store(spec, old)
    again = {**old[0], "verdict": "in", "long_s": 120}
    store(spec, [again])
    got = {r["tcp"]: r for r in pq.read_table(checks_path(str(tmp_path), "small", "kernel")).to_pylist()}
    assert set(got) == {"cubic", "bbr"}, got
    assert got["cubic"]["verdict"] == "in" and got["cubic"]["long_s"] == 120, got
    assert got["bbr"]["verdict"] == "above" and got["bbr"]["long_s"] is None, got
    store(spec, [])  # a check of nothing loses nothing
    assert pq.read_table(checks_path(str(tmp_path), "small", "kernel")).num_rows == 2


def test_the_dick_and_appenzeller_slices_agree_with_their_reproductions(tmp_path):
    """`reproduce atlas_slices` on a reduced grid: the atlas built on Dick's and Appenzeller's
    set-ups against dick_table's utilization curve and stanford_min_buffer's bisection to the
    packet, each run here; every answer within one bisection step or inside the atlas's bracket."""
    from analysis.reproductions.atlas_slices import agrees, atlas_slices, crossing

    grid = {"dick": ("tcp=newreno", "flows=30,120"), "appenzeller": ("flows=400",)}
    report, _ = atlas_slices(str(tmp_path / "results"), False, grid)
    assert [(r[0], r[2], r[3]) for r in report.rows] == [
        ("dick", 30, 0.9),
        ("dick", 30, 0.95),
        ("dick", 120, 0.9),
        ("dick", 120, 0.95),
        ("appenzeller", 400, 0.95),
    ]
    assert all(r[-1] == "yes" for r in report.rows), report.rows
    assert crossing([(10, 0.8), (40, 1.0)], 0.9) == ("at", pytest.approx(20.0))
    assert crossing([(10, 0.95), (40, 1.0)], 0.9) == ("below", 10)
    row = {"min_buffer_pkts": 100, "lo_pkts": 84}
    assert agrees(row, "at", 118) and not agrees(row, "at", 120) and not agrees(row, "at", 80)
    assert agrees(row, "below", 90) and not agrees(row, "below", 80) and not agrees(row, "above", 130)

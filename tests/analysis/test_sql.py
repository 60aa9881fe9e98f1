"""`python -m analysis sql` and `analysis.connect` over a real smoke sweep's Parquet results."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

import analysis.db
import sim
from tests.conftest import ROOT
from tests.sweeps.helpers import sweep


@pytest.fixture(scope="module")
def results(tmp_path_factory, ray_head):
    tmp = tmp_path_factory.mktemp("smoke")
    res = sweep(tmp, "-m", "+experiment=smoke", "mlflow.enabled=false", ray_address=ray_head)
    assert res.returncode == 0, res.stderr
    return tmp / "results"


def analysis_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "analysis", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )


def test_sql_prints_a_table(results):
    res = analysis_cli(
        "sql",
        "SELECT tcp, buffer_pkts, avg(utilization) FROM runs GROUP BY ALL ORDER BY ALL",
        "--results",
        str(results),
    )
    assert res.returncode == 0, res.stderr
    assert "avg(utilization)" in res.stdout and "paced" in res.stdout and "(4 rows)" in res.stdout


def test_timestamps_print(results):
    # runs.started_at is a TIMESTAMP WITH TIME ZONE, which DuckDB hands to Python through pytz.
    for fmt in ("table", "json", "csv"):
        res = analysis_cli("sql", "SELECT min(started_at) AS t0 FROM runs", "--results", str(results), "--format", fmt)
        assert res.returncode == 0, (fmt, res.stderr)
        assert re.search(r"\d{4}-\d{2}-\d{2}", res.stdout), (fmt, res.stdout)


def test_views_from_connect(results):
    con = analysis.db.connect(results)
    n_runs, n_ids = con.execute("SELECT count(*), count(DISTINCT run_id) FROM runs").fetchone()
    assert n_runs == n_ids == 8
    # 10 s runs sampled every 100 ms; flows 4 and 16 per run.
    assert con.execute("SELECT count(*) FROM timeseries").fetchone()[0] == 8 * 100
    assert (
        con.execute("SELECT sum(flows) FROM runs").fetchone()[0]
        == con.execute("SELECT count(*) FROM flows").fetchone()[0]
    )
    joined = con.execute("""SELECT r.tcp, avg(t.queue_mean_pkts) FROM runs r JOIN timeseries t USING (exec_id)
                            GROUP BY ALL""").fetchall()
    assert len(joined) == 2


def test_bad_query_exits_1_with_duckdb_message(results):
    res = analysis_cli("sql", "SELECT nope FROM runs", "--results", str(results))
    assert res.returncode == 1
    assert "Binder Error" in res.stderr and "nope" in res.stderr
    assert "Traceback" not in res.stderr


def test_output_formats(results, tmp_path):
    q = "SELECT run_id, utilization FROM runs ORDER BY run_id"
    csv = analysis_cli("sql", q, "--results", str(results), "--format", "csv")
    assert csv.returncode == 0 and csv.stdout.splitlines()[0] == '"run_id","utilization"'
    js = analysis_cli("sql", q, "--results", str(results), "--format", "json")
    assert len(json.loads(js.stdout)) == 8
    out = tmp_path / "u.parquet"
    pqr = analysis_cli("sql", q, "--results", str(results), "--format", "parquet", "--out", str(out))
    assert pqr.returncode == 0 and pq.read_table(out).num_rows == 8


def test_empty_results_dir_has_empty_views(tmp_path):
    con = analysis.db.connect(tmp_path)
    assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 0
    assert "utilization" in [d[0] for d in con.execute("SELECT * FROM runs").description]


def test_a_missing_results_dir_is_an_error(tmp_path):
    with pytest.raises(analysis.db.NoResults):
        analysis.db.connect(tmp_path / "nothing")
    res = analysis_cli("sql", "SELECT count(*) FROM runs", "--results", str(tmp_path / "nothing"))
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1 and "no results at" in lines[0], res.stderr


def test_avg_is_never_nan(results):
    """NULL, not NaN, where a metric does not apply (no short flows here), so avg() works."""
    con = analysis.db.connect(results)
    cols = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'runs' AND data_type = 'DOUBLE'"
        ).fetchall()
    ]
    assert "short_afct_ms" in cols
    avgs = con.execute("SELECT " + ", ".join(f"avg({c})" for c in cols) + " FROM runs").fetchall()[0]
    assert not [c for c, v in zip(cols, avgs) if v is not None and v != v], "NaN averages"
    assert avgs[cols.index("short_afct_ms")] is None


def test_schema_documents_every_column(results):
    from sweeps.store import RUNS_SCHEMA

    res = analysis_cli("schema", "runs")
    assert res.returncode == 0, res.stderr
    assert all(f.name in res.stdout for f in RUNS_SCHEMA) and "Mb/s" in res.stdout
    con = analysis.db.connect(results)
    comments = dict(
        con.execute("SELECT column_name, comment FROM duckdb_columns() WHERE table_name = 'runs'").fetchall()
    )
    assert comments["utilization"].startswith("[1] Time the bottleneck spent transmitting")
    assert not [c for c, text in comments.items() if not text], "undocumented columns"


def test_connect_keeps_one_engine_versions_runs(results):
    # A preset re-run after a version bump keeps its sweep_id; reproductions read only this version.
    current = analysis.db.connect(results, engine_version=sim.ENGINE_VERSION)
    assert current.execute("SELECT count(*) FROM runs").fetchone()[0] == 8
    older = analysis.db.connect(results, engine_version="0.0.0")
    assert [older.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "timeseries", "flows")] == [
        0
    ] * 3


def test_filters_by_sweep_and_name_and_warns_across_sweeps(results, tmp_path):
    import shutil

    results = shutil.copytree(results, tmp_path / "results")  # the module's results stay one sweep
    one = sweep(tmp_path, "flows=2", "duration_s=2", "warmup_s=1", "mlflow.enabled=false", results_dir=results)
    assert one.returncode == 0, one.stderr
    q = "SELECT count(*) AS n FROM runs"
    spans = analysis_cli("sql", q, "--results", str(results))
    assert "spans 2 stored sweeps" in spans.stderr and "(1 rows)" in spans.stdout
    latest = analysis_cli("sql", q, "--results", str(results), "--sweep", "latest", "--format", "json")
    assert json.loads(latest.stdout) == [{"n": 1}] and latest.stderr == ""
    smoke = analysis_cli("sql", q, "--results", str(results), "--name", "smoke", "--format", "json")
    assert json.loads(smoke.stdout) == [{"n": 8}]


def test_a_preset_finds_the_runs_another_preset_stored(results, tmp_path):
    import shutil

    # The same grid under another name: every run is cached (a run_id does not depend on the name),
    # so its runs rows keep the name "smoke"; the sweep's members record lets "again" find them.
    results = shutil.copytree(results, tmp_path / "results")
    again = sweep(tmp_path, "-m", "+experiment=smoke", "name=again", "mlflow.enabled=false", results_dir=results)
    assert again.returncode == 0 and "8 cached" in again.stdout + again.stderr, again.stdout + again.stderr
    everything = analysis.db.connect(results)
    assert everything.execute("SELECT count(*), count(DISTINCT run_id) FROM runs").fetchone() == (8, 8)
    assert everything.execute("SELECT name, count(*) FROM members GROUP BY name ORDER BY name").fetchall() == [
        ("again", 8),
        ("smoke", 8),
    ]
    con = analysis.db.connect(results, name="again")
    assert con.execute("SELECT name, count(*) FROM runs GROUP BY name").fetchall() == [("again", 8)]
    assert con.execute("SELECT count(DISTINCT run_id) FROM timeseries").fetchone()[0] == 8
    assert analysis.db.connect(results, name="smoke").execute("SELECT count(*) FROM runs").fetchone()[0] == 8
    assert analysis.db.connect(results, name="other").execute("SELECT count(*) FROM timeseries").fetchone()[0] == 0


def test_shell_runs_statements(results):
    res = subprocess.run(
        [sys.executable, "-m", "analysis", "shell", "--results", str(results)],
        input="SELECT count(*) AS n\nFROM runs;\n.tables\n.schema links\n.quit\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert res.returncode == 0 and "8" in res.stdout
    assert "timeseries" in res.stdout and "[Mb/s] Capacity." in res.stdout  # .tables and .schema

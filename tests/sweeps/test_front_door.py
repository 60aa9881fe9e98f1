"""The front door, round 3 (issue 69): `runs` says which buffer ran, old stored runs read the
same, `tcp=cubic` is today's CUBIC and old names say what replaced them, a sweep speaks off a
terminal, runs have a name, and every command's --help names its keys."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

import analysis.db
from tests.conftest import ROOT
from tests.sweeps.helpers import sweep

POLICY = ["buffer_policy=bdp", "buffer_policy.factor=0.5", "core_mbps=100", "rtt_ms=40", "duration_s=3", "warmup_s=1"]


@pytest.fixture(scope="module")
def policy_sweep(tmp_path_factory):
    """Issue 69's own command, a 2-job grid, with stderr piped and a progress line a second."""
    tmp = tmp_path_factory.mktemp("policy")
    res = sweep(tmp, "-m", "tcp=reno", "flows=4,8", *POLICY, env={"BUFFERSWEEP_PROGRESS_S": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    return tmp, res


def test_runs_say_the_buffer_that_ran(policy_sweep):
    tmp, _ = policy_sweep
    con = analysis.db.connect(tmp / "results")
    rows = con.execute(
        """SELECT r.buffer_pkts, r.config_buffer_pkts, l.buffer_pkts, r.name FROM runs r
           JOIN links l ON l.run_id = r.run_id AND l.exec_id = r.exec_id AND l.link_id = r.bottleneck_link"""
    ).fetchall()
    assert len(rows) == 2
    for ran, configured, link, name in rows:
        assert ran == link == 250.0 and configured == 20, rows  # 0.5 x 100 Mb/s x 40 ms in 1000-byte packets
        assert name == "sweeps", "a run without name= is stored under the sweep's name, not NULL"


def test_older_runs_are_read_as_the_buffer_that_ran(policy_sweep, tmp_path):
    """Runs stored before engine 0.21.0 held the configured buffer in buffer_pkts: the view reads
    the buffer that ran from their links rows, and the configured one as config_buffer_pkts."""
    import shutil

    results = shutil.copytree(policy_sweep[0] / "results", tmp_path / "results")
    for f in (results / "runs").rglob("*.parquet"):
        t = pq.read_table(f)
        old = t.drop_columns(["buffer_pkts", "config_buffer_pkts", "buffer_bytes", "config_buffer_bytes"])
        old = old.append_column("buffer_pkts", t.column("config_buffer_pkts")).append_column(
            "buffer_bytes", t.column("config_buffer_bytes")
        )
        pq.write_table(old, f)
    con = analysis.db.connect(results)
    rows = con.execute("SELECT buffer_pkts, config_buffer_pkts, buffer_bytes FROM runs").fetchall()
    assert rows == [(250.0, 20, None)] * 2


def test_a_sweep_speaks_off_a_terminal(policy_sweep):
    _, res = policy_sweep
    lines = re.findall(r"^\[\d+:\d\d\] sweep \w+ \(sweeps\): (\d+) of 2 done .* running, eta", res.stderr, re.M)
    assert lines and lines[-1] == "2", res.stderr[-2000:]
    hint = re.search(r"\((\S+) -m analysis sql", res.stderr).group(1)
    assert not hint.endswith("python3.11") or not (ROOT / ".venv" / "bin" / "python").exists(), hint


def test_cubic_is_todays_and_the_old_name_says_what_replaced_it(tmp_path):
    import sim

    m = sim.run(tcp="cubic", flows=1, duration_s=2, warmup_s=0.5).metrics()
    assert (m["tcp"], m["tcp_cc"], m["tcp_recovery"], m["tcp_init_cwnd_pkts"]) == (
        "cubic",
        "cubic_rfc9438",
        "rack_tlp",
        10.0,
    )
    res = sweep(tmp_path, "tcp=linux")
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert lines[0].startswith("error: tcp: 'linux' was renamed: use tcp=cubic (RFC 9438 CUBIC"), lines
    assert not (tmp_path / "results").exists()


def _help(*args: str) -> str:
    res = subprocess.run(
        [sys.executable, "-m", *args, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_every_help_names_its_keys():
    from analysis.atlas.check import OWN
    from analysis.atlas.lookup import KEYS
    from analysis.atlas.spec import AXES, SETTINGS
    from analysis.db import VIEWS

    flat = lambda text: " ".join(text.split())  # noqa: E731 - argparse wraps lines
    query = flat(_help("analysis", "atlas", "query"))
    assert all(f"{k}=" in query for k in KEYS) and "+atlas=NAME" in query
    for action in ("build", "estimate"):
        text = flat(_help("analysis", "atlas", action))
        assert all(f"{k}=" in text for k in (*AXES, *SETTINGS)) and "+atlas=NAME" in text, action
    check = flat(_help("analysis", "atlas", "check"))
    assert all(f"{k}=" in check for k in OWN)
    mb = flat(_help("analysis", "min-buffer"))
    assert all(k in mb for k in ("target=", "seeds=", "precision.halfwidth", "precision.max_seeds", "Exit codes"))
    sql = flat(_help("analysis", "sql"))
    assert all(v in sql for v in VIEWS) and "--results RESULTS the results directory" in sql
    schema = flat(_help("analysis", "schema"))
    assert all(v in schema for v in VIEWS)
    sweeps = _help("sweeps")
    groups = sweeps.split("== Config ==")[0]
    assert "atlas:" not in groups and "cubic_rfc9438 is a window law by itself" in " ".join(groups.split())
    assert "README, Traffic groups" not in sweeps and "docs/engine.md, Traffic groups" in " ".join(sweeps.split())


def test_every_view_has_a_schema_entry(tmp_path):
    """`analysis schema V` documents every column of every view a connection has."""
    from analysis.db import VIEWS, column_docs

    (tmp_path / "results").mkdir()
    con = analysis.db.connect(tmp_path / "results")
    for view in VIEWS:
        columns = [r[0] for r in con.execute(f"DESCRIBE {view}").fetchall()]
        docs = {name: doc for name, _, _, doc in column_docs(view)}
        assert set(columns) - {"sweep_id"} <= set(docs), view
        assert all(docs[c] for c in columns if c != "sweep_id"), f"{view}: undocumented columns"

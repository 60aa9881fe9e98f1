"""The Parquet store: atomic flushes, recovery from every point a killed sweep can stop at,
one row per run_id, compaction."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sweeps.store import (
    CLASSES_TABLE_SCHEMA,
    CONTROL_TABLE_SCHEMA,
    FLOWS_TABLE_SCHEMA,
    LINKS_TABLE_SCHEMA,
    RUNS_SCHEMA,
    TIMESERIES_TABLE_SCHEMA,
    Store,
)

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def batch(run_ids, status="ok", t=0, tag="x"):
    runs = pa.Table.from_pylist(
        [
            {
                "run_id": r,
                "exec_id": f"{r}-{tag}",
                "status": status,
                "started_at": T0 + dt.timedelta(seconds=t),
                "utilization": 0.5,
            }
            for r in run_ids
        ],
        schema=RUNS_SCHEMA,
    )
    ts = pa.Table.from_pylist(
        [{"run_id": r, "exec_id": f"{r}-{tag}", "time_s": float(k)} for r in run_ids for k in range(3)],
        schema=TIMESERIES_TABLE_SCHEMA,
    )
    flows = pa.Table.from_pylist(
        [{"run_id": r, "exec_id": f"{r}-{tag}", "flow_id": 0} for r in run_ids], schema=FLOWS_TABLE_SCHEMA
    )
    links = pa.Table.from_pylist(
        [{"run_id": r, "exec_id": f"{r}-{tag}", "link_id": k} for r in run_ids for k in range(2)],
        schema=LINKS_TABLE_SCHEMA,
    )
    classes = pa.Table.from_pylist(
        [{"run_id": r, "exec_id": f"{r}-{tag}", "class": "bulk"} for r in run_ids], schema=CLASSES_TABLE_SCHEMA
    )
    control = pa.Table.from_pylist(
        [{"run_id": r, "exec_id": f"{r}-{tag}", "time_s": float(k)} for r in run_ids for k in range(4)],
        schema=CONTROL_TABLE_SCHEMA,
    )
    return runs, {"timeseries": ts, "flows": flows, "links": links, "classes": classes, "control": control}


def files(root, table):
    return sorted(p.name for p in (root / table).rglob("*.parquet"))


def rows(store, table, sweep="s1"):
    return store.read(table, sweep).num_rows


def test_flush_and_compaction(tmp_path):
    store = Store(str(tmp_path))
    for i in range(5):
        store.flush("s1", *batch([f"r{i}a", f"r{i}b"], tag=str(i)))
    assert len(files(tmp_path, "runs")) == 5
    store.rewrite("s1")
    for table in ("runs", "timeseries", "flows", "links", "classes", "control"):
        assert len(files(tmp_path, table)) == 1
    assert (
        rows(store, "runs"),
        rows(store, "timeseries"),
        rows(store, "flows"),
        rows(store, "links"),
        rows(store, "classes"),
        rows(store, "control"),
    ) == (10, 30, 10, 20, 10, 40)
    assert not list(tmp_path.rglob("*.tmp-*"))


def test_compaction_streams_the_parts_through_one_writer(tmp_path, monkeypatch):
    """A 100,000-run sweep's compaction read its whole partition at once, 4.1 GB in the driver:
    the parts now stream through one writer, about COMPACT_ROWS rows at a time, and the rows
    come out as before (order included, the dropped execution gone)."""
    import sweeps.store as store_mod

    monkeypatch.setattr(store_mod, "COMPACT_ROWS", 4)
    written = []
    write = pq.ParquetWriter.write_table

    def spy(self, table, *args, **kwargs):
        written.append(table.num_rows)
        return write(self, table, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", spy)
    store = Store(str(tmp_path))
    for i in range(6):
        store.flush("s1", *batch([f"r{i}a", f"r{i}b"], tag=str(i)))
    tables = ("runs", "timeseries", "flows", "links", "classes", "control")
    before = {t: store.read(t, "s1").to_pylist() for t in tables}
    written.clear()
    store.rewrite("s1", {"r0a-0"})
    assert max(written) <= 3 + 8, written  # under the limit, plus one part (control's: 8 rows)
    for t in tables:
        assert len(files(tmp_path, t)) == 1
        assert store.read(t, "s1").to_pylist() == [r for r in before[t] if r["exec_id"] != "r0a-0"], t
    compacted = next((tmp_path / "control").rglob("*.parquet"))
    assert pq.read_metadata(compacted).num_row_groups > 1
    assert store.read("runs", "s1", columns=["status"]).column_names == ["status"]


def test_a_search_round_compacts_only_its_own_parts(tmp_path):
    """A search's rounds compact only what each flushed (`fresh_only`): the atlas's 38th round
    spent 12 s rewriting the 327 MB its 37 rounds had stored. Earlier files stay as they are,
    and an interrupted round's compaction recovers to the same rows."""
    from sweeps.store import COMPACTED

    store = Store(str(tmp_path))
    tables = ("runs", "timeseries", "flows", "links", "classes", "control")
    for i in range(3):
        store.flush("s1", *batch([f"r{i}"], tag=str(i)))
    store.rewrite("s1", fresh_only=True)
    first = {t: files(tmp_path, t) for t in tables}
    assert all(len(f) == 1 and f[0].startswith(COMPACTED) for f in first.values()), first
    for i in range(3, 5):
        store.flush("s1", *batch([f"r{i}"], tag=str(i)))
    store.rewrite("s1", fresh_only=True)
    for t in tables:
        now = files(tmp_path, t)
        assert len(now) == 2 and set(first[t]) < set(now), (t, now)
    assert (rows(store, "runs"), rows(store, "timeseries"), rows(store, "control")) == (5, 15, 20)
    # Killed after a round's compacted runs file: recovery keeps every row once.
    store.flush("s1", *batch(["r5"], tag="5"))
    store.flush("s1", *batch(["r6"], tag="6"))
    fresh = [p.name for p in (tmp_path / "runs" / "sweep_id=s1").glob("part-*") if not p.name.startswith(COMPACTED)]
    merged = pa.concat_tables(pq.read_table(tmp_path / "runs" / "sweep_id=s1" / f) for f in fresh)
    store._write(merged, f"{store._dir('runs', 's1')}/{COMPACTED}dead.parquet", replaces=fresh)
    store.recover()
    assert (rows(store, "runs"), rows(store, "timeseries"), rows(store, "flows")) == (7, 21, 7)
    assert sorted(store.read("runs", "s1").column("run_id").to_pylist()) == [f"r{i}" for i in range(7)]


def test_recover_drops_a_flush_without_its_runs_part(tmp_path):
    store = Store(str(tmp_path))
    store.flush("s1", *batch(["a"]))
    runs, details = batch(["b"], tag="y")
    # Killed after writing the detail tables but before the runs part (and a temp file):
    for table, t in details.items():
        store._write(t, f"{store._dir(table, 's1')}/part-orphan.parquet")
    (tmp_path / "runs" / "sweep_id=s1" / "part-x.parquet.tmp-1234").write_bytes(b"partial")
    store.recover()
    assert (
        rows(store, "runs"),
        rows(store, "timeseries"),
        rows(store, "flows"),
        rows(store, "links"),
        rows(store, "classes"),
        rows(store, "control"),
    ) == (1, 3, 1, 2, 1, 4)
    assert not list(tmp_path.rglob("*.tmp-*"))


def test_recover_finishes_an_interrupted_compaction(tmp_path):
    store = Store(str(tmp_path))
    store.flush("s1", *batch(["a"], tag="1"))
    store.flush("s1", *batch(["b"], tag="2"))
    old = [p.name for p in (tmp_path / "runs" / "sweep_id=s1").glob("*.parquet")]
    # Killed right after the compacted runs file was written: old runs parts and the
    # uncompacted timeseries/flows are still there.
    merged = store.read("runs", "s1")
    store._write(merged, f"{store._dir('runs', 's1')}/part-cdead.parquet", replaces=old)
    assert rows(store, "runs") == 4  # duplicates until recovery
    store.recover()
    assert files(tmp_path, "runs") == ["part-cdead.parquet"]
    assert files(tmp_path, "timeseries") == ["part-cdead.parquet"]
    assert (rows(store, "runs"), rows(store, "timeseries"), rows(store, "flows")) == (2, 6, 2)
    meta = pq.read_schema(next((tmp_path / "runs").rglob("*.parquet"))).metadata
    assert sorted(json.loads(meta[b"buffersweep.replaces"])) == sorted(old)


def test_dedupe_keeps_one_row_per_run_id(tmp_path):
    store = Store(str(tmp_path))
    store.flush("s1", *batch(["a", "b"], status="failed", t=0, tag="old"))
    store.flush("s1", *batch(["a"], status="ok", t=10, tag="new"))  # a rerun that succeeded
    store.flush("s2", *batch(["b"], status="failed", t=20, tag="again"))  # failed again, elsewhere
    store.flush("s2", *batch(["c"], status="ok", t=5, tag="1"))
    store.flush("s1", *batch(["c"], status="ok", t=30, tag="2"))  # forced rerun: newest ok wins
    status = store.dedupe()
    assert status == {"a": "ok", "b": "failed", "c": "ok"}
    idx = store.runs_index().to_pylist()
    assert sorted(r["exec_id"] for r in idx) == ["a-new", "b-again", "c-2"]
    ts = (
        store.read("timeseries", "s1").column("exec_id").to_pylist()
        + store.read("timeseries", "s2").column("exec_id").to_pylist()
    )
    assert sorted(set(ts)) == ["a-new", "b-again", "c-2"]


def test_writer_lock_is_exclusive_and_dies_with_its_holder(tmp_path):
    """Audit D3: a second sweep's recovery deleted a live sweep's temporary files."""
    import os
    import signal
    import subprocess
    import sys

    from sweeps.store import StoreLocked

    code = (
        "import sys, time; from sweeps.store import Store\n"
        f"with Store({str(tmp_path)!r}).writer_lock():\n    print('locked', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreLocked, match=f"pid {holder.pid}"), Store(str(tmp_path)).writer_lock():
            pass
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    with Store(str(tmp_path)).writer_lock():  # the kernel released it with its holder
        pass


def test_a_truncated_file_is_named_skipped_and_quarantined(tmp_path, capsys):
    """Audit D4: one truncated Parquet file blocked every sweep and every query."""
    from analysis.db import connect

    store = Store(str(tmp_path))
    store.flush("s1", *batch(["a", "b"], tag="1"))
    store.flush("s2", *batch(["c"], tag="2"))
    victim = next((tmp_path / "timeseries" / "sweep_id=s1").glob("*.parquet"))
    victim.write_bytes(victim.read_bytes()[:40])
    con = connect(tmp_path)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 3
    assert con.execute("SELECT count(*) FROM timeseries").fetchone()[0] == 3  # s2's rows only
    assert str(victim) in capsys.readouterr().err
    moved = store.recover()
    assert [src for src, _ in moved] == [str(victim)]
    assert (tmp_path / "quarantine" / "timeseries" / "sweep_id=s1" / victim.name).exists()
    store.flush("s1", *batch(["d"], tag="3"))  # sweeps go on
    store.rewrite("s1")
    assert store.dedupe() == {"a": "ok", "b": "ok", "c": "ok", "d": "ok"}

"""DuckDB over the results: views `runs`, `timeseries`, `flows` and `links` are the only contract with
stored results (reports and plots read through them, so they work on any stored sweep)."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb

from sweeps.store import SCHEMAS, TABLES, Store

DEFAULT_RESULTS = "results"


def ok_run_values(results_dir: str | Path, run_ids: list[str], *columns: str) -> dict[str, tuple]:
    """`columns` (names from our code, not user input) of the runs among `run_ids` that completed ok,
    by run_id: how reproductions and searches read back the jobs they just ran."""
    rows = connect(results_dir).execute(f"SELECT run_id, {', '.join(columns)} FROM runs "
                                        "WHERE run_id IN (SELECT unnest(?)) AND status = 'ok'", [run_ids]).fetchall()
    return {r[0]: r[1:] for r in rows}


def connect(results_dir: str | Path = DEFAULT_RESULTS) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the views over `results_dir`'s Parquet datasets.
    Tables without files yet are empty views with the documented schema."""
    store = Store(str(results_dir))
    con = duckdb.connect()
    for table in TABLES:
        files = store.files(table)
        bad = set(store.unreadable(table)) if files else set()
        for path in sorted(bad):
            print(f"warning: skipping {path}: not a readable Parquet file (the next sweep on this results_dir "
                  "moves it to quarantine/)", file=sys.stderr)
        files = [f for f in files if f not in bad]
        if files and "://" not in str(results_dir):
            # A view cannot take parameters: the paths (our own listing) are quoted as SQL strings.
            listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet([{listed}], hive_partitioning = true, "
                        "union_by_name = true)")
        else:
            empty = SCHEMAS[table].empty_table()
            con.register(f"_{table}_empty", empty)
            con.execute(f"CREATE VIEW {table} AS SELECT *, NULL::VARCHAR AS sweep_id FROM _{table}_empty")
    return con

"""DuckDB over the results: views `runs`, `timeseries` and `flows` are the only contract with
stored results (reports and plots read through them, so they work on any stored sweep)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from sweeps.store import SCHEMAS, TABLES, Store

DEFAULT_RESULTS = "results"


def connect(results_dir: str | Path = DEFAULT_RESULTS) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the views over `results_dir`'s Parquet datasets.
    Tables without files yet are empty views with the documented schema."""
    store = Store(str(results_dir))
    con = duckdb.connect()
    for table in TABLES:
        if store.files(table) and "://" not in str(results_dir):
            glob = f"{store.root}/{table}/**/*.parquet"
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{glob}', hive_partitioning = true, "
                        "union_by_name = true)")
        else:
            empty = SCHEMAS[table].empty_table()
            con.register(f"_{table}_empty", empty)
            con.execute(f"CREATE VIEW {table} AS SELECT *, NULL::VARCHAR AS sweep_id FROM _{table}_empty")
    return con

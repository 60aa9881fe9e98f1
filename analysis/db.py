"""DuckDB views over the stored results (`runs`, `timeseries`, `flows`, `links`, `classes`, `control`,
and `points`, the replicated points of sweeps with precision.max_seeds > 1):
the only contract with stored results. See docs/analysis.md."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb

from analysis.atlas_schema import ATLAS_SCHEMA, atlas_files
from sweeps.backends.base import CONTRACT_VERSION
from sweeps.store import MEMBERS, MEMBERS_SCHEMA, POINTS, POINTS_SCHEMA, SCHEMAS, TABLES, Store

DEFAULT_RESULTS = "results"
VIEWS = (*TABLES, MEMBERS, POINTS, "atlas")
"""Every view a connection has (`connect`), each with a schema entry (`column_docs`)."""


def ok_run_values(results_dir: str | Path, run_ids: list[str], *columns: str) -> dict[str, tuple]:
    """`columns` (names from our code, not user input) of the runs among `run_ids` that completed ok,
    by run_id: how reproductions and searches read back the jobs they just ran."""
    return run_values(connect(results_dir, documented=False), run_ids, *columns)


def run_values(con: duckdb.DuckDBPyConnection, run_ids: list[str], *columns: str) -> dict[str, tuple]:
    """`ok_run_values` on an open connection."""
    rows = con.execute(
        f"SELECT run_id, {', '.join(columns)} FROM runs WHERE run_id IN (SELECT unnest(?)) AND status = 'ok'",
        [run_ids],
    ).fetchall()
    return {r[0]: r[1:] for r in rows}


def start_buffers(results_dir: str | Path, run_ids: list[str], link_id: int = 0) -> dict[str, float]:
    """The buffer (packets) link `link_id` started with in each stored run among `run_ids`: what a
    static buffer policy resolved it to."""
    rows = (
        connect(results_dir)
        .execute(
            "SELECT run_id, buffer_pkts FROM links WHERE run_id IN (SELECT unnest(?)) AND link_id = ?",
            [run_ids, link_id],
        )
        .fetchall()
    )
    return dict(rows)


class NoResults(FileNotFoundError):
    """results_dir does not exist."""


def column_docs(table: str) -> list[tuple[str, str, str, str]]:
    """(column, type, unit, meaning) of a results table, from its Arrow field metadata."""
    out = []
    schemas = {POINTS: POINTS_SCHEMA, MEMBERS: MEMBERS_SCHEMA, "atlas": ATLAS_SCHEMA}
    for f in schemas.get(table) or SCHEMAS[table]:
        meta = f.metadata or {}
        out.append((f.name, str(f.type), meta.get(b"unit", b"").decode(), meta.get(b"doc", b"").decode()))
    if table != "runs":
        return out
    return out + [("sweep_id", "string", "", "the sweep (hive partition): same grid and name = same sweep_id")]


def _comment_columns(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """DuckDB column comments from the Arrow metadata: `duckdb_columns()` then documents them."""
    present = {
        r[0] for r in con.execute(f"SELECT column_name FROM duckdb_columns() WHERE table_name = '{table}'").fetchall()
    }
    for name, _, unit, doc in column_docs(table):
        if name in present and doc:
            text = (f"[{unit}] " if unit else "") + doc
            con.execute(f"COMMENT ON COLUMN {table}.{name} IS '" + text.replace("'", "''") + "'")


def connect(
    results_dir: str | Path = DEFAULT_RESULTS,
    sweep: str | None = None,
    name: str | None = None,
    backend: str | None = None,
    engine_version: str | None = None,
    documented: bool = True,
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the views over `results_dir`'s Parquet datasets,
    limited to one sweep (`sweep`: an id or "latest"), one preset's runs (`name`: those its sweeps
    ran and those their grids found stored by another preset, all under this name), one
    simulator's runs (`backend`: a reproduction's own figures are the engine's) or the runs of one
    engine version (`engine_version`: a sweep re-run after a version bump keeps its sweep_id, and
    its older runs stay stored beside the new ones; other backends' runs of the engine's current
    `CONTRACT_VERSION` with them) if given.
    Tables without files yet are empty views with the documented schema; `documented` also gives
    every column its meaning as a comment (0.1 s: for a user's connection, not for code that reads
    a few values). Raises NoResults if a local results_dir does not exist."""
    if "://" not in str(results_dir) and not Path(results_dir).is_dir():
        raise NoResults(f"no results at {Path(results_dir).resolve()}: run a sweep first, or point at its results_dir")
    store = Store(str(results_dir))
    con = duckdb.connect()
    stored: dict[str, str] = {}  # table -> its files, as an SQL list
    tables = (*((t, SCHEMAS[t]) for t in TABLES), (MEMBERS, MEMBERS_SCHEMA), (POINTS, POINTS_SCHEMA))
    for table, _ in tables:
        files = _readable_files(store, table) if "://" not in str(results_dir) else []
        if files:
            # A view cannot take parameters: the paths (our own listing) are quoted as SQL strings.
            stored[table] = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
            con.execute(
                f"CREATE VIEW _files_{table} AS SELECT * FROM read_parquet({stored[table]}, "
                "hive_partitioning = true, union_by_name = true)"
            )
    for table, schema in tables:
        if table in stored:
            con.execute(f"CREATE VIEW {table} AS {_evolved(con, table, stored)}")
        else:
            con.register(f"_{table}_empty", schema.empty_table())
            con.execute(f"CREATE VIEW {table} AS SELECT *, NULL::VARCHAR AS sweep_id FROM _{table}_empty")
    _atlas_view(con, results_dir)
    if sweep:
        _restrict(con, sweep)
    if name:
        quoted = "'" + name.replace("'", "''") + "'"
        # A preset's runs include those another preset stored first (its `members`), under its name.
        _restrict_runs_where(
            con,
            "name",
            f"name = {quoted} OR run_id IN (SELECT run_id FROM members WHERE name = {quoted})",
            select=f"* REPLACE ({quoted} AS name)",
        )
    if backend:
        _restrict_runs(con, "backend", backend)
    if engine_version:
        # Another backend's runs follow the engine's contract with it, not its version.
        v, c = (x.replace("'", "''") for x in (engine_version, CONTRACT_VERSION))
        _restrict_runs_where(
            con,
            "engine_version",
            f"(backend = 'engine' AND engine_version = '{v}') OR (backend <> 'engine' AND engine_version = '{c}')",
        )
    if documented:
        for table in VIEWS:
            _comment_columns(con, table)
    return con


def _atlas_view(con: duckdb.DuckDBPyConnection, results_dir: str | Path) -> None:
    """`atlas`: every built atlas's answers (`python -m analysis atlas build`), one file each, and
    the shipped ones of names not built (`atlas_files`)."""
    files = atlas_files(results_dir)
    if files:
        listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
        con.execute(f"CREATE VIEW atlas AS SELECT * FROM read_parquet([{listed}], union_by_name = true)")
    else:
        con.register("_atlas_empty", ATLAS_SCHEMA.empty_table())
        con.execute("CREATE VIEW atlas AS SELECT * FROM _atlas_empty")


def _readable_files(store: Store, table: str) -> list[str]:
    """The table's Parquet files, without (and warning about) those whose footer cannot be read."""
    files = store.files(table)
    bad = set(store.unreadable(table)) if files else set()
    for path in sorted(bad):
        print(
            f"warning: skipping {path}: not a readable Parquet file (the next sweep on this results_dir "
            "moves it to quarantine/)",
            file=sys.stderr,
        )
    return [f for f in files if f not in bad]


def _restrict(con: duckdb.DuckDBPyConnection, sweep: str) -> None:
    """Re-points every view at one sweep: `sweep` is an id, or "latest" (the sweep whose last run
    started last)."""
    if sweep == "latest":
        rows = con.sql("SELECT sweep_id FROM runs GROUP BY sweep_id ORDER BY max(started_at) DESC LIMIT 1").fetchall()
        sweep = rows[0][0] if rows else ""
    listed = "'" + sweep.replace("'", "''") + "'"
    for table in (*TABLES, POINTS):
        con.execute(f"ALTER VIEW {table} RENAME TO _all_{table}")
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM _all_{table} WHERE sweep_id IN ({listed})")


ADDED_SINCE: dict[str, dict[str, str]] = {
    "runs": {"backend": "'engine'", "backend_version": "engine_version", "config_id": "NULL"}
}
"""Columns newer than some stored files, and their value in those files: runs stored before
backends existed were the engine's."""


def _evolved(con: duckdb.DuckDBPyConnection, table: str, stored: dict[str, str]) -> str:
    """The query of a table's view: the files' columns, with the columns added since some of them
    were written filled in (`ADDED_SINCE`) and older runs' buffers migrated (`_buffers_as_run`),
    so queries never depend on a file's age."""
    present = {r[0] for r in con.execute(f"DESCRIBE _files_{table}").fetchall()}
    replaced, added = [], []
    for column, fill in ADDED_SINCE.get(table, {}).items():
        if column in present:
            replaced.append(f"coalesce({column}, {fill}) AS {column}")
        else:
            added.append(f"{fill} AS {column}")
    source, star = f"_files_{table}", "*"
    if table == "runs" and _older_runs(con, stored["runs"]):
        source, more_replaced, more_added = _buffers_as_run(present, "links" in stored)
        replaced, added, star = replaced + more_replaced, added + more_added, "r.*"
    parts = [f"{star} REPLACE ({', '.join(replaced)})" if replaced else star]
    return f"SELECT {', '.join(parts + added)} FROM {source}"


def _older_runs(con: duckdb.DuckDBPyConnection, listed: str) -> bool:
    """Some stored run predates engine 0.21.0, whose `buffer_pkts` was the config's: a runs file
    without `config_buffer_pkts`, or with NULLs in it (a sweep's older rows merged into a newer
    file). Read from the files' footers alone."""
    files, newer, nulls = con.execute(
        f"""SELECT (SELECT count(DISTINCT file_name) FROM parquet_metadata({listed})),
                   count(DISTINCT file_name), coalesce(sum(stats_null_count), 0)
            FROM parquet_metadata({listed}) WHERE path_in_schema = 'config_buffer_pkts'"""
    ).fetchall()[0]
    return newer < files or nulls > 0


def _buffers_as_run(present: set[str], links: bool) -> tuple[str, list[str], list[str]]:
    """Runs stored before engine 0.21.0 held the configured buffer in `buffer_pkts` and
    `buffer_bytes`: their view moves it to `config_buffer_pkts`/`_bytes` and reads the buffer that
    ran from the bottleneck's `links` row (NULL where a policy set it and no links row is stored).
    Returns (the view's source, columns replaced, columns added)."""
    old = "r.config_buffer_pkts IS NULL" if "config_buffer_pkts" in present else "true"
    ran = "l.buffer_pkts" if links else "NULL"
    fixed = "(r.buffer_policy IS NULL OR r.buffer_policy = 'fixed')"
    source = "_files_runs r"
    if links:
        source += (
            " LEFT JOIN (SELECT run_id, exec_id, link_id, buffer_pkts FROM _files_links) l"
            " ON l.run_id = r.run_id AND l.exec_id = r.exec_id AND l.link_id = coalesce(r.bottleneck_link, 0)"
        )
    buffer = f"CASE WHEN {old} THEN coalesce({ran}, CASE WHEN {fixed} THEN r.buffer_pkts END) ELSE r.buffer_pkts END"
    nbytes = (
        f"CASE WHEN {old} AND r.buffer_bytes IS NOT NULL AND {ran} IS NOT NULL "
        f"THEN CAST(round({ran} * r.pkt_bytes) AS BIGINT) ELSE r.buffer_bytes END"
    )
    replaced = [f"CAST({buffer} AS DOUBLE) AS buffer_pkts", f"{nbytes} AS buffer_bytes"]
    added = []
    for key in ("buffer_pkts", "buffer_bytes"):
        config = f"CAST(r.{key} AS BIGINT)"
        if f"config_{key}" in present:
            replaced.append(f"coalesce(r.config_{key}, {config}) AS config_{key}")
        else:
            added.append(f"{config} AS config_{key}")
    return source, replaced, added


def _restrict_runs(con: duckdb.DuckDBPyConnection, column: str, value: str) -> None:
    """Re-points every view at the runs whose `column` (of runs) is `value`."""
    _restrict_runs_where(con, column, f"{column} = '" + value.replace("'", "''") + "'")


def _restrict_runs_where(con: duckdb.DuckDBPyConnection, tag: str, where: str, select: str = "*") -> None:
    """Re-points `runs` at its rows matching `where` (SQL of our own, not user input), selected as
    `select`, and every other table at those runs' rows (one stored row per run_id)."""
    con.execute(f"ALTER VIEW runs RENAME TO _any_{tag}_runs")
    con.execute(f"CREATE VIEW runs AS SELECT {select} FROM _any_{tag}_runs WHERE {where}")
    for table in TABLES[1:]:
        con.execute(f"ALTER VIEW {table} RENAME TO _any_{tag}_{table}")
        con.execute(
            f"CREATE VIEW {table} AS SELECT * FROM _any_{tag}_{table} WHERE run_id IN (SELECT run_id FROM runs)"
        )


def counted_replications(con: duckdb.DuckDBPyConnection) -> None:
    """Re-points the views at the replications their points counted: a replicated sweep
    (precision.max_seeds > 1) also stores the replications that were still running when their
    point met its target (docs/precision.md), which its `points` interval leaves out. Runs of
    sweeps without points are kept."""
    _restrict_runs_where(
        con,
        "counted",
        "run_id IN (SELECT unnest(run_ids) FROM points) OR sweep_id NOT IN (SELECT sweep_id FROM points)",
    )


def sweeps_in(con: duckdb.DuckDBPyConnection) -> int:
    return con.sql("SELECT count(DISTINCT sweep_id) FROM runs").fetchall()[0][0]

"""The results store: one hive-partitioned Parquet dataset per table under `results_dir`:

    runs/sweep_id=<id>/part-*.parquet        one row per run (params, metrics, status, ...)
    timeseries/sweep_id=<id>/part-*.parquet  one row per run, sample interval and link
    flows/sweep_id=<id>/part-*.parquet       one row per run and long flow
    links/sweep_id=<id>/part-*.parquet       one row per run and link of the topology

Rows stream to disk as jobs finish, in flushes: each flush writes one part file per table,
the detail tables first and runs last (a run is stored once its runs row is). Every file is
written to a temporary name and renamed, so a killed sweep leaves no partial file; parts of a
flush that never got its runs part are deleted at the next open. At the end of a sweep the
partition is compacted into one file per table (runs first; the compacted runs file lists the
parts it replaced in its metadata), so a compaction killed half-way is finished at the next
open. `results_dir`
may be a local path or a pyarrow filesystem URI (file://, s3://, ...).
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from sim._core import PRECISION_METRICS
from sim.result import CLASSES_SCHEMA, CONTROL_SCHEMA, FLOWS_SCHEMA, LINKS_SCHEMA, SUMMARY_SCHEMA, TIMESERIES_SCHEMA
from sweeps.schema import SWEEP_ONLY_KEYS, SWEEP_TYPES

DETAIL_TABLES = ("timeseries", "flows", "links", "classes", "control")
"""Tables with several rows per run, keyed by (run_id, exec_id)."""
TABLES = ("runs", *DETAIL_TABLES)
COMPACTED = "part-c-"
"""A compacted file's name starts so; a flushed part's is `part-` and hex, never with a dash."""
_ARROW = {str: pa.string(), float: pa.float64(), int: pa.int64(), bool: pa.bool_()}


def _doc(unit: str, doc: str) -> dict[bytes, bytes]:
    return {b"unit": unit.encode(), b"doc": doc.encode()}


_SWEEP_DOCS = {
    "name": "the experiment preset's name (NULL for an ad-hoc sweep)",
    "backend": "the simulator that ran it: engine, ns2 or ns3",
}


def _sweep_field(key: str) -> pa.Field:
    t = SWEEP_TYPES[key]
    base = next((a for a in getattr(t, "__args__", ()) if a is not type(None)), t)
    return pa.field(key, _ARROW[base], metadata=_doc("", _SWEEP_DOCS[key]))


RUN_META = pa.schema(
    [
        pa.field(
            "run_id",
            pa.string(),
            metadata=_doc(
                "",
                "hash of the resolved engine config, ENGINE_VERSION (for another backend: "
                "the engine's contract with it, CONTRACT_VERSION) and the backend and its version",
            ),
        ),
        pa.field(
            "exec_id", pa.string(), metadata=_doc("", "one execution of a run (a rerun of a run_id gets a new one)")
        ),
        pa.field("status", pa.string(), metadata=_doc("", "ok or failed")),
        pa.field("error", pa.string(), metadata=_doc("", "the failure's one-line message (NULL if ok)")),
        pa.field("traceback", pa.string(), metadata=_doc("", "the failure's traceback (NULL if ok)")),
        pa.field(
            "attempt", pa.int64(), metadata=_doc("", "0 = first try; > 0 = resubmitted after its worker or node died")
        ),
        pa.field("node_id", pa.string(), metadata=_doc("", "the Ray node that ran it")),
        pa.field("started_at", pa.timestamp("ms", tz="UTC"), metadata=_doc("", "when the job started (UTC)")),
        pa.field(
            "job_wall_s", pa.float64(), metadata=_doc("s", "the whole job in its worker (the engine's own is wall_s)")
        ),
        pa.field("job_index", pa.int64(), metadata=_doc("", "the job's position in its sweep's grid")),
        pa.field("overrides", pa.string(), metadata=_doc("", "the job's Hydra overrides")),
        pa.field(
            "backend_version", pa.string(), metadata=_doc("", "the backend's version (for the engine: engine_version)")
        ),
        pa.field(
            "config_id",
            pa.string(),
            metadata=_doc(
                "",
                "hash of the resolved config and the engine's CONTRACT_VERSION alone: the "
                "same on every backend (compare pairs runs by it)",
            ),
        ),
    ]
    + [_sweep_field(k) for k in SWEEP_ONLY_KEYS]
)
RUNS_SCHEMA = pa.schema(list(RUN_META) + list(SUMMARY_SCHEMA))
"""The `runs` table (the sweep_id partition column is added by the dataset layout)."""
_KEYS = [RUN_META.field("run_id"), RUN_META.field("exec_id")]
TIMESERIES_TABLE_SCHEMA = pa.schema(_KEYS + list(TIMESERIES_SCHEMA))
FLOWS_TABLE_SCHEMA = pa.schema(_KEYS + list(FLOWS_SCHEMA))
LINKS_TABLE_SCHEMA = pa.schema(_KEYS + list(LINKS_SCHEMA))
CLASSES_TABLE_SCHEMA = pa.schema(_KEYS + list(CLASSES_SCHEMA))
CONTROL_TABLE_SCHEMA = pa.schema(_KEYS + list(CONTROL_SCHEMA))
SCHEMAS = {
    "runs": RUNS_SCHEMA,
    "timeseries": TIMESERIES_TABLE_SCHEMA,
    "flows": FLOWS_TABLE_SCHEMA,
    "links": LINKS_TABLE_SCHEMA,
    "classes": CLASSES_TABLE_SCHEMA,
    "control": CONTROL_TABLE_SCHEMA,
}
_REPLACES = b"buffersweep.replaces"
COMPACT_ROWS = 1 << 16
"""Rows per row group of a compacted file. Compaction streams a partition's parts through one
writer, holding about this many rows: a 100,000-run sweep's driver read its whole partition at
once and peaked at 4.1 GB (docs/sweeps.md)."""
MEMBERS = "members"
MEMBERS_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), metadata=_doc("", "a run of the sweep's grid, run now or stored before")),
        pa.field("name", pa.string(), metadata=_doc("", "the sweep's name (its preset)")),
        pa.field("job_index", pa.int64(), metadata=_doc("", "the job's position in the sweep's grid")),
    ]
)
"""`members/sweep_id=<id>/members.parquet`: every job of a sweep, cached ones included. A run_id
does not depend on the sweep's name, so a run that another preset stored first keeps that preset's
name in `runs`; this is how a preset still finds it (`analysis.db.connect(name=...)`)."""
POINTS = "points"
POINTS_SCHEMA = pa.schema(
    [
        pa.field("point_index", pa.int64(), metadata=_doc("", "the point's position in the sweep's grid")),
        pa.field("overrides", pa.string(), metadata=_doc("", "the point's Hydra overrides (its seed the first's)")),
        pa.field("seed", pa.int64(), metadata=_doc("", "the first replication's seed (the others follow: seed + k)")),
        pa.field("replications", pa.int64(), metadata=_doc("count", "the seeds behind the point's intervals")),
        pa.field("min_seeds", pa.int64(), metadata=_doc("count", "precision.min_seeds")),
        pa.field("max_seeds", pa.int64(), metadata=_doc("count", "precision.max_seeds")),
        pa.field(
            "stop_reason",
            pa.string(),
            metadata=_doc(
                "",
                "precision (every named metric met its target), decided (the first one's interval "
                "excludes precision.decide_at), max_seeds, or failed (a replication did)",
            ),
        ),
        pa.field("metrics", pa.string(), metadata=_doc("", "the named metrics, comma-separated: those that decide")),
        pa.field("confidence", pa.float64(), metadata=_doc("1", "the intervals' confidence level")),
        pa.field("run_ids", pa.list_(pa.string()), metadata=_doc("", "the replications behind the point, by seed")),
    ]
    + [
        pa.field(f"{m}_{what}", pa.float64(), metadata=_doc("", doc.format(m=m)))
        for m in PRECISION_METRICS
        for what, doc in (
            ("mean", "{m}: the mean over the point's replications"),
            ("halfwidth", "{m}: the half-width of its t interval across replications (NULL under two)"),
            ("target", "{m}: the half-width it had to reach (NULL if {m} was not named)"),
        )
    ]
)
"""`points/sweep_id=<id>/points.parquet`: one row per point of a sweep with replications
(`sweeps.mrip`, precision.max_seeds > 1), rewritten whole at the end of each attempt."""


def open_fs(results_dir: str) -> tuple[pafs.FileSystem, str]:
    if "://" in results_dir:
        return pafs.FileSystem.from_uri(results_dir)
    import os

    return pafs.LocalFileSystem(), os.path.abspath(results_dir)


class StoreLocked(RuntimeError):
    """Another process is writing to the same results_dir."""


class Store:
    def __init__(self, results_dir: str) -> None:
        self.fs, self.root = open_fs(results_dir)

    # -- the writer lock ----------------------------------------------------------------------
    @contextlib.contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Holds an exclusive lock on a local results_dir while a sweep writes to it (recovery,
        flushes, compaction): a second writer's `recover` would otherwise delete the first's
        temporary files, and both would run and log the same run_ids. `flock` (not a lock file
        that must be cleaned up) is released by the kernel when its holder dies, kill -9 included.
        Object stores have no such lock: their users must not point two sweeps at one prefix.
        Raises StoreLocked, naming the holder, if another process holds it."""
        if not isinstance(self.fs, pafs.LocalFileSystem):
            yield
            return
        import fcntl

        os.makedirs(self.root, exist_ok=True)
        path = f"{self.root}/.writer.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
                raise StoreLocked(f"{self.root} is being written by {holder}") from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
            yield
        finally:
            os.close(fd)  # releases the lock

    # -- paths ------------------------------------------------------------------------------
    def _dir(self, table: str, sweep_id: str) -> str:
        return f"{self.root}/{table}/sweep_id={sweep_id}"

    def _parts(self, table: str, sweep_id: str | None = None) -> list[pafs.FileInfo]:
        base = f"{self.root}/{table}" if sweep_id is None else self._dir(table, sweep_id)
        info = self.fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
        return [f for f in info if f.type == pafs.FileType.File and f.base_name.endswith(".parquet")]

    def files(self, table: str) -> list[str]:
        """Paths of the table's Parquet files."""
        return [f.path for f in self._parts(table)]

    def sweep_ids(self) -> list[str]:
        info = self.fs.get_file_info(pafs.FileSelector(f"{self.root}/runs", allow_not_found=True))
        return [
            f.base_name.split("=", 1)[1]
            for f in info
            if f.type == pafs.FileType.Directory and f.base_name.startswith("sweep_id=")
        ]

    def _write(self, table: pa.Table, path: str, replaces: Iterable[str] = ()) -> None:
        """Writes a Parquet file atomically: temporary name, then rename."""
        self._write_stream([table], table.schema, path, replaces)

    def _write_stream(
        self, tables: Iterable[pa.Table], schema: pa.Schema, path: str, replaces: Iterable[str] = ()
    ) -> None:
        """Writes the concatenation of `tables` (each of `schema`) as one Parquet file, atomically:
        temporary name, then rename. Under COMPACT_ROWS rows, plus one table, wait for the writer
        at a time, so a compaction holds a row group, not the partition."""
        meta = dict(schema.metadata or {})
        replaced = list(replaces)
        if replaced:
            meta[_REPLACES] = json.dumps(replaced).encode()
        schema = schema.with_metadata(meta)
        self.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
        with self.fs.open_output_stream(tmp) as out, pq.ParquetWriter(out, schema, compression="zstd") as writer:
            held: list[pa.Table] = []
            rows = 0
            for t in tables:
                held.append(t)
                rows += t.num_rows
                if rows >= COMPACT_ROWS:
                    writer.write_table(pa.concat_tables(held).cast(schema))
                    held, rows = [], 0
            if held:
                writer.write_table(pa.concat_tables(held).cast(schema))
        self.fs.move(tmp, path)

    def members(self, sweep_id: str) -> list[str]:
        """The run_ids of the sweep's grid, as last recorded (`write_members`)."""
        path = f"{self._dir(MEMBERS, sweep_id)}/members.parquet"
        if self.fs.get_file_info(path).type != pafs.FileType.File:
            return []
        return pq.read_table(self.fs.open_input_file(path), columns=["run_id"]).column(0).to_pylist()

    def write_members(self, sweep_id: str, name: str, run_ids: list[str], append: bool = False) -> None:
        """Records the sweep's grid, replacing an earlier record of the same sweep_id, or with
        `append` adding to it (a search's rounds, each one more part of its grid)."""
        if append:
            known = self.members(sweep_id)
            seen = set(known)
            run_ids = known + [r for r in dict.fromkeys(run_ids) if r not in seen]
        table = pa.table(
            {"run_id": run_ids, "name": [name] * len(run_ids), "job_index": list(range(len(run_ids)))},
            schema=MEMBERS_SCHEMA,
        )
        self._write(table, f"{self._dir(MEMBERS, sweep_id)}/members.parquet")

    def write_points(self, sweep_id: str, table: pa.Table) -> None:
        """Records the sweep's points (replacing an earlier record of the same sweep_id)."""
        self._write(table.cast(POINTS_SCHEMA), f"{self._dir(POINTS, sweep_id)}/points.parquet")

    # -- checks -------------------------------------------------------------------------------
    def check_writable(self) -> None:
        """Raises OSError if results_dir cannot be written; leaves nothing behind."""
        probe = f"{self.root}/.write-probe-{uuid.uuid4().hex[:8]}"
        existed = self.fs.get_file_info(self.root).type != pafs.FileType.NotFound
        try:
            self.fs.create_dir(self.root, recursive=True)
            with self.fs.open_output_stream(probe) as out:
                out.write(b"")
            self.fs.delete_file(probe)
        finally:
            if not existed and self.fs.get_file_info(self.root).type == pafs.FileType.Directory:
                self.fs.delete_dir(self.root)

    # -- recovery -----------------------------------------------------------------------------
    def _replaced(self, f: pafs.FileInfo) -> list[str]:
        meta = pq.read_schema(self.fs.open_input_file(f.path)).metadata or {}
        return json.loads(meta.get(_REPLACES, b"[]"))

    def unreadable(self, table: str) -> list[str]:
        """Paths of the table's Parquet files whose footer cannot be read (truncated, or not
        Parquet): reading the footer is cheap and is what every reader needs first."""
        bad = []
        for f in self._parts(table):
            try:
                pq.read_metadata(self.fs.open_input_file(f.path))
            except (pa.ArrowInvalid, OSError):
                bad.append(f.path)
        return bad

    def quarantine(self) -> list[tuple[str, str]]:
        """Moves unreadable Parquet files out of the datasets into `quarantine/` (same relative
        path), so that one damaged file blocks neither sweeps nor queries; returns (from, to)."""
        moved = []
        for table in TABLES:
            for path in self.unreadable(table):
                dest = f"{self.root}/quarantine/{path[len(self.root) + 1 :]}"
                self.fs.create_dir(dest.rsplit("/", 1)[0], recursive=True)
                self.fs.move(path, dest)
                moved.append((path, dest))
        return moved

    def recover(self) -> list[tuple[str, str]]:
        """Finishes or undoes what a killed sweep left: temporary files, flushes that never got
        their runs part, and compactions stopped half-way; quarantines unreadable files first.
        Returns the quarantined files (from, to)."""
        moved = self.quarantine()
        for table in TABLES:
            info = self.fs.get_file_info(
                pafs.FileSelector(f"{self.root}/{table}", recursive=True, allow_not_found=True)
            )
            for f in info:
                if f.type == pafs.FileType.File and ".parquet.tmp-" in f.base_name:
                    self.fs.delete_file(f.path)
        for sweep_id in self.sweep_ids():
            runs = self._parts("runs", sweep_id)
            names = {f.base_name for f in runs}
            merged: set[str] = set()
            compacted = []
            for f in runs:
                replaced = self._replaced(f)
                if replaced:
                    compacted.append(f.base_name)
                    merged.update(replaced)
            for f in runs:
                if f.base_name in merged:
                    self.fs.delete_file(f.path)  # already inside a compacted runs file
            for table in DETAIL_TABLES:
                for f in self._parts(table, sweep_id):
                    if f.base_name not in names and f.base_name not in merged:
                        self.fs.delete_file(f.path)  # a flush whose runs part was never written
            for name in compacted:
                self._follow_runs(sweep_id, name)
        return moved

    def _follow_runs(self, sweep_id: str, name: str, only: set[str] | None = None) -> None:
        """Rewrites the detail tables of a partition (their parts named in `only`, if given) into
        file `name`, keeping the rows of runs present in the partition's runs table (completes a
        compaction or a purge)."""
        exec_ids = self.read("runs", sweep_id, columns=["exec_id"]).column("exec_id").unique()
        for table in DETAIL_TABLES:
            parts = [p for p in self._parts(table, sweep_id) if only is None or p.base_name in only]
            if any(p.base_name == name for p in parts):
                for old in self._replaced(next(p for p in parts if p.base_name == name)):
                    for p in parts:
                        if p.base_name == old:
                            self.fs.delete_file(p.path)
                continue
            self._write_stream(
                self._read_parts(table, parts, keep=exec_ids),
                SCHEMAS[table],
                f"{self._dir(table, sweep_id)}/{name}",
                replaces=[p.base_name for p in parts],
            )
            for p in parts:
                self.fs.delete_file(p.path)

    # -- reads --------------------------------------------------------------------------------
    def dataset(self, table: str) -> ds.Dataset | None:
        parts = self._parts(table)
        if not parts:
            return None
        return ds.dataset([f.path for f in parts], schema=SCHEMAS[table], filesystem=self.fs, format="parquet")

    def runs_index(self) -> pa.Table:
        """(sweep_id, run_id, exec_id, status, started_at) of every stored run row."""
        tables = []
        for sweep_id in self.sweep_ids():
            for f in self._parts("runs", sweep_id):
                t = pq.read_table(
                    self.fs.open_input_file(f.path), columns=["run_id", "exec_id", "status", "started_at"]
                )
                tables.append(t.append_column("sweep_id", pa.array([sweep_id] * len(t), pa.string())))
        if not tables:
            return pa.table(
                {
                    "run_id": pa.array([], pa.string()),
                    "exec_id": pa.array([], pa.string()),
                    "status": pa.array([], pa.string()),
                    "started_at": pa.array([], pa.timestamp("ms", tz="UTC")),
                    "sweep_id": pa.array([], pa.string()),
                }
            )
        return pa.concat_tables(tables)

    def dedupe(self) -> dict[str, str]:
        """Keeps one row per run_id (an ok row over a failed one, then the newest) and deletes
        the others; returns run_id -> status of what is stored."""
        idx = self.runs_index().to_pylist()
        best: dict[str, dict[str, Any]] = {}
        for r in idx:
            cur = best.get(r["run_id"])
            key = (r["status"] == "ok", r["started_at"])
            if cur is None or key > (cur["status"] == "ok", cur["started_at"]):
                best[r["run_id"]] = r
        keep = {r["exec_id"] for r in best.values()}
        losers: dict[str, set[str]] = {}
        for r in idx:
            if r["exec_id"] not in keep:
                losers.setdefault(r["sweep_id"], set()).add(r["exec_id"])
        for sweep_id, drop in losers.items():
            self.rewrite(sweep_id, drop)
        return {rid: r["status"] for rid, r in best.items()}

    def read(
        self, table: str, sweep_id: str, exec_ids: set[str] | None = None, columns: list[str] | None = None
    ) -> pa.Table:
        """A partition's rows of `table` (those of `exec_ids` only, if given), all columns or `columns`."""
        keep = None if exec_ids is None else pa.array(sorted(exec_ids), pa.string())
        schema = SCHEMAS[table] if columns is None else pa.schema([SCHEMAS[table].field(c) for c in columns])
        parts = self._read_parts(table, self._parts(table, sweep_id), keep=keep, columns=columns)
        return pa.concat_tables([schema.empty_table(), *parts])

    def _read_parts(
        self,
        table: str,
        parts: list[pafs.FileInfo],
        keep: pa.Array | None = None,
        drop: pa.Array | None = None,
        columns: list[str] | None = None,
    ) -> Iterator[pa.Table]:
        """Each part's rows in turn, with an exec_id in `keep` (if given) and not in `drop`."""
        schema = SCHEMAS[table]
        cols = columns if columns is None or (keep is None and drop is None) else sorted({*columns, "exec_id"})
        for f in parts:
            t = pq.read_table(self.fs.open_input_file(f.path), schema=schema, columns=cols)
            if keep is not None:
                t = t.filter(pa.compute.is_in(t.column("exec_id"), value_set=keep))
            if drop is not None:
                t = t.filter(pa.compute.invert(pa.compute.is_in(t.column("exec_id"), value_set=drop)))
            yield t if columns is None else t.select(columns)

    # -- writes -------------------------------------------------------------------------------
    def flush(self, sweep_id: str, runs: pa.Table, details: dict[str, pa.Table]) -> None:
        """Stores a batch of finished runs (one part per table; the runs part commits it)."""
        assert set(details) == set(DETAIL_TABLES), sorted(details)
        name = f"part-{uuid.uuid4().hex}.parquet"
        for table in DETAIL_TABLES:
            self._write(details[table], f"{self._dir(table, sweep_id)}/{name}")
        self._write(runs, f"{self._dir('runs', sweep_id)}/{name}")

    def rewrite(self, sweep_id: str, drop_exec_ids: set[str] = frozenset(), fresh_only: bool = False) -> None:
        """Compacts a partition into one file per table, without `drop_exec_ids`; `fresh_only`:
        only the parts flushed since its last compaction, into one file more (a search's rounds:
        each round then costs its own runs, not the whole partition's). The runs file is written
        first (it lists the parts it replaces); the detail tables follow under the same name, so
        `recover` can finish the job if this is interrupted."""
        parts = self._parts("runs", sweep_id)
        if fresh_only:
            parts = [p for p in parts if not p.base_name.startswith(COMPACTED)]
            if len(parts) <= 1:
                return
        elif not parts or (
            len(parts) == 1 and not drop_exec_ids and all(len(self._parts(t, sweep_id)) <= 1 for t in DETAIL_TABLES)
        ):
            return
        drop = pa.array(sorted(drop_exec_ids), pa.string()) if drop_exec_ids else None
        name = f"{COMPACTED}{uuid.uuid4().hex}.parquet"
        self._write_stream(
            self._read_parts("runs", parts, drop=drop),
            RUNS_SCHEMA,
            f"{self._dir('runs', sweep_id)}/{name}",
            replaces=[p.base_name for p in parts],
        )
        for p in parts:
            self.fs.delete_file(p.path)
        self._follow_runs(sweep_id, name, {p.base_name for p in parts} if fresh_only else None)

"""Many small Arrow tables of one schema as one IPC stream, for a trip between processes (Ray
worker to driver, driver to MLflow logger). Ray and multiprocessing pickle a table column by
column: sending a tiny run's five detail tables and reading them back took 3.6 ms, their IPC
streams 0.7 ms, and a stream of a batch's tables costs about what one table's does
(docs/sweeps.md, the orchestration benchmark)."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pyarrow as pa


@dataclass
class Packed:
    stream: bytes
    rows: list[int | None]
    """Each table's rows, in order; None where there was no table."""


def pack(tables: list[pa.Table | None]) -> Packed | None:
    """The tables concatenated into one IPC stream; None if their schemas differ."""
    present = [t for t in tables if t is not None]
    if not present:
        return Packed(b"", [None] * len(tables))
    try:
        table = pa.concat_tables(present)
    except pa.ArrowInvalid:
        return None
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return Packed(sink.getvalue(), [None if t is None else len(t) for t in tables])


def unpack(p: Packed) -> list[pa.Table | None]:
    if not p.stream:
        return [None] * len(p.rows)
    table = pa.ipc.open_stream(p.stream).read_all()
    out: list[pa.Table | None] = []
    at = 0
    for n in p.rows:
        out.append(None if n is None else table.slice(at, n))  # zero-copy
        at += n or 0
    return out

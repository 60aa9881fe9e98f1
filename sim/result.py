"""Run a simulation and get its results as Arrow tables. Every schema is built from the engine's
declaration (`sim.schema`); each field carries its unit and meaning as metadata
(`python -m analysis schema` prints them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa

from sim import _core
from sim.config import SimConfig
from sim.cost import Limits, budget, check, memory_drivers
from sim.schema import TABLES, config_columns, output_fields
from sim.schema import config_row as _flat_config

CONFIG_FIELDS: list[pa.Field] = [f for _, f, _ in config_columns()]
"""The columns a run's config fills in a results table."""
SUMMARY_METRICS: tuple[str, ...] = tuple(c["name"] for c in TABLES["summary"])
"""The summary's metrics, in engine order."""
SUMMARY_NUMBERS: tuple[str, ...] = tuple(c["name"] for c in TABLES["summary"] if not c["type"].startswith("string"))
"""The summary's numeric metrics (stop_reason is text)."""
WALL_CLOCK_METRICS = ("wall_s", "events_per_s", "pkts_per_s")
"""Metrics that measure the machine, not the network: they differ between identical runs."""

_VERSION_FIELD = pa.field("engine_version", pa.string(), metadata={b"unit": b"", b"doc": b"the engine that ran it"})
SUMMARY_SCHEMA = pa.schema([_VERSION_FIELD, *CONFIG_FIELDS, *output_fields("summary")])
TIMESERIES_SCHEMA = pa.schema(output_fields("timeseries"))
FLOWS_SCHEMA = pa.schema(output_fields("flows"))
LINKS_SCHEMA = pa.schema(output_fields("links"))
CLASSES_SCHEMA = pa.schema(output_fields("classes"))
CONTROL_SCHEMA = pa.schema(output_fields("control"))
TRACE_SCHEMA = pa.schema(output_fields("trace"))


@dataclass(frozen=True)
class SimResult:
    config: SimConfig
    timeseries: pa.Table
    flows: pa.Table
    links: pa.Table
    classes: pa.Table
    control: pa.Table
    trace: pa.Table | None
    row: dict[str, Any] = field(repr=False)
    """The summary row as Python values: `metrics()`, and the `summary` table's one row."""

    @cached_property
    def summary(self) -> pa.Table:
        """The summary as a one-row table, built when first asked for: its 137 columns take
        0.5 ms to convert, half a tiny run's cost, and a sweep reads only `metrics()`."""
        return table({k: [v] for k, v in self.row.items()}, SUMMARY_SCHEMA)

    def metrics(self) -> dict[str, Any]:
        """The summary row as a dict (config columns and metrics); the same as the summary
        table's row (a test holds it)."""
        return dict(self.row)


def config_row(cfg: SimConfig) -> dict[str, Any]:
    """The config part of a summary row: the engine version and every config column."""
    return {"engine_version": _core.ENGINE_VERSION, **_flat_config(cfg.to_dict(), cfg.labels)}


ROW_WISE_MAX_ROWS: int = _core.ROW_WISE_MAX_ROWS
"""Tables of at most this many rows come from the engine as lists and convert as one struct
array of rows: one pyarrow conversion for the whole table, where a table by columns pays
pyarrow's set-up per column (about 10 us each; a tiny run's summary has 136). 3-4x faster for a
tiny run's tables. Longer tables come as Arrow buffers (`from_buffers`), a Python object a
column rather than a value (docs/performance.md)."""
_ROW_TYPES: dict[int, tuple[pa.Schema, pa.DataType]] = {}  # by id(schema): hashing one takes 0.2 ms


_EMPTY: dict[int, tuple[pa.Schema, pa.Table]] = {}


def _empty(schema: pa.Schema) -> pa.Table:
    cached = _EMPTY.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _EMPTY[id(schema)] = (schema, schema.empty_table())
    return cached[1]


def from_buffers(buffers: tuple, typ: pa.DataType) -> pa.Array:
    """An array from the engine's buffers (`sim/src/python_columns.rs`): (length, validity
    bitmap or None, data, int32 offsets or None, dictionary or None), without a Python object a
    value."""
    n, validity, data, offsets, dictionary = buffers
    valid = None if validity is None else pa.py_buffer(validity)
    if pa.types.is_dictionary(typ):
        indices = pa.Array.from_buffers(typ.index_type, n, [None, pa.py_buffer(data)])
        return pa.DictionaryArray.from_arrays(indices, pa.array(dictionary, typ.value_type))
    if pa.types.is_list(typ):
        values = len(data) // (typ.value_type.bit_width // 8)
        child = pa.Array.from_buffers(typ.value_type, values, [None, pa.py_buffer(data)])
        return pa.Array.from_buffers(typ, n, [valid, pa.py_buffer(offsets)], children=[child])
    if pa.types.is_string(typ):
        return pa.Array.from_buffers(typ, n, [valid, pa.py_buffer(offsets), pa.py_buffer(data)])
    return pa.Array.from_buffers(typ, n, [valid, pa.py_buffer(data)])


def table(columns: dict[str, list | tuple], schema: pa.Schema) -> pa.Table:
    """An Arrow table of exactly the schema's columns (a missing or extra column is an error,
    never silently dropped), converted by one pyarrow call (see ROW_WISE_MAX_ROWS). A column is
    a list of values, or the engine's Arrow buffers (`from_buffers`)."""
    if set(columns) != set(schema.names):
        extra, missing = sorted(set(columns) - set(schema.names)), sorted(set(schema.names) - set(columns))
        raise ValueError(f"columns do not match the schema: extra {extra}, missing {missing}")
    if any(isinstance(v, tuple) for v in columns.values()):
        arrays = [
            from_buffers(v, f.type) if isinstance(v, tuple) else pa.array(v, f.type)
            for f, v in ((f, columns[f.name]) for f in schema)
        ]
        if len({len(a) for a in arrays}) > 1:
            lengths = sorted({f.name: len(a) for f, a in zip(schema, arrays)}.items())
            raise ValueError(f"columns differ in length: {lengths}")
        return pa.Table.from_arrays(arrays, schema=schema)
    rows = len(next(iter(columns.values()), ()))
    if any(len(v) != rows for v in columns.values()):
        raise ValueError(f"columns differ in length: {sorted({k: len(v) for k, v in columns.items()}.items())}")
    if rows == 0:  # tables are immutable: one empty table per schema serves every run
        return _empty(schema)
    if rows > ROW_WISE_MAX_ROWS:
        return pa.Table.from_pydict(columns, schema=schema)
    cached = _ROW_TYPES.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _ROW_TYPES[id(schema)] = (schema, pa.struct(list(schema)))
    keys = list(columns)
    structs = pa.array([dict(zip(keys, r)) for r in zip(*columns.values())], type=cached[1])
    return pa.Table.from_struct_array(structs).replace_schema_metadata(schema.metadata)


def run(config: SimConfig | None = None, /, limits: Limits | None = None, **fields: Any) -> SimResult:
    """Runs one simulation: `run(SimConfig(...))` or `run(tcp="paced", flows=40, ...)`.

    Raises ValueError (naming the key and what is allowed) before anything runs if the config is
    invalid, or if its estimated cost exceeds `limits` (default `Limits()`: half the RAM, 1e10
    events; `sim.cost`) or the memory the process may still allocate. The GIL is released while
    the engine runs; Ctrl-C stops it, and so does `limits.job_timeout_s` (TimeoutError); memory
    past `sim.cost.budget` stops it with MemoryError.
    """
    if config is not None and fields:
        raise ValueError("pass either a SimConfig or keyword fields, not both")
    cfg = config if config is not None else SimConfig.from_fields(**fields)
    limits = limits or Limits()
    check(cfg, limits)
    budget_bytes, bound = budget(limits)
    try:
        out = _core.run(cfg.plain(), limits.job_timeout_s, budget_bytes)  # read only: no copy
    except MemoryError as e:
        raise MemoryError(
            f"memory: the run outgrew the memory it may allocate ({bound}): {e}; driven by {memory_drivers(cfg)}"
        ) from None
    row = {**config_row(cfg), **{k: v[0] for k, v in out["summary"].items()}}
    trace = table(out["trace"], TRACE_SCHEMA) if cfg.trace_max_events > 0 else None
    return SimResult(
        config=cfg,
        row=row,
        timeseries=table(out["timeseries"], TIMESERIES_SCHEMA),
        flows=table(out["flows"], FLOWS_SCHEMA),
        links=table(out["links"], LINKS_SCHEMA),
        classes=table(out["classes"], CLASSES_SCHEMA),
        control=table(out["control"], CONTROL_SCHEMA),
        trace=trace,
    )

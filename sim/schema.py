"""The engine's own declaration of every parameter and every output column (`_core.schema()`,
from `sim/src/config.rs`, the registries and `sim/src/output.rs`), and what Python derives from
it: Arrow types, the flat column layout of a config in a results table, and lookups by dotted key.
Nothing here lists a parameter or a metric by hand.

A type description is a dict: {"type": "bool" | "int" | "float" | "str"}, {"type": "optional" |
"list", "of": desc}, {"type": "record", "name", "doc", "fields": [spec]}, or {"type": "union",
"name", "tag", "default_tag", "common": [spec], "variants": [{"name", "doc", "fields"}],
"presets": [{"name", "doc", "set"}]}. A spec is {"key", "type", "default", "unit", "doc",
"allowed"}.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from sim import _core

SCHEMA: dict[str, Any] = _core.schema()
CONFIG: dict[str, Any] = SCHEMA["config"]
"""The record description of a run config."""
TABLES: dict[str, list[dict[str, Any]]] = SCHEMA["tables"]
"""Output table name -> its columns ({"name", "type", "unit", "doc"})."""


def union_specs(u: dict[str, Any]) -> list[dict[str, Any]]:
    """Every key a union's values may hold, in order: its tag, the common keys, then each
    variant's keys (first occurrence wins; the same key must have the same type everywhere)."""
    tag = {
        "key": u["tag"],
        "type": {"type": "str"},
        "default": u["default_tag"],
        "unit": "",
        "doc": f"the {u['name']} kind: " + ", ".join(v["name"] for v in u["variants"]),
        "allowed": "",
    }
    out: dict[str, dict[str, Any]] = {u["tag"]: tag}
    for spec in u["common"] + [s for v in u["variants"] for s in v["fields"]]:
        out.setdefault(spec["key"], spec)
    return list(out.values())


def union_names(u: dict[str, Any]) -> list[str]:
    """Names a union accepts as a string: presets first, then variants."""
    names = [p["name"] for p in u["presets"]]
    return names + [v["name"] for v in u["variants"] if v["name"] not in names]


def config_field(key: str) -> dict[str, Any]:
    return next(s for s in CONFIG["fields"] if s["key"] == key)


def unions() -> dict[str, dict[str, Any]]:
    """The union-typed sections of a run config (tcp, topology, buffer_policy), by key."""
    out = {}
    for spec in CONFIG["fields"]:
        t = spec["type"]
        if t["type"] == "optional":
            t = t["of"]
        if t["type"] == "union":
            out[spec["key"]] = t
    return out


def arrow_type(desc: dict[str, Any]) -> pa.DataType:
    kind = desc["type"]
    if kind == "optional":
        return arrow_type(desc["of"])
    if kind == "list":
        return pa.list_(arrow_type(desc["of"]))
    if kind == "record":
        return pa.struct([pa.field(s["key"], arrow_type(s["type"])) for s in desc["fields"]])
    if kind == "union":
        # A section inside a record (a parking-lot link's buffer_policy): its JSON text. Top-level
        # sections never get here; they are flattened into columns (`config_columns`).
        return pa.string()
    return {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "str": pa.string()}[kind]


def _nested_unions_as_json(desc: dict[str, Any], value: Any) -> Any:
    """`value` of type `desc` with every union inside it as JSON text (see `arrow_type`)."""
    kind = desc["type"]
    if value is None:
        return None
    if kind == "union":
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    if kind == "optional":
        return _nested_unions_as_json(desc["of"], value)
    if kind == "list":
        return [_nested_unions_as_json(desc["of"], v) for v in value]
    if kind == "record":
        return {s["key"]: _nested_unions_as_json(s["type"], value.get(s["key"])) for s in desc["fields"]}
    return value


def _holds_union(desc: dict[str, Any]) -> bool:
    """A list whose elements are (or hold) a union: no Arrow type of its own."""
    return desc["type"] == "list" and (desc["of"]["type"] == "union" or _holds_union(desc["of"]))


def _meta(unit: str, doc: str) -> dict[bytes, bytes]:
    return {b"unit": unit.encode(), b"doc": doc.encode()}


def echo_column(key: str) -> str:
    """The results column that echoes config key `key`: the key itself, or `config_<key>` where
    the run reports what it really ran under the key's name (`buffer_pkts`: the bottleneck's
    buffer as a policy or the topology set it; `sim/src/output.rs`'s summary declares which)."""
    return f"config_{key}" if key in _SUMMARY_NAMES else key


_SUMMARY_NAMES = frozenset(c["name"] for c in TABLES["summary"])


def config_columns() -> Iterator[tuple[str, pa.Field, tuple[str, Any]]]:
    """The results-table columns of a config: (column name, Arrow field, (section, what)), what
    being None (the value or label itself), "json", or the section's parameter spec.

    A plain parameter is a column of its own name (`echo_column`: `config_<key>` where the run
    reports what ran under the key). A union section S gives a column S holding
    its label (the preset or variant it is; NULL for an absent optional section) and a column
    S_key for every key its values may hold (NULL where the variant lacks it); a tag called
    `name` is the label itself."""
    for spec in CONFIG["fields"]:
        key, t = spec["key"], spec["type"]
        optional = t["type"] == "optional"
        inner = t["of"] if optional else t
        if _holds_union(inner):
            # A list of tagged groups (`traffic`): one JSON text column, NULL when empty (DuckDB
            # reads it with its json functions).
            doc = f"{spec['doc']} (JSON; NULL = none)"
            yield key, pa.field(key, pa.string(), metadata=_meta(spec["unit"], doc)), (key, "json")
            continue
        if inner["type"] != "union":
            col, doc = echo_column(key), spec["doc"]
            if col != key:
                doc = f"{doc} As configured: what ran is `{key}`, which a buffer policy or the topology may set."
            yield col, pa.field(col, arrow_type(t), metadata=_meta(spec["unit"], doc)), (key, None)
            continue
        label_doc = f"{spec['doc']} (its preset or kind" + ("; NULL = none)" if optional else ")")
        yield key, pa.field(key, pa.string(), metadata=_meta("", label_doc)), (key, None)
        for sub in union_specs(inner):
            if sub["key"] == "name" == inner["tag"]:
                continue
            col = f"{key}_{sub['key']}"
            yield col, pa.field(col, arrow_type(sub["type"]), metadata=_meta(sub["unit"], sub["doc"])), (key, sub)


@functools.cache
def _column_plan() -> tuple[tuple[str, str, Any], ...]:
    """(column, section, what) of `config_columns()`, built once: every run's row reads it."""
    return tuple((col, section, sub) for col, _, (section, sub) in config_columns())


def config_row(normalized: dict[str, Any], labels: dict[str, Any]) -> dict[str, Any]:
    """A normalized config (from `_core.normalize`) as the flat columns of `config_columns()`."""
    row: dict[str, Any] = {}
    for col, section, sub in _column_plan():
        value = normalized.get(section)
        if sub == "json":
            row[col] = json.dumps(value, sort_keys=True, separators=(",", ":")) if value else None
        elif sub is None:
            row[col] = labels[section] if section in labels else value
        else:
            row[col] = None if value is None else _nested_unions_as_json(sub["type"], value.get(sub["key"]))
    return row


_ARROW_OUT = {
    "float64": pa.float64(),
    "float64?": pa.float64(),
    "int64": pa.int64(),
    "int64?": pa.int64(),
    "bool": pa.bool_(),
    "string": pa.string(),
    "string?": pa.string(),
    "list<int64>": pa.list_(pa.int64()),
    "list<float64>": pa.list_(pa.float64()),
    "list<string>": pa.list_(pa.string()),
    "label": pa.dictionary(pa.int8(), pa.string()),
}


def output_fields(table: str) -> list[pa.Field]:
    """The Arrow fields of an output table, with each column's unit and meaning as metadata."""
    return [pa.field(c["name"], _ARROW_OUT[c["type"]], metadata=_meta(c["unit"], c["doc"])) for c in TABLES[table]]


def lookup(path: str) -> dict[str, Any] | None:
    """The type description of a dotted config key (`flows`, `tcp.init_cwnd_pkts`,
    `topology.links.1.buffer_pkts`), searching every variant of a union; None if no such key."""
    desc: dict[str, Any] = CONFIG
    for part in path.split("."):
        while desc["type"] == "optional":
            desc = desc["of"]
        if desc["type"] == "list" and part.isdigit():
            desc = desc["of"]
            continue
        if desc["type"] == "record":
            found = [s for s in desc["fields"] if s["key"] == part]
        elif desc["type"] == "union":
            found = [s for s in union_specs(desc) if s["key"] == part]
        else:
            return None
        if not found:
            return None
        desc = found[0]["type"]
    return desc


def leaf_keys(desc: dict[str, Any] = CONFIG, prefix: str = "") -> list[str]:
    """Every dotted key of scalar parameters (list elements as `key.N`)."""
    while desc["type"] == "optional":
        desc = desc["of"]
    specs = desc["fields"] if desc["type"] == "record" else union_specs(desc) if desc["type"] == "union" else None
    if specs is None:
        return [prefix.rstrip(".")]
    out = []
    for s in specs:
        t = s["type"]
        while t["type"] == "optional":
            t = t["of"]
        if t["type"] == "list" and t["of"]["type"] in ("record",):
            out += leaf_keys(t["of"], f"{prefix}{s['key']}.N.")
        else:
            out += leaf_keys(t, f"{prefix}{s['key']}.")
    return out

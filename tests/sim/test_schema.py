"""One source of truth: every parameter and every metric, as the engine declares them, agrees with
the Python dataclasses, the type stub, the Arrow schemas, the Hydra structured configs and the
conf/ presets; and an unknown key is an error at every level."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pyarrow as pa
import pytest

import sim
from sim import config as simconfig
from sim import stubs
from sim.result import (
    CLASSES_SCHEMA,
    CONFIG_FIELDS,
    FLOWS_SCHEMA,
    LINKS_SCHEMA,
    SUMMARY_SCHEMA,
    TIMESERIES_SCHEMA,
    TRACE_SCHEMA,
)
from sim.schema import CONFIG, TABLES, arrow_type, config_columns, echo_column, union_specs, unions

pytestmark = pytest.mark.check  # part of `make check`

PY = {"bool": bool, "int": int, "float": float, "str": str}


def params(desc: dict[str, Any] = CONFIG, prefix: str = "") -> list[tuple[str, dict[str, Any], str]]:
    """Every declared parameter: (dotted key, spec, the record or variant holding it)."""
    out = []
    kind = desc["type"]
    if kind in ("optional", "list"):
        return params(desc["of"], prefix)
    if kind == "record":
        for s in desc["fields"]:
            out.append((prefix + s["key"], s, desc["name"]))
            out += params(s["type"], f"{prefix}{s['key']}.")
    if kind == "union":
        for v in desc["variants"]:
            owner = simconfig.variant_class_name(desc["name"], v["name"])
            for s in desc["common"] + v["fields"]:
                out.append((prefix + s["key"], s, owner))
                out += params(s["type"], f"{prefix}{s['key']}.")
    return out


def python_type(desc: dict[str, Any]) -> Any:
    kind = desc["type"]
    if kind == "optional":
        return typing.Optional[python_type(desc["of"])]
    if kind == "list":
        return tuple[python_type(desc["of"]), ...]
    if kind == "record":
        return simconfig.CLASSES[desc["name"]]
    if kind == "union":
        classes = tuple(
            simconfig.CLASSES[simconfig.variant_class_name(desc["name"], v["name"])] for v in desc["variants"]
        )
        return typing.Union[classes] if len(classes) > 1 else classes[0]
    return PY[kind]


def test_every_parameter_is_a_dataclass_field_with_its_type_and_default():
    declared = params()
    assert len(declared) > 40
    for key, spec, owner in declared:
        cls = simconfig.CLASSES[owner]
        f = {x.name: x for x in dataclasses.fields(cls)}[spec["key"]]
        assert f.type == python_type(spec["type"]), key
        assert simconfig.to_value(f.default) == spec["default"], key
        assert f.metadata["unit"] == spec["unit"] and f.metadata["doc"] == spec["doc"], key
    for cls in simconfig.CLASSES.values():  # and no field that is not declared
        names = {s["key"] for k, s, o in declared if o == cls.__name__}
        tags = {u["tag"] for u in unions().values()} | {"kind"}  # + traffic's, a union inside a list
        assert {f.name for f in dataclasses.fields(cls)} - tags == names - tags, cls


def test_a_run_reports_the_buffer_that_ran_and_echoes_the_configured_one():
    """Issue 69: under a buffer policy, `buffer_pkts` is the bottleneck's buffer as the policy set
    it (the links table's), and the config's value is `config_buffer_pkts`."""
    assert echo_column("buffer_pkts") == "config_buffer_pkts" and echo_column("flows") == "flows"
    res = sim.run(
        flows=4, core_mbps=100, rtt_ms=40, duration_s=2, warmup_s=1, buffer_policy={"name": "bdp", "factor": 0.5}
    )
    m = res.metrics()
    assert (m["buffer_pkts"], m["config_buffer_pkts"], m["buffer_bytes"]) == (250.0, 100, None)
    assert m["buffer_pkts"] == res.links["buffer_pkts"][m["bottleneck_link"]].as_py()
    m = sim.run(flows=2, duration_s=2, warmup_s=1, buffer_pkts=0, buffer_bytes=30000, pkt_bytes=1500).metrics()
    assert (m["buffer_pkts"], m["buffer_bytes"], m["config_buffer_bytes"]) == (20.0, 30000, 30000)


def test_the_type_stub_is_current():
    assert stubs.STUB.read_text() == stubs.render(), "sim/config.pyi is stale: run python -m sim.stubs"


def test_every_parameter_has_a_column_and_every_metric_its_arrow_field():
    cols = {name: f for name, f, _ in config_columns()}
    for key, spec in [(s["key"], s) for s in CONFIG["fields"]]:
        if spec["type"]["type"] == "list" and spec["type"]["of"]["type"] == "union":
            assert cols[key].type == pa.string() and b"JSON" in cols[key].metadata[b"doc"], key  # traffic
            continue
        t = spec["type"].get("of", spec["type"])
        if t["type"] == "union":
            assert cols[key].type == pa.string()
            for sub in union_specs(t):
                if sub["key"] != "name":
                    assert cols[f"{key}_{sub['key']}"].type == arrow_type(sub["type"]), f"{key}.{sub['key']}"
        else:
            col = cols[echo_column(key)]
            assert col.type == arrow_type(spec["type"]) and col.metadata[b"unit"] == spec["unit"].encode()
    assert SUMMARY_SCHEMA.names == [
        "engine_version",
        *[f.name for f in CONFIG_FIELDS],
        *[c["name"] for c in TABLES["summary"]],
    ]
    for table, schema in [
        ("timeseries", TIMESERIES_SCHEMA),
        ("flows", FLOWS_SCHEMA),
        ("links", LINKS_SCHEMA),
        ("classes", CLASSES_SCHEMA),
        ("trace", TRACE_SCHEMA),
        ("summary", pa.schema(list(SUMMARY_SCHEMA)[-len(TABLES["summary"]) :])),
    ]:
        assert schema.names == [c["name"] for c in TABLES[table]], table
        for f, c in zip(schema, TABLES[table]):
            assert f.metadata[b"unit"] == c["unit"].encode() and f.metadata[b"doc"] == c["doc"].encode()
            assert f.nullable


def test_union_keys_have_one_type_everywhere():
    for section, u in unions().items():
        seen: dict[str, Any] = {}
        for s in u["common"] + [x for v in u["variants"] for x in v["fields"]]:
            assert seen.setdefault(s["key"], s["type"]) == s["type"], f"{section}.{s['key']}"


def test_a_run_fills_exactly_the_declared_columns():
    res = sim.run(
        flows=2, duration_s=3, warmup_s=1, trace_max_events=10, trace_start_s=0.0, topology="parking_lot", rtt_ms=100
    )
    for table, t in [
        ("timeseries", res.timeseries),
        ("flows", res.flows),
        ("links", res.links),
        ("classes", res.classes),
        ("trace", res.trace),
    ]:
        assert t.column_names == [c["name"] for c in TABLES[table]] and t.num_rows > 0, table
    assert res.summary.schema == SUMMARY_SCHEMA


def test_both_table_conversions_give_the_same_table(monkeypatch):
    """`sim.result.table` converts short tables by rows and long ones by columns: the same values
    (NaN and nulls included), types and schema either way; a missing column or a ragged one is an
    error on both paths."""
    import math

    from sim import result

    res = sim.run(flows=3, duration_s=3, warmup_s=1, trace_max_events=100, trace_start_s=0.0)
    for name, t in [("flows", res.flows), ("timeseries", res.timeseries), ("trace", res.trace)]:
        cols = t.to_pydict()
        tables = []
        for limit in (0, 10**9):
            monkeypatch.setattr(result, "ROW_WISE_MAX_ROWS", limit)
            tables.append(result.table(cols, t.schema))
            with pytest.raises(ValueError, match="missing"):
                result.table({k: v for k, v in cols.items() if k != t.column_names[0]}, t.schema)
            ragged = {**cols, t.column_names[0]: cols[t.column_names[0]] + [None]}
            with pytest.raises((ValueError, pa.ArrowInvalid)):
                result.table(ragged, t.schema)
        by_columns, by_rows = tables
        assert by_rows.schema == by_columns.schema == t.schema, name
        same = lambda a, b: a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))  # noqa: E731
        for c in t.column_names:
            pairs = zip(by_rows[c].to_pylist(), by_columns[c].to_pylist(), strict=True)
            assert all(same(a, b) for a, b in pairs), (name, c)


def test_the_engines_buffers_give_the_tables_its_lists_give():
    """Tables longer than ROW_WISE_MAX_ROWS come from the engine as Arrow buffers: the same
    values as the lists they replaced, for every column type (nulls, bools, strings, lists,
    labels), and the same schema."""
    import math

    from sim import result

    res = sim.run(
        flows=100, tcp_mix="cubic_2622:40,reno:60", duration_s=8, warmup_s=1, trace_max_events=300, trace_start_s=0.0
    )
    long = {"flows": res.flows, "timeseries": res.timeseries, "trace": res.trace}
    assert all(t.num_rows > result.ROW_WISE_MAX_ROWS for t in long.values()), {k: len(t) for k, t in long.items()}
    types = {str(f.type) for t in long.values() for f in t.schema}
    assert {"double", "int64", "bool", "string", "list<item: int64>"} <= types, types
    assert any(t.column(c).null_count for t in long.values() for c in t.column_names), "some nulls"
    same = lambda a, b: a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))  # noqa: E731
    for name, t in long.items():
        by_lists = result.table(t.to_pydict(), t.schema)
        assert by_lists.schema == t.schema, name
        for c in t.column_names:
            pairs = zip(t[c].to_pylist(), by_lists[c].to_pylist(), strict=True)
            assert all(same(a, b) for a, b in pairs), (name, c)


def test_hydra_schema_agrees_with_the_engine():
    from sweeps.schema import SECTIONS, SweepConfig, hydra_variant

    hydra = {f.name: f for f in dataclasses.fields(SweepConfig)}
    hints = typing.get_type_hints(SweepConfig)
    for spec in CONFIG["fields"]:
        if spec["type"]["type"] == "list" and spec["type"]["of"]["type"] == "union":
            assert typing.get_origin(hints[spec["key"]]) is list, spec["key"]  # traffic
            continue
        t = spec["type"].get("of", spec["type"])
        if t["type"] == "union":
            assert hints[spec["key"]] is Any  # a config group brings the value
            continue
        f = hydra[spec["key"]]
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if dataclasses.is_dataclass(default):  # a record (precision): its fields' defaults
            default = dataclasses.asdict(default)
        assert default == spec["default"], spec["key"]
    for section, u in SECTIONS.items():
        for v in u["variants"]:
            cls = hydra_variant(u, v)
            fields = {f.name: f for f in dataclasses.fields(cls)}
            assert list(fields) == [u["tag"]] + [s["key"] for s in u["common"] + v["fields"]], (section, v["name"])
            assert fields[u["tag"]].default == v["name"]


def test_conf_presets_equal_the_engine_presets():
    from sweeps.api import compose_config

    for preset in unions()["tcp"]["presets"]:
        tcp = compose_config([f"tcp={preset['name']}"]).tcp
        assert {k: tcp[k] for k in preset["set"]} == preset["set"], preset["name"]
        ecn = {"ecn": True} if preset["name"] == "dctcp" else {}  # refused without (test_dctcp.py)
        assert sim.SimConfig(tcp={**dict(tcp), **ecn}).labels["tcp"] == preset["name"]
    for name in sim.TOPOLOGIES:
        topo = compose_config([f"topology={name}"]).topology
        assert (
            sim.SimConfig(topology=dict(topo), rtt_ms=100).topology == sim.SimConfig(topology=name, rtt_ms=100).topology
        )


def test_every_buffer_policy_has_a_conf_option_and_the_paper_settings_compose():
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from sweeps.api import CONF_DIR, compose_config
    from sweeps.grid import group_options

    for name in sim.POLICIES:
        policy = dict(
            compose_config(
                [f"buffer_policy={name}"]
                + (["buffer_policy.steps=[{time_s: 0, buffer_pkts: 5}]"] if name == "schedule" else [])
            ).buffer_policy
        )
        assert sim.SimConfig(buffer_policy=policy).labels["buffer_policy"] == name
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        options = group_options(GlobalHydra.instance().config_loader(), "buffer_policy")
    nested = [o for o in options if "/" in o]
    assert {"abs2010/bdp", "abs2010/stanford", "abs2010/bscl", "abs2010/abs"} <= set(nested)
    for option in nested:
        policy = dict(compose_config([f"buffer_policy={option}"]).buffer_policy)
        cfg = sim.SimConfig(buffer_policy=policy, sample_interval_s=0.02)  # ABS's T of 20 ms (section 4.1)
        assert cfg.labels["buffer_policy"] == policy["name"]
    assert dict(compose_config(["buffer_policy=abs2010/stanford"]).buffer_policy)["factor"] == 2


@pytest.mark.parametrize(
    "fields, key",
    [
        ({"bogus": 1}, "bogus"),
        ({"tcp": {"cc": "newreno", "bogus": 1}}, "tcp.bogus"),
        ({"topology": {"name": "parking_lot", "bogus": 1}}, "topology.bogus"),
        ({"topology": {"name": "parking_lot", "links": [{"bogus": 1}, {}]}}, "topology.links.0.bogus"),
        ({"topology": {"name": "parking_lot", "routes": [{"links": [0], "bogus": 1}]}}, "topology.routes.0.bogus"),
        ({"topology": {"name": "dumbbell", "links": []}}, "topology.links"),
        (
            {"buffer_policy": {"name": "schedule", "steps": [{"time_s": 1, "buffer_pkts": 2, "bogus": 3}]}},
            "buffer_policy.steps.0.bogus",
        ),
    ],
)
def test_unknown_keys_raise_at_every_level(fields, key):
    with pytest.raises(ValueError, match=rf"^{key}: unknown key"):
        sim.run(**fields)


def test_to_dict_is_the_configs_plain_form_exactly():
    """SimConfig.to_dict returns the engine's normalized config (kept when the config was built)
    where it walked the dataclasses before: the two must agree to the type, as the run_id hashes
    their JSON (1 and 1.0 differ there). Over the fuzz's random configs, every valid one."""
    import json
    import random

    from sim import fuzz
    from sim.config import to_value

    rng = random.Random(7)
    checked = 0
    for _ in range(1500):
        fields = fuzz.base_config(rng)
        for _ in range(rng.randint(1, 4)):
            fuzz.mutate(fields, rng)
        try:
            cfg = sim.SimConfig.from_fields(**fields)
        except ValueError:
            continue
        assert json.dumps(cfg.to_dict(), sort_keys=True) == json.dumps(to_value(cfg), sort_keys=True)
        d = cfg.to_dict()
        d["tcp"]["added"] = 1  # a copy: the config keeps its own
        assert "added" not in cfg.to_dict()["tcp"]
        checked += 1
    assert checked > 100, checked

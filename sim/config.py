"""The run configuration as frozen dataclasses, generated at import from the engine's declaration
(`sim.schema`), so a parameter is defined once, in Rust. `sim/config.pyi` is the same classes
written out for type checkers and editors (`python -m sim.stubs` regenerates it; a test checks it).

    SimConfig(tcp="paced", flows=40, buffer_pkts=10)
    SimConfig(tcp={"cc": "newreno", "release": "paced", "init_cwnd_pkts": 10},
              topology={"name": "parking_lot", "links": [{"rate_mbps": 50}, {"rate_mbps": 20}]})

Constructing a SimConfig validates it in the engine (a ValueError names the dotted key and what
is allowed) and fills in every default: sections given as a name or a mapping become their
variant's dataclass, lists become tuples. Field metadata holds each parameter's unit, doc and
allowed values.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional, Union

from sim import _core
from sim.schema import CONFIG, SCHEMA, union_names, union_specs, unions

CLASSES: dict[str, type] = {}
"""Every generated class by name: records (SimConfig, LinkConfig, ...) and union variants
(TcpNewreno, TopologyParkingLot, ...)."""
_VARIANTS: dict[tuple[str, str], type] = {}


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def variant_class_name(union: str, variant: str) -> str:
    return _camel(union) + _camel(variant)


def _namespace(doc: str) -> dict[str, Any]:
    # This module's name, so that instances pickle (the classes are this module's globals).
    return {"__doc__": doc, "__module__": __name__}


def _annotation(desc: dict[str, Any]) -> Any:
    kind = desc["type"]
    if kind == "optional":
        return Optional[_annotation(desc["of"])]
    if kind == "list":
        return tuple[_annotation(desc["of"]), ...]
    if kind == "record":
        return _record(desc)
    if kind == "union":
        classes = tuple(_variant(desc, v) for v in desc["variants"])
        return Union[classes] if len(classes) > 1 else classes[0]
    return {"bool": bool, "int": int, "float": float, "str": str}[kind]


def _field(spec: dict[str, Any]) -> tuple[str, Any, Any]:
    default = from_value(spec["type"], spec["default"])
    meta = {"unit": spec["unit"], "doc": spec["doc"], "allowed": spec["allowed"]}
    return spec["key"], _annotation(spec["type"]), dataclasses.field(default=default, metadata=meta)


def _record(desc: dict[str, Any], bases: tuple[type, ...] = ()) -> type:
    name = desc["name"]
    if name not in CLASSES:
        CLASSES[name] = dataclasses.make_dataclass(
            name, [_field(s) for s in desc["fields"]], bases=bases, frozen=True, namespace=_namespace(desc["doc"])
        )
    return CLASSES[name]


def _variant(u: dict[str, Any], v: dict[str, Any]) -> type:
    key = (u["name"], v["name"])
    if key not in _VARIANTS:
        name = variant_class_name(u["name"], v["name"])
        tag = (u["tag"], str, dataclasses.field(default=v["name"], metadata={"unit": "", "doc": "", "allowed": ""}))
        fields = [tag] + [_field(s) for s in u["common"] + v["fields"]]
        doc = f"{u['name']} {v['name']}: {v['doc']}"
        _VARIANTS[key] = CLASSES[name] = dataclasses.make_dataclass(
            name, fields, frozen=True, namespace=_namespace(doc)
        )
    return _VARIANTS[key]


def from_value(desc: dict[str, Any], v: Any) -> Any:
    """A normalized value (as `_core.normalize` returns it) as the generated dataclasses."""
    return _converter(desc)(v)


_CONVERTERS: dict[int, Callable[[Any], Any]] = {}


def _converter(desc: dict[str, Any]) -> Callable[[Any], Any]:
    """from_value for one schema node, built once (by id: the schema's dicts live as long as the
    process). A sweep builds a config per job; interpreting the schema took 35 us of a config's
    140. Records are filled without their __init__: a normalized value has every field."""
    conv = _CONVERTERS.get(id(desc))
    if conv is None:
        conv = _CONVERTERS[id(desc)] = _build_converter(desc)
    return conv


def _filled(cls: type, values: dict[str, Any]) -> Any:
    obj = object.__new__(cls)
    obj.__dict__.update(values)  # what the frozen __init__ would set, one object.__setattr__ each
    return obj


def _build_converter(desc: dict[str, Any]) -> Callable[[Any], Any]:
    kind = desc["type"]
    if kind == "optional":
        inner = _converter(desc["of"])
        return lambda v: None if v is None else inner(v)
    if kind == "list":
        item = _converter(desc["of"])
        return lambda v: None if v is None else tuple(item(x) for x in v)
    if kind == "record":
        cls = _record(desc)
        fields = [(s["key"], _converter(s["type"])) for s in desc["fields"]]
        return lambda v: None if v is None else _filled(cls, {k: f(v[k]) for k, f in fields})
    if kind == "union":
        specs = {s["key"]: _converter(s["type"]) for s in union_specs(desc)}
        classes = [_variant(desc, x) for x in desc["variants"]]
        variants = {x["name"]: (c, _field_names(c)) for x, c in zip(desc["variants"], classes)}
        tag = desc["tag"]

        def union(v: Any) -> Any:
            if v is None:
                return None
            cls, names = variants[v[tag]]
            values = {k: specs[k](x) for k, x in v.items()}
            return _filled(cls, values) if values.keys() == names else cls(**values)

        return union
    if kind == "float":
        return lambda v: float(v) if isinstance(v, int) and not isinstance(v, bool) else v
    return lambda v: v


_PLAIN = (str, int, float, type(None))


def to_value(x: Any) -> Any:
    """Dataclasses, mappings and sequences (OmegaConf's included) as plain dicts and lists (what
    the engine reads)."""
    if isinstance(x, _PLAIN):  # most values: skips the ABC checks below (half of a config's build)
        return x
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: to_value(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, Mapping):
        return {k: to_value(v) for k, v in x.items()}
    if isinstance(x, Sequence) and not isinstance(x, (str, bytes)):
        return [to_value(v) for v in x]
    return x


def _copy_plain(x: Any) -> Any:
    """A copy of plain dicts and lists (to_value's output); 5x faster than copy.deepcopy."""
    if isinstance(x, dict):
        return {k: _copy_plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_copy_plain(v) for v in x]
    return x


_SECTIONS = unions()
_MOVED = {
    f"{key}": f"{section}.{key}" for section, u in _SECTIONS.items() for key in [s["key"] for s in union_specs(u)]
}
_MOVED.update(
    {
        "controller": "buffer_policy",
        "controller_interval_ms": "buffer_policy.interval_ms",
        "buffer_schedule": "buffer_policy.steps",
    }
)


@functools.cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]


@functools.cache
def _top_converters() -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    return tuple((spec["key"], _converter(spec["type"])) for spec in CONFIG["fields"])


class _SimConfigBase:
    """What every SimConfig can do beyond holding its fields."""

    def __post_init__(self) -> None:
        out = _core.normalize(to_value(self))
        values = out["config"]
        self.__dict__.update({key: conv(values[key]) for key, conv in _top_converters()})
        object.__setattr__(self, "_labels", out["labels"])
        object.__setattr__(self, "_estimate", out["estimate"])  # sim.cost reads it
        # to_dict's answer: the engine's normalized config is to_value(self) exactly (a test holds
        # it); a sweep asks three times a job, and walking the dataclasses costs 70 us, a copy 10.
        object.__setattr__(self, "_plain", out["config"])

    @property
    def labels(self) -> dict[str, str | None]:
        """The label of each section: the tcp preset (or window law), the topology, the buffer policy."""
        return dict(self._labels)  # type: ignore[attr-defined]

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain dicts and lists, defaults included (a copy the caller may change)."""
        return _copy_plain(self._plain)  # type: ignore[attr-defined]

    def plain(self) -> dict[str, Any]:
        """to_dict without the copy, for reading only (hashing a run_id: a sweep validating
        100,000 jobs spent 14% of its time copying)."""
        return self._plain  # type: ignore[attr-defined]

    def validate(self) -> SimConfig:
        """A SimConfig is validated when it is built; returns self."""
        return self  # type: ignore[return-value]

    @classmethod
    def from_fields(cls, **fields: Any) -> SimConfig:
        """Builds a config from keyword fields; an unknown name is a ValueError saying where a
        known one moved (`init_cwnd_pkts` -> `tcp.init_cwnd_pkts`)."""
        known = _field_names(cls)
        for key in sorted(set(fields) - known):
            moved = _MOVED.get(key)
            hint = f"; it is {moved} now" if moved else ""
            raise ValueError(f"{key}: unknown key{hint}; allowed: {', '.join(sorted(known))}")
        return cls(**fields)  # type: ignore[return-value]


SimConfig = _record(CONFIG, bases=(_SimConfigBase,))

VARIANTS: tuple[str, ...] = tuple(union_names(_SECTIONS["tcp"]))
"""Names `tcp` accepts: presets (reno, newreno, sack, ...), then window laws."""
TOPOLOGIES: tuple[str, ...] = tuple(v["name"] for v in _SECTIONS["topology"]["variants"])
POLICIES: tuple[str, ...] = tuple(v["name"] for v in _SECTIONS["buffer_policy"]["variants"])
ADAPTIVE_POLICIES: tuple[str, ...] = tuple(SCHEMA["adaptive_policies"])
"""The policies that act during a run (controllers); the others are static rules, resolved at start."""
"""Names `buffer_policy` accepts: static rules and adaptive controllers."""

globals().update(CLASSES)

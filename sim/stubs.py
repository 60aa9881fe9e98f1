"""Writes `sim/config.pyi`, the type stub of the dataclasses `sim.config` generates at import, from
the same schema: `python -m sim.stubs`, run by `make install` (not committed: it follows the
registries; a test checks it is current)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sim.config import variant_class_name
from sim.schema import CONFIG, union_names

STUB = Path(__file__).with_name("config.pyi")


def _type(desc: dict[str, Any]) -> str:
    kind = desc["type"]
    if kind == "optional":
        return f"{_type(desc['of'])} | None"
    if kind == "list":
        return f"tuple[{_type(desc['of'])}, ...]"
    if kind == "record":
        return desc["name"]
    if kind == "union":
        return " | ".join(variant_class_name(desc["name"], v["name"]) for v in desc["variants"])
    return {"bool": "bool", "int": "int", "float": "float", "str": "str"}[kind]


def _fields(specs: list[dict[str, Any]]) -> list[str]:
    out = []
    for s in specs:
        unit = f" [{s['unit']}]" if s["unit"] else ""
        allowed = f" Allowed: {s['allowed']}." if s["allowed"] else ""
        out += [f"    {s['key']}: {_type(s['type'])} = ...", f'    """{s["doc"]}{unit}{allowed}"""']
    return out


def _classes(desc: dict[str, Any], seen: dict[str, list[str]]) -> None:
    """Collects the class definitions of desc and everything it contains, inner ones first."""
    kind = desc["type"]
    if kind in ("optional", "list"):
        return _classes(desc["of"], seen)
    if kind == "record":
        for s in desc["fields"]:
            _classes(s["type"], seen)
        if desc["name"] not in seen:
            base = "(_SimConfigMethods)" if desc["name"] == "SimConfig" else ""
            seen[desc["name"]] = [
                "@dataclass(frozen=True)",
                f"class {desc['name']}{base}:",
                f'    """{desc["doc"]}"""',
                *_fields(desc["fields"]),
            ]
    if kind == "union":
        for v in desc["variants"]:
            for s in desc["common"] + v["fields"]:
                _classes(s["type"], seen)
            name = variant_class_name(desc["name"], v["name"])
            if name not in seen:
                tag = [f"    {desc['tag']}: str = ...", f'    """Always {v["name"]!r}."""']
                seen[name] = [
                    "@dataclass(frozen=True)",
                    f"class {name}:",
                    f'    """{desc["name"]} {v["name"]}: {v["doc"]}"""',
                    *tag,
                    *_fields(desc["common"] + v["fields"]),
                ]


HEADER = '''"""Type stub of the dataclasses `sim.config` generates from the engine's schema.
Written by `python -m sim.stubs`; do not edit."""

from dataclasses import dataclass
from typing import Any

class _SimConfigMethods:
    @property
    def labels(self) -> dict[str, str | None]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def plain(self) -> dict[str, Any]: ...
    def validate(self) -> SimConfig: ...
    @classmethod
    def from_fields(cls, **fields: Any) -> SimConfig: ...
'''


def render() -> str:
    classes: dict[str, list[str]] = {}
    _classes(CONFIG, classes)
    body = "\n\n".join("\n".join(lines) for lines in classes.values())
    sections = [s for s in CONFIG["fields"] if s["type"].get("of", s["type"])["type"] == "union"]
    names = {s["key"]: union_names(s["type"].get("of", s["type"])) for s in sections}
    consts = "\n".join(f"{c}: tuple[str, ...]" for c in ("VARIANTS", "TOPOLOGIES", "POLICIES"))
    note = "\n".join(f"# {k} accepts a name ({', '.join(v)}) or a mapping as well" for k, v in names.items())
    return (
        f"{HEADER}\n{note}\n\n{body}\n\nCLASSES: dict[str, type]\n{consts}\n\n"
        "def from_value(desc: dict[str, Any], v: Any) -> Any: ...\ndef to_value(x: Any) -> Any: ...\n"
        "def variant_class_name(union: str, variant: str) -> str: ...\n"
    )


if __name__ == "__main__":
    text = render()
    if "--check" in sys.argv:
        sys.exit(0 if STUB.exists() and STUB.read_text() == text else f"{STUB} is out of date: python -m sim.stubs")
    STUB.write_text(text)
    print(f"wrote {STUB}")

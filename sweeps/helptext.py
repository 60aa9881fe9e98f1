"""`python -m sweeps --help`: the config groups, the composed config, and every key with its unit,
meaning and allowed values, from the engine's declarations (`sim.schema`) and the sweep's own
dataclasses (their attribute docstrings), so that nothing is written twice (docs/sweeps.md)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import typing
from typing import Any

from sim import schema as sim_schema

WIDTH = 100


def attribute_docs(cls: type) -> dict[str, str]:
    """A dataclass's attribute docstrings (the string right after a field), by field name: Python
    keeps no such docstring at run time, so they are read from the source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs = {}
    for field, nxt in zip(body, body[1:]):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            docs[field.target.id] = " ".join(nxt.value.value.split())
    return docs


def _line(key: str, unit: str, doc: str, allowed: str = "") -> str:
    head = f"{key} [{unit}]" if unit else key
    text = f"{head}: {doc}" + (f" Allowed: {allowed}." if allowed else "")
    return textwrap.fill(text, WIDTH, subsequent_indent="    ")


def _spec_lines(spec: dict[str, Any], prefix: str, seen: dict[str, str], where: str = "") -> list[str]:
    """A key's entry and those of the keys under it; a union met before (`seen`: its name -> the
    key it was listed under) is referred to, not listed again."""
    key = f"{prefix}{spec['key']}"
    t = spec["type"]
    while t["type"] == "optional":
        t = t["of"]
    doc = spec["doc"] + (f" ({where})" if where else "")
    if t["type"] == "union":
        if seen.setdefault(t["name"], key) != key:
            return [_line(key, "", f"{doc} Its keys are those of {seen[t['name']]} (above).")]
        return [_line(key, "", doc)] + _union_lines(t, f"{key}.", seen)
    if t["type"] == "record":
        return [_line(key, "", doc)] + [ln for s in t["fields"] for ln in _spec_lines(s, f"{key}.", seen)]
    if t["type"] == "list" and t["of"]["type"] in ("record", "union"):
        inner = {"key": "N", "type": t["of"], "doc": "an element", "unit": "", "allowed": ""}
        return [_line(key, "", doc)] + _spec_lines(inner, f"{key}.", seen)[1:]
    return [_line(key, spec.get("unit", ""), doc, spec.get("allowed", ""))]


def _union_lines(u: dict[str, Any], prefix: str, seen: dict[str, str]) -> list[str]:
    """A union's tag, its common keys, then each key of its variants with the variants it is in."""
    tag = u["tag"]
    kinds = "; ".join(f"{v['name']}: {v['doc']}" for v in u["variants"])
    out = [_line(f"{prefix}{tag}", "", f"the kind: {kinds}")]
    if u.get("presets"):
        group = prefix.rstrip(".")
        presets = "; ".join(f"{p['name']}: {p['doc']}" for p in u["presets"])
        out.append(_line(f"{group}=PRESET", "", f"a preset of these keys: {presets}"))
    out += [ln for s in u["common"] for ln in _spec_lines(s, prefix, seen)]
    kinds_of: dict[str, list[str]] = {}
    specs: dict[str, dict[str, Any]] = {}
    for v in u["variants"]:
        for s in v["fields"]:
            kinds_of.setdefault(s["key"], []).append(v["name"])
            specs.setdefault(s["key"], s)
    for key, names in kinds_of.items():
        out += _spec_lines(specs[key], prefix, seen, f"{tag}={', '.join(names)}")
    return out


def _sweep_lines(cls: type, prefix: str = "") -> list[str]:
    docs = attribute_docs(cls)
    out = []
    for f in dataclasses.fields(cls):
        t = typing.get_type_hints(cls)[f.name]
        if dataclasses.is_dataclass(t):
            out += _sweep_lines(t, f"{prefix}{f.name}.")
        else:
            out.append(_line(f"{prefix}{f.name}", "", docs.get(f.name, "")))
    return out


def keys_text(sweep_keys: type) -> str:
    """Every key of a job, one entry each: the engine's, then the sweep's own (`sweep_keys`, the
    dataclass `sweeps.schema.SweepKeys`, handed in: that module registers this help)."""
    seen = {u["name"]: key for key, u in sim_schema.unions().items()}  # listed in full at the top level
    engine = [ln for s in sim_schema.CONFIG["fields"] for ln in _spec_lines(s, "", seen)]
    preset = _line("experiment", "", "A preset of conf/experiment/ (+experiment=NAME; run its grid with -m).")
    return "\n".join(["-- the simulation --", *engine, "", "-- the sweep --", preset, *_sweep_lines(sweep_keys)])


def _literal(text: str) -> str:
    """Text that Hydra's help template keeps as it is: `$` doubled for its string.Template, and
    no `${` for OmegaConf to interpolate."""
    return text.replace("${", "$ {").replace("$", "$$")


def groups_text(groups: dict[str, list[str]]) -> str:
    """The config groups and their options (Hydra's own list would show conf/atlas/, which is
    `analysis atlas`'s, and say nothing of what an option is)."""
    out = []
    for group, options in groups.items():
        out.append(textwrap.fill(f"{group}: {', '.join(options)}", WIDTH, subsequent_indent="    "))
    tcp = sim_schema.unions()["tcp"]
    presets = {p["name"] for p in tcp["presets"]}
    kinds = [v["name"] for v in tcp["variants"] if v["name"] not in presets]
    laws = f"{', '.join(kinds)} {'is a window law' if len(kinds) == 1 else 'are window laws'}"
    note = f"(tcp: each preset is described under tcp=PRESET below; {laws} by itself, with the common keys' defaults.)"
    return "\n".join([*out, textwrap.fill(note, WIDTH)])


def help_node(sweep_keys: type, groups: dict[str, list[str]]) -> dict[str, str]:
    """Hydra's `hydra/help` config: the config groups, the composed config, then every key."""
    return {
        "app_name": "buffersweep",
        "header": "buffersweep: one simulation per job; -m makes a grid of every comma list (docs/sweeps.md).\n",
        "footer": "Hydra's own flags: --hydra-help. Column meanings: python -m analysis schema.\n",
        "template": (
            "${hydra.help.header}\n== Configuration groups ==\nCompose your configuration from those groups "
            "(group=option)\n\n" + _literal(groups_text(groups)) + "\n\n== Config ==\nOverride anything in the config "
            "(foo.bar=value)\n\n$CONFIG\n== Keys ==\n" + _literal(keys_text(sweep_keys)) + "\n\n${hydra.help.footer}"
        ),
    }

"""The experiment grid, expanded lazily.

Hydra composes the config once per combination of config-group choices (e.g. once per `tcp`
variant); each job's scalar overrides are then applied to that resolved base, typed by
`sweeps.schema`. A 100,000-point grid is a few hundred bytes until it is iterated.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator, Sequence
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf

from sweeps.errors import UsageError
from sweeps.schema import convert


def set_path(job: dict[str, Any], key: str, value: Any) -> None:
    """Sets a dotted key in a job's config, copying what it changes (the job shares its base).
    A list is indexed by number (`topology.links.1.buffer_pkts`). A missing mapping is created,
    so that the engine's validation names the key (`topology.links: unknown key for topology
    dumbbell`); an index past a list's end is a UsageError."""
    *parents, leaf = key.split(".")
    node: Any = job
    for p in parents:
        if isinstance(node, list):
            if not p.isdigit() or int(p) >= len(node):
                raise UsageError(f"{key}: {p} is not an index of a list of {len(node)}")
            node[int(p)] = _copy(node[int(p)])
            node = node[int(p)]
        else:
            node[p] = _copy(node.get(p)) if node.get(p) is not None else {}
            node = node[p]
    if isinstance(node, list):
        if not leaf.isdigit() or int(leaf) >= len(node):
            raise UsageError(f"{key}: {leaf} is not an index of a list of {len(node)}")
        node[int(leaf)] = value
    else:
        node[leaf] = value


def _copy(x: Any) -> Any:
    if isinstance(x, dict):
        return dict(x)
    if isinstance(x, list):
        return list(x)
    return x


def _fmt(value: Any) -> str:
    """A parsed override value written back in Hydra's override grammar (lists and dicts
    included, e.g. `traffic=[{kind:udp,flows:2}]`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(_fmt(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str) and (value == "" or any(c in value for c in " ,:[]{}()='\"\\")):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return str(value)


class Axis:
    def __init__(self, key: str, values: list[Any], is_group: bool, prefix: str = "") -> None:
        self.key, self.values, self.is_group, self.prefix = key, values, is_group, prefix

    def override(self, i: int) -> str:
        return f"{self.prefix}{self.key}={_fmt(self.values[i])}"


class Grid(Sequence[list[str]]):
    """The cartesian product of the axes; item i is job i's override list."""

    def __init__(self, axes: list[Axis], loader: Any, master: DictConfig) -> None:
        self.axes = axes
        self._loader = loader
        self._master = master
        self._bases: dict[tuple[int, ...], dict[str, Any]] = {}
        self._interpolated: dict[tuple[int, ...], bool] = {}
        self._fixed = [a.override(0) for a in axes if len(a.values) == 1]
        self._group_axes = [k for k, a in enumerate(axes) if a.is_group and len(a.values) > 1]
        self._scalar_axes = [k for k, a in enumerate(axes) if not a.is_group and len(a.values) > 1]

    def __len__(self) -> int:
        return math.prod(len(a.values) for a in self.axes)

    def _digits(self, i: int) -> list[int]:
        digits = []
        for a in reversed(self.axes):
            i, d = divmod(i, len(a.values))
            digits.append(d)
        return digits[::-1]

    def __getitem__(self, i: int) -> list[str]:  # type: ignore[override]
        if not 0 <= i < len(self):
            raise IndexError(i)
        return [a.override(d) for a, d in zip(self.axes, self._digits(i))]

    def swept(self) -> dict[str, list[Any]]:
        """The multi-valued axes (what varies across jobs)."""
        return {a.key: a.values for a in self.axes if len(a.values) > 1}

    def _base(self, choice: tuple[int, ...]) -> dict[str, Any]:
        base = self._bases.get(choice)
        if base is None:
            overrides = self._fixed + [self.axes[k].override(d) for k, d in zip(self._group_axes, choice)]
            try:
                cfg = self._loader.load_sweep_config(self._master, overrides)
            except HydraException as e:
                raise UsageError(str(e).splitlines()[0]) from None
            # Unresolved: an interpolation may read a swept scalar (`rtt_ms: ${add:30,${flows}}`), which
            # `jobs` sets before resolving.
            container = OmegaConf.to_container(cfg, resolve=False)
            assert isinstance(container, dict)
            container.pop("hydra", None)
            base = self._bases[choice] = container
            self._interpolated[choice] = "${" in json.dumps(container, default=str)
        return base

    def jobs(self) -> Iterator[tuple[int, list[str], dict[str, Any]]]:
        """Yields (index, overrides, resolved job config as a plain dict), in grid order."""
        ranges = [range(len(a.values)) for a in self.axes]
        for i, digits in enumerate(itertools.product(*ranges)):
            yield i, [a.override(d) for a, d in zip(self.axes, digits)], self._job(digits)

    def job_at(self, i: int) -> dict[str, Any]:
        """Job i's resolved config, without building the ones before it."""
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._job(self._digits(i))

    def _job(self, digits: Sequence[int]) -> dict[str, Any]:
        choice = tuple(digits[k] for k in self._group_axes)
        job = dict(self._base(choice))
        for k in self._scalar_axes:
            a = self.axes[k]
            set_path(job, a.key, a.values[digits[k]])
        return resolved(job) if self._interpolated[choice] else job


def group_options(loader: Any, group: str, prefix: str = "") -> list[str]:
    """A config group's options, those of its subgroups included as `sub/option`
    (`buffer_policy=abs2010/stanford`)."""
    path = f"{group}/{prefix}".rstrip("/")
    out = [prefix + o for o in loader.get_group_options(path)]
    for sub in loader.list_groups(path):
        out += group_options(loader, group, f"{prefix}{sub}/")
    return out


def resolved(job: dict[str, Any]) -> dict[str, Any]:
    """A job config with its interpolations resolved (through OmegaConf: only for bases that have
    any, since a sweep may hold 100,000 jobs)."""
    out = OmegaConf.to_container(OmegaConf.create(job), resolve=True)
    assert isinstance(out, dict)
    return out


def build_grid(arguments: list[str], loader: Any, master: DictConfig) -> Grid:
    """Parses sweeper params + command-line overrides (the later wins per key) into a Grid.
    Raises UsageError naming the key for unknown keys, bad values and empty axes."""
    groups = {g for g in loader.list_groups("") if g != "hydra"}
    parser = OverridesParser.create(config_loader=loader)
    try:
        parsed: list[Override] = parser.parse_overrides(arguments)
    except HydraException as e:
        raise UsageError(str(e).splitlines()[0]) from None
    by_key: dict[str, Axis] = {}
    for o in parsed:
        key = o.key_or_group
        if key.startswith("hydra.") or key == "hydra":
            continue  # Hydra's own settings, already applied to the master config
        if o.is_sweep_override():
            if not o.is_discrete_sweep():
                raise UsageError(f"{key}: only lists, choice() and range() sweeps are supported")
            values = list(o.sweep_iterator())
        else:
            values = [o.value()]
        is_group = key in groups
        if is_group:
            options = group_options(loader, key)
            for v in values:
                if v not in options:
                    raise UsageError(f"{key}: unknown option {v!r}; allowed: {', '.join(sorted(options))}")
        else:
            values = [convert(key, v) for v in values]
        if not values:
            raise UsageError(f"empty grid: {key} has no values")
        # Optional groups (experiment) need '+' when not in the defaults list.
        prefix = "+" if (o.is_add() or (is_group and key == "experiment")) else ""
        by_key[key] = Axis(key, values, is_group, prefix)
    return Grid(list(by_key.values()), loader, master)

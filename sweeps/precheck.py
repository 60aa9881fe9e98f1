"""Checks command-line overrides before Hydra runs, so that a typo or a bad value gives one
line naming the key and what is allowed, exit code 2, and nothing is written (Hydra's own
messages are multi-line and exit 1)."""

from __future__ import annotations

from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException

from sweeps.errors import exit_usage
from sweeps.schema import convert

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def group_options() -> dict[str, list[str]]:
    return {d.name: sorted(p.stem for p in d.glob("*.yaml")) for d in CONF_DIR.iterdir() if d.is_dir()}


def precheck(argv: list[str]) -> None:
    args = [a for a in argv if not a.startswith("-")]
    try:
        overrides = OverridesParser.create().parse_overrides(args)
    except HydraException as e:
        exit_usage(str(e).splitlines()[0])
    groups = group_options()
    for o in overrides:
        key = o.key_or_group
        if key == "hydra" or key.startswith("hydra.") or o.is_delete():
            continue
        values = list(o.sweep_iterator()) if o.is_sweep_override() and o.is_discrete_sweep() else [o.value()]
        if o.is_sweep_override() and not values:
            exit_usage(f"empty grid: {key} has no values")
        if key in groups:
            for v in values:
                if v not in groups[key]:
                    exit_usage(f"{key}: unknown option {v!r}; allowed: {', '.join(groups[key])}")
            continue
        if o.is_sweep_override() and not o.is_discrete_sweep():
            exit_usage(f"{key}: only lists, choice() and range() sweeps are supported")
        for v in values:
            try:
                convert(key, v)
            except ValueError as e:
                exit_usage(str(e))

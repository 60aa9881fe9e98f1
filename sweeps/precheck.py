"""Checks command-line overrides before Hydra runs, so that a typo or a bad value gives one
line naming the key and what is allowed, exit code 2, and nothing is written (Hydra's own
messages are multi-line and exit 1).

The command line is split by Hydra's own argument parser, so every flag of `--help` (`--cfg
job`, `-c`, `--info`, `-cn`, `-cp`, `--config-dir`, `-sc`) keeps its meaning and only the
overrides are checked. Returns the argv to hand to Hydra: an `experiment=NAME` without its
`+` gets one (the group is optional, and Hydra's refusal says so in five lines)."""

from __future__ import annotations

import difflib

from hydra._internal.utils import get_args_parser
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Glob
from hydra.errors import HydraException
from omegaconf import OmegaConf

from sweeps import schema
from sweeps.errors import exit_usage
from sweeps.schema import CONF_DIR, OPERATIONAL, convert

SUPPORTED_HYDRA_GROUPS = (
    "hydra/job_logging",
    "hydra/hydra_logging",
    "hydra/help",
    "hydra/hydra_help",
    "hydra/output",
    "hydra/env",
    "hydra/callbacks",
)
"""`hydra/...` groups that may be overridden; the launcher and sweeper are buffersweep's own."""


def group_options() -> dict[str, list[str]]:
    """Each config group's options (`schema.config_groups`)."""
    return schema.config_groups()


def _group_values(o, key: str, options: list[str]) -> list[str]:
    if o.is_sweep_override() and isinstance(o.value(), Glob):
        return o.value().filter(options)  # glob() needs Hydra's config loader, not yet set here
    return list(o.sweep_iterator()) if o.is_sweep_override() and o.is_discrete_sweep() else [o.value()]


def _check_hydra_group(key: str) -> None:
    if key.startswith(("hydra/launcher", "hydra/sweeper")):
        exit_usage(
            f"{key}: buffersweep runs sweeps with its own sweeper and Ray launcher (grid validation, "
            "resume, caching, one writer per results_dir); configure them with ray.* keys instead"
        )
    if not key.startswith(SUPPORTED_HYDRA_GROUPS):
        exit_usage(f"{key}: unknown Hydra group; allowed: {', '.join(SUPPORTED_HYDRA_GROUPS)}")


def preset_grid(name: str) -> list[str]:
    """The axes a preset sweeps (its hydra.sweeper.params), if any."""
    params = OmegaConf.select(OmegaConf.load(CONF_DIR / "experiment" / f"{name}.yaml"), "hydra.sweeper.params")
    return list(params or {})


def _check_presets(names: list[str], multirun: bool) -> None:
    grids = {n: preset_grid(n) for n in names}
    gridded = [n for n, axes in grids.items() if axes]
    if gridded and not multirun:
        n = gridded[0]
        exit_usage(f"experiment: {n} is a grid ({' x '.join(grids[n])}); add -m (--multirun) to run it")
    if len(names) > 1 and gridded:
        exit_usage(
            f"experiment: {', '.join(gridded)} have grids of their own, which one sweep cannot combine "
            "yet; run one preset per command"
        )


def precheck(argv: list[str]) -> list[str]:
    if "--yes" in argv or "-y" in argv:  # ours, not Hydra's: confirm a big grid up front
        argv = [a for a in argv if a not in ("--yes", "-y")] + ["confirm=false"]
    args = get_args_parser().parse_args(argv)
    modes = [
        m
        for m, on in (
            ("--multirun", args.multirun),
            ("--cfg", args.cfg),
            ("--info", args.info),
            ("--shell-completion", args.shell_completion),
            ("--run", args.run),
        )
        if on
    ]
    if len(modes) > 1:
        exit_usage(
            f"{' and '.join(modes)}: only one of --run, --multirun, --cfg, --info and --shell-completion can be given"
        )
    if args.shell_completion:
        return argv  # `install=bash`, `query=...` are the completion's own arguments
    try:
        overrides = OverridesParser.create().parse_overrides(args.overrides)
    except HydraException as e:
        exit_usage(str(e).splitlines()[0])
    groups = group_options()
    fixed = list(argv)
    for text, o in zip(args.overrides, overrides):
        key = o.key_or_group
        if key.startswith("hydra/"):
            _check_hydra_group(key)
            continue
        if key == "hydra" or key.startswith("hydra.") or o.is_delete():
            continue
        if key in groups:
            values = _group_values(o, key, groups[key])
        else:
            values = list(o.sweep_iterator()) if o.is_sweep_override() and o.is_discrete_sweep() else [o.value()]
        if o.is_sweep_override() and not values:
            exit_usage(f"empty grid: {key} has no values")
        if o.is_sweep_override() and not args.multirun and not (args.cfg or args.info):
            exit_usage(f"{key}: {text!r} is a sweep; add -m (--multirun) to run every value")
        if o.is_sweep_override() and key.startswith(OPERATIONAL):
            exit_usage(
                f"{key}: cannot be swept (it sets how the sweep runs, not what it simulates); run one sweep per value"
            )
        if key in groups:
            for v in values:
                if v not in groups[key]:
                    renamed = schema.SECTIONS.get(key, {}).get("renamed", {})
                    if v in renamed:
                        exit_usage(f"{key}: {v!r} was renamed: use {key}={renamed[v]}")
                    close = difflib.get_close_matches(str(v), groups[key], n=1)
                    hint = f" (did you mean {close[0]}?)" if close else ""
                    exit_usage(f"{key}: unknown option {v!r}{hint}; allowed: {', '.join(groups[key])}")
            if key == "experiment":
                _check_presets(values, args.multirun or bool(args.cfg or args.info))
                if not o.is_add() and not o.is_force_add():
                    fixed[fixed.index(text)] = "+" + text
            continue
        if o.is_sweep_override() and not o.is_discrete_sweep():
            exit_usage(f"{key}: only lists, choice(), range() and glob() sweeps are supported")
        for v in values:
            try:
                convert(key, v)
            except ValueError as e:
                exit_usage(str(e))
    return fixed

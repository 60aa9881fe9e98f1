"""What a simulator backend is: a name, a version, a check of what it can mirror, and a run that
returns the engine's tables (`sim.result`'s schemas) with NULL for what it does not measure.

A backend is one module of `sweeps/backends/` plus one line of `BACKENDS` (its `__init__`), as a
window law is one file plus one registry line in the engine. Workers call `run`; the driver calls
`missing`, `version` and `check` for every job before any job starts, so a run a backend cannot
mirror, or a simulator that is not installed, is refused up front with one line."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

import sim
from sim import SimConfig
from sim.config import ADAPTIVE_POLICIES
from sim.result import (
    CLASSES_SCHEMA,
    CONFIG_FIELDS,
    CONTROL_SCHEMA,
    FLOWS_SCHEMA,
    LINKS_SCHEMA,
    SUMMARY_METRICS,
    TIMESERIES_SCHEMA,
    config_row,
    table,
)

DETAIL_SCHEMAS: dict[str, pa.Schema] = {
    "timeseries": TIMESERIES_SCHEMA,
    "flows": FLOWS_SCHEMA,
    "links": LINKS_SCHEMA,
    "classes": CLASSES_SCHEMA,
    "control": CONTROL_SCHEMA,
}
"""The per-run detail tables every backend returns (the store's DETAIL_TABLES)."""


@dataclass(frozen=True)
class BackendResult:
    """One run's figures: the summary metrics (`sim.result.SUMMARY_METRICS`, None where the
    backend does not measure one) and the detail tables in the engine's schemas."""

    metrics: dict[str, Any]
    details: dict[str, pa.Table]

    def __post_init__(self) -> None:
        unknown = set(self.metrics) - set(SUMMARY_METRICS)
        if unknown:  # a typo would otherwise be a silently missing column
            raise ValueError(f"metrics the summary schema lacks: {sorted(unknown)}")
        if set(self.details) != set(DETAIL_SCHEMAS):
            raise ValueError(f"detail tables must be {sorted(DETAIL_SCHEMAS)}, got {sorted(self.details)}")
        # Every metric, in the engine's order; those not given are NULL (not measured).
        object.__setattr__(self, "metrics", {k: self.metrics.get(k) for k in SUMMARY_METRICS})


CONTRACT_VERSION = "0.21.0"
"""The engine's part in what another backend runs: the config's fields and meaning, the RTTs
and start times the engine draws for a seed (`records.drawn_flows`), and the buffer its static
rules resolve. Other backends' run_ids, every run's config_id, and those backends' rows'
`engine_version` key on it rather than on ENGINE_VERSION, so an engine change that leaves it
alone keeps their slow runs cached and paired. Bump it, to the engine version of the day, when
it changes; tests/sweeps/test_backends.py holds it to a digest of those inputs."""


def code_digest(module: Path, scenario: Path) -> str:
    """A digest of a simulator's scenario file and of its mapping module's code without docstrings
    and comments: what a backend's hand-kept scenario version stands for (`ns2.SCRIPT_VERSION`,
    `ns3.SCENARIO_VERSION`; tests/sweeps/test_backends.py holds each to it)."""
    tree = ast.parse(module.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            kept = [b for b in body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
            node.body = kept or [ast.Pass()]  # type: ignore[attr-defined]
    return hashlib.sha256(scenario.read_bytes() + ast.dump(tree).encode()).hexdigest()[:12]


_KEY_OF_ECHO = {f.name: f.name.removeprefix("config_") for f in CONFIG_FIELDS if f.name.startswith("config_")}


def config_values(cfg: SimConfig) -> dict[str, Any]:
    """`config_row(cfg)` with each column named as the config names it: `buffer_pkts` for the
    results' `config_buffer_pkts` (`sim.schema.echo_column`), as backends map and name them."""
    return {_KEY_OF_ECHO.get(k, k): v for k, v in config_row(cfg).items()}


ENGINE_MODEL_ONLY = {("tcp", "tsecr_rtt")}
"""Parameters of the engine's own model of a sender, which another backend runs its own way (the
kernel's bbr takes Linux's RTT samples whatever the engine's tcp.tsecr_rtt): no backend refuses
them, and they are hashed only into an engine run's run_id (`sweeps.schema._ids`). Parameters
older than the stored kernel runs (tcp.handshake, tcp.tso_defer) stay hashed, as those runs were."""


def check_unmapped(backend: str, row: dict[str, Any], mapped: Iterable[str]) -> None:
    """ValueError naming the first config column (of `row`, a `config_values`) that is not in
    `mapped` and differs from its default, or its tcp preset's: what a backend cannot mirror (an
    ENGINE_MODEL_ONLY parameter, which it runs its own way, never is). A static buffer rule is
    mirrored (as the buffer the engine resolves, `with_resolved_buffer`) where `buffer_pkts` is."""
    default = preset_row(row["tcp"])  # a law's parameters keep its preset's values
    skip = set(mapped) | set(OUTPUT_ONLY) | {f"{section}_{key}" for section, key in ENGINE_MODEL_ONLY}
    if "buffer_pkts" in skip and row["buffer_policy"] not in ADAPTIVE_POLICIES:
        skip |= {k for k in row if k.startswith("buffer_policy")}
    for key, value in row.items():
        if key not in skip and value != default[key]:
            raise ValueError(
                f"{key}: the {backend} backend supports only the default ({default[key]!r}), got {value!r}"
            )


def preset_row(tcp: str) -> dict[str, Any]:
    """The config row of tcp preset `tcp` with every other default. A law that needs ECN (DCTCP)
    is refused without it, so its row is taken with ECN on (`tcp_ecn`, which every backend that
    runs such a law maps)."""
    try:
        return config_values(SimConfig(tcp=tcp))
    except ValueError as e:
        if not str(e).startswith("tcp.ecn:"):
            raise
        preset = next(p for p in sim.schema.unions()["tcp"]["presets"] if p["name"] == tcp)
        return config_values(SimConfig(tcp={**preset["set"], "ecn": True}))


def with_resolved_buffer(cfg: SimConfig, drawn: sim.SimResult) -> SimConfig:
    """cfg with its static buffer rule replaced by the bottleneck buffer the engine resolved for
    it (link 0 of `drawn`, an engine run of cfg): what a backend without the rules simulates."""
    if cfg.buffer_policy.name == "fixed":
        return cfg
    b = int(drawn.links["buffer_pkts"][0].as_py())
    return dataclasses.replace(cfg, buffer_policy="fixed", buffer_pkts=b)


OUTPUT_ONLY = ("engine_version", "trace_max_events", "trace_start_s")
"""Config columns that only shape the engine's outputs: no backend needs to mirror them."""


def detail_table(name: str, columns: dict[str, list]) -> pa.Table:
    """A detail table with the engine's schema; columns not given are NULL (not measured)."""
    schema = DETAIL_SCHEMAS[name]
    n = len(next(iter(columns.values()))) if columns else 0
    return table({f.name: columns.get(f.name, [None] * n) for f in schema}, schema)


@dataclass(frozen=True)
class Backend:
    name: str
    doc: str
    install: str
    """The command that installs the simulator (the refusal when it is missing names it)."""
    missing: Callable[[], str | None]
    """None if the simulator can run here, else why not (one line)."""
    version: Callable[[], str]
    """The simulator's version and that of our mapping to it (in every run_id of this backend)."""
    check: Callable[[SimConfig], None]
    """Raises ValueError naming the first field of the config the backend cannot mirror."""
    run: Callable[..., BackendResult]
    """run(cfg), or run(cfg, limits) for a backend that `takes_limits`."""
    takes_limits: bool = False
    """Its run stops itself at `sim.Limits.job_timeout_s` (the engine; ns-2 and ns-3 do not)."""
    resources: dict[str, Any] = field(default_factory=lambda: {"num_cpus": 1})
    """Ray resources of one task running this backend's jobs."""
    whole_node: bool = False
    """Its task holds every CPU of a node (`sweeps.drive`): a real-time run shares the CPU with no
    other job, since one beside it delays its timers (docs/kernel.md, "Timing")."""

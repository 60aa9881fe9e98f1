"""The typed schema of a sweep config and its translation, once per job, into the engine's
`sim.SimConfig`. The Hydra structured configs are generated from the engine's declaration
(`sim.schema`): `SweepConfig` holds every flat simulation parameter with the engine's default,
the sections (`tcp`, `topology`, `buffer_policy`) are config groups whose options extend one
generated schema per variant (`schema_tcp_newreno`, ...), and the sweep's own keys follow."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import json
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, OmegaConf

import sim
from sim.config import variant_class_name
from sim.schema import CONFIG, leaf_keys, lookup, union_specs, unions
from sweeps import backends
from sweeps.backends.base import CONTRACT_VERSION, ENGINE_MODEL_ONLY
from sweeps.errors import UsageError, python_cmd
from sweeps.helptext import help_node


def _hydra_type(desc: dict[str, Any]) -> Any:
    kind = desc["type"]
    if kind == "optional":
        return Optional[_hydra_type(desc["of"])]
    if kind == "list":
        # One value may stand for a list of it (precision.halfwidth=0.005): the engine converts.
        return Any if desc.get("one") else List[_hydra_type(desc["of"])]
    if kind == "record":
        return hydra_record(desc)
    if kind == "union":
        return Any
    return {"bool": bool, "int": int, "float": float, "str": str}[kind]


def _hydra_default(desc: dict[str, Any], value: Any) -> Any:
    """A default as Hydra needs it: a factory for lists and records."""
    kind = desc["type"]
    if kind == "optional":
        return None if value is None else _hydra_default(desc["of"], value)
    if kind == "list":
        return field(default_factory=lambda: [_plain(desc["of"], v) for v in value])
    if kind == "record":
        cls = hydra_record(desc)
        return field(
            default_factory=lambda: cls(**{s["key"]: _plain(s["type"], value[s["key"]]) for s in desc["fields"]})
        )
    return value


def _plain(desc: dict[str, Any], value: Any) -> Any:
    d = _hydra_default(desc, value)
    return d.default_factory() if isinstance(d, dataclasses.Field) else d  # type: ignore[misc]


def _spec_field(spec: dict[str, Any]) -> tuple[str, Any, Any]:
    t = spec["type"]
    inner = t["of"] if t["type"] == "optional" else t
    if inner["type"] == "union":  # a config group: its option brings the value
        return spec["key"], Any, None if t["type"] == "optional" else MISSING
    return spec["key"], _hydra_type(t), _hydra_default(t, spec["default"])


_RECORDS: dict[str, type] = {}


def hydra_record(desc: dict[str, Any]) -> type:
    if desc["name"] not in _RECORDS:
        _RECORDS[desc["name"]] = dataclasses.make_dataclass(
            f"{desc['name']}Conf", [_spec_field(s) for s in desc["fields"]]
        )
    return _RECORDS[desc["name"]]


def hydra_variant(u: dict[str, Any], v: dict[str, Any]) -> type:
    """The structured config of one variant of a section: its tag, common and own parameters."""
    fields = [(u["tag"], str, v["name"])] + [_spec_field(s) for s in u["common"] + v["fields"]]
    return dataclasses.make_dataclass(f"{variant_class_name(u['name'], v['name'])}Conf", fields)


SECTIONS: dict[str, dict[str, Any]] = unions()
"""The sections of a run config: config groups whose options are the variants (and presets)."""
SIM_KEYS: tuple[str, ...] = tuple(s["key"] for s in CONFIG["fields"])


@dataclass
class MlflowConf:
    enabled: bool = True
    """Log every run to MLflow (a parent run per sweep, a child per job); false: Parquet only."""
    tracking_uri: Optional[str] = None
    """Default: $MLFLOW_TRACKING_URI, else mlflow.db in the current directory, beside results/."""
    experiment: Optional[str] = None
    """Default: the preset's `name`, else hydra.job.name."""
    run_plots: bool = False
    """Also a PNG of each child run's time series (`timeseries.png`): a fraction of a second of
    plotting per run, so for small sweeps."""


@dataclass
class RayConf:
    address: Optional[str] = None
    """None: an embedded local Ray; else an existing cluster ("auto", "host:6379", ...)."""
    num_cpus: Optional[int] = None
    """CPUs of the embedded Ray; None = every core."""
    batch_size: int = 0
    """Jobs per Ray task; 0 = adaptive (aim at ~0.5 s per task)."""
    max_in_flight: int = 0
    """Tasks submitted and not yet collected; 0 = 4 x cluster CPUs."""
    max_retries: int = 3
    """Resubmissions of a task whose worker or node died."""


@dataclass
class DebugConf:
    """Test-only fault injection: `field:value` of a sim field (e.g. `debug.fail_when=flows:40`)."""

    fail_when: Optional[str] = None
    """Jobs matching raise inside the worker."""
    crash_when: Optional[str] = None
    """Jobs matching kill their worker process (on their first attempt)."""
    starve_when: Optional[str] = None
    """Jobs matching run with no memory to grow into (`limits.run_memory_mb` 0): the engine
    stops them with MemoryError once their set-up has allocated."""


@dataclass
class SweepKeys:
    """A sweep's own keys, beside the simulation's."""

    name: Optional[str] = None
    """The experiment's name (presets set it); names the MLflow experiment."""
    backend: str = "engine"
    """The simulator that runs the job: engine (ours), ns2 or ns3 (`sweeps/backends/`)."""
    results_dir: str = "results"
    """Where runs are stored (Parquet; a path or a pyarrow filesystem URI such as s3://...)."""
    force: bool = False
    """Rerun (and replace) runs already stored."""
    confirm: bool = True
    """Ask before running a grid of more than 10,000 jobs (refuse when not on a terminal)."""
    mlflow: MlflowConf = field(default_factory=MlflowConf)
    ray: RayConf = field(default_factory=RayConf)
    limits: sim.Limits = field(default_factory=sim.Limits)
    """What a job may cost (`sim.cost`): refused before the sweep starts over max_memory_gb or
    max_events (estimated), stopped after job_timeout_s of wall time and stored as failed."""
    debug: DebugConf = field(default_factory=DebugConf)


_SWEEP_HINTS = typing.get_type_hints(SweepKeys)
SweepConfig = dataclasses.make_dataclass(
    "SweepConfig",
    [_spec_field(s) for s in CONFIG["fields"]]
    + [
        (f.name, _SWEEP_HINTS[f.name], f if f.default_factory is not dataclasses.MISSING else f.default)
        for f in dataclasses.fields(SweepKeys)
    ],
)
"""The whole config of a sweep job: every simulation parameter, then the sweep's own keys."""

SWEEP_ONLY_KEYS = ("name", "backend")
OPERATIONAL = ("debug.", "mlflow.", "ray.", "limits.", "force", "results_dir", "confirm")
"""Keys that change how a sweep runs, not what it simulates: not part of the sweep's identity,
and not sweepable."""
"""Run parameters that are not engine fields but are recorded with every run."""


def group_options(section: str) -> dict[str, Any]:
    """The options of a section's config group, from the engine's registry: each variant with its
    defaults, then each preset (a preset of a variant's name, as `tcp=cubic`, replaces it)."""
    u = SECTIONS[section]
    variants = {v["name"]: v for v in u["variants"]}
    options: dict[str, Any] = {name: hydra_variant(u, v)() for name, v in variants.items()}
    for preset in u["presets"]:
        cls = hydra_variant(u, variants[preset["set"][u["tag"]]])
        options[preset["name"]] = cls(**preset["set"])
    return options


CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
NOT_SWEEP_GROUPS = ("atlas",)
"""Folders of conf/ that are not a sweep's config groups: `analysis atlas` reads conf/atlas/."""


def config_groups() -> dict[str, list[str]]:
    """Each config group's options: those generated from the engine's registries (`tcp=cubic`) and
    the YAML presets in conf/, in order, nested ones (`buffer_policy=abs2010/stanford`) last."""
    options = {section: set(group_options(section)) for section in SECTIONS}
    for d in CONF_DIR.iterdir():
        if d.is_dir() and d.name not in NOT_SWEEP_GROUPS:
            options.setdefault(d.name, set()).update(
                p.relative_to(d).with_suffix("").as_posix() for p in d.rglob("*.yaml")
            )
    return {group: sorted(names, key=lambda o: ("/" in o, o)) for group, names in options.items()}


def register() -> None:
    """Stores the generated configs in Hydra's ConfigStore (the schema, a schema per variant, and
    the `tcp`, `topology` and `buffer_policy` groups' options); call it before Hydra composes.
    buffersweep's sweeper and launcher register themselves: Hydra imports every module of the
    `hydra_plugins` namespace package before it composes."""
    # Arithmetic for presets whose settings follow a swept one (ABS Table 2's RTTs in [30, 30 + 2N]
    # ms: `rtt_ms: ${add:30,${flows}}`); OmegaConf has no arithmetic of its own.
    OmegaConf.register_new_resolver("add", lambda *xs: sum(xs), replace=True)
    OmegaConf.register_new_resolver("mul", lambda *xs: math.prod(xs), replace=True)
    cs = ConfigStore.instance()
    cs.store(name="config_schema", node=SweepConfig)
    cs.store(group="hydra/help", name="buffersweep", node=help_node(SweepKeys, config_groups()), provider="buffersweep")
    for section, u in SECTIONS.items():
        for v in u["variants"]:
            cs.store(name=f"schema_{section}_{v['name']}", node=hydra_variant(u, v))
        for name, node in group_options(section).items():
            cs.store(group=section, name=name, node=node)


def _sweep_types(cls: type, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, t in typing.get_type_hints(cls).items():
        if dataclasses.is_dataclass(t):
            out.update(_sweep_types(t, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = t
    return out


SWEEP_TYPES: dict[str, Any] = _sweep_types(SweepKeys)
"""The sweep's own keys (dotted) -> their Python types."""
KNOWN_KEYS: list[str] = sorted(set(leaf_keys()) | set(SWEEP_TYPES) | set(SECTIONS) | {"experiment"})
"""Every key a job may set (`.N` for a list index), the sections and the preset group."""

_KIND = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def _base(t: Any) -> tuple[Any, bool]:
    args = typing.get_args(t)
    if type(None) in args:
        return next(a for a in args if a is not type(None)), True
    return t, False


_SWEEP_CHECKS: dict[str, tuple[Any, str]] = {
    "results_dir": (lambda v: v.strip() != "", "a non-empty path or URI"),
    "ray.num_cpus": (lambda v: v is None or v >= 1, "null or an integer >= 1"),
    "ray.batch_size": (lambda v: v >= 0, "an integer >= 0 (0: adaptive)"),
    "ray.max_in_flight": (lambda v: v >= 0, "an integer >= 0 (0: 4 x CPUs)"),
    "ray.max_retries": (lambda v: 0 <= v <= 100, "an integer in [0, 100]"),
}
"""Ranges of the sweep's own keys (the engine's keys are checked by the engine)."""


def _convert_scalar(key: str, base: Any, optional: bool, value: Any) -> Any:
    out = _convert_type(key, base, optional, value)
    check = _SWEEP_CHECKS.get(key)
    if check is not None and not (isinstance(out, float) and math.isnan(out)) and check[0](out):
        return out
    if check is not None:
        raise ValueError(f"{key}: must be {check[1]}, got {value!r}")
    return out


def _convert_type(key: str, base: Any, optional: bool, value: Any) -> Any:
    if value is None:
        if optional:
            return None
        raise ValueError(f"{key}: must be {_KIND[base]}, got null")
    if base is bool:
        if isinstance(value, bool):
            return value
        raise ValueError(f"{key}: must be true or false, got {value!r}")
    if base is int:
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            # Hydra's structured config refuses a float for an int field, with a multi-line error.
            raise ValueError(f"{key}: must be an integer, got {value!r} (write {int(value)})")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{key}: must be an integer, got {value!r}")
        return value
    if base is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key}: must be a number, got {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise ValueError(f"{key}: must be a string, got {value!r}")
    if key == "backend":
        backends.get(value)  # names the allowed ones
    return value


RETIRED: dict[str, str] = {
    "buffer_rule": "buffer_policy=bdp|stanford|enachescu (buffer_policy.rtt_ms=R sizes for a nominal RTT R)",
    "buffer_scale": "buffer_policy.factor (with buffer_policy=bdp|stanford|enachescu)",
    "buffer_theta": "buffer_policy.theta (with buffer_policy=enachescu)",
}
"""Keys that no longer exist -> what replaces them (the engine's static policies compute the same
buffers, per link; CHANGELOG.md)."""


def unknown_key(key: str) -> ValueError:
    if key in RETIRED:
        return ValueError(f"{key}: retired; use {RETIRED[key]}")
    if key.lstrip("+") in NOT_SWEEP_GROUPS:
        return ValueError(f"{key}: is `python -m analysis atlas`'s (build +atlas=NAME), not a sweep's")
    close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    py = python_cmd()
    return ValueError(f"{key}: unknown key{hint}; see `{py} -m sweeps --help` and `{py} -m analysis schema`")


def convert(key: str, value: Any) -> Any:
    """Converts one override value to the key's type; raises ValueError naming the key. Lists,
    records and sections pass through (the engine checks them when the job's config is built)."""
    if key in SWEEP_TYPES:
        base, optional = _base(SWEEP_TYPES[key])
        return _convert_scalar(key, base, optional, value)
    desc = lookup(key)
    if desc is None:
        raise unknown_key(key)
    optional = desc["type"] == "optional"
    inner = desc["of"] if optional else desc
    base = {"bool": bool, "int": int, "float": float, "str": str}.get(inner["type"])
    if base is None:
        return value
    return _convert_scalar(key, base, optional, value)


@dataclass(frozen=True)
class RunSpec:
    """One job: the engine config, the sweep-level parameters recorded with it, its run_id."""

    sim: sim.SimConfig
    params: dict[str, Any]
    run_id: str
    backend_version: str
    config_id: str
    """The same on every backend (`config_id_of`)."""

    def fault(self, kind: str, debug: dict[str, Any]) -> bool:
        rule = debug.get(kind)
        if not rule:
            return False
        key, _, value = rule.partition(":")
        return str(getattr(self.sim, key.strip(), None)) == value.strip()


def run_id_of(cfg: sim.SimConfig, backend: str = backends.DEFAULT, backend_version: str = "") -> str:
    """Hash of the fully resolved engine config, the engine version and, for another simulator,
    the backend's name and version: the unit of caching, resume and de-duplication. An engine
    run's payload is what it was before backends existed, so stored runs stay cached. Another
    backend's keys on the engine's contract with it (`CONTRACT_VERSION`) instead of the engine
    version: it takes the config's meaning and its flows' RTTs and start times from the engine,
    not the engine's results."""
    return _ids(cfg.to_dict(), backend, backend_version)[0]


def config_id_of(cfg: sim.SimConfig) -> str:
    """The same config's id on every backend, to pair their runs: the hash an engine run_id would
    have under `CONTRACT_VERSION` (equal to the engine's run_id while the two versions agree)."""
    return _ids(cfg.to_dict(), backends.DEFAULT, "")[1]


NEUTRAL_AT_DEFAULT = {
    ("tcp", "sndbuf_pkts"): 65536,
    ("tcp", "ssthresh_from_pipe"): False,
    ("tcp", "rto_first_partial_only"): False,
    ("tcp", "rto_backoff_reset_on_ack"): False,
    ("tcp", "compat"): "none",
    ("tcp", "send_jitter_ms"): 0.0,
    ("tcp", "alpha_one"): True,
    ("tcp", "count_acked"): False,
    ("tcp", "handshake"): False,
    ("tcp", "tso_defer"): False,
}
"""Parameters added after runs were stored, with the default at which they change nothing (the
fingerprints show it): a config is hashed without them while they hold it, so a new parameter
keeps every stored run_id, and the slow ns-3 runs cached under them. Only a parameter whose
default leaves every result bit-identical belongs here; tests/sweeps/test_backends.py holds each
to the engine's default."""


NEUTRAL_SECTIONS = ("precision",)
"""Sections added after runs were stored that change nothing at their default (precision: off),
hashed only when set, as NEUTRAL_AT_DEFAULT's parameters."""


POINT_LEVEL = {"precision": ("min_seeds", "max_seeds")}
"""Parameters that say how many replications a sweep point gets (`sweeps.mrip`), not what a run
does: never hashed, so a replication is the same stored run whatever the point's seed bounds."""


def _without_point_level(config: dict[str, Any]) -> dict[str, Any]:
    out = dict(config)
    for section, keys in POINT_LEVEL.items():
        if isinstance(out.get(section), dict):
            out[section] = {k: v for k, v in out[section].items() if k not in keys}
    return out


@functools.cache
def _section_defaults() -> dict[str, Any]:
    d = _without_point_level(sim.SimConfig().to_dict())
    return {k: d[k] for k in NEUTRAL_SECTIONS}


def hashed_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config (`SimConfig.to_dict()`) as ids hash it: without POINT_LEVEL's parameters, and
    without NEUTRAL_AT_DEFAULT's parameters and NEUTRAL_SECTIONS while they hold their default."""
    defaults = _section_defaults()
    config = _without_point_level(config)
    out = {k: v for k, v in config.items() if k not in defaults or v != defaults[k]}
    for (section, key), default in NEUTRAL_AT_DEFAULT.items():
        inner = out.get(section)
        if isinstance(inner, dict) and inner.get(key) == default:
            out = {**out, section: {k: v for k, v in inner.items() if k != key}}
    return out


def _ids(config: dict[str, Any], backend: str, backend_version: str) -> tuple[str, str]:
    """(run_id, config_id) of a config (`SimConfig.to_dict()`), hashing it once or twice."""
    config = hashed_config(config)

    def digest(what: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:20]

    engine = backend == backends.DEFAULT
    shared = without_engine_model(config)
    run_id = digest(
        {"engine": sim.ENGINE_VERSION, "config": config}
        if engine
        else {"engine": CONTRACT_VERSION, "config": shared, "backend": [backend, backend_version]}
    )
    same = engine and sim.ENGINE_VERSION == CONTRACT_VERSION and shared == config
    return run_id, run_id if same else digest({"engine": CONTRACT_VERSION, "config": shared})


def without_engine_model(config: dict[str, Any]) -> dict[str, Any]:
    """A hashed config without ENGINE_MODEL_ONLY's parameters (`backends.base`): what every
    backend runs alike. They key an engine run's run_id only, never another backend's or any
    config_id, so the kernel's stored runs stay cached and paired whatever the setting."""
    for section, key in ENGINE_MODEL_ONLY:
        inner = config.get(section)
        if isinstance(inner, dict) and key in inner:
            config = {**config, section: {k: v for k, v in inner.items() if k != key}}
    return config


def backend_of(name: str, cfg: sim.SimConfig) -> backends.Backend:
    """The job's backend, once it is known to run here and to mirror cfg; UsageError naming
    `backend` (unknown or not installed) or ValueError naming the field it cannot mirror."""
    backend = backends.get(name)
    why = backend.missing()
    if why:
        raise UsageError(f"backend: {name}: {why}; install it with `{backend.install}`")
    backend.check(cfg)
    return backend


def build_spec(job: dict[str, Any]) -> RunSpec:
    """From one job's resolved config (a plain dict of SweepConfig) to a validated RunSpec.
    Raises ValueError naming the offending key."""
    fields = {k: job[k] for k in SIM_KEYS if k in job}
    cfg = sim.SimConfig.from_fields(**fields)
    params = {k: job[k] for k in SWEEP_ONLY_KEYS}
    backend = backend_of(job["backend"], cfg)
    version = backend.version()
    run_id, config_id = _ids(cfg.plain(), backend.name, version)
    return RunSpec(sim=cfg, params=params, run_id=run_id, backend_version=version, config_id=config_id)


__all__ = ["SweepConfig", "RunSpec", "build_spec", "config_id_of", "convert", "register", "run_id_of", "union_specs"]

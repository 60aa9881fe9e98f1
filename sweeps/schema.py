"""The typed schema of a sweep config (Hydra structured config) and its translation, once per
job, into the engine's `sim.SimConfig`. Defaults of simulation fields come from SimConfig, so
there is one source for them."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import typing
from dataclasses import dataclass, field
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

import sim
from analysis.rules import RULES, resolve_buffer_pkts

_D = sim.SimConfig()


@dataclass
class TcpConf:
    """The `tcp` config group: the variant and its knobs (`tcp=paced tcp.delayed_ack=true`)."""

    name: str = MISSING
    init_cwnd_pkts: float = _D.init_cwnd_pkts
    init_ssthresh_pkts: Optional[float] = _D.init_ssthresh_pkts
    min_rto_ms: float = _D.min_rto_ms
    max_rto_s: float = _D.max_rto_s
    init_rto_s: float = _D.init_rto_s
    tick_ms: float = _D.tick_ms
    delayed_ack: bool = _D.delayed_ack
    delack_ms: float = _D.delack_ms
    limited_transmit: bool = _D.limited_transmit
    max_burst_pkts: int = _D.max_burst_pkts


@dataclass
class MlflowConf:
    enabled: bool = True
    tracking_uri: Optional[str] = None
    """Default: $MLFLOW_TRACKING_URI, else sqlite:///<project>/mlflow.db (absolute)."""
    experiment: Optional[str] = None
    """Default: the preset's `name`, else hydra.job.name."""


@dataclass
class RayConf:
    address: Optional[str] = None
    """None: an embedded local Ray; else an existing cluster ("auto", "host:6379", ...)."""
    num_cpus: Optional[int] = None
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


@dataclass
class SweepConfig:
    tcp: TcpConf = MISSING
    flows: int = _D.flows
    buffer_pkts: int = _D.buffer_pkts
    buffer_rule: str = "fixed"
    """fixed | bdp | stanford | enachescu: buffer = buffer_scale x rule (resolved per job)."""
    buffer_scale: float = 1.0
    buffer_theta: float = 0.9
    """Target effective utilization of the enachescu rule."""
    wmax_pkts: int = _D.wmax_pkts
    access_mbps: Optional[float] = _D.access_mbps
    access_buffer_pkts: int = _D.access_buffer_pkts
    core_mbps: float = _D.core_mbps
    rtt_ms: float = _D.rtt_ms
    rtt_spread_ms: float = _D.rtt_spread_ms
    pkt_bytes: int = _D.pkt_bytes
    duration_s: float = _D.duration_s
    warmup_s: float = _D.warmup_s
    seed: int = _D.seed
    start_window_s: float = _D.start_window_s
    poisson_mbps: float = _D.poisson_mbps
    cbr_mbps: float = _D.cbr_mbps
    short_mbps: float = _D.short_mbps
    short_flow_pkts: int = _D.short_flow_pkts
    sample_interval_s: float = _D.sample_interval_s
    name: Optional[str] = None
    """The experiment's name (presets set it); names the MLflow experiment."""
    results_dir: str = "results"
    force: bool = False
    """Rerun (and replace) runs already stored."""
    mlflow: MlflowConf = field(default_factory=MlflowConf)
    ray: RayConf = field(default_factory=RayConf)
    debug: DebugConf = field(default_factory=DebugConf)


def register() -> None:
    cs = ConfigStore.instance()
    cs.store(name="config_schema", node=SweepConfig)
    cs.store(group="tcp", name="tcp_schema", node=TcpConf)


def _leaf_types(cls: type, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, t in typing.get_type_hints(cls).items():
        if dataclasses.is_dataclass(t):
            out.update(_leaf_types(t, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = t
    return out


LEAF_TYPES: dict[str, Any] = _leaf_types(SweepConfig)
"""Every key a job may set (dotted for nested groups) -> its type."""

SWEEP_ONLY_KEYS = ("buffer_rule", "buffer_scale", "buffer_theta", "name")
"""Run parameters that are not engine fields but are recorded with every run."""


_KIND = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def convert(key: str, value: Any) -> Any:
    """Converts one override value to the key's type; raises ValueError naming the key."""
    if key not in LEAF_TYPES:
        allowed = ", ".join(k for k in LEAF_TYPES if not k.startswith(("ray.", "debug.", "mlflow.")))
        raise ValueError(f"{key}: unknown key; allowed: {allowed} (and tcp=<variant>, mlflow.*, ray.*)")
    t = LEAF_TYPES[key]
    args = typing.get_args(t)
    optional = type(None) in args
    base = next(a for a in args if a is not type(None)) if optional else t
    if value is None:
        if optional:
            return None
        raise ValueError(f"{key}: must be {_KIND[base]}, got null")
    if base is bool:
        if isinstance(value, bool):
            return value
        raise ValueError(f"{key}: must be true or false, got {value!r}")
    if base is int:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or float(value) != int(value):
            raise ValueError(f"{key}: must be an integer, got {value!r}")
        return int(value)
    if base is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key}: must be a number, got {value!r}")
        return float(value)
    if base is str:
        if not isinstance(value, str):
            raise ValueError(f"{key}: must be a string, got {value!r}")
        if key == "buffer_rule" and value not in RULES:
            raise ValueError(f"buffer_rule: unknown rule {value!r}; allowed: {', '.join(RULES)}")
        return value
    raise AssertionError(f"unhandled type {t} for {key}")


@dataclass(frozen=True)
class RunSpec:
    """One job: the engine config, the sweep-level parameters recorded with it, its run_id."""

    sim: sim.SimConfig
    params: dict[str, Any]
    run_id: str

    def fault(self, kind: str, debug: dict[str, Any]) -> bool:
        rule = debug.get(kind)
        if not rule:
            return False
        key, _, value = rule.partition(":")
        return str(getattr(self.sim, key.strip(), None)) == value.strip()


def run_id_of(cfg: sim.SimConfig) -> str:
    """Hash of the fully resolved engine config and the engine version: the unit of caching,
    resume and de-duplication."""
    payload = json.dumps({"engine": sim.ENGINE_VERSION, "config": cfg.to_dict()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


_SIM_FIELDS = [f.name for f in dataclasses.fields(sim.SimConfig)]


def build_spec(job: dict[str, Any]) -> RunSpec:
    """From one job's resolved config (a plain dict of SweepConfig) to a validated RunSpec.
    Raises ValueError naming the offending key."""
    tcp = job["tcp"]
    fields: dict[str, Any] = {}
    for name in _SIM_FIELDS:
        if name == "tcp":
            fields["tcp"] = tcp["name"]
        elif name in tcp:
            fields[name] = tcp[name]
        elif name in job:
            fields[name] = job[name]
    fields["buffer_pkts"] = resolve_buffer_pkts(
        job["buffer_rule"], job["buffer_scale"], buffer_pkts=job["buffer_pkts"], core_mbps=job["core_mbps"],
        rtt_ms=job["rtt_ms"], flows=job["flows"], wmax_pkts=job["wmax_pkts"], pkt_bytes=job["pkt_bytes"],
        theta=job["buffer_theta"],
    )
    cfg = sim.SimConfig.from_fields(**fields).validate()
    params = {k: job[k] for k in SWEEP_ONLY_KEYS}
    return RunSpec(sim=cfg, params=params, run_id=run_id_of(cfg))

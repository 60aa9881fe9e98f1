"""A run's cost before it runs, and the limits that refuse it (issue 36): `estimate(cfg)` from the
engine's fluid model (`sim/src/estimate.rs`), and `Limits`, which `run` checks first and whose
timeout stops a run that overstays. docs/engine.md, "Cost estimate"."""

from __future__ import annotations

import math
import os
import resource
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from sim.config import SimConfig

BASE_RSS_MB = 110.0
"""Peak RSS of a process that imported sim and pyarrow and ran a tiny run (measured: 111 MB)."""
ENGINE_EVENTS_PER_S = 3e6
"""The unit of the time estimate: its `work` is events at this rate on one core. Fixed and
open-loop events are priced at 1; a TCP packet's events at what they were measured to take, with
1.5x of margin for a shared core (sim/src/estimate.rs)."""


WINDOW_WARNING_BELOW = 0.99
"""Configs whose windows cap utilization below this are said to be window-limited."""


def ram_gb() -> float:
    """The machine's RAM."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30


def headroom() -> tuple[float, str] | None:
    """What this process may still allocate, in GB, and what bounds it: its address-space limit
    (RLIMIT_AS, as `ulimit -v` or a batch scheduler sets it) less what it has mapped, or its
    cgroup's memory limit less the cgroup's use; None when neither is set. Hand-written: psutil
    and resource read neither cgroup file."""
    bounds = []
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        bounds.append(((soft - _status_kb("VmSize") * 1024) / 2**30, "the address-space limit (RLIMIT_AS, ulimit -v)"))
    room = _cgroup_room_bytes()
    if room is not None:
        bounds.append((room / 2**30, "the cgroup's memory limit"))
    return min(bounds) if bounds else None


def budget(limits: Limits) -> tuple[int, str]:
    """The memory a run may allocate as it runs, in bytes, and what bounds it: `headroom`, the
    machine's available memory (MemAvailable), and `limits.max_memory_gb` if set, less what the
    process holds. Past it the engine stops the run with MemoryError (sim/src/memory.rs)."""
    room = headroom()
    bounds = [room] if room else []
    bounds.append((_meminfo_kb("MemAvailable") / 2**20, "the machine's available memory"))
    if limits.max_memory_gb is not None and math.isfinite(limits.max_memory_gb):
        bounds.append((limits.max_memory_gb - _status_kb("VmRSS") / 2**20, "limits.max_memory_gb"))
    if limits.run_memory_mb is not None:
        bounds.append((limits.run_memory_mb / 1024, "limits.run_memory_mb"))
    gb, what = min(bounds)
    return max(int(gb * 2**30), 0), what


def _meminfo_kb(field: str) -> int:
    """A figure of /proc/meminfo, in kB."""
    with open("/proc/meminfo") as f:
        return next((int(ln.split()[1]) for ln in f if ln.startswith(field + ":")), 0)


def _status_kb(field: str) -> int:
    """A figure of /proc/self/status, in kB (0 where there is none)."""
    with open("/proc/self/status") as f:
        return next((int(ln.split()[1]) for ln in f if ln.startswith(field + ":")), 0)


def _cgroup_room_bytes() -> int | None:
    """The memory limit of this process's cgroup less its use (cgroup v2's memory.max and
    memory.current, or v1's limit_in_bytes and usage_in_bytes); None without a limit."""
    try:
        lines = open("/proc/self/cgroup").read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            files, base = ("memory.max", "memory.current"), Path("/sys/fs/cgroup")
        elif "memory" in controllers.split(","):
            files, base = ("memory.limit_in_bytes", "memory.usage_in_bytes"), Path("/sys/fs/cgroup/memory")
        else:
            continue
        # Inside a container the cgroup's own directory is mounted as the root.
        for d in (base / path.lstrip("/"), base):
            limit, used = (d / files[0], d / files[1])
            if limit.exists() and used.exists():
                text = limit.read_text().strip()
                if text == "max" or int(text) >= 2**62:
                    break
                return int(text) - int(used.read_text())
    return None


@dataclass
class Limits:
    """What a run may cost: refused before it starts over max_memory_gb or max_events (both
    estimated), stopped once it has run job_timeout_s of wall time."""

    max_memory_gb: Optional[float] = None
    """Peak memory a run may need (estimated); None = half the machine's RAM. Whatever it says,
    a run is also refused when it needs more than the process may still allocate (`headroom`)."""
    max_events: float = 1e10
    """Events a run may take (estimated); about an hour of one core. Every seed scenario needs
    under 1e9."""
    job_timeout_s: Optional[float] = None
    """Wall time after which a running job (`run`) stops with TimeoutError; None = never."""
    run_memory_mb: Optional[float] = None
    """Memory a run may allocate as it runs, beyond what the process holds; None = what the
    process may still allocate (`budget`). Past it the run stops with MemoryError."""

    def memory_gb(self) -> float:
        return self.max_memory_gb if self.max_memory_gb is not None else ram_gb() / 2


@dataclass(frozen=True)
class Estimate:
    """A run's cost from its config: packets arriving at its links (drops included), events,
    peak memory and wall time, and the config keys that drive them, largest first."""

    packets: float
    events: float
    peak_memory_mb: float
    wall_s: float
    packet_drivers: list[tuple[str, float]] = field(default_factory=list)
    memory_drivers: list[tuple[str, float]] = field(default_factory=list)
    window_cap_utilization: Optional[float] = None
    """When long TCP flows cross the bottleneck and the load offered there (their windows, a
    window each mean RTT, plus every other source) is below its capacity: that load over the
    capacity, the most utilization `wmax_pkts` (or `tcp.sndbuf_pkts`) allows. None otherwise."""

    def __str__(self) -> str:
        return (
            f"about {self.packets:.2g} packets, {self.events:.2g} events, {self.wall_s:.2g} s on one core, "
            f"peak memory {self.peak_memory_mb:,.0f} MB"
        )

    def window_warning(self, below: float = WINDOW_WARNING_BELOW) -> str | None:
        """What to say when the windows cap utilization below `below`; None otherwise."""
        u = self.window_cap_utilization
        if u is None or u >= below:
            return None
        return (
            f"the windows cap utilization at about {u:.2f} (a flow sends at most wmax_pkts a round trip): "
            "raise wmax_pkts"
        )


def estimate(config: SimConfig | None = None, /, **fields: Any) -> Estimate:
    """The cost of `run(config)` (or of `run(**fields)`), from the config alone; ValueError for
    an invalid config, as `run`."""
    cfg = config if config is not None else SimConfig.from_fields(**fields)
    e = cfg._estimate  # type: ignore[attr-defined]  # the engine's, from when cfg was validated
    return Estimate(
        packets=e["packets"],
        events=e["events"],
        peak_memory_mb=BASE_RSS_MB + e["memory_bytes"] / 2**20,
        wall_s=e["work"] / ENGINE_EVENTS_PER_S,
        packet_drivers=[tuple(d) for d in e["packet_drivers"]],
        memory_drivers=[tuple(d) for d in e["memory_drivers"]],
        window_cap_utilization=e["window_cap_utilization"],
    )


def check(cfg: SimConfig, limits: Limits) -> Estimate:
    """The estimate, or a one-line ValueError naming the limit, the estimate and the keys that
    drive it (with their values) when the run would exceed it."""
    est = estimate(cfg)
    if est.events > limits.max_events:
        raise ValueError(
            f"limits.max_events: this run needs about {est.events:.2g} events, over {limits.max_events:.2g}; "
            f"driven by {_drivers(cfg, est.packet_drivers, 'duration_s')}: lower them or raise the limit"
        )
    gb = limits.memory_gb()
    if est.peak_memory_mb / 1024 > gb:
        raise ValueError(
            f"limits.max_memory_gb: this run needs about {est.peak_memory_mb / 1024:.3g} GB, over {gb:.3g}; "
            f"driven by {_drivers(cfg, est.memory_drivers)}: lower them or raise the limit"
        )
    room = headroom()
    grows_gb = (est.peak_memory_mb - BASE_RSS_MB) / 1024
    if room is not None and grows_gb > room[0]:
        raise ValueError(
            f"limits.max_memory_gb: this run needs about {grows_gb:.3g} GB more memory, over the {max(room[0], 0):.3g} "
            f"GB this process may still allocate ({room[1]}); driven by {_drivers(cfg, est.memory_drivers)}: "
            "lower them or run where more memory is allowed"
        )
    return est


def memory_drivers(cfg: SimConfig) -> str:
    """The keys that drive the run's memory, with their values."""
    return _drivers(cfg, estimate(cfg).memory_drivers)


def _drivers(cfg: SimConfig, drivers: list[tuple[str, float]], *also: str) -> str:
    """The keys with their values: those driving at least a tenth of the largest, then `also`
    (events: every rate is paid for duration_s)."""
    values = cfg.to_dict()
    top = drivers[0][1] if drivers else 0.0
    keys = [k for k, v in drivers if v >= top / 10] + list(also)
    return ", ".join(f"{k}={_value(values, k)}" for k in dict.fromkeys(keys))


def _value(values: dict[str, Any], key: str) -> Any:
    out: Any = values
    for part in key.split("."):
        if isinstance(out, list):
            out = out[int(part)] if part.isdigit() and int(part) < len(out) else None
        elif isinstance(out, dict):
            out = out.get(part)
        else:
            return "?"
    return f"{out:g}" if isinstance(out, float) else out

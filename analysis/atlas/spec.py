"""An atlas's definition: a preset (`conf/atlas/NAME.yaml`) with its axes overridden from the
command line, checked in one place, and the cells it spans, each with the overrides and the
per-probe keys its runs take (docs/atlas.md, "Presets and cells")."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import OmegaConf

from analysis.rules import bdp_pkts
from sweeps.errors import exit_usage
from sweeps.precheck import CONF_DIR

AXES = ("tcp", "queue", "flows", "core_mbps", "rtt_ms", "traffic")
"""A cell's coordinates; `traffic` (a mix beside the long flows) is optional."""
NUMERIC = ("flows", "core_mbps", "rtt_ms")
SETTINGS = (
    "targets",
    "seeds",
    "min_seeds",
    "decide",
    "probe",
    "cycles",
    "max_probe_s",
    "max_probe_pkts",
    "far",
    "start",
    "max_bdp",
    "duration_rtts",
    "min_duration_s",
    "warmup_fraction",
    "rtt_spread",
)
DEFAULTS: dict[str, Any] = {
    "min_seeds": None,
    "decide": "interval",
    "probe": "cycles",
    "cycles": 4,
    "max_probe_s": 300,
    "max_probe_pkts": None,
    "far": 2,
    "start": "bdp",
}
"""Settings a preset may leave out: every seed on every probe (min_seeds None), decided by
intervals across seeds, probes as long as `cycles` of the sender's cycles up to `max_probe_s` (and
`max_probe_pkts` bottleneck packets, if given); one seed decides when it is `far` from a target;
a search starts at the BDP."""
DECIDE = ("interval", "mean")
PROBE = ("cycles", "fixed")
START = ("bdp", "stanford")
DCTCP_K_DIVISOR = 7
"""DCTCP's marking threshold K = C x RTT / 7 (Alizadeh et al., SIGCOMM 2010, section 3.4)."""
MIX_SHARE = 0.1
"""A traffic mix offers this fraction of the link's rate."""
MIXES = ("none", "web", "udp")


@dataclass(frozen=True)
class Cell:
    tcp: str
    queue: str
    flows: int
    core_mbps: float
    rtt_ms: float
    traffic: str = "none"


@dataclass
class AtlasSpec:
    name: str
    axes: dict[str, list[Any]]
    targets: list[float]
    seeds: list[int]
    """The replications' seeds, in the order a probe takes them."""
    max_bdp: float
    duration_rtts: float
    min_duration_s: float
    warmup_fraction: float
    rtt_spread: float
    min_seeds: int | None = None
    """Seeds a probe starts with (None: all of `seeds`); it gets more while within noise."""
    decide: str = "interval"
    """interval: a probe meets a target when its 95% interval across seeds lies above it (`search`);
    mean: when the mean of its seeds does (the slices', as the reproductions they mirror decide)."""
    probe: str = "cycles"
    """cycles: a probe runs a few of its sender's cycles, warm-up cut by MSER (`cycle`); fixed:
    duration_rtts round trips (at least min_duration_s), the first warmup_fraction unmeasured."""
    cycles: float = 4
    max_probe_s: float = 300
    max_probe_pkts: float | None = None
    """A probe's measured time is at most this many packets at the link's rate (the cost of a
    probe is its packets: at 1 Gb/s a second is 83,333 of them)."""
    cap_whole: bool = True
    """max_probe_s and max_probe_pkts bound a probe's allowance and measured time together
    (`cycle.spans_s`); False: each (the check's long probes)."""
    start: str = "bdp"
    """Where a cell's search starts (`first_guess`): the BDP (as the min-buffer searches the slices
    mirror), or the Stanford rule's BDP / sqrt(N)."""
    far: float = 2
    """One seed decides a target when its idle fraction (1 - utilization) is at most 1/far or over
    far times the target's (`search.side`); nearer, the probe takes more seeds."""
    base: list[str] = field(default_factory=list)
    results_dir: str = "results"

    def cells(self) -> list[Cell]:
        keys = [a for a in AXES if a in self.axes]
        return [Cell(**dict(zip(keys, combo))) for combo in itertools.product(*(self.axes[k] for k in keys))]

    def pkt_bytes(self) -> int:
        return int(self.base_value("pkt_bytes", 1000))

    def base_value(self, key: str, default: float) -> float:
        """A key's value among the `base` overrides, or the default."""
        given = [b.split("=", 1)[1] for b in self.base if b.startswith(f"{key}=")]
        return float(given[-1]) if given else default

    @property
    def start_window_s(self) -> float:
        return self.base_value("start_window_s", 1.0)

    def seed_range(self) -> tuple[int, int]:
        """(the seeds a probe starts with, the most it takes)."""
        return min(self.min_seeds or len(self.seeds), len(self.seeds)), len(self.seeds)

    def far_rule(self) -> float | None:
        """`far` where intervals decide (`search.side`); None under `decide: mean`."""
        return self.far if self.decide == "interval" else None

    def bdp(self, cell: Cell) -> float:
        return bdp_pkts(cell.core_mbps, cell.rtt_ms, self.pkt_bytes())

    def groups(self, cell: Cell) -> list[str]:
        """The config-group overrides of a cell's runs: DCTCP marks (ECN) at its K on a step
        queue where the cell says drop-tail, and with ECN under an AQM."""
        if cell.tcp != "dctcp":
            return [f"tcp={cell.tcp}", f"queue={cell.queue}"]
        queue = "step" if cell.queue == "droptail" else cell.queue
        return ["tcp=dctcp", "tcp.ecn=true", f"queue={queue}"] + ([] if queue == "step" else ["queue.ecn=true"])

    def point(self, cell: Cell) -> dict[str, Any]:
        """The per-probe keys of a cell's runs (the buffer, seed and length apart: `cycle.length`)."""
        p: dict[str, Any] = {
            "flows": cell.flows,
            "core_mbps": cell.core_mbps,
            "rtt_ms": cell.rtt_ms,
            # One flow has no phase to break: its RTT is the cell's, not a draw that moves its
            # BDP by up to rtt_spread / 2 from seed to seed.
            "rtt_spread_ms": round(cell.rtt_ms * self.rtt_spread, 6) if cell.flows > 1 else 0.0,
        }
        if cell.tcp == "dctcp" and cell.queue == "droptail":
            p["queue.k_pkts"] = max(1, math.ceil(self.bdp(cell) / DCTCP_K_DIVISOR))
        if cell.traffic != "none":
            p["traffic"] = mix(cell.traffic, cell.core_mbps)
        return p

    def first_guess(self, cell: Cell) -> int:
        """Where a cell's search starts (`start`): the BDP, or the Stanford rule, BDP / sqrt(N)
        (Appenzeller et al. 2004), the literature's estimate for N flows. Starting there spares
        a many-flow cell its first probes far above its answer, the longest it runs
        (docs/atlas.md, "Search")."""
        flows = cell.flows if self.start == "stanford" else 1
        return max(1, round(self.bdp(cell) / math.sqrt(flows)))

    def cap(self, cell: Cell) -> int:
        return max(2, math.ceil(self.max_bdp * self.bdp(cell)))


def mix(name: str, core_mbps: float) -> list[dict[str, Any]]:
    """A traffic mix at MIX_SHARE of the link: web (Pareto-sized short TCP flows, mean 20 kB) or
    udp (constant-rate UDP)."""
    load = MIX_SHARE * core_mbps
    if name == "web":
        return [{"kind": "pareto", "load_mbps": load, "mean_bytes": 20000, "shape": 1.5}]
    return [{"kind": "udp", "flows": 1, "rate_mbps": load}]


def load(args: list[str]) -> AtlasSpec:
    """`+atlas=NAME` and overrides (axes, settings, `results_dir`, other sweep keys for every
    probe) as an AtlasSpec; exit 2 with one line on bad input."""
    try:
        overrides = OverridesParser.create().parse_overrides(args)
    except HydraException as e:
        exit_usage(str(e).splitlines()[0])
    names = [o.value() for o in overrides if o.key_or_group == "atlas"]
    if not names:
        exit_usage("atlas: name the preset, as +atlas=small (conf/atlas/)")
    presets = sorted(p.stem for p in (CONF_DIR / "atlas").glob("*.yaml"))
    if names[-1] not in presets:
        exit_usage(f"atlas: {names[-1]!r} is not a preset; allowed: {', '.join(presets)}")
    raw = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "atlas" / f"{names[-1]}.yaml"), resolve=True)
    assert isinstance(raw, dict)
    settings = {k: raw[k] if k in raw else DEFAULTS[k] for k in SETTINGS}
    spec = AtlasSpec(name=str(names[-1]), axes=dict(raw["axes"]), base=list(raw.get("base", [])), **settings)
    for text, o in zip(args, overrides):
        key = o.key_or_group
        values = list(o.sweep_iterator()) if o.is_sweep_override() else [o.value()]
        if key == "atlas":
            continue
        if key in AXES:
            spec.axes[key] = values
        elif key in SETTINGS:
            listed = values[0] if len(values) == 1 and isinstance(values[0], list) else values
            setattr(spec, key, listed if key in ("targets", "seeds") else values[0])
        elif key == "results_dir":
            spec.results_dir = str(values[0])
        elif key == "seed":
            exit_usage("seed: an atlas runs every probe on its `seeds` setting; give a list, as seeds=[1,2]")
        elif key == "buffer_pkts" or key.startswith("buffer_policy"):
            exit_usage(f"{key}: is what the atlas searches; leave it out")
        elif o.is_sweep_override():
            exit_usage(f"{key}: is not an atlas axis; allowed axes: {', '.join(AXES)}")
        else:
            spec.base.append(text)
    check(spec)
    return spec


def check(spec: AtlasSpec) -> None:
    """Every axis value and setting allowed, or exit 2 naming the first that is not."""
    from sweeps.schema import group_options

    for axis, allowed in (("tcp", group_options("tcp")), ("queue", group_options("queue")), ("traffic", MIXES)):
        for v in spec.axes.get(axis, ["none"] if axis == "traffic" else []):
            if v not in allowed:
                exit_usage(f"{axis}: {v!r} is not one; allowed: {', '.join(allowed)}")
    for axis in NUMERIC:
        vals = spec.axes.get(axis, [])
        if not vals or any(isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0 for v in vals):
            exit_usage(f"{axis}: must be a list of numbers > 0, got {vals!r}")
    if any(isinstance(f, float) and not f.is_integer() for f in spec.axes["flows"]):
        exit_usage(f"flows: must be whole numbers, got {spec.axes['flows']!r}")
    spec.axes["flows"] = sorted(int(f) for f in spec.axes["flows"])
    for axis in ("core_mbps", "rtt_ms"):
        spec.axes[axis] = sorted(spec.axes[axis])
    for t in spec.targets:
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 1:
            exit_usage(f"targets: each must be a utilization in (0, 1], got {t!r}")
    if not spec.seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in spec.seeds):
        exit_usage(f"seeds: must be integers >= 0, got {spec.seeds!r}")
    if not spec.max_bdp > 1:
        exit_usage(f"max_bdp: must be > 1 (the largest buffer a search tries, x BDP), got {spec.max_bdp!r}")
    for key, allowed in (("decide", DECIDE), ("probe", PROBE), ("start", START)):
        if getattr(spec, key) not in allowed:
            exit_usage(f"{key}: must be one of {', '.join(allowed)}, got {getattr(spec, key)!r}")
    if spec.min_seeds is not None and (not isinstance(spec.min_seeds, int) or spec.min_seeds < 1):
        exit_usage(f"min_seeds: must be a whole number >= 1, got {spec.min_seeds!r}")
    if spec.decide == "interval" and spec.seed_range()[1] < 2:
        exit_usage(f"seeds: deciding by intervals across seeds needs two or more, got {spec.seeds!r}")
    for key in ("cycles", "max_probe_s", "max_probe_pkts"):
        value = getattr(spec, key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
            exit_usage(f"{key}: must be a number > 0, got {value!r}")
    if isinstance(spec.far, bool) or not isinstance(spec.far, (int, float)) or not spec.far > 1:
        exit_usage(f"far: must be a number > 1 (a factor on the idle fraction), got {spec.far!r}")

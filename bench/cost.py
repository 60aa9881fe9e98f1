"""The cost estimate against measured runs (docs/engine.md, "Cost estimate"):
- `python -m bench.cost [NAME,...] [--seconds S]` (issue 36, acceptance 3): at both ends of each
  preset's grid (every axis at its first value, then at its last), each run cut to S simulated
  seconds, `sim.estimate`'s packets (links' `arrivals_total`) and peak RSS (VmHWM of a fresh
  process) against the run's. Jobs of another backend run on the engine.
- `python -m bench.cost --extremes` (issue 56): EXTREMES, where the estimate had been far off,
  run whole: wall time, peak RSS and packets against the estimate's, each within 3x."""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys

from rich.console import Console
from rich.table import Table

import sim
from sim.fuzz_cost import MIX_GROUPS

CHILD = """
import json, sys, time
import sim
from sim.fuzz_cost import vm_mb
cfg = sim.SimConfig.from_fields(**json.loads(sys.argv[1]))
t = time.perf_counter()
r = sim.run(cfg, limits=sim.Limits(max_events=float("inf"), max_memory_gb=1e9))
wall = time.perf_counter() - t
print(json.dumps({"packets": sum(r.links["arrivals_total"].to_pylist()), "rss_mb": vm_mb("VmHWM"), "wall_s": wall}))
"""


def grid_ends(name: str) -> list[list[str]]:
    """The preset's overrides with every swept axis at its first value, then at its last."""
    from hydra import compose, initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    from sweeps.precheck import CONF_DIR
    from sweeps.schema import register

    register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"+experiment={name}"], return_hydra_config=True)
    params = OmegaConf.to_container(cfg.hydra.sweeper.params, resolve=False) if cfg.hydra.sweeper.params else {}
    parser = OverridesParser.create()
    axes = {}
    for key, value in (params or {}).items():
        o = parser.parse_overrides([f"{key}={value}"])[0]
        axes[key] = list(o.sweep_iterator()) if o.is_sweep_override() else [o.value()]
    ends = []
    for end in (0, -1):
        overrides = [f"{k}={'engine' if k == 'backend' else v[end]}" for k, v in axes.items()]
        ends.append([f"+experiment={name}", *overrides])
    return ends


def cut(cfg: sim.SimConfig, seconds: float) -> sim.SimConfig:
    """cfg shortened to `seconds` (if longer), its warm-up scaled and its start window at most a
    quarter of the run."""
    scale = min(1.0, seconds / cfg.duration_s)
    d = cfg.duration_s * scale
    start = min(cfg.start_window_s, d / 4)
    return dataclasses.replace(cfg, duration_s=d, warmup_s=cfg.warmup_s * scale, start_window_s=start)


def measured(cfg: sim.SimConfig) -> dict[str, float]:
    """The run's packets arriving at links and its peak RSS, in a fresh process."""
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cfg.to_dict())], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout)


def measure(overrides: list[str], seconds: float) -> tuple[sim.Estimate, dict[str, float]]:
    from sweeps.api import JobList, compose_config

    cfg = cut(JobList(compose_config(overrides), [{}]).specs()[0].sim, seconds)
    return sim.estimate(cfg), measured(cfg)


def _lot(n: int) -> dict:
    """A parking lot of n links: a flow pair across all of them, one flow on each."""
    routes = [{"links": list(range(n)), "flows": 2}] + [{"links": [i], "flows": 1} for i in range(n)]
    return {"name": "parking_lot", "links": [{"delay_ms": 0.1}] * n, "routes": routes}


EXTREMES: dict[str, dict] = {
    "a million flows at 100 Gb/s (issue 56)": dict(
        flows=1_000_000, core_mbps=100_000, duration_s=10, warmup_s=1, wmax_pkts=100_000
    ),
    "1 Tb/s of CBR into 10 Mb/s (issue 56)": dict(flows=10, core_mbps=10, duration_s=10, warmup_s=1, cbr_mbps=1e6),
    "100 Gb/s of Poisson into 10 Mb/s": dict(flows=10, core_mbps=10, duration_s=10, warmup_s=1, poisson_mbps=1e5),
    "1,000 UDP flows of 100 Mb/s into 100 Mb/s": dict(
        flows=1, core_mbps=100, duration_s=5, warmup_s=1, traffic=[{"kind": "udp", "flows": 1000, "rate_mbps": 100}]
    ),
    "2,000 BBR flows, 1 Gb/s": dict(tcp="bbr", flows=2000, core_mbps=1000, duration_s=10, warmup_s=2),
    "16 BBR flows, 1 Gb/s": dict(tcp="bbr", flows=16, core_mbps=1000, duration_s=10, warmup_s=2),
    "a 250-link parking lot": dict(topology=_lot(250), core_mbps=10, duration_s=10, warmup_s=2),
    "a mix of every law, 60 s": dict(
        flows=2 * len(MIX_GROUPS),
        core_mbps=100,
        duration_s=60,
        warmup_s=5,
        tcp={"cc": "newreno", "ecn": True},  # for DCTCP's group
        tcp_mix="+".join(f"{g}:2" for g in MIX_GROUPS),
    ),
    "100,000 flows at 100 Gb/s, 2 s": dict(flows=100_000, core_mbps=100_000, duration_s=2, warmup_s=1),
    "200 CUBIC flows, 1 Gb/s, 9 packets": dict(tcp="cubic_2622", flows=200, core_mbps=1000, rtt_ms=80, buffer_pkts=9),
    # Issue 73: paced senders at scale. A run the default limits refuse is reported so, not run.
    "a million BBR flows at 100 Gb/s (issue 73)": dict(
        tcp="bbr", flows=1_000_000, core_mbps=100_000, duration_s=10, warmup_s=1
    ),
    "100,000 BBR flows at 100 Gb/s": dict(tcp="bbr", flows=100_000, core_mbps=100_000, duration_s=10, warmup_s=1),
    "a million paced flows at 100 Gb/s": dict(
        tcp="paced", flows=1_000_000, core_mbps=100_000, duration_s=10, warmup_s=1, wmax_pkts=100_000
    ),
    "100,000 CUBIC flows behind FQ-CoDel, 10 Gb/s": dict(
        tcp="cubic", flows=100_000, core_mbps=10_000, queue="fq_codel", duration_s=10, warmup_s=1
    ),
}
"""Issue 56's extremes: the two configs it found far off, and others like them; and issue 73's,
paced senders at scale."""


def extremes() -> int:
    """EXTREMES against their estimates: the number outside 3x."""
    table = Table(title="estimate / measured at the extremes, whole runs (each within 3x)")
    for col in ("config", "wall s", "wall", "peak RSS", "packets", "within 3x"):
        table.add_column(col, justify="left" if col == "config" else "right")
    misses = 0
    for name, fields in EXTREMES.items():
        cfg = sim.SimConfig.from_fields(**fields)
        try:
            sim.cost.check(cfg, sim.Limits())
        except ValueError as e:
            table.add_row(name, "refused", "", "", "", str(e).split(";")[0])
            continue
        est, got = sim.estimate(cfg), measured(cfg)
        ratios = (est.wall_s / got["wall_s"], est.peak_memory_mb / got["rss_mb"], est.packets / max(got["packets"], 1))
        ok = all(1 / 3 <= r <= 3 for r in ratios[:2])
        misses += not ok
        table.add_row(name, f"{got['wall_s']:.1f}", *(f"{r:.2f}" for r in ratios), "yes" if ok else "NO")
    Console(width=150).print(table)
    return misses


def main() -> None:
    from sweeps.precheck import CONF_DIR

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="?", help="presets, comma-separated (default: all)")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--extremes", action="store_true", help="the extremes, run whole (about 6 minutes)")
    args = parser.parse_args()
    if args.extremes:
        raise SystemExit(1 if extremes() else 0)
    names = args.names.split(",") if args.names else sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
    table = Table(title=f"estimate / measured, each preset's grid ends, {args.seconds:g} s of each")
    for col in ("preset", "overrides", "packets", "peak RSS", "within 2x"):
        table.add_column(col)
    misses = 0
    for name in names:
        for overrides in grid_ends(name):
            est, got = measure(overrides, args.seconds)
            pk, mb = est.packets / max(got["packets"], 1), est.peak_memory_mb / got["rss_mb"]
            ok = 0.5 <= pk <= 2 and 0.5 <= mb <= 2
            misses += not ok
            table.add_row(name, " ".join(overrides[1:])[:70], f"{pk:.2f}", f"{mb:.2f}", "yes" if ok else "NO")
    Console(width=150).print(table)
    print(f"{misses} of {2 * len(names)} points outside 2x")


if __name__ == "__main__":
    main()

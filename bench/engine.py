"""Engine benchmark: `python -m bench.engine` (or `make bench`).

Runs the reference scenarios, each in its own process so that peak RSS is per scenario, and
prints simulated seconds, bottleneck packets and events per wall-second, wall time and peak RSS.
With `--baseline REF` (make bench passes the last commit before the engine's reshape), it also
builds that commit's engine from this repository's history (`git archive` + `cargo build`, cached
under .bench/) and runs old and new alternately, ROUNDS rounds, printing both side by side: the
speed of a change is only meaningful against the old build on the same machine in the same minute.

Targets (one core of the 2-core dev machine): >= 2,000,000 bottleneck packets per wall-second on
the first two scenarios and on the parking lot (both links' packets); cost ~ packets x
log(flows); memory O(flows + links + buffer): 10,000 flows < 500 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 3

SCENARIOS: dict[str, dict] = {
    "dick 45Mb/s 60 flows B=73 newreno": dict(
        tcp="newreno",
        flows=60,
        buffer_pkts=73,
        core_mbps=45,
        rtt_ms=100,
        rtt_spread_ms=20,
        wmax_pkts=10_000,
        duration_s=150,
        warmup_s=30,
        start_window_s=5,
    ),
    "enachescu 100Mb/s 40 flows B=10 paced": dict(
        tcp="paced",
        flows=40,
        buffer_pkts=10,
        core_mbps=100,
        rtt_ms=100,
        rtt_spread_ms=50,
        wmax_pkts=32,
        duration_s=200,
        warmup_s=50,
        start_window_s=5,
    ),
    "1Gb/s 1000 flows B=20 access 10Mb/s reno": dict(
        tcp="reno",
        flows=1000,
        buffer_pkts=20,
        core_mbps=1000,
        access_mbps=10,
        rtt_ms=100,
        rtt_spread_ms=50,
        wmax_pkts=10_000,
        duration_s=60,
        warmup_s=10,
        start_window_s=5,
    ),
}
# Scaling in flows under the same per-flow conditions (2 Mb/s of capacity per flow, wmax 32,
# ~5M bottleneck packets each): cost per packet should grow no faster than log(flows).
for _n in (10, 100, 1000, 10_000):
    SCENARIOS[f"scaling {_n} flows, {2 * _n} Mb/s"] = dict(
        tcp="newreno",
        flows=_n,
        core_mbps=2.0 * _n,
        buffer_pkts=max(20, _n // 10),
        wmax_pkts=32,
        rtt_ms=100,
        rtt_spread_ms=50,
        duration_s=max(10.0, 5e6 / (2.0 * _n * 1e6 / 8000)),
        warmup_s=2,
        start_window_s=1,
    )
# The traffic mix of Appenzeller et al.'s Fig. 12: ~200,000 short flows (slot reuse keeps memory flat).
SCENARIOS["400Mb/s 300 long + 80Mb/s short flows B=129 reno"] = dict(
    tcp="reno",
    flows=300,
    buffer_pkts=129,
    core_mbps=400,
    short_mbps=80,
    rtt_ms=80,
    rtt_spread_ms=80,
    wmax_pkts=100_000,
    duration_s=300,
    warmup_s=30,
    start_window_s=5,
)
SCENARIOS["memory: 10000 flows, 1 Gb/s"] = dict(
    tcp="newreno",
    flows=10_000,
    buffer_pkts=100,
    core_mbps=1000,
    rtt_ms=100,
    rtt_spread_ms=50,
    wmax_pkts=10_000,
    duration_s=30,
    warmup_s=5,
    start_window_s=5,
)
NEW_ONLY: dict[str, dict] = {
    # Two 100 Mb/s links in series, 100 flows on each of the three routes (300 flows).
    "parking lot 2 x 100Mb/s, 300 flows, B=100 newreno": dict(
        tcp="newreno",
        flows=100,
        buffer_pkts=100,
        core_mbps=100,
        rtt_ms=100,
        rtt_spread_ms=50,
        wmax_pkts=10_000,
        duration_s=100,
        warmup_s=10,
        start_window_s=5,
        topology="parking_lot",
    ),
    # ABS section 4.4's web scenario (conf/experiment/abs_web.yaml at 100 packets; a test keeps the
    # two equal): 20 FTP flows and 28 web sessions, ~100,000 object transfers in 1,200 s. Issue 15:
    # under 60 s of wall time and 500 MB.
    "ABS web: 10Mb/s, 20 FTP + 28 HTTP sessions, 1200 s": dict(
        tcp="sack",
        flows=20,
        buffer_pkts=100,
        core_mbps=10,
        rtt_ms=90,
        rtt_spread_ms=120,
        pkt_bytes=1000,
        wmax_pkts=100_000,
        duration_s=1200,
        warmup_s=20,
        start_window_s=1,
        traffic=[dict(kind="http", sessions=28)],
    ),
}

# Every window law with SACK on Dick's 60-flow scenario, beside Reno in the same run (issue 14:
# each at >= 2 M bottleneck packets per wall-second).
_DICK = {k: v for k, v in SCENARIOS["dick 45Mb/s 60 flows B=73 newreno"].items() if k != "tcp"}
VARIANTS: dict[str, dict] = {
    name: dict(tcp=name, **_DICK)
    for name in ("reno", "newreno", "sack", "bic", "cubic_2622", "highspeed", "htcp", "scalable", "westwood", "lp")
}
# Issue 33's laws, each at >= 0.5x Reno: DCTCP with its marking (K = 20) and ECN.
VARIANTS["dctcp (K=20)"] = dict(
    tcp={"cc": "dctcp", "recovery": "sack", "ecn": True}, queue={"name": "step", "k_pkts": 20}, **_DICK
)
VARIANTS["cubic_rfc9438 (sack)"] = dict(tcp={"cc": "cubic_rfc9438", "recovery": "sack"}, **_DICK)
VARIANTS["newreno + prr"] = dict(tcp={"cc": "newreno", "recovery": "prr"}, **_DICK)
VARIANTS["newreno + rack_tlp"] = dict(tcp={"cc": "newreno", "recovery": "rack_tlp"}, **_DICK)
VARIANTS["cubic (Linux)"] = dict(tcp="cubic", **_DICK)
VARIANTS["bbr (paced, rack_tlp)"] = dict(tcp="bbr", **_DICK)
VARIANTS["bbr (paced, sack)"] = dict(tcp={"cc": "bbr", "recovery": "sack", "release": "paced"}, **_DICK)

# Every queue discipline on the same scenario, beside drop-tail in the same run (issue 32: each at
# >= 0.6x drop-tail's bottleneck packets per wall-second), and FQ-CoDel with 1,000 flows (memory
# O(flows + buffer), against drop-tail's RSS).
DISCIPLINES: dict[str, dict] = {
    q: dict(tcp="newreno", queue=q, **_DICK) for q in ("droptail", "red", "codel", "pie", "fq_codel")
}
DISCIPLINES["step (K=20, ECN)"] = dict(tcp={"ecn": True}, queue={"name": "step", "k_pkts": 20}, **_DICK)
_THOUSAND = {k: v for k, v in SCENARIOS["1Gb/s 1000 flows B=20 access 10Mb/s reno"].items() if k != "buffer_pkts"}
DISCIPLINES.update(
    {f"{q}, 1000 flows 1Gb/s B=1000": dict(queue=q, buffer_pkts=1000, **_THOUSAND) for q in ("droptail", "fq_codel")}
)

# `repeat` runs in one process; the fastest is kept (see `compare`).
CHILD = """
import json, resource, sys, sim
fields, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
res = None
for _ in range(repeat):
    run = sim.run(**fields)
    if res is None or run.metrics()["wall_s"] < res.metrics()["wall_s"]:
        res = run
    del run
m = res.metrics()
m["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
# Packets sent by every link of the topology (the old engine has one, in the summary).
links = getattr(res, "links", None)
m["link_pkts"] = sum(links.column("departures_total").to_pylist()) if links is not None else m["bottleneck_pkts"]
print(json.dumps({k: v for k, v in m.items() if isinstance(v, (int, float, str))}))
"""


def run_one(fields: dict, pythonpath: Path = ROOT, repeat: int = 1) -> dict:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(fields), str(repeat)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=pythonpath,
    )
    m = json.loads(out.stdout.strip().splitlines()[-1])
    m["link_pkts_per_s"] = m["link_pkts"] / max(m["wall_s"], 1e-9)
    return m


def build_baseline(ref: str) -> Path:
    """The `sim` package of commit `ref`, with its engine built: a directory to put on PYTHONPATH."""
    sha = subprocess.run(
        ["git", "rev-parse", "--short", ref], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    tree = ROOT / ".bench" / f"baseline-{sha}"
    ext = tree / "sim" / f"_core{sysconfig.get_config_var('EXT_SUFFIX')}"
    if ext.exists():
        return tree
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", sha, "sim"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    Console(stderr=True).print(f"building the baseline engine of {sha} in {tree} (about 1 minute)...")
    subprocess.run(
        [
            "cargo",
            "build",
            "--release",
            "--quiet",
            "--features",
            "python",
            "--manifest-path",
            str(tree / "sim" / "Cargo.toml"),
        ],
        check=True,
        env=dict(os.environ, CARGO_TARGET_DIR=str(tree / "target")),
    )
    shutil.copy(tree / "target" / "release" / "libsim_core.so", ext)
    return tree


def _repeats(fields: dict) -> int:
    """In-process repeats so that one round lasts about 2 s of engine time (at ~3 M packets/s)."""
    pkts_estimate = fields["core_mbps"] * 1e6 / 8 / 1000 * fields["duration_s"]
    return max(1, min(5, round(2.0 / (pkts_estimate / 3e6))))


def compare(baseline: Path) -> Table:
    """Old and new engines alternately, ROUNDS rounds of `_repeats` runs each, best run kept.

    The engine is deterministic, so interference (the other core's work, the VM's neighbours,
    frequency changes) only ever adds time: the fastest of several runs estimates the engine's own
    speed, where a median of single runs does not. On the 2-core dev VM the same build's wall time
    spread 0.17-0.25 s over six runs of Dick's scenario, and medians of 3 single runs put
    identical-cost builds anywhere between 0.81x and 1.13x.
    """
    table = Table(title=f"engine benchmark: old ({baseline.name}) vs new, {ROUNDS} alternating rounds, best run")
    for col in (
        "scenario",
        "sim s",
        "util old/new",
        "pkts/s old",
        "pkts/s new",
        "new/old",
        "wall s new",
        "RSS MB old",
        "RSS MB new",
    ):
        table.add_column(col, justify="left" if col == "scenario" else "right")
    for name, fields in SCENARIOS.items():
        old, new, k = [], [], _repeats(fields)
        for _ in range(ROUNDS):
            old.append(run_one(fields, baseline, k))
            new.append(run_one(fields, ROOT, k))
        po, pn = max(r["pkts_per_s"] for r in old), max(r["pkts_per_s"] for r in new)
        table.add_row(
            name,
            f"{fields['duration_s']:.0f}",
            f"{old[0]['utilization']:.4f}/{new[0]['utilization']:.4f}",
            f"{po:,.0f}",
            f"{pn:,.0f}",
            f"{pn / po:.3f}",
            f"{min(r['wall_s'] for r in new):.2f}",
            f"{max(r['peak_rss_mb'] for r in old):.0f}",
            f"{max(r['peak_rss_mb'] for r in new):.0f}",
        )
    return table


INSTRUCTIONS_CHILD = "import json, sys, sim; print(sim.run(**json.loads(sys.argv[1])).metrics()['bottleneck_pkts'])"


def instructions_and_pkts(fields: dict, pythonpath: Path) -> tuple[int, int]:
    """Instructions the engine executes on `fields` (valgrind's callgrind, counting only inside
    `sim.run`: deterministic, so a 1% difference is real, where wall time on a shared VM is not),
    and the run's bottleneck packets."""
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            "--toggle-collect=*__pyfunction_run*",
            sys.executable,
            "-c",
            INSTRUCTIONS_CHILD,
            json.dumps(fields),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=pythonpath,
    )
    return int(re.search(r"Collected : (\d+)", out.stderr).group(1)), int(out.stdout.split()[-1])


MODERN = ("reno", *(n for n in VARIANTS if n.startswith(("dctcp", "cubic_rfc9438", "newreno +", "cubic (", "bbr"))))
"""Reno and issue 33's senders, whose speed the issue holds to at least half of Reno's."""


def variant_instructions(seconds: float = 40.0) -> Table:
    """Instructions per bottleneck packet of Reno and issue 33's senders on `seconds` of Dick's
    scenario (callgrind): the deterministic side of `variants`, whose wall-clock ratios move with
    the VM by several hundredths from one run to the next."""
    table = Table(title=f"TCP variants by instructions (callgrind), Dick's scenario, {seconds:.0f} s")
    for col in ("tcp", "instructions", "bottleneck pkts", "instructions/pkt", "vs reno"):
        table.add_column(col, justify="left" if col == "tcp" else "right")
    per_pkt = {}
    for name in MODERN:
        n, pkts = instructions_and_pkts(dict(VARIANTS[name], duration_s=seconds), ROOT)
        per_pkt[name] = n / max(pkts, 1)
        table.add_row(name, f"{n:,}", f"{pkts:,}", f"{per_pkt[name]:,.0f}", f"{per_pkt['reno'] / per_pkt[name]:.2f}")
    return table


def compare_instructions(baseline: Path, scale: float) -> Table:
    """Instructions per bottleneck packet, old engine and new, on every scenario's measured
    interval cut to `scale` (callgrind runs ~50x slower) and on 40 s of BBR in Dick's scenario:
    per packet, so a change of behaviour (BBR's packets differ between versions) is still a
    like-for-like cost."""
    title = f"engine instructions per bottleneck packet (callgrind): old ({baseline.name}) vs new"
    table = Table(title=f"{title}, measured interval x {scale}")
    for col in ("scenario", "sim s", "pkts old", "pkts new", "instr/pkt old", "instr/pkt new", "new/old"):
        table.add_column(col, justify="left" if col == "scenario" else "right")
    runs = {
        name: dict(
            fields,
            duration_s=fields["warmup_s"]
            + fields["start_window_s"]
            + (fields["duration_s"] - fields["warmup_s"]) * scale,
        )
        for name, fields in SCENARIOS.items()
    }
    runs["bbr (paced, rack_tlp), Dick's scenario"] = dict(VARIANTS["bbr (paced, rack_tlp)"], duration_s=40.0)
    for name, f in runs.items():
        (n_old, p_old), (n_new, p_new) = instructions_and_pkts(f, baseline), instructions_and_pkts(f, ROOT)
        old, new = n_old / max(p_old, 1), n_new / max(p_new, 1)
        sizes = (f"{f['duration_s']:.1f}", f"{p_old:,}", f"{p_new:,}")
        table.add_row(name, *sizes, f"{old:,.0f}", f"{new:,.0f}", f"{new / old:.3f}")
    return table


def current() -> Table:
    table = Table(title="engine benchmark (one core)")
    for col in ("scenario", "sim s", "util", "link pkts/s", "ns/pkt", "events/s", "wall s", "peak RSS MB"):
        table.add_column(col, justify="left" if col == "scenario" else "right")
    for name, fields in {**SCENARIOS, **NEW_ONLY}.items():
        m = run_one(fields)
        table.add_row(
            name,
            f"{fields['duration_s']:.0f}",
            f"{m['utilization']:.3f}",
            f"{m['link_pkts_per_s']:,.0f}",
            f"{1e9 / m['link_pkts_per_s']:.0f}",
            f"{m['events_per_s']:,.0f}",
            f"{m['wall_s']:.2f}",
            f"{m['peak_rss_mb']:.0f}",
        )
    return table


INTERLEAVED_ROUNDS = 5
"""Passes over the variants and the disciplines: the VM's speed drifts by up to 40% over a minute."""


def fastest_interleaved(configs: dict[str, dict]) -> dict[str, dict]:
    """Each config's fastest of INTERLEAVED_ROUNDS runs, taken in as many passes over all of them (a
    process a run): a slow spell of the VM then costs every config a run, where runs taken config by
    config once put NewReno at 0.64x Reno and SACK NewReno at 0.94x in the same table."""
    best: dict[str, dict] = {}
    for _ in range(INTERLEAVED_ROUNDS):
        for name, fields in configs.items():
            m = run_one(fields)
            if name not in best or m["pkts_per_s"] > best[name]["pkts_per_s"]:
                best[name] = m
    return best


def variants() -> Table:
    """Bottleneck packets per wall-second of every TCP variant on Dick's 60-flow scenario, the
    fastest of INTERLEAVED_ROUNDS interleaved runs each."""
    table = Table(title="TCP variants, Dick 45 Mb/s 60 flows B=73 (one core)")
    for col in ("tcp", "util", "loss", "bottleneck pkts/s", "vs reno"):
        table.add_column(col, justify="left" if col == "tcp" else "right")
    rates = {}
    for name, m in fastest_interleaved(VARIANTS).items():
        rates[name] = m["pkts_per_s"]
        table.add_row(
            name,
            f"{m['utilization']:.3f}",
            f"{m['loss_rate']:.4f}",
            f"{rates[name]:,.0f}",
            f"{rates[name] / rates['reno']:.2f}",
        )
    return table


def disciplines() -> Table:
    """Bottleneck packets per wall-second and peak RSS of every queue discipline, each against
    drop-tail on the same scenario in the same run (the fastest of INTERLEAVED_ROUNDS runs each)."""
    table = Table(title="queue disciplines (one core): Dick 45 Mb/s 60 flows B=73 newreno, and 1,000 flows")
    cols = ("queue", "util", "mean sojourn ms", "early+marks", "bottleneck pkts/s", "vs droptail", "peak RSS MB")
    for col in cols:
        table.add_column(col, justify="left" if col == "queue" else "right")
    base: dict = {}
    for name, m in fastest_interleaved(DISCIPLINES).items():
        if DISCIPLINES[name]["queue"] == "droptail":  # each block's first row
            base = m
        table.add_row(
            name,
            f"{m['utilization']:.3f}",
            f"{m['mean_queue_delay_ms']:.1f}",
            f"{m['bottleneck_early_drops'] + m['bottleneck_marks']:,}",
            f"{m['pkts_per_s']:,.0f}",
            f"{m['pkts_per_s'] / base['pkts_per_s']:.2f}",
            f"{m['peak_rss_mb']:.0f} ({m['peak_rss_mb'] / base['peak_rss_mb']:.2f}x)",
        )
    return table


CORE_SECONDS = 2.0
"""How long each `core_100g` run lasts in the bench (the preset's 10 s take minutes at 100,000
flows; memory does not grow with the duration once every flow has started)."""


def core() -> Table:
    """The `core_100g` preset (100 Gb/s, 10,000 and 100,000 flows behind 100 Mb/s access links),
    cut to CORE_SECONDS: packets per second and the peak RSS, which must stay O(flows + buffer),
    under 2 GB at 100,000 flows (issue 34)."""
    from sweeps.api import JobList, compose_config

    table = Table(title=f"core_100g: 100 Gb/s core, {CORE_SECONDS:g} s of the preset (one run each)")
    for col in ("flows", "bottleneck pkts", "events", "wall s", "pkts/s", "peak RSS MB", "< 2 GB"):
        table.add_column(col, justify="right")
    for flows in (10_000, 100_000):
        over = [f"flows={flows}", f"duration_s={CORE_SECONDS}", f"warmup_s={CORE_SECONDS / 2}"]
        over.append(f"start_window_s={CORE_SECONDS / 4}")
        cfg = JobList(compose_config(["+experiment=core_100g", *over]), [{}]).specs()[0].sim
        m = run_one(cfg.to_dict())
        table.add_row(
            f"{flows:,}",
            f"{m['bottleneck_pkts']:,}",
            f"{m['events']:,}",
            f"{m['wall_s']:.1f}",
            f"{m['pkts_per_s']:,.0f}",
            f"{m['peak_rss_mb']:.0f}",
            "yes" if m["peak_rss_mb"] < 2048 else "**no**",
        )
    return table


MILLION = dict(flows=1_000_000, core_mbps=10, duration_s=20)
"""Issue 56's million long flows (default TCP, Reno): what one flow holds, run to the end."""
FLOW_MEMORY_BASELINE = "0c7b28c"
"""The engine before issue 56 (0.16.0, 2.2 KB a flow): the 'old' of `flow_memory`."""


def flow_memory() -> Table:
    """Bytes per long flow at a million flows, old and new engine side by side: the peak RSS of
    a run of MILLION less that of a tiny run in the same kind of process (the interpreter,
    pyarrow and the engine), over the flows (issue 56: <= 1.3 KB, docs/performance.md)."""
    table = Table(title=f"bytes per flow: {MILLION}, peak RSS less a tiny run's, one run each")
    for col in ("engine", "tiny run RSS MB", "peak RSS MB", "bytes per flow", "wall s", "<= 1.3 KB"):
        table.add_column(col, justify="left" if col == "engine" else "right")
    for name, path in ((f"old ({FLOW_MEMORY_BASELINE})", build_baseline(FLOW_MEMORY_BASELINE)), ("new", ROOT)):
        base, m = run_one(TINY, path), run_one(MILLION, path)
        per_flow = (m["peak_rss_mb"] - base["peak_rss_mb"]) * 2**20 / MILLION["flows"]
        table.add_row(
            name,
            f"{base['peak_rss_mb']:.0f}",
            f"{m['peak_rss_mb']:.0f}",
            f"{per_flow:,.0f}",
            f"{m['wall_s']:.1f}",
            "yes" if per_flow <= 1300 else "**no**",
        )
    return table


TINY = dict(flows=1, duration_s=0.01, warmup_s=0, start_window_s=0)
"""A tiny run: what a sweep of near-empty jobs pays per job in its worker, whatever the engine."""


def fixed_cost(rounds: int = 5, runs: int = 200) -> Table:
    """A tiny run's fixed cost in this process, `sim.run` from the call to its tables and metrics
    (what a sweep's worker reads), split into the config check, the engine and the tables; the
    tables built by column (as before issue 34) and as `sim.result.table` builds them,
    alternately; and the summary table, built only when asked for. The fastest round of each
    (issue 34: < 1 ms)."""
    import time

    import sim
    from sim import result

    def per_run(fn) -> float:
        t = time.perf_counter()
        for _ in range(runs):
            fn()
        return (time.perf_counter() - t) / runs * 1e3

    cfg = sim.SimConfig.from_fields(**TINY)
    stages = {
        "config check": lambda: sim.SimConfig.from_fields(**TINY),
        "engine": lambda: sim._core.run(cfg.to_dict()),
    }
    modes = {"tables by column (before)": 0, "tables as now": result.ROW_WISE_MAX_ROWS}
    stages["summary table, when asked for"] = lambda: sim.run(**TINY).summary
    best = dict.fromkeys([*stages, *modes], float("inf"))
    try:
        for _ in range(rounds):
            for name, limit in modes.items():
                result.ROW_WISE_MAX_ROWS = limit
                best[name] = min(best[name], per_run(lambda: sim.run(**TINY).metrics()))
            for name, fn in stages.items():
                best[name] = min(best[name], per_run(fn))
    finally:
        result.ROW_WISE_MAX_ROWS = modes["tables as now"]
    best["summary table, when asked for"] -= best["tables as now"]
    table = Table(title=f"a tiny run's fixed cost ({TINY}), ms, fastest of {rounds} rounds of {runs}")
    table.add_column("part")
    table.add_column("ms per run", justify="right")
    for name, ms in best.items():
        table.add_row(name if name in stages else f"whole run, {name}", f"{ms:.3f}")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a git ref whose engine to run side by side (e.g. 0cd694d)")
    parser.add_argument(
        "--instructions",
        type=float,
        metavar="SCALE",
        help="with --baseline, also count both "
        "engines' instructions under valgrind, each scenario's measured interval cut to SCALE "
        "(0.05 takes about 30 minutes)",
    )
    parser.add_argument(
        "--variant-instructions",
        action="store_true",
        help="also count the instructions per bottleneck packet of issue 33's senders against Reno's "
        "under valgrind (about 4 minutes)",
    )
    args = parser.parse_args()
    if args.instructions and not (args.baseline and shutil.which("valgrind")):
        parser.error("--instructions needs --baseline and valgrind on PATH")
    if args.variant_instructions and not shutil.which("valgrind"):
        parser.error("--variant-instructions needs valgrind on PATH")
    console = Console(width=160)
    with console.status("running scenarios..."):
        console.print(fixed_cost())
        console.print(current())
        console.print(variants())
        if args.variant_instructions:
            console.print(variant_instructions())
        console.print(disciplines())
        console.print(core())
        console.print(flow_memory())
        if args.baseline:
            baseline = build_baseline(args.baseline)
            console.print(compare(baseline))
            if args.instructions:
                console.print(compare_instructions(baseline, args.instructions))


if __name__ == "__main__":
    main()

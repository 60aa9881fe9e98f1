"""The engine beside htsim (`python -m bench.htsim`, part of `make bench`): the dumbbells a, b and c
on our engine, on htsim, and on htsim with one pipe a direction (the same events per packet as
ours), in interleaved rounds, as bottleneck packets per second of each event loop
(docs/performance.md, "Against htsim").

htsim is not a package: point HTSIM_SRC at a checkout of Broadcom/csg-htsim (commit 841d9e7;
`git clone https://github.com/Broadcom/csg-htsim && git -C csg-htsim checkout 841d9e7`). This
builds its library and our driver, `bench/htsim/dumbbell.cc`, into .bench/htsim (about 3 minutes
the first time); without HTSIM_SRC it says so and skips."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".bench" / "htsim"
COMMON = dict(rtt_ms=100, rtt_spread_ms=40, pkt_bytes=1000, wmax_pkts=10_000, warmup_s=1, seed=1, start_window_s=1)
SCENARIOS = {
    "a": dict(core_mbps=45, flows=60, buffer_pkts=73, duration_s=150, access_mbps=450),
    "b": dict(core_mbps=1000, flows=1000, buffer_pkts=20, duration_s=60, access_mbps=10),
    "c": dict(core_mbps=10_000, flows=1000, buffer_pkts=1000, duration_s=20, access_mbps=0),
}
"""Dick's 45 Mb/s link behind fast access links; 1,000 slow senders on 1 Gb/s; 1,000 flows on
10 Gb/s without access links. TCP: NewReno on ours, htsim's own TcpSrc."""
ENGINES = ("ours", "htsim", "htsim-1pipe")
OURS = """
import json, sys, sim
m = sim.run(tcp="newreno", **json.loads(sys.argv[1])).metrics()
# The engine's loop time, and every departure of the run from the bottleneck.
print(json.dumps({"loop_s": m["wall_s"], "bottleneck_pkts": m["pkts_per_s"] * m["wall_s"],
                  "utilization": m["utilization"]}))
"""


def build(src: Path) -> Path:
    """htsim's library (in its checkout) and our driver against it; the driver's path."""
    sim = src / "sim" if (src / "sim").is_dir() else src
    driver = WORK / "dumbbell"
    here = ROOT / "bench" / "htsim" / "dumbbell.cc"
    if driver.exists() and driver.stat().st_mtime > here.stat().st_mtime:
        return driver
    WORK.mkdir(parents=True, exist_ok=True)
    subprocess.run(["make", "-j2", "libhtsim.a"], cwd=sim, check=True, capture_output=True)
    cmd = ["g++", "-std=c++11", "-O3", f"-I{sim}", str(here), "-o", str(driver), f"-L{sim}", "-lhtsim"]
    subprocess.run(cmd, check=True)
    return driver


def wait_quiet(limit_s: float = 60.0) -> None:
    """Until the other processes use under a third of a core (2-s samples of /proc/stat), at
    most `limit_s`: a run that shares its core with another reads slower for no reason of its own."""

    def busy() -> float:
        v = list(map(int, open("/proc/stat").readline().split()[1:9]))
        return (sum(v) - v[3] - v[4] - v[7]) / os.sysconf("SC_CLK_TCK")

    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        b = busy()
        time.sleep(2)
        if (busy() - b) / 2 < 0.33:
            return


def run(engine: str, scenario: str, driver: Path) -> dict:
    fields = dict(COMMON, **SCENARIOS[scenario])
    wait_quiet()
    if engine == "ours":
        if not fields["access_mbps"]:
            del fields["access_mbps"]
        out = subprocess.run([sys.executable, "-c", OURS, json.dumps(fields)], capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    args = [f"{k}={v}" for k, v in fields.items()] + [f"split={int(engine == 'htsim')}"]
    out = subprocess.run([str(driver), *args], capture_output=True, text=True, check=True)
    return json.loads(out.stderr.strip().splitlines()[-1])


def main() -> int:
    src = os.environ.get("HTSIM_SRC")
    if not src:
        print("htsim: HTSIM_SRC (a checkout of Broadcom/csg-htsim at 841d9e7) not set; skipped (bench/htsim.py)")
        return 0
    driver = build(Path(src))
    rounds = int(os.environ.get("ROUNDS", "3"))
    table = Table(title=f"bottleneck packets per second of the event loop, {rounds} interleaved rounds")
    for col in ("scenario", "engine", "median", "best", "utilization", "ours / it, per round", "median ratio"):
        table.add_column(col, justify="left" if col in ("scenario", "engine") else "right")
    for s in SCENARIOS:
        rate: dict[str, list[float]] = {e: [] for e in ENGINES}
        util: dict[str, float] = {}
        for _ in range(rounds):
            for e in ENGINES:
                r = run(e, s, driver)
                rate[e].append(r["bottleneck_pkts"] / r["loop_s"])
                util[e] = r["utilization"]
        for e in ENGINES:
            ratios = [o / x for o, x in zip(rate["ours"], rate[e])]
            table.add_row(
                s,
                e,
                f"{statistics.median(rate[e]):,.0f}",
                f"{max(rate[e]):,.0f}",
                f"{util[e]:.4f}",
                "" if e == "ours" else ", ".join(f"{x:.2f}" for x in ratios),
                "" if e == "ours" else f"{statistics.median(ratios):.2f}",
            )
    Console(width=160).print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`python -m bench.kernel` (part of `make bench`; needs root): the kernel backend's own timing
error (issue 71; docs/kernel.md, "Timing"). One run of 64 CUBIC flows through 100 Mb/s, with
bsw-delayline on an idle machine, the same with the plain Python delay line of
`bench.delayline_py` (the first thing one writes), and bsw-delayline again with both cores kept
busy by two spinning processes: the delay line's lateness (p50, p99, max), the rate the
bottleneck gave, and whether the run flagged itself. Issue 71 asks for p99 under 50 us idle."""

from __future__ import annotations

import os
import subprocess
import sys

from rich.console import Console
from rich.table import Table

import sim
from sweeps.backends import kernel

CONFIG = sim.SimConfig(
    tcp="cubic",
    flows=64,
    core_mbps=100.0,
    rtt_ms=20.0,
    rtt_spread_ms=10.0,
    buffer_pkts=167,
    pkt_bytes=1500,
    duration_s=20.0,
    warmup_s=5.0,
)
"""64 flows at 100 Mb/s (issue 71's figure), RTTs 15-25 ms, one BDP of buffer."""
IDLE_P99_US = 50.0
PYTHON_LINE = [sys.executable, "-m", "bench.delayline_py"]


def spinners(n: int) -> list[subprocess.Popen]:
    """n processes that keep a core each busy until killed (by PID)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def measure(label: str, load: int, line: list[str] | None) -> list[str]:
    busy = spinners(load)
    try:
        m = kernel.run(CONFIG, delay_line=line).metrics
    finally:
        for p in busy:
            p.kill()
            p.wait()
    ratio = m["emulation_rate_ratio"]
    return [
        label,
        f"{m['emulation_lateness_p50_us']:.1f}",
        f"{m['emulation_lateness_p99_us']:.1f}",
        f"{m['emulation_lateness_max_us']:.0f}",
        "-" if ratio is None else f"{ratio:.4f}",
        f"{m['utilization']:.4f}",
        m["timing_suspect"] or "no",
    ]


def main() -> None:
    console = Console(width=170)
    why = kernel.missing()
    if why:
        console.print(f"bench.kernel: skipped ({why})")
        return
    load1 = os.getloadavg()[0]
    table = Table(
        title=f"kernel backend timing: {CONFIG.flows} cubic flows, {CONFIG.core_mbps:g} Mb/s, "
        f"{CONFIG.duration_s:g} s (a packet every {CONFIG.pkt_bytes * 8 / CONFIG.core_mbps:.0f} us); "
        f"load average before: {load1:.2f}",
        title_justify="left",
    )
    for col in ("delay line, machine", "lateness p50 (us)", "p99 (us)", "max (us)", "rate given / set", "util"):
        table.add_column(col, justify="right")
    table.add_column("timing_suspect", overflow="fold")
    table.add_row(*measure("bsw-delayline (Rust), idle", 0, None))
    table.add_row(*measure("Python (select), idle", 0, PYTHON_LINE))
    table.add_row(*measure("bsw-delayline, 2 cores busy", 2, None))
    console.print(table)
    console.print(
        f"issue 71: p99 under {IDLE_P99_US:g} us on an idle machine (the first row), and the loaded "
        "run flagged (its timing_suspect)."
    )


if __name__ == "__main__":
    main()

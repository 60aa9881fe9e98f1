"""Memory that runs out is an error, not an abort (issue 73): a run is refused before it starts
when its estimate does not fit what the process may still allocate (an address-space limit, a
cgroup's), and stopped with MemoryError once it outgrows its budget (`sim/src/memory.rs`). The
address-space limit is set in a child process, so that this one keeps its own."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sim

UNDER_ULIMIT = """
import resource, sys
import sim
resource.setrlimit(resource.RLIMIT_AS, (4_000_000 * 1024, resource.RLIM_INFINITY))  # ulimit -v 4000000
print(sim.cost.headroom())
try:
    sim.run(tcp="bbr", flows=1_000_000, core_mbps=100_000, duration_s=10, warmup_s=1)
except (ValueError, MemoryError) as e:
    print(type(e).__name__, e)
print(sim.run(flows=2, duration_s=2, warmup_s=1).row["utilization"] > 0)
"""


def test_a_million_bbr_flows_under_a_4_gb_address_space_are_refused_and_the_process_lives():
    out = subprocess.run([sys.executable, "-c", UNDER_ULIMIT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    room, refusal, after = out.stdout.strip().splitlines()
    assert "RLIMIT_AS" in room and 3.0 < float(room.split(",")[0].strip("(")) < 4.0, room
    assert refusal.startswith("ValueError limits.max_memory_gb: this run needs about "), refusal
    assert "this process may still allocate (the address-space limit (RLIMIT_AS, ulimit -v))" in refusal
    assert "driven by flows=1000000" in refusal
    assert after == "True", "the process runs on"


def test_a_run_past_its_budget_raises_memory_error_naming_it_and_its_keys():
    cfg = sim.SimConfig(flows=40, duration_s=30, warmup_s=1, sample_interval_s=0.001)
    with pytest.raises(
        MemoryError,
        match=r"^memory: the run outgrew the memory it may allocate \(limits.run_memory_mb\): "
        r"\d+\.\d MB needed running, over a budget of 0\.3 MB at \d+\.\d+ s of simulated time; "
        r"driven by sample_interval_s=0\.001",
    ):
        sim.run(cfg, limits=sim.Limits(run_memory_mb=0.3))
    with pytest.raises(MemoryError, match="needed reserving the flow tables"):
        sim.run(sim.SimConfig(flows=20_000, duration_s=2, warmup_s=1), limits=sim.Limits(run_memory_mb=0.5))
    # The same run with room to grow finishes, and the thread keeps no budget after either.
    assert sim.run(cfg, limits=sim.Limits(run_memory_mb=500)).row["utilization"] > 0
    assert sim.run(cfg).row["utilization"] > 0

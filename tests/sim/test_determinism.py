"""Same config and seed: bit-identical results in separate processes; another seed differs."""

import json
import subprocess
import sys

SCRIPT = """
import json, sys, sim
res = sim.run(tcp="newreno", flows=30, buffer_pkts=20, core_mbps=45, rtt_spread_ms=40, duration_s=30,
              warmup_s=5, seed=int(sys.argv[1]))
row = res.metrics()
for k in ("wall_s", "events_per_s", "pkts_per_s"):
    row.pop(k)
row["timeseries"] = res.timeseries.to_pydict()
row["flows"] = res.flows.to_pydict()
print(json.dumps(row, sort_keys=True).encode().hex())
"""


def run_in_process(seed: int) -> dict:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(seed)], capture_output=True, text=True, check=True)
    return json.loads(bytes.fromhex(out.stdout.strip()))


def test_same_seed_is_bit_identical_across_processes():
    a = run_in_process(3)
    b = run_in_process(3)
    assert a == b  # floats compared exactly (json round-trips f64 exactly)
    c = run_in_process(4)
    assert c["utilization"] != a["utilization"]
    assert c["flows"]["goodput_mbps"] != a["flows"]["goodput_mbps"]

"""Ctrl-C stops a running simulation promptly (the engine polls for signals while the GIL is
released) and raises KeyboardInterrupt."""

import signal
import subprocess
import sys
import time

SCRIPT = """
import sys, time, sim
print("start", flush=True)
t = time.monotonic()
try:
    sim.run(tcp="reno", flows=100, core_mbps=1000, buffer_pkts=100, duration_s=100000, warmup_s=1)
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - t:.2f}", flush=True)
    sys.exit(3)
"""


def test_ctrl_c_stops_a_run():
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "start"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 3, out
    assert float(out.split()[-1]) < 5  # it did not run the 100,000 simulated seconds

"""One kernel run, as its own process (issue 71; docs/kernel.md):

    python -m sweeps.backends.kernel_run REQUEST.json MEASURED.json

builds the testbed (`kernel_testbed.py`), starts the delay line, sink and sender in their
namespaces, samples the bottleneck's queue from the router's netlink socket for `duration_s` of
wall time, stops and removes everything, and writes what it measured (queue counters, the
sockets' TCP_INFO samples, the delay line's statistics) as JSON. `kernel_records.py` turns that
into the engine's tables.

Why a process of its own: the run owns nothing of its Ray worker (threads, event loop, signal
handlers: Ray's SIGTERM handler, inherited by pyroute2's forked helpers, once unwound a run's
testbed from inside a fork, `kernel_testbed._quiet_forks`), it ends with its worker (PDEATHSIG)
and removes its namespaces on the way out; a kill -9 leaves them to the next run's `reap`."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from sweeps.backends import kernel_testbed as tb

ROOT = Path(__file__).resolve().parents[2]
DELAYLINE = ROOT / "sim" / "target" / "release" / "bsw-delayline"
"""The delay line, built by `make install` (sim/src/bin/delayline.rs)."""
SINK_PORT = 5201
FIRST_PORT = 40000
"""Flow i sends from port FIRST_PORT + i: the delay line's key for its RTT."""
SPIN_US = 40
"""The delay line spins this long before each release (`bsw-delayline --spin-us`)."""
QUEUE_SAMPLE_S = 0.01
"""The bottleneck's counters are read this often (at most): its backlog's integral is the mean
queue, and the counters at any instant are interpolated between two reads."""
PR_SET_PDEATHSIG = 1


def measure(req: dict[str, Any]) -> dict[str, Any]:
    """The run `req` describes (`kernel.request`): {"queue": counters over time, "samples":
    TCP_INFO over time, "line": the delay line's statistics}."""
    tb.reap()
    with (
        tempfile.TemporaryDirectory(prefix="bsw-kernel-") as tmp,
        tb.testbed(
            uuid.uuid4().hex[:8],
            tb.Spec(
                req["rate_mbps"],
                req["limit_pkts"],
                req["mtu"],
                req["init_cwnd"],
                req["ecn"],
                req["window_bytes"],
                req["burst_us"],
            ),
        ) as bed,
    ):
        delays = Path(tmp) / "delays"
        delays.write_text("default 0\n" + "".join(f"{f['port']} {f['rtt_ms'] * 1e3:.3f}\n" for f in req["flows"]))
        started: list[subprocess.Popen] = []
        try:
            line = req.get("delay_line") or [str(DELAYLINE), "--spin-us", str(SPIN_US)]
            delay = _start(bed.names["r"], [*line, "--tun", "tun0", "--delays", str(delays)])
            started.append(delay)
            sink = _start(bed.names["d"], _traffic("sink", "--port", str(SINK_PORT), *req["sink_args"]))
            started.append(sink)
            if sink.stdout.readline().strip() != b"ready":  # type: ignore[union-attr]
                raise RuntimeError(f"the sink did not start: {sink.stderr.read()[-300:]!r}")  # type: ignore[union-attr]
            t0 = time.monotonic() + 0.3
            plan = {
                "t0": t0,
                "flows": req["flows"],
                "src": tb.NET["s"],
                "dst": tb.NET["d"],
                "dst_port": SINK_PORT,
                "sample_s": req["sample_s"],
                "duration_s": req["duration_s"],
            }
            (Path(tmp) / "plan.json").write_text(json.dumps(plan))
            out = Path(tmp) / "samples.json"
            sender = _start(bed.names["s"], _traffic("send", "--plan", f"{tmp}/plan.json", "--out", str(out)))
            started.append(sender)
            queue = sample_queue(bed, t0, req)
            sender.wait(timeout=req["duration_s"] + 60)
            stats = _stop(delay, sink)
            started.clear()
            if sender.returncode != 0 or not out.exists():
                raise RuntimeError(f"the sender failed: {sender.stderr.read()[-300:]!r}")  # type: ignore[union-attr]
            return {"queue": queue, "samples": json.loads(out.read_text())["samples"], "line": stats}
        finally:
            for p in started:
                p.kill()
                p.wait()


def _traffic(*argv: str) -> list[str]:
    return [sys.executable, "-m", "sweeps.backends.kernel_traffic", *argv]


def _start(namespace: str, argv: list[str]) -> subprocess.Popen:
    """A process in a namespace of the testbed; it ends when its stdin closes."""
    return subprocess.Popen(
        ["ip", "netns", "exec", namespace, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )


def _stop(delay: subprocess.Popen, sink: subprocess.Popen) -> dict[str, Any]:
    """Closes the delay line and the sink; the delay line's statistics."""
    for p in (sink, delay):
        p.stdin.close()  # type: ignore[union-attr]
    out = delay.stdout.read()  # type: ignore[union-attr]
    delay.wait(timeout=30)
    sink.wait(timeout=30)
    if delay.returncode != 0 or not out.strip():
        err = delay.stderr.read()[-300:].decode(errors="replace")  # type: ignore[union-attr]
        raise RuntimeError(f"the delay line failed (exit {delay.returncode}): {err!r}")
    return json.loads(out.decode().strip().splitlines()[-1])


def sample_queue(bed: tb.Testbed, t0: float, req: dict[str, Any]) -> list[dict[str, float]]:
    """The pfifo's counters every QUEUE_SAMPLE_S from t0 to the run's end, as (time_s from t0,
    counters): read from the router's namespace while the run goes on."""
    from pyroute2 import NetNS

    r = NetNS(bed.names["r"])
    try:
        out, next_t = [], 0.0
        while next_t <= req["duration_s"] + QUEUE_SAMPLE_S:
            time.sleep(max(0.0, t0 + next_t - time.monotonic()))
            out.append({"time_s": time.monotonic() - t0, **tb.queue_stats(r, bed.bottleneck)})
            next_t += QUEUE_SAMPLE_S
        return out
    finally:
        r.close()


def main(argv: list[str]) -> int:
    """Measures REQUEST into MEASURED (atomically); exit 1 with the error's line on stderr."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    main_pid = os.getpid()
    # SIGTERM unwinds this process (the testbed is removed); a fork of it just ends
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143) if os.getpid() == main_pid else os._exit(143))
    request, measured = Path(argv[0]), Path(argv[1])
    got = measure(json.loads(request.read_text()))
    tmp = measured.with_suffix(".tmp")
    tmp.write_text(json.dumps(got))
    tmp.replace(measured)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as e:  # noqa: BLE001 - one line for the run's error
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)

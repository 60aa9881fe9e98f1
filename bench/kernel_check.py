"""`python -m bench.kernel_check` (needs root; `make bench`): the kernel backend held against a
set-up built by hand, as a user would build it without buffersweep (issue 71, acceptance 2;
docs/kernel.md, "Checks"): namespaces, veths, ethtool, htb and pfifo made with `ip`, `tc` and
`ethtool` commands; the delay line `bench.delayline_py` (written apart from bsw-delayline);
iperf3 as sender and receiver; utilization and loss from `tc -s -j`, Jain from iperf3's
per-stream bytes. Eight points at 20 Mb/s and 50 ms (every flow the same RTT, all starting at
once, as iperf3 -P starts them); the bounds are issue 71's: utilization within 0.01, loss rate
within 25%, Jain within 0.05."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.table import Table

import sim
from sweeps.backends import kernel

RATE_MBPS, RTT_MS, PKT_BYTES, DURATION_S, WARMUP_S = 20.0, 50.0, 1500, 40.0, 10.0
BDP_PKTS = RATE_MBPS * 1e6 * RTT_MS / 1e3 / 8 / PKT_BYTES
POINTS = [
    ("cubic", 1, 1.0),
    ("cubic", 8, 0.3),
    ("cubic", 8, 1.0),
    ("reno_linux", 8, 0.3),
    ("reno_linux", 8, 1.0),
    ("bbr", 1, 1.0),
    ("bbr", 8, 0.3),
    ("bbr", 8, 1.0),
]
"""(tcp, flows, buffer in BDP)."""
BOUNDS = {"utilization": 0.01, "loss": 0.25, "jain": 0.05}
NET = "198.19"
"""The hand-built set-up's addresses: 198.19.0.0/16, the upper half of RFC 2544's range."""


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def ours(tcp: str, flows: int, factor: float) -> dict[str, float]:
    cfg = sim.SimConfig(
        tcp=tcp,
        flows=flows,
        core_mbps=RATE_MBPS,
        rtt_ms=RTT_MS,
        rtt_spread_ms=0.0,
        start_window_s=0.0,
        buffer_pkts=max(1, round(factor * BDP_PKTS)),
        pkt_bytes=PKT_BYTES,
        duration_s=DURATION_S,
        warmup_s=WARMUP_S,
    )
    m = kernel.run(cfg).metrics
    return {"utilization": m["utilization"], "loss": m["loss_rate"], "jain": m["jain_fairness"]}


@contextlib.contextmanager
def by_hand(limit_pkts: int) -> Iterator[dict[str, str]]:
    """S -- R -- D built with ip/tc/ethtool; R's r1 egress: htb at RATE_MBPS of IP packets and a
    pfifo of `limit_pkts`; ACKs from D policy-routed through tun0."""
    ns = {k: f"bswchk-{os.getpid()}-{k}" for k in "srd"}
    try:
        for name in ns.values():
            sh("ip", "netns", "add", name)
        sh("ip", "link", "add", "s0", "netns", ns["s"], "type", "veth", "peer", "name", "r0", "netns", ns["r"])
        sh("ip", "link", "add", "r1", "netns", ns["r"], "type", "veth", "peer", "name", "d0", "netns", ns["d"])
        for k, dev, addr in (("s", "s0", "0.1"), ("r", "r0", "0.2"), ("r", "r1", "1.1"), ("d", "d0", "1.2")):
            ex = ("ip", "netns", "exec", ns[k])
            sh(*ex, "ip", "addr", "add", f"{NET}.{addr}/24", "dev", dev)
            sh(*ex, "ip", "link", "set", dev, "up", "mtu", str(PKT_BYTES))
            sh(*ex, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off")
            sh(*ex, "ip", "link", "set", "lo", "up")
        r = ("ip", "netns", "exec", ns["r"])
        sh(*r, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0")
        sh("ip", "netns", "exec", ns["s"], "ip", "route", "add", f"{NET}.1.0/24", "via", f"{NET}.0.2")
        sh("ip", "netns", "exec", ns["d"], "ip", "route", "add", f"{NET}.0.0/24", "via", f"{NET}.1.1")
        wire_bits = RATE_MBPS * 1e6 * (PKT_BYTES + 14) / PKT_BYTES  # htb counts the Ethernet header
        sh(*r, "tc", "qdisc", "add", "dev", "r1", "root", "handle", "1:", "htb", "default", "10")
        rate = ("rate", f"{wire_bits:.0f}bit")
        sh(*r, "tc", "class", "add", "dev", "r1", "parent", "1:", "classid", "1:10", "htb", *rate)
        sh(*r, "tc", "qdisc", "add", "dev", "r1", "parent", "1:10", "handle", "10:", "pfifo", "limit", str(limit_pkts))
        sh(*r, "ip", "tuntap", "add", "dev", "tun0", "mode", "tun")
        sh(*r, "ip", "link", "set", "tun0", "up")
        sh(*r, "ip", "route", "add", "default", "dev", "tun0", "table", "100")
        sh(*r, "ip", "rule", "add", "iif", "r1", "table", "100")
        yield ns
    finally:
        for name in ns.values():
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


def qdisc(ns: str) -> dict[str, int]:
    for q in json.loads(sh("ip", "netns", "exec", ns, "tc", "-s", "-j", "qdisc", "show", "dev", "r1")):
        if q["kind"] == "pfifo":
            return {"packets": q["packets"], "drops": q["drops"]}
    raise RuntimeError("no pfifo on r1")


def theirs(tcp: str, flows: int, factor: float) -> dict[str, float]:
    cc = kernel.SENDERS[tcp]
    with by_hand(max(1, round(factor * BDP_PKTS))) as ns, tempfile.TemporaryDirectory() as tmp:
        delays = Path(tmp) / "delays"
        delays.write_text(f"default {RTT_MS * 1e3:.0f}\n")
        line = subprocess.Popen(
            ["ip", "netns", "exec", ns["r"], sys.executable, "-m", "bench.delayline_py", "--tun", "tun0"]
            + ["--delays", str(delays)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        server = subprocess.Popen(["ip", "netns", "exec", ns["d"], "iperf3", "-s", "-1"], stdout=subprocess.DEVNULL)
        try:
            time.sleep(1.0)
            args = ["iperf3", "-c", f"{NET}.1.2", "-C", cc, "-P", str(flows), "-t", str(int(DURATION_S) + 1), "-J"]
            client = subprocess.Popen(["ip", "netns", "exec", ns["s"], *args], stdout=subprocess.PIPE, text=True)
            t0 = time.monotonic()
            time.sleep(WARMUP_S)
            warm = qdisc(ns["r"])
            time.sleep(max(0.0, t0 + DURATION_S - time.monotonic()))
            end = qdisc(ns["r"])
            report = json.loads(client.communicate(timeout=60)[0])
        finally:
            for p in (server,):
                p.kill()
                p.wait()
            line.communicate(timeout=30)
    sent, drops = end["packets"] - warm["packets"], end["drops"] - warm["drops"]
    per_stream: dict[int, int] = {}
    for iv in report["intervals"]:
        for st in iv["streams"]:
            if st["start"] >= WARMUP_S - 1e-6 and st["end"] <= DURATION_S + 1e-6:
                per_stream[st["socket"]] = per_stream.get(st["socket"], 0) + st["bytes"]
    x = list(per_stream.values())
    jain = sum(x) ** 2 / (len(x) * sum(v * v for v in x)) if x and any(x) else None
    util = sent * PKT_BYTES * 8 / (RATE_MBPS * 1e6 * (DURATION_S - WARMUP_S))
    return {"utilization": util, "loss": drops / (sent + drops) if sent + drops else 0.0, "jain": jain}


def within(key: str, a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if key == "loss":
        return abs(a - b) <= BOUNDS[key] * max(a, b) or max(a, b) < 1e-4
    return abs(a - b) <= BOUNDS[key]


def main() -> None:
    console = Console(width=160)
    why = kernel.missing()
    if why:
        console.print(f"bench.kernel_check: skipped ({why})")
        return
    table = Table(title="kernel backend vs a set-up built by hand (iperf3, tc, Python delay line)")
    for col in ("tcp", "flows", "buffer (BDP)", "utilization ours / theirs", "loss", "Jain", "within"):
        table.add_column(col, justify="right")
    agree = 0
    for tcp, flows, factor in POINTS:
        a, b = ours(tcp, flows, factor), theirs(tcp, flows, factor)
        ok = all(within(k, a[k], b[k]) for k in BOUNDS)
        agree += ok
        table.add_row(
            tcp,
            str(flows),
            f"{factor:g}",
            f"{a['utilization']:.4f} / {b['utilization']:.4f}",
            f"{a['loss']:.4f} / {b['loss']:.4f}",
            f"{a['jain']:.3f} / {b['jain']:.3f}" if a["jain"] and b["jain"] else "-",
            "yes" if ok else "NO",
        )
    console.print(table)
    console.print(f"{agree} of {len(POINTS)} points within every bound ({BOUNDS})")


if __name__ == "__main__":
    main()

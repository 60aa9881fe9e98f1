"""`python -m bench.kernel_check` (needs root; `make bench`): the kernel backend held against a
set-up built by hand, as a user would build it without buffersweep (issue 71, acceptance 2;
docs/kernel.md, "Checks"): namespaces, veths, ethtool, htb and pfifo made with `ip`, `tc` and
`ethtool` commands; the delay line `bench.delayline_py` (written apart from bsw-delayline);
iperf3 as sender and receiver; utilization and loss from `tc -s -j`, Jain from iperf3's
per-stream bytes. Eight points at 20 Mb/s and 50 ms (every flow the same RTT, all starting at
once, as iperf3 -P starts them); the bounds are issue 71's: utilization within 0.01, loss rate
within 25%, and Jain within 0.05. `--repeats N` runs every point N times on each side and holds
the means; `--delayline rust` puts bsw-delayline in the hand-built set-up, to tell the delay
lines' share of a gap from the rest."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
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
from sweeps.backends.kernel_run import DELAYLINE, SPIN_US

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
MIN_DROPS = 128
"""Drops (per run, on both sides) below which a loss rate is not held to 25%: counting N drops
has a relative spread of 1/sqrt(N), so two counts differ by sqrt(2/N) by chance, and 25% is two
of those from N = 128 on."""
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
    return {
        "utilization": m["utilization"],
        "loss": m["loss_rate"],
        "jain": m["jain_fairness"],
        "drops": m["bottleneck_drops"],
    }


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


def theirs(tcp: str, flows: int, factor: float, rust_line: bool = False) -> dict[str, float]:
    cc = kernel.SENDERS[tcp]
    line_argv = (
        [str(DELAYLINE), "--spin-us", str(SPIN_US)] if rust_line else [sys.executable, "-m", "bench.delayline_py"]
    )
    with by_hand(max(1, round(factor * BDP_PKTS))) as ns, tempfile.TemporaryDirectory() as tmp:
        delays = Path(tmp) / "delays"
        delays.write_text(f"default {RTT_MS * 1e3:.0f}\n")
        line = subprocess.Popen(
            ["ip", "netns", "exec", ns["r"], *line_argv, "--tun", "tun0", "--delays", str(delays)],
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
    return {"utilization": util, "loss": drops / (sent + drops) if sent + drops else 0.0, "jain": jain, "drops": drops}


def within(key: str, a: dict[str, float], b: dict[str, float]) -> bool | None:
    """Within the bound; None for a loss rate over too few drops (MIN_DROPS) to hold."""
    x, y = a[key], b[key]
    if x is None or y is None:
        return x is y
    if key == "loss":
        if min(a["drops"], b["drops"]) < MIN_DROPS:
            return None
        return abs(x - y) <= BOUNDS[key] * max(x, y)
    return abs(x - y) <= BOUNDS[key]


def mean(runs: list[dict[str, float]]) -> dict[str, float]:
    """The runs' means, and the spread (max - min) of Jain across them."""
    out = {k: statistics.fmean(r[k] for r in runs) if all(r[k] is not None for r in runs) else None for k in runs[0]}
    jains = [r["jain"] for r in runs if r["jain"] is not None]
    out["jain_spread"] = max(jains) - min(jains) if jains else 0.0
    return out


def cell(key: str, a: dict[str, float], b: dict[str, float]) -> str:
    if key == "loss":
        text = f"{a['loss']:.4f} / {b['loss']:.4f}"
        return text if within(key, a, b) is not None else f"{text} (under {MIN_DROPS} drops)"
    text = f"{a['jain']:.3f} / {b['jain']:.3f}" if a["jain"] and b["jain"] else "-"
    spread = a["jain_spread"] or b["jain_spread"]
    return text + (f" (+-{a['jain_spread']:.3f} / {b['jain_spread']:.3f})" if spread else "")


def point_name(point: tuple[str, int, float]) -> str:
    """`bbr:8:0.3`, as `--point` takes it."""
    tcp, flows, factor = point
    return f"{tcp}:{flows}:{factor:g}"


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.kernel_check", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=1, help="runs of every point on each side (their means are held)")
    ap.add_argument("--delayline", choices=("python", "rust"), default="python", help="the hand-built set-up's")
    ap.add_argument("--point", action="append", metavar="TCP:FLOWS:BDP", help="only these of POINTS (e.g. bbr:8:1)")
    args = ap.parse_args()
    points = [p for p in POINTS if not args.point or point_name(p) in args.point]
    if not points:
        ap.error(f"--point: none of {args.point} is a point; the points are {', '.join(map(point_name, POINTS))}")
    console = Console(width=180)
    why = kernel.missing()
    if why:
        console.print(f"bench.kernel_check: skipped ({why})")
        return
    table = Table(title=f"kernel backend vs a set-up built by hand (iperf3, tc, {args.delayline} delay line)")
    for col in ("tcp", "flows", "buffer (BDP)", "utilization ours / theirs", "loss", "Jain", "within"):
        table.add_column(col, justify="right")
    agree, jains = 0, []
    for tcp, flows, factor in points:
        runs_a = [ours(tcp, flows, factor) for _ in range(args.repeats)]
        runs_b = [theirs(tcp, flows, factor, args.delayline == "rust") for _ in range(args.repeats)]
        a, b = mean(runs_a), mean(runs_b)
        if args.repeats > 1 and flows > 1:
            by_run = [[round(r["jain"], 3) for r in runs] for runs in (runs_a, runs_b)]
            jains.append(f"{point_name((tcp, flows, factor))} Jain by run, ours {by_run[0]}, theirs {by_run[1]}")
        ok = all(within(k, a, b) is not False for k in BOUNDS)
        agree += ok
        table.add_row(
            tcp,
            str(flows),
            f"{factor:g}",
            f"{a['utilization']:.4f} / {b['utilization']:.4f}",
            cell("loss", a, b),
            cell("jain", a, b),
            "yes" if ok else "NO",
        )
    console.print(table)
    for line in jains:
        console.print(line, highlight=False)
    console.print(f"{agree} of {len(points)} points within every bound ({BOUNDS}; {args.repeats} run(s) a side)")


if __name__ == "__main__":
    main()

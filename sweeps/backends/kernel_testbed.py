"""The kernel backend's testbed (issue 71; docs/kernel.md): three network namespaces built for one
run and removed after it, with netlink (pyroute2) rather than parsing `ip` and `tc`:

    senders (S) s0 ==veth== r0 router (R) r1 ==veth== d0 receivers (D)
                                 | tun0: the ACK path's delay line

- addresses from 198.18.0.0/15 (RFC 2544's benchmarking range): S 198.18.0.1, R 198.18.0.2 and
  198.18.1.1, D 198.18.1.2; nothing routes outside the three namespaces;
- the bottleneck is R's egress towards D: htb at the link's rate (plus Ethernet's 14 bytes a
  packet, which htb counts and the engine does not) with a burst of `burst_us` of that rate, and a
  pfifo of `limit` packets under it (the packets waiting: htb dequeues a packet as its
  transmission starts);
- every ACK from D is policy-routed (iif r1) into tun0, where `bsw-delayline` holds it for its
  flow's RTT, and leaves tun0 towards S by the main table: the TCP loop sees the whole RTT;
- offloads (TSO, GSO, GRO) off on every veth, so the bottleneck queues packets of the MTU;
- the senders' route carries `initcwnd`, and S's own sysctls `tcp_ecn` (namespaced, like
  ip_forward and rp_filter in R): no host sysctl, qdisc or route is touched.

Names: `bsw-<pid>-<run>-{s,r,d}`, the pid the worker's: the reaper (`reap`) removes the
namespaces of workers no longer alive, and kills what runs in them, at the next run."""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

PREFIX = "bsw-"
NET = {"s": "198.18.0.1", "r0": "198.18.0.2", "r1": "198.18.1.1", "d": "198.18.1.2"}
"""Addresses in 198.18.0.0/15, RFC 2544's range for benchmarking."""
ETHERNET_BYTES = 14
"""What a veth adds to an IP packet, which htb's rate counts."""
ROUTE_TABLE = 100
"""R's table for the ACK path: everything into tun0."""


@dataclass(frozen=True)
class Spec:
    """What a run's testbed is built with (`kernel.request` gives its values)."""

    rate_mbps: float
    limit_pkts: int
    """The bottleneck pfifo's limit: the packets waiting."""
    mtu: int
    init_cwnd: int
    ecn: bool
    window_bytes: int
    """The most a socket may buffer (tcp_wmem in S, tcp_rmem in D), so no window is capped by them."""
    burst_us: float = 0.0
    """htb's burst as a time at its rate (`_bottleneck`); 0: a whole packet."""


@dataclass
class Testbed:
    """One run's namespaces and what it started in them."""

    names: dict[str, str]
    """s, r, d -> namespace name."""
    bottleneck: int
    """r1's interface index in R."""


def namespace_names(run: str) -> dict[str, str]:
    return {k: f"{PREFIX}{os.getpid()}-{run}-{k}" for k in ("s", "r", "d")}


def reap() -> list[str]:
    """Removes the namespaces a dead worker left (kill -9 of a sweep): kills every process in
    them, then deletes them. Returns the names removed."""
    from pyroute2 import netns

    gone = []
    for name in netns.listnetns():
        parts = name.split("-")
        if not name.startswith(PREFIX) or len(parts) < 4 or not parts[1].isdigit():
            continue
        if _alive(int(parts[1])):
            continue
        remove(name)
        gone.append(name)
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove(name: str) -> None:
    """Kills what runs in namespace `name` and deletes it."""
    from pyroute2 import netns

    pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), 9)
    with contextlib.suppress(Exception):
        netns.remove(name)


@contextlib.contextmanager
def testbed(run: str, spec: Spec) -> Iterator[Testbed]:
    """The three namespaces of one run, removed at the end whatever happens."""
    names, owner = namespace_names(run), os.getpid()
    try:
        yield build(names, spec)
    finally:
        if os.getpid() == owner:  # not in a fork of this process (pyroute2 forks), which shares this frame
            for name in names.values():
                remove(name)


PROBE_ARGS = {
    "red": "limit 60000 min 10000 max 30000 avpkt 1000 burst 20 probability 0.1",
    "tbf": "rate 1mbit burst 10k latency 10ms",
}
"""Parameters a qdisc needs before tc asks the kernel for it (the others take their defaults)."""


@functools.cache
def has_qdisc(kind: str) -> bool:
    """Whether this kernel has qdisc `kind` (built in or loadable): added, with what tc needs, to
    the loopback of a scratch namespace, removed at once."""
    from pyroute2 import netns

    _quiet_forks()
    name = f"{PREFIX}{os.getpid()}-probe-q"
    netns.create(name)
    try:
        tried = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                name,
                "tc",
                "qdisc",
                "add",
                "dev",
                "lo",
                "root",
                kind,
                *PROBE_ARGS.get(kind, "").split(),
            ],
            capture_output=True,
            text=True,
        )
        return tried.returncode == 0
    finally:
        remove(name)


def _quiet_forks() -> None:
    """pyroute2 forks helpers (netns.create, NetNS) and stops them with SIGTERM: they must die of
    it, not run a handler of ours (a SystemExit in a fork would unwind this process's frames, and
    remove the testbed from under it; measured 2026-11-29: runs failing with ENODEV)."""
    from pyroute2 import config

    config.disable_mp_signal = True  # the forked helper resets SIGINT and SIGTERM to their defaults


def build(names: dict[str, str], spec: Spec) -> Testbed:
    from pyroute2 import NetNS, netns

    _quiet_forks()
    for name in names.values():
        netns.create(name)
    s, r, d = (NetNS(names[k]) for k in ("s", "r", "d"))
    try:
        s.link("add", ifname="s0", kind="veth", peer={"ifname": "r0", "net_ns_fd": names["r"]})
        r.link("add", ifname="r1", kind="veth", peer={"ifname": "d0", "net_ns_fd": names["d"]})
        ends = ((s, "s0", NET["s"]), (r, "r0", NET["r0"]), (r, "r1", NET["r1"]), (d, "d0", NET["d"]))
        for ns, ifname, address in ends:
            idx = ns.link_lookup(ifname=ifname)[0]
            ns.addr("add", index=idx, address=address, prefixlen=24)
            ns.link("set", index=idx, state="up", mtu=spec.mtu)
        for ns in (s, r, d):
            ns.link("set", index=ns.link_lookup(ifname="lo")[0], state="up")
        s.route("add", dst="198.18.1.0/24", gateway=NET["r0"], metrics={"initcwnd": spec.init_cwnd})
        d.route("add", dst="198.18.0.0/24", gateway=NET["r1"])
        _offloads_off(names, (("s", "s0"), ("r", "r0"), ("r", "r1"), ("d", "d0")))
        _sysctls(names, spec.ecn, spec.window_bytes)
        bottleneck = r.link_lookup(ifname="r1")[0]
        _bottleneck(r, bottleneck, spec)
        _ack_path(r)
        return Testbed(names, bottleneck)
    finally:
        for ns in (s, r, d):
            ns.close()


def _offloads_off(names: dict[str, str], links: tuple[tuple[str, str], ...]) -> None:
    """TSO, GSO and GRO off, so that every packet at the bottleneck is one of the MTU."""
    from pyroute2 import netns
    from pyroute2.ethtool import Ethtool

    for key, ifname in links:
        netns.pushns(names[key])
        try:
            e = Ethtool()
            feats = e.get_features(ifname)
            for f in feats.features:
                if f in ("tx-tcp-segmentation", "tx-tcp6-segmentation", "tx-generic-segmentation", "rx-gro"):
                    feats.features[f].enable = False
            e.set_features(ifname, feats)
            e.close()
        finally:
            netns.popns()


def _sysctls(names: dict[str, str], ecn: bool, window_bytes: int) -> None:
    """The namespaces' own sysctls (/proc/sys/net is the namespace of the thread that opens it):
    R forwards and does not filter the tun path by source; S negotiates ECN if the run asks."""
    from pyroute2 import netns

    values = {
        "r": {"net/ipv4/ip_forward": "1", "net/ipv4/conf/all/rp_filter": "0", "net/ipv4/conf/default/rp_filter": "0"},
        "s": {"net/ipv4/tcp_ecn": "1" if ecn else "0", "net/ipv4/tcp_wmem": f"4096 16384 {window_bytes}"},
        "d": {"net/ipv4/tcp_rmem": f"4096 131072 {window_bytes}"},
    }
    for key, sysctls in values.items():
        netns.pushns(names[key])
        try:
            for path, value in sysctls.items():
                with open(f"/proc/sys/{path}", "w") as f:
                    f.write(value)
        finally:
            netns.popns()


def _bottleneck(r: Any, idx: int, spec: Spec) -> None:
    """htb at the rate IP packets of `mtu` bytes leave at `rate_mbps` (htb counts Ethernet's 14
    bytes too), `burst_us` of the rate as its burst, and a pfifo of `limit_pkts` under it.

    htb sends while its tokens are not negative, then charges the packet, and an idle class
    keeps at most `burst` of tokens (`htb_accnt_tokens`, `htb_class_mode`, net/sched/sch_htb.c):
    a burst of a whole packet lets the second packet of every busy spell leave with the first (a
    free packet's time after each idle spell), one of a few microseconds only absorbs its
    timer's lateness (docs/kernel.md). `burst_us` 0: a whole packet (testbeds t1, t2)."""
    bits = spec.rate_mbps * 1e6 * (spec.mtu + ETHERNET_BYTES) / spec.mtu
    burst = max(1, int(bits / 8 * spec.burst_us / 1e6)) if spec.burst_us > 0 else spec.mtu + ETHERNET_BYTES
    r.tc("add", "htb", index=idx, handle="1:", default=0x10)
    r.tc(
        "add-class",
        "htb",
        index=idx,
        handle="1:10",
        parent="1:",
        rate=f"{int(bits)}bit",
        ceil=f"{int(bits)}bit",
        burst=burst,
        cburst=burst,
    )
    r.tc("add", "pfifo", index=idx, handle="10:", parent="1:10", limit=max(1, spec.limit_pkts))


def _ack_path(r: Any) -> None:
    """tun0 in R, and every packet arriving on r1 (the ACKs) routed into it."""
    r.link("add", ifname="tun0", kind="tuntap", mode="tun")
    idx = r.link_lookup(ifname="tun0")[0]
    r.link("set", index=idx, state="up")
    r.route("add", dst="0.0.0.0/0", oif=idx, table=ROUTE_TABLE, scope=253)  # scope link: a device route
    r.rule("add", iifname="r1", table=ROUTE_TABLE, priority=100)


def queue_stats(r: Any, idx: int) -> dict[str, int]:
    """The pfifo's counters: bytes and packets sent (dequeued), drops, and its backlog."""
    for q in r.get_qdiscs(index=idx):
        if q.get_attr("TCA_KIND") == "pfifo":
            basic = q.get_attr("TCA_STATS2").get_attr("TCA_STATS_BASIC")
            queue = q.get_attr("TCA_STATS2").get_attr("TCA_STATS_QUEUE")
            return {
                "bytes": basic["bytes"],
                "packets": basic["packets"],
                "drops": queue["drops"],
                "backlog_pkts": queue["qlen"],
                "backlog_bytes": queue["backlog"],
            }
    raise RuntimeError("the bottleneck's pfifo is gone")

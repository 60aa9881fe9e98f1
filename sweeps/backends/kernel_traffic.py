"""The kernel backend's traffic (issue 71; docs/kernel.md): long-lived TCP flows between two
namespaces, with the host's own TCP stack, run as

    python -m sweeps.backends.kernel_traffic sink --port 5201              (in D)
    python -m sweeps.backends.kernel_traffic send --plan FILE --out FILE   (in S)

The sink accepts every connection and discards what it reads, at real-time priority
(`SINK_PRIORITY`). The sender opens each flow of the
plan at its start time, from its own port (the delay line keys the flow's RTT on it), with its
congestion control (`TCP_CONGESTION`: cubic, reno or bbr), window clamp and send buffer, keeps
every socket full (non-blocking, one thread: the kernel does the sending), and samples each
socket's `TCP_INFO` (tcp(7), include/uapi/linux/tcp.h) every `sample_s`; at the end it writes
the samples as JSON. Both end when their stdin closes, so nothing outlives the run's driver.
Times are CLOCK_MONOTONIC, one clock for every namespace of the host."""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import socket
import struct
import sys
import time
from typing import Any

TCP_WINDOW_CLAMP, TCP_INFO, TCP_QUICKACK, TCP_CONGESTION = 10, 11, 12, 13
TCP_INFO_FORMAT = "<8B24I4Q6I4Q2I2Q6I2HI"
"""struct tcp_info up to tcpi_total_rto_time (include/uapi/linux/tcp.h): the RTO counters since
Linux 6.7 (commit 3868ab0f1925), the rest since 4.19. On an older kernel the fields its shorter
struct lacks read None (`tcp_info`)."""
TCP_INFO_FIELDS = (
    *("state", "ca_state", "retransmits", "probes", "backoff", "options", "wscale", "app_limited"),
    *("rto", "ato", "snd_mss", "rcv_mss", "unacked", "sacked", "lost", "retrans", "fackets"),
    *("last_data_sent", "last_ack_sent", "last_data_recv", "last_ack_recv", "pmtu", "rcv_ssthresh"),
    *("rtt", "rttvar", "snd_ssthresh", "snd_cwnd", "advmss", "reordering", "rcv_rtt", "rcv_space"),
    *("total_retrans", "pacing_rate", "max_pacing_rate", "bytes_acked", "bytes_received"),
    *("segs_out", "segs_in", "notsent_bytes", "min_rtt", "data_segs_in", "data_segs_out"),
    *("delivery_rate", "busy_time", "rwnd_limited", "sndbuf_limited", "delivered", "delivered_ce"),
    *("bytes_sent", "bytes_retrans", "dsack_dups", "reord_seen", "rcv_ooopack", "snd_wnd", "rcv_wnd"),
    *("rehash", "total_rto", "total_rto_recoveries", "total_rto_time"),
)
FIELD_ENDS = tuple(
    struct.calcsize("<" + "".join(c * int(n or 1) for n, c in re.findall(r"(\d*)([A-Za-z])", TCP_INFO_FORMAT))[: i + 1])
    for i in range(len(TCP_INFO_FIELDS))
)
"""Where each field ends in the struct, in bytes."""
KEPT = (
    *("ca_state", "rtt", "snd_cwnd", "snd_ssthresh", "total_retrans", "bytes_acked", "delivery_rate", "lost"),
    *("data_segs_out", "total_rto"),
)
"""What a sample keeps of each socket's TCP_INFO (rtt in us, delivery_rate in bytes/s)."""
CHUNK = b"\0" * 262144


def tcp_info(sock: socket.socket) -> dict[str, int | None]:
    """The socket's TCP_INFO; None for the fields past what this kernel wrote."""
    size = struct.calcsize(TCP_INFO_FORMAT)
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, size)
    values = struct.unpack(TCP_INFO_FORMAT, raw.ljust(size, b"\0"))
    return {f: v if end <= len(raw) else None for f, v, end in zip(TCP_INFO_FIELDS, values, FIELD_ENDS)}


def _stdin_closed() -> bool:
    import select

    readable, _, _ = select.select([sys.stdin], [], [], 0)
    return bool(readable) and not sys.stdin.buffer.read1(64)


SINK_PRIORITY = 5
"""The sink's SCHED_FIFO priority, below the delay line's 10 (docs/kernel.md): an ordinary task
on a busy host is preempted while it holds a socket in `recvmsg`, the segments arriving then
wait in the socket's backlog, and Linux acknowledges them with one stretch ACK at
`release_sock`; the sender then bursts what it frees (docs/fidelity.md)."""


def _realtime(priority: int) -> None:
    """This process at SCHED_FIFO `priority`, if permitted (root is; else it runs as it is)."""
    with contextlib.suppress(PermissionError):
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))


def sink(port: int, quickack: bool) -> None:
    """Accepts and drains every connection until stdin closes; with `quickack`, acknowledges every
    segment (TCP_QUICKACK after each read: the engine's tcp.delayed_ack=false)."""
    _realtime(SINK_PRIORITY)
    sel = selectors.DefaultSelector()
    lsock = socket.create_server(("0.0.0.0", port), backlog=4096, reuse_port=True)
    lsock.setblocking(False)
    sel.register(lsock, selectors.EVENT_READ, None)
    sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    print("ready", flush=True)
    buf = bytearray(1 << 20)
    while True:
        for key, _ in sel.select(timeout=1.0):
            if key.data == "stdin":
                if not sys.stdin.buffer.read1(64):
                    return
            elif key.data is None:
                conn, _ = lsock.accept()
                conn.setblocking(False)
                sel.register(conn, selectors.EVENT_READ, "conn")
            else:
                try:
                    n = key.fileobj.recv_into(buf)  # type: ignore[union-attr]
                    if quickack:
                        key.fileobj.setsockopt(socket.IPPROTO_TCP, TCP_QUICKACK, 1)  # type: ignore[union-attr]
                except (BlockingIOError, ConnectionError):
                    n = -1
                if n == 0:
                    sel.unregister(key.fileobj)
                    key.fileobj.close()  # type: ignore[union-attr]


def send(plan: dict[str, Any], out: str) -> None:
    """Runs the plan's flows (see the module's comment) and writes their samples to `out`."""
    t0, flows = plan["t0"], plan["flows"]
    sel = selectors.DefaultSelector()
    socks: dict[int, socket.socket] = {}
    samples: list[list[Any]] = []
    pending = sorted(range(len(flows)), key=lambda i: flows[i]["start_s"])
    next_sample = t0 + plan["sample_s"]
    end = t0 + plan["duration_s"]
    while time.monotonic() < end:
        now = time.monotonic()
        while pending and t0 + flows[pending[0]]["start_s"] <= now:
            i = pending.pop(0)
            socks[i] = _open(flows[i], plan)
            sel.register(socks[i], selectors.EVENT_WRITE, i)
        if now >= next_sample:
            samples.append([now - t0, {i: [tcp_info(s)[k] for k in KEPT] for i, s in socks.items()}])
            next_sample += plan["sample_s"]
        wake = min(next_sample, end, t0 + flows[pending[0]]["start_s"] if pending else end)
        for key, _ in sel.select(timeout=max(0.0, wake - time.monotonic())):
            try:
                key.fileobj.send(CHUNK)  # type: ignore[union-attr]
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as e:  # a connection that failed: the run reads it as a flow gone
                sel.unregister(key.fileobj)
                samples.append([time.monotonic() - t0, {"error": f"flow {key.data}: {e}"}])
        if _stdin_closed():
            break
    final = {i: [tcp_info(s)[k] for k in KEPT] for i, s in socks.items()}
    samples.append([time.monotonic() - t0, final])
    with open(out, "w") as f:
        json.dump({"kept": KEPT, "samples": samples}, f)
    for s in socks.values():
        s.close()


def _open(flow: dict[str, Any], plan: dict[str, Any]) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, flow["cc"].encode())
    got = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
    if got != flow["cc"]:  # never a run on the namespace's default (bbr here) by mistake
        raise RuntimeError(f"TCP_CONGESTION: asked for {flow['cc']}, the socket runs {got}")
    if flow.get("clamp_bytes"):
        s.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, flow["clamp_bytes"])
    if flow.get("sndbuf_bytes"):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, flow["sndbuf_bytes"])
    s.bind((plan["src"], flow["port"]))
    s.setblocking(False)
    s.connect_ex((plan["dst"], plan["dst_port"]))  # EINPROGRESS: writable once connected
    return s


def main(argv: list[str]) -> int:
    if argv[:1] == ["sink"]:
        sink(int(argv[argv.index("--port") + 1]), "--quickack" in argv)
        return 0
    if argv[:1] == ["send"]:
        with open(argv[argv.index("--plan") + 1]) as f:
            plan = json.load(f)
        send(plan, argv[argv.index("--out") + 1])
        return 0
    print("usage: kernel_traffic sink --port P | send --plan FILE --out FILE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A delay line in plain Python, written apart from `bsw-delayline` (issue 71; docs/kernel.md,
"Checks"): the independent set-up's (`bench.kernel_check`) and the baseline `bench.kernel` holds
the Rust one against. Same interface:

    python -m bench.delayline_py --tun NAME --delays FILE

holds every packet read from TUN device NAME (tun(4), IFF_TUN | IFF_NO_PI) for the delay of its
TCP destination port (`PORT MICROSECONDS` lines, and `default MICROSECONDS`), writes it back,
and when stdin closes prints one JSON line with the lateness of its releases (p50, p99, max in
ns). It sleeps in select(2) until each release: what a first Python delay line does."""

from __future__ import annotations

import fcntl
import heapq
import json
import os
import select
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000


def open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def read_delays(path: str) -> tuple[dict[int, int], int]:
    """(port -> delay ns, the default delay ns)."""
    ports, default = {}, 0
    for line in open(path).read().splitlines():
        key, us = line.split()
        if key == "default":
            default = int(float(us) * 1e3)
        else:
            ports[int(key)] = int(float(us) * 1e3)
    return ports, default


def dst_port(pkt: bytes) -> int | None:
    """The TCP destination port of an IPv4 packet, if it is TCP."""
    if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[9] != 6:
        return None
    ihl = (pkt[0] & 0xF) * 4
    return int.from_bytes(pkt[ihl + 2 : ihl + 4], "big") if len(pkt) >= ihl + 4 else None


def run(tun: str, delays: str) -> dict[str, float]:
    fd = open_tun(tun)
    ports, default = read_delays(delays)
    held: list[tuple[int, int, bytes]] = []
    late: list[int] = []
    seq = 0
    stdin = sys.stdin.fileno()
    while True:
        now = time.monotonic_ns()
        while held and held[0][0] <= now:
            due, _, pkt = heapq.heappop(held)
            os.write(fd, pkt)
            late.append(time.monotonic_ns() - due)
        timeout = max(0.0, (held[0][0] - time.monotonic_ns()) / 1e9) if held else 1.0
        ready, _, _ = select.select([fd, stdin], [], [], timeout)
        if stdin in ready and not os.read(stdin, 64):
            break
        if fd in ready:
            while True:
                try:
                    pkt = os.read(fd, 65536)
                except BlockingIOError:
                    break
                seq += 1
                heapq.heappush(held, (time.monotonic_ns() + ports.get(dst_port(pkt) or -1, default), seq, pkt))
    late.sort()

    def q(p: float) -> int:
        return late[min(len(late) - 1, int(p * len(late)))] if late else 0

    return {"packets": len(late), "lateness_p50_ns": q(0.5), "lateness_p99_ns": q(0.99), "lateness_max_ns": q(1.0)}


def main(argv: list[str]) -> int:
    tun, delays = argv[argv.index("--tun") + 1], argv[argv.index("--delays") + 1]
    print(json.dumps(run(tun, delays)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

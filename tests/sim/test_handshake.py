"""The Linux presets' handshake (`tcp.handshake`, sim/src/world/handshake.rs): the SYN crosses the
bottleneck's queue, can be lost, and is resent a second apart 5 times, then after 2, 4, 8... s;
data follows the SYN-ACK."""

import pytest

import sim

PATH = dict(flows=1, rtt_ms=50, rtt_spread_ms=0, core_mbps=10, pkt_bytes=1500, warmup_s=0, trace_start_s=0)
SYN_TX_S = 60 * 8 / 10e6  # the SYN's 60 bytes at 10 Mb/s


def bottleneck_events(**kw) -> list[tuple[float, str, int]]:
    """(time, event, seq) of the flow's packets reaching the bottleneck: enqueued or dropped (a
    SYN reads seq -1)."""
    tr = sim.run(**PATH, trace_max_events=10**6, **kw).trace.to_pydict()
    rows = zip(tr["time_s"], tr["event"], tr["seq"], tr["open_loop"])
    return [(t, e, s) for t, e, s, open_loop in rows if not open_loop and e != "dequeue"]


def test_a_linux_flow_sends_data_one_rtt_after_its_syn_and_an_ns2_agent_at_once():
    events = bottleneck_events(tcp="cubic", buffer_pkts=20, start_window_s=0, duration_s=1)
    syns = [(t, e) for t, e, s in events if s == -1]
    first_data = min(t for t, _, s in events if s >= 0)
    assert [e for _, e in syns] == ["enqueue"]
    # The SYN goes out at once on an idle link; the SYN-ACK comes back an RTT after it left.
    assert first_data - syns[0][0] == pytest.approx(0.050 + SYN_TX_S, abs=1e-6)
    reno = bottleneck_events(tcp="reno", buffer_pkts=20, start_window_s=0, duration_s=1)
    assert all(s >= 0 for _, _, s in reno)
    assert min(t for t, _, _ in reno) == 0.0


def test_a_dropped_syn_is_resent_after_one_second_and_the_data_waits_for_it():
    # Poisson traffic at twice the link's rate keeps a 2-packet queue full most of the time: this
    # seed's first SYN meets a full queue.
    events = bottleneck_events(tcp="cubic", buffer_pkts=2, poisson_mbps=20, start_window_s=0.5, duration_s=3, seed=1)
    syns = [(t, e) for t, e, s in events if s == -1]
    assert [e for _, e in syns] == ["drop", "enqueue"]
    assert syns[1][0] - syns[0][0] == pytest.approx(1.0, abs=1e-9)
    first_data = min(t for t, _, s in events if s >= 0)
    assert first_data >= syns[1][0] + 0.050


def test_a_connection_whose_syns_are_all_lost_gives_up_after_ten_resent():
    # Constant-rate traffic at six times the link's rate, in phase with it: this seed's SYNs
    # all meet a full queue. Linux 6.5+ keeps the 1-s timeout for 4 resent SYNs
    # (tcp_syn_linear_timeouts), then doubles it, and gives up after tcp_syn_retries (6) more.
    kw = dict(tcp="cubic", buffer_pkts=2, cbr_mbps=60, start_window_s=0.5, seed=1)
    events = bottleneck_events(**kw, duration_s=140)
    syns = [t for t, e, s in events if s == -1 and e == "drop"]
    assert len(syns) == len([t for t, _, s in events if s == -1]) == 11
    assert [round(b - a, 9) for a, b in zip(syns, syns[1:])] == [1, 1, 1, 1, 1, 2, 4, 8, 16, 32]
    assert not any(s >= 0 for _, _, s in events)


def test_after_two_resent_syns_the_first_window_is_one_packet():
    # tcp_init_transfer: cwnd 1 after more than one SYN retransmission, the initial window after one.
    def first_window(**kw) -> tuple[list[str], int]:
        events = bottleneck_events(tcp="cubic", buffer_pkts=2, start_window_s=0.5, duration_s=5, **kw)
        first_data = min(t for t, _, s in events if s >= 0)
        window = [s for t, _, s in events if s >= 0 and t < first_data + 0.040]  # within an RTT
        return [e for _, e, s in events if s == -1], len(window)

    assert first_window(cbr_mbps=30, seed=2) == (["drop", "drop", "enqueue"], 1)
    assert first_window(poisson_mbps=20, seed=1) == (["drop", "enqueue"], 10)

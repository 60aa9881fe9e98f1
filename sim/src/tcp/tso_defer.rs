//! Linux's TSO autosizing and deferral for an ACK-clocked sender (`tcp.tso_defer`). Linux builds
//! GSO skbs whatever the device, and a cwnd-limited flow's new data leaves in skbs of
//! `tcp_tso_autosize` packets: its pacing rate (`tcp_update_pacing_rate`: 1.2 x cwnd / srtt, 2 x
//! below half ssthresh) times 2^-10 s, plus 64 KB >> (min RTT / 512 us), at least 2
//! (`tcp_min_tso_segs`), at most 64 KB. `tcp_tso_should_defer` holds a send that fills less than
//! one skb, or than a third of the window, until the next ACK, unless the last send was more than
//! 1 ms ago or the oldest packet's ACK is due more than min(1 ms, srtt / 2) away (upstream
//! 295ce1eb36ae, in 6.18); `tcp_cwnd_test` caps an skb at half the window. net/ipv4/tcp_output.c,
//! Linux 6.18. An skb of two packets or more ends with PSH, as the kernel's do on the testbed
//! (measured, docs/fidelity.md), which the receiver ACKs at once (`receiver.rs`). Not modelled:
//! the write queue's own skb boundaries (an application's writes). Details: docs/tcp.md.

use crate::time::{from_secs, Time};

/// `sk_gso_max_size`: 64 KB less `MAX_TCP_HEADER` and one (`sk_setup_caps`), in bytes.
pub const GSO_MAX_BYTES: f64 = 65_536.0 - 1.0 - 320.0;
/// `tcp_min_tso_segs`: an skb's packets, at least.
const MIN_TSO_SEGS: f64 = 2.0;
/// `sysctl_tcp_tso_win_divisor`: a send that fills this fraction of the window goes.
const WIN_DIVISOR: f64 = 3.0;
/// `sysctl_tcp_tso_rtt_log`: flows with a min RTT under 2^this us get larger skbs.
const TSO_RTT_LOG: u32 = 9;
/// The longest a send waits: one whose last send was longer ago goes (and the ACK horizon).
const MAX_DEFER: Time = 1_000_000_000;

/// What the deferral reads of the sender at a send, in packets.
pub struct Window {
    pub now: Time,
    /// The congestion window, whole packets.
    pub cwnd: i64,
    pub ssthresh: f64,
    /// Packets in flight, and sent and not cumulatively acknowledged (`packets_out`).
    pub in_flight: i64,
    pub outstanding: i64,
    /// New packets the receiver's window and the data left allow, and the data left.
    pub send_room: i64,
    pub data_left: i64,
    pub srtt_s: f64,
    pub min_rtt: Time,
    /// When the oldest outstanding packet was sent.
    pub head_sent: Option<Time>,
    pub mss_bytes: f64,
}

/// The skb being sent (its packets still to go, and sent) and when the last one left.
#[derive(Default)]
pub struct TsoDefer {
    last_sent: Option<Time>,
    skb_left: i64,
    skb_sent: i64,
}

impl TsoDefer {
    /// An skb is being sent: its next packet may leave.
    pub fn in_skb(&self) -> bool {
        self.skb_left > 0
    }

    /// Whether a new skb leaves now (`in_skb` from then on, for its packets), or waits.
    pub fn start_skb(&mut self, w: &Window) -> bool {
        let (limit, goal) = (w.send_room.min(w.cwnd - w.in_flight), autosize_pkts(w));
        if limit <= 0 || self.defers(w, limit, goal) {
            return false;
        }
        self.skb_left = limit.min(goal).min((w.cwnd / 2).max(1));
        self.skb_sent = 0;
        true
    }

    /// A packet left at `now`; whether it ends an skb of two packets or more (it carries PSH).
    pub fn sent(&mut self, now: Time) -> bool {
        self.last_sent = Some(now);
        if self.skb_left == 0 {
            return false; // outside an skb
        }
        self.skb_left -= 1;
        self.skb_sent += 1;
        self.skb_left == 0 && self.skb_sent >= 2
    }

    /// The send is over: an skb is sent whole at one instant. Whether one was cut short after
    /// two packets or more (its last packet sent carries PSH).
    pub fn done(&mut self) -> bool {
        let cut = self.skb_left > 0 && self.skb_sent >= 2;
        self.skb_left = 0;
        cut
    }

    /// `tcp_tso_should_defer` for a send of `limit` packets, with skbs of `goal`.
    fn defers(&self, w: &Window, limit: i64, goal: i64) -> bool {
        let Some(head) = w.head_sent.filter(|_| w.outstanding > 0) else { return false };
        // The rest of the data fits (its skb has FIN), or the last send was long ago: no wait.
        if w.data_left <= limit || self.last_sent.is_none_or(|t| w.now > t + MAX_DEFER) {
            return false;
        }
        if limit >= goal || limit as f64 >= w.cwnd as f64 / WIN_DIVISOR {
            return false;
        }
        let srtt = from_secs(w.srtt_s);
        let ack_due = head + srtt;
        ack_due <= w.now + (srtt / 2).min(MAX_DEFER)
    }
}

/// `tcp_tso_autosize`: an skb's packets at the sender's pacing rate.
fn autosize_pkts(w: &Window) -> i64 {
    let ratio = if (w.cwnd as f64) < w.ssthresh / 2.0 { 2.0 } else { 1.2 };
    let rate_bytes_s = ratio * w.cwnd.max(w.outstanding) as f64 * w.mss_bytes / w.srtt_s;
    let mut bytes = rate_bytes_s / 1024.0;
    let r = (w.min_rtt / 1_000_000) >> TSO_RTT_LOG; // min RTT in us, then the shift
    if r < 32 {
        bytes += (GSO_MAX_BYTES as u64 >> r) as f64;
    }
    (bytes.min(GSO_MAX_BYTES) / w.mss_bytes).floor().max(MIN_TSO_SEGS) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;

    /// One CUBIC flow at 100 Mb/s and 10 ms in congestion avoidance: 70 packets of window.
    fn window(in_flight: i64, now: Time, head_sent: Time) -> Window {
        Window {
            now,
            cwnd: 70,
            ssthresh: 60.0,
            in_flight,
            outstanding: in_flight,
            send_room: 1 << 20,
            data_left: 1 << 40,
            srtt_s: 0.0107,
            min_rtt: 10 * MS,
            head_sent: Some(head_sent),
            mss_bytes: 1448.0,
        }
    }

    /// 1.2 x 70 / 10.7 ms / 1024 = 7.7: skbs of 7 packets, as the kernel's runs (median 7).
    #[test]
    fn an_skb_holds_the_pacing_rates_millisecond() {
        assert_eq!(autosize_pkts(&window(0, 0, 0)), 7);
        let slow_start = Window { ssthresh: 1e9, ..window(0, 0, 0) };
        assert_eq!(autosize_pkts(&slow_start), 12);
        let short = Window { min_rtt: MS, ..window(0, 0, 0) }; // 1000 us >> 9 = 1: 32 KB more
        assert_eq!(autosize_pkts(&short), 30, "7.7 + 22.5");
        let slow = Window { cwnd: 4, ..window(0, 0, 0) };
        assert_eq!(autosize_pkts(&slow), 2, "at least tcp_min_tso_segs");
    }

    /// With the head's ACK due now, a send of under 7 packets waits; of 7 it goes as one skb.
    #[test]
    fn a_send_short_of_an_skb_waits_for_the_next_ack() {
        let mut d = TsoDefer { last_sent: Some(10 * MS), ..TsoDefer::default() };
        let now = 10 * MS + MS / 2;
        assert!(!d.start_skb(&window(66, now, 0)), "4 free: defer");
        assert!(d.start_skb(&window(63, now, 0)), "7 free: one skb");
        let ends: Vec<bool> = (0..7).map(|_| d.sent(now)).collect();
        assert_eq!(ends, [false, false, false, false, false, false, true], "PSH on its last packet");
        assert!(!d.start_skb(&window(70, now, 0)));
        assert!(!d.sent(now), "a packet outside an skb carries no PSH");
        assert!(d.start_skb(&window(63, now, 0)));
        d.sent(now);
        assert!(!d.done(), "cut after one packet: no PSH");
        assert!(d.start_skb(&window(63, now, 0)));
        d.sent(now);
        d.sent(now);
        assert!(d.done(), "cut after two: the last sent carries PSH");
    }

    /// The rules that send at once: the ACK far off, a third of the window, a quiet millisecond,
    /// nothing outstanding, the transfer's last packets.
    #[test]
    fn a_send_goes_at_once_when_waiting_would_stall() {
        let now = 20 * MS;
        let recent = || TsoDefer { last_sent: Some(now - MS / 2), ..TsoDefer::default() };
        assert!(!recent().start_skb(&window(66, now, now - 10 * MS)), "ACK due in 0.7 ms: defer");
        assert!(recent().start_skb(&window(66, now, now - 9 * MS)), "ACK due in 1.7 ms: send");
        // At 1 ms an skb is 36 packets, more than a 12-packet window's third: the third goes.
        let lan = |in_flight| Window { cwnd: 12, srtt_s: 0.001, min_rtt: MS, ..window(in_flight, now, now - MS) };
        assert!(!recent().start_skb(&lan(9)) && recent().start_skb(&lan(8)), "4 of 12 is a third");
        let quiet = TsoDefer { last_sent: Some(now - 2 * MS), ..TsoDefer::default() };
        assert!(!quiet.defers(&window(66, now, now - 10 * MS), 4, 7));
        assert!(recent().start_skb(&Window { outstanding: 0, ..window(0, now, 0) }));
        assert!(recent().start_skb(&Window { data_left: 4, ..window(66, now, now - 10 * MS) }));
    }
}

//! What the Linux congestion modules share as ns-2 2.35's TCP-Linux runs them (Linux 2.6.22.6):
//! the integer window with its ACK counter, slow start, `cong_avoid_ai`.
//! Details: docs/tcp.md, `tcp/linux.rs`.

use super::{AckEvent, TcpState};
use crate::time::{from_secs, to_secs, Time};

/// Jiffies per second in ns-2's TCP-Linux (HZ = JIFFY_RATIO = 1000).
pub const HZ: u32 = 1000;

/// BIC's and CUBIC's fixed-point scale of beta.
pub const BETA_SCALE: u32 = 1024;
/// BIC's and CUBIC's packets-per-ACK estimate is kept << 4 (Linux ACK_RATIO_SHIFT).
pub const ACK_RATIO_SHIFT: u32 = 4;
/// BIC and CUBIC skip recomputing their increase while cwnd is unchanged for HZ / 32.
pub const RECOMPUTE_S: f64 = 1.0 / 32.0;

/// BIC's and CUBIC's `bictcp_acked` (the `pkts_acked` hook): the moving average of packets per
/// ACK, kept << ACK_RATIO_SHIFT, updated only in the Open state. Linux does this in u32 arithmetic
/// whose wrap-around cancels out; the result never falls below 15/16 of the old value plus one.
pub fn update_ack_ratio(delayed_ack: u32, ev: &AckEvent) -> u32 {
    if ev.acked_pkts <= 0 || !ev.open {
        return delayed_ack;
    }
    let acked = ev.acked_pkts as u32;
    delayed_ack.wrapping_add(acked.wrapping_sub(delayed_ack >> ACK_RATIO_SHIFT))
}

/// The module clock `tcp_time_stamp`: time truncated to jiffies, as ns-2's TCP-Linux sets it.
pub fn tcp_time_stamp(t: Time) -> u32 {
    (t / (from_secs(1.0) / HZ as Time)) as u32
}

/// A TCP timestamp option value (TSval, TSecr): ns-2's TCP-Linux rounds these to jiffies.
pub fn timestamp_jiffies(t: Time) -> u32 {
    (to_secs(t) * HZ as f64).round() as u32
}

/// An integer congestion window, its increment counter and ABC's count of acknowledged data.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinuxCwnd {
    pub cnt: u32,
    /// Linux `bytes_acked`, in packets: data acknowledged since the last increment or loss.
    pub acked_pkts: i64,
}

impl LinuxCwnd {
    /// `snd_cwnd` as an integer (the engine keeps cwnd in an f64; Linux laws keep it whole).
    pub fn cwnd(st: &TcpState) -> u32 {
        st.cwnd as u32
    }

    /// Linux's `snd_cwnd <= snd_ssthresh`.
    pub fn in_slow_start(st: &TcpState) -> bool {
        st.cwnd <= st.ssthresh
    }

    /// +1 per ACK, below the clamp.
    pub fn slow_start(&mut self, st: &mut TcpState) {
        if st.cwnd < st.wmax {
            st.cwnd += 1.0;
        }
    }

    /// +1 packet once `w` ACKs have been counted.
    pub fn cong_avoid_ai(&mut self, st: &mut TcpState, w: u32) {
        if self.cnt >= w {
            if st.cwnd < st.wmax {
                st.cwnd += 1.0;
            }
            self.cnt = 0;
        } else {
            self.cnt += 1;
        }
    }

    /// ns-2's `bytes_acked += ...` on every ACK: the data it newly acknowledges counts for ABC.
    pub fn count_acked(&mut self, ev: &AckEvent) {
        self.acked_pkts += ev.acked_pkts.max(0);
    }

    /// Linux `tcp_reno_cong_avoid` with `sysctl_tcp_abc = 1`: slow start (+1 per ACK, and the
    /// byte count restarts), then +1 packet each time a window's worth of data is acknowledged.
    pub fn reno_cong_avoid(&mut self, st: &mut TcpState) {
        if Self::in_slow_start(st) {
            self.acked_pkts = 0;
            self.slow_start(st);
        } else {
            let window = Self::cwnd(st) as i64;
            if self.acked_pkts >= window {
                self.acked_pkts -= window;
                if st.cwnd < st.wmax {
                    st.cwnd += 1.0;
                }
            }
        }
    }

    /// Linux `tcp_reno_ssthresh`: half the window, at least 2.
    pub fn reno_ssthresh(st: &TcpState) -> u32 {
        (Self::cwnd(st) / 2).max(2)
    }

    /// Linux `tcp_reno_min_cwnd`: the window in recovery is half the new ssthresh (integer).
    pub fn reno_min_cwnd(st: &TcpState) -> f64 {
        (st.ssthresh as u32 / 2) as f64
    }

    /// A loss: ssthresh from the module, cwnd down to it (`timeout`: to 1); the count restarts.
    pub fn on_loss(&mut self, st: &mut TcpState, ssthresh: u32, timeout: bool) {
        st.ssthresh = ssthresh.max(2) as f64;
        st.cwnd = if timeout { 1.0 } else { st.ssthresh.min(st.wmax) };
        self.cnt = 0;
        self.acked_pkts = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(acked_pkts: i64, open: bool) -> AckEvent {
        AckEvent { now: 0, acked_pkts, srtt_s: None, sacked: false, open, echo: None, ece: false }
    }

    #[test]
    fn ack_ratio_tracks_packets_per_ack_only_in_open() {
        let mut d = 2 << ACK_RATIO_SHIFT; // the modules' initial guess: delayed ACKs, 2 per ACK
        for _ in 0..200 {
            d = update_ack_ratio(d, &ev(1, true));
        }
        assert_eq!(d >> ACK_RATIO_SHIFT, 1, "one packet per ACK: {d}");
        let before = d;
        for _ in 0..50 {
            d = update_ack_ratio(d, &ev(4, false)); // in Recovery or Loss: ignored
            d = update_ack_ratio(d, &ev(0, true)); // a duplicate ACK: ignored
        }
        assert_eq!(d, before);
        for _ in 0..200 {
            d = update_ack_ratio(d, &ev(3, true));
        }
        assert!((47..=48).contains(&d), "three packets per ACK, << 4: {d}");
    }

    #[test]
    fn reno_growth_counts_acknowledged_data_as_ns2_abc_does() {
        let mut st = TcpState::new(10.0, 5.0, 1e6);
        let mut w = LinuxCwnd::default();
        // Congestion avoidance at cwnd 10: +1 once 10 packets are acknowledged, in any ACK sizes.
        for acked in [3, 3, 3] {
            w.count_acked(&ev(acked, true));
            w.reno_cong_avoid(&mut st);
        }
        assert_eq!(st.cwnd, 10.0);
        w.count_acked(&ev(2, true));
        w.reno_cong_avoid(&mut st);
        assert_eq!((st.cwnd, w.acked_pkts), (11.0, 1), "11 acknowledged: one increment, 1 left");
        // A loss zeroes the count; what recovery acknowledges (a duplicate counts nothing) then
        // counts towards the first increment after it.
        w.on_loss(&mut st, 5, false);
        st.cwnd = 6.0; // as Westwood+'s BWE x RTTmin sets it
        for acked in [0, 0, 0, 4] {
            w.count_acked(&ev(acked, false));
        }
        w.count_acked(&ev(3, true));
        w.reno_cong_avoid(&mut st);
        assert_eq!((st.cwnd, w.acked_pkts), (7.0, 1), "7 acknowledged since the loss, cwnd 6");
        // Slow start: +1 per ACK, and the count restarts.
        st.ssthresh = 100.0;
        w.count_acked(&ev(4, true));
        w.reno_cong_avoid(&mut st);
        assert_eq!((st.cwnd, w.acked_pkts), (8.0, 0));
    }
}

//! HighSpeed TCP (`cc = highspeed`, RFC 3649), as Linux 2.6.22.6's `tcp_highspeed.c` in ns-2
//! 2.35's TCP-Linux. Details: docs/tcp.md, `tcp/highspeed.rs`.

use super::linux::LinuxCwnd;
use super::{Ack, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{normalize, Value, VariantDef};
use crate::time::Time;

/// RFC 3649 Appendix B: the window (packets) up to which a(w) = row index + 1.
const WINDOWS: [u32; 72] = [
    38, 118, 221, 347, 495, 663, 851, 1058, 1284, 1529, 1793, 2076, 2378, 2699, 3039, 3399, 3778, 4177, 4596, 5036,
    5497, 5979, 6483, 7009, 7558, 8130, 8726, 9346, 9991, 10661, 11358, 12082, 12834, 13614, 14424, 15265, 16137,
    17042, 17981, 18955, 19965, 21013, 22101, 23230, 24402, 25618, 26881, 28193, 29557, 30975, 32450, 33986, 35586,
    37253, 38992, 40808, 42707, 44694, 46776, 48961, 51258, 53677, 56230, 58932, 61799, 64851, 68113, 71617, 75401,
    79517, 84035, 89053,
];

/// RFC 3649's b(w), the decrease factor at window w.
pub fn b_of(w: f64) -> f64 {
    let (w_low, w_high, b_high) = (38.0f64, 83_000.0f64, 0.1);
    (b_high - 0.5) * (w.ln() - w_low.ln()) / (w_high.ln() - w_low.ln()) + 0.5
}

crate::params! {
    /// HighSpeed TCP has no parameters (RFC 3649's table is the protocol).
    pub struct HighSpeedParams as "HighSpeedParams" {}
}

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "highspeed",
        doc: "HighSpeed TCP (RFC 3649; Linux tcp_highspeed.c): a(w) and b(w) from the RFC's table",
        params: HighSpeedParams::specs,
        keys: HighSpeedParams::KEYS,
        normalize: normalize::<HighSpeedParams>,
    },
    factory,
    needs_ecn: false,
    needs_pacing: false,
    modes: &[],
};

fn factory(_: &Value) -> LawFactory {
    Box::new(|| HighSpeed::default().into())
}

#[derive(Default)]
pub struct HighSpeed {
    /// The table row of the window (Linux `ca->ai`).
    row: usize,
    w: LinuxCwnd,
}

impl HighSpeed {
    /// a(w): packets added per window of ACKs at the current row.
    pub fn a(&self) -> u32 {
        self.row as u32 + 1
    }

    /// md = floor(256 x b(w)) at the current row.
    pub fn md(&self) -> u32 {
        (256.0 * b_of(WINDOWS[self.row] as f64)).floor() as u32
    }

    /// Moves the row so that WINDOWS[row - 1] < cwnd <= WINDOWS[row] (or the last row).
    fn track(&mut self, cwnd: u32) {
        while cwnd > WINDOWS[self.row] && self.row < WINDOWS.len() - 1 {
            self.row += 1;
        }
        while self.row > 0 && cwnd <= WINDOWS[self.row - 1] {
            self.row -= 1;
        }
    }

    fn ssthresh(&self, st: &TcpState) -> u32 {
        let cwnd = LinuxCwnd::cwnd(st);
        cwnd - ((cwnd as u64 * self.md() as u64) >> 8) as u32
    }
}

impl WindowLaw for HighSpeed {
    fn on_ack(&mut self, st: &mut TcpState, _ack: &Ack) {
        if LinuxCwnd::in_slow_start(st) {
            self.w.slow_start(st);
            return;
        }
        let cwnd = LinuxCwnd::cwnd(st);
        self.track(cwnd);
        if st.cwnd < st.wmax {
            // cwnd += a(w) / cwnd per ACK, counted in whole ACK credits.
            self.w.cnt += self.a();
            if self.w.cnt >= cwnd {
                self.w.cnt -= cwnd;
                st.cwnd += 1.0;
            }
        }
    }

    fn on_fast_retransmit(&mut self, st: &mut TcpState, _now: Time) {
        let s = self.ssthresh(st);
        self.w.on_loss(st, s, false);
    }

    fn on_timeout(&mut self, st: &mut TcpState, _now: Time) {
        let s = self.ssthresh(st);
        self.w.on_loss(st, s, true);
    }

    fn min_cwnd(&self, st: &TcpState) -> Option<f64> {
        Some(LinuxCwnd::reno_min_cwnd(st))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(w: u32) -> HighSpeed {
        let mut h = HighSpeed::default();
        h.track(w);
        h
    }

    #[test]
    fn a_and_b_follow_rfc3649_table() {
        // RFC 3649 Appendix B: w, a(w), b(w) (two decimals).
        for (w, a, b) in [(38, 1, 0.50), (1000, 8, 0.33), (10000, 30, 0.21), (83000, 71, 0.10)] {
            let h = at(w);
            assert_eq!(h.a(), a, "a({w})");
            assert!((h.md() as f64 / 256.0 - b).abs() < 0.01, "b({w}) = {} vs {b}", h.md() as f64 / 256.0);
        }
        // Linux's md column, floor(256 b(w)): first, some middle and last rows.
        assert_eq!(
            [0, 1, 2, 30, 71].map(|r| (256.0 * b_of(WINDOWS[r] as f64)).floor() as u32),
            [128, 112, 104, 52, 24]
        );
    }

    #[test]
    fn one_window_of_acks_adds_a_of_w() {
        let mut st = TcpState::new(1000.0, 10.0, 100_000.0);
        let mut h = HighSpeed::default();
        let ack = Ack { now: 0, acked_pkts: 1, rtt_sample_s: None };
        // 8 credits per ACK; the k-th increment costs the window it starts from (1000, 1001, ...):
        // 8 increments need 8028 credits, i.e. 1004 ACKs, about one window.
        for _ in 0..1004 {
            h.on_ack(&mut st, &ack);
        }
        assert_eq!(st.cwnd, 1008.0, "a(1000) = 8 packets per window");
        h.on_fast_retransmit(&mut st, 0);
        assert_eq!(st.ssthresh, (1008 - ((1008 * 83) >> 8)) as f64, "b(1008) = 83 / 256");
    }
}

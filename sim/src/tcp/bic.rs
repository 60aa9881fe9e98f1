//! BIC (`cc = bic`; Xu, Harfoush and Rhee, INFOCOM 2004), as Linux 2.6.22.6's `tcp_bic.c` in
//! ns-2 2.35's TCP-Linux. Details: docs/tcp.md, `tcp/bic.rs`.

use super::linux::{update_ack_ratio, LinuxCwnd, ACK_RATIO_SHIFT, BETA_SCALE, RECOMPUTE_S};
use super::{Ack, AckEvent, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{float_in, int_in, normalize, Param, Value, VariantDef};
use crate::time::{to_secs, Time};

crate::params! {
    /// BIC's constants (ns-2 2.35 TCP-Linux / Linux 2.6.22 defaults).
    pub struct BicParams as "BicParams" {
        /// Multiplicative decrease: the window kept after a loss (Linux 819/1024).
        beta: f64 = 819.0 / 1024.0, unit "fraction", check float_in(0.01, 0.99);
        /// Largest increase per RTT in the binary search (Smax).
        max_increment: i64 = 16, unit "pkts", check int_in(1, 1 << 20);
        /// At or below this window BIC behaves as Reno.
        low_window: i64 = 14, unit "pkts", check int_in(0, 1 << 30);
        /// RTTs from W_max - B to W_max (sets Smin: cnt = cwnd x smooth_part / B).
        smooth_part: i64 = 20, unit "RTTs", check int_in(1, 1 << 20);
        /// Shrink W_max when a loss comes before the window regained it.
        fast_convergence: bool = true;
    }
}

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "bic",
        doc: "BIC (Linux tcp_bic.c as in ns-2 2.35 TCP-Linux): binary search towards W_max, Smax 16",
        params: BicParams::specs,
        keys: BicParams::KEYS,
        normalize: normalize::<BicParams>,
    },
    factory,
    needs_ecn: false,
    needs_pacing: false,
    modes: &[],
};

fn factory(v: &Value) -> LawFactory {
    let p = BicParams::parse(v).expect("validated");
    Box::new(move || Bic::new(p.clone()).into())
}

/// The binary search goes to (max + min) / B.
const B: u32 = 4;

pub struct Bic {
    p: BicParams,
    beta: u32,
    w: LinuxCwnd,
    /// ACKs per one-packet increase.
    cnt: u32,
    last_max_cwnd: u32,
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time_s: f64,
    /// Packets per ACK << 4.
    delayed_ack: u32,
}

impl Bic {
    pub fn new(p: BicParams) -> Self {
        let beta = (p.beta * BETA_SCALE as f64).round() as u32;
        let mut b = Self {
            p,
            beta,
            w: LinuxCwnd::default(),
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time_s: f64::NEG_INFINITY,
            delayed_ack: 0,
        };
        b.reset();
        b
    }

    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.loss_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time_s = f64::NEG_INFINITY;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }

    /// ACKs per one-packet increase at window `cwnd` (Linux `bictcp_update`'s `cnt`, before the
    /// packets-per-ACK scaling).
    pub fn acks_per_increment(&self, cwnd: u32) -> u32 {
        let (smax, smooth, w_max) = (self.p.max_increment as u32, self.p.smooth_part as u32, self.last_max_cwnd);
        let mut cnt = if cwnd <= self.p.low_window as u32 {
            cwnd
        } else if cwnd < w_max {
            let dist = (w_max - cwnd) / B;
            if dist > smax {
                cwnd / smax // far below W_max: linear increase at Smax per RTT
            } else if dist <= 1 {
                cwnd * smooth / B // close to W_max: Smin
            } else {
                cwnd / dist // binary search: halfway (in B steps) per RTT
            }
        } else if cwnd < w_max + B {
            cwnd * smooth / B // just past W_max: slow start of max probing
        } else if cwnd < w_max + smax * (B - 1) {
            cwnd * (B - 1) / (cwnd - w_max)
        } else {
            cwnd / smax
        };
        if self.loss_cwnd == 0 {
            cnt = cnt.min(20); // no loss yet: at least 5% per RTT
        }
        cnt
    }

    fn update(&mut self, cwnd: u32, now_s: f64) {
        if self.last_cwnd == cwnd && now_s - self.last_time_s <= RECOMPUTE_S {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time_s = now_s;
        let cnt = self.acks_per_increment(cwnd);
        self.cnt = ((cnt << ACK_RATIO_SHIFT) / self.delayed_ack).max(1);
    }

    /// Linux `bictcp_recalc_ssthresh`: sets W_max, returns ssthresh.
    fn ssthresh(&mut self, st: &TcpState) -> u32 {
        let cwnd = LinuxCwnd::cwnd(st);
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.p.fast_convergence {
            cwnd * (BETA_SCALE + self.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.loss_cwnd = cwnd;
        if cwnd <= self.p.low_window as u32 {
            (cwnd / 2).max(2)
        } else {
            (cwnd * self.beta / BETA_SCALE).max(2)
        }
    }
}

impl WindowLaw for Bic {
    fn on_ack_event(&mut self, _st: &mut TcpState, ev: &AckEvent) {
        self.delayed_ack = update_ack_ratio(self.delayed_ack, ev);
    }

    fn on_ack(&mut self, st: &mut TcpState, ack: &Ack) {
        if LinuxCwnd::in_slow_start(st) {
            self.w.slow_start(st);
            return;
        }
        self.update(LinuxCwnd::cwnd(st), to_secs(ack.now));
        self.w.cong_avoid_ai(st, self.cnt);
    }

    fn on_fast_retransmit(&mut self, st: &mut TcpState, _now: Time) {
        let s = self.ssthresh(st);
        self.w.on_loss(st, s, false);
    }

    fn on_timeout(&mut self, st: &mut TcpState, _now: Time) {
        let s = self.ssthresh(st);
        self.reset(); // Linux resets BIC on entering the Loss state, after taking ssthresh
        self.w.on_loss(st, s, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::from_secs;

    /// One RTT at 100 ms of ACKs covering 2 packets each (delayed ACKs, the packets-per-ACK
    /// ratio BIC starts from: with one packet per ACK Linux's integer EWMA sticks at 31/16 and
    /// the steps are 1.94 times larger); returns the window after it.
    fn rtt(law: &mut Bic, st: &mut TcpState, start_s: f64) -> f64 {
        let acks = st.cwnd as usize / 2;
        for i in 0..acks {
            let t = start_s + 0.1 * i as f64 / acks as f64;
            let ev =
                AckEvent { now: from_secs(t), acked_pkts: 2, srtt_s: Some(0.1), sacked: false, open: true, echo: None, ece: false };
            law.on_ack_event(st, &ev);
            law.on_ack(st, &Ack { now: from_secs(t), acked_pkts: 2, rtt_sample_s: None });
        }
        st.cwnd
    }

    #[test]
    fn binary_search_steps_towards_w_max() {
        // W_max = 1000 (no fast convergence: the first loss), cut to 1000 x 819 / 1024 = 799.
        let mut st = TcpState::new(1000.0, 10.0, 1e6);
        let mut law = Bic::new(BicParams::default());
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!((st.ssthresh, st.cwnd, law.last_max_cwnd), (799.0, 799.0, 1000));
        // Far below W_max the step is Smax = 16 per RTT: (1000 - 799) / 4 = 50 > 16.
        let mut t = 1.0;
        let mut steps = vec![];
        let mut w = st.cwnd;
        while w < 1000.0 && steps.len() < 40 {
            let next = rtt(&mut law, &mut st, t);
            steps.push(next - w);
            w = next;
            t += 0.1;
        }
        // The first RTT starts with Linux's cwnd <= ssthresh slow-start increment.
        assert!((16.0..=18.0).contains(&steps[0]), "{steps:?}");
        // Then the window closes (W_max - cwnd) / B of the distance per RTT, recomputed as it
        // grows: over one RTT the distance shrinks by e^(-1/B), a step of (W_max - cwnd)
        // (1 - e^(-1/4)), at most Smax; within 1.5 (the integer counter), until the distance
        // is under 2 B.
        let mut w = 799.0 + steps[0];
        for &s in &steps[1..] {
            if ((1000.0 - w) / 4.0_f64).floor() <= 1.0 {
                break;
            }
            let expected = ((1000.0 - w) * (1.0 - (-0.25f64).exp())).min(16.0);
            assert!((s - expected).abs() <= 1.5, "at {w}: step {s} vs {expected:.1}; {steps:?}");
            w += s;
        }
        // Near W_max the step is Smin: cwnd / (cwnd x smooth_part / B) = B / smooth_part = 0.2 per RTT.
        assert_eq!(law.acks_per_increment(998), 998 * 20 / 4);
    }

    #[test]
    fn low_window_is_reno_and_fast_convergence_shrinks_w_max() {
        let mut st = TcpState::new(12.0, 2.0, 1e6);
        let mut law = Bic::new(BicParams::default());
        assert_eq!(law.acks_per_increment(12), 12, "Reno's one packet per window");
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!(st.cwnd, 6.0, "halved at or below low_window");
        let mut st = TcpState::new(500.0, 10.0, 1e6);
        law.last_max_cwnd = 600;
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!(law.last_max_cwnd, 500 * (1024 + 819) / 2048);
        law.on_timeout(&mut st, 0);
        assert_eq!((st.cwnd, law.last_max_cwnd, law.loss_cwnd), (1.0, 0, 0));
    }
}

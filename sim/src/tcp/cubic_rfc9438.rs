//! CUBIC as RFC 9438 specifies it (`cc = cubic_rfc9438`), the law of today's Linux, with
//! HyStart++ (RFC 9406, `tcp/hystart.rs`) in the initial slow start. Followed: RFC 9438 sections
//! 4.1-4.8 and 4.10 (W_cubic, K from cwnd_epoch, the target W_cubic(t + RTT) clamped to
//! [cwnd, 1.5 cwnd], the Reno-friendly W_est with alpha_cubic until W_est reaches cwnd_prior, fast
//! convergence, K = 0 after a timeout or a loss-free slow-start exit). Windows are fractional
//! packets and growth counts the packets an ACK acknowledges (Linux counts them too; the RFC's
//! per-ACK rule would lag with delayed ACKs). The 2.6.22 module of ns-2's TCP-Linux is `cubic_2622`;
//! the `cubic` preset is this law with Linux 6.x's settings (`tcp/mod.rs`).
//! Details: docs/tcp.md, `tcp/cubic_rfc9438.rs`.

use super::hystart::HyStartPp;
use super::{Ack, AckEvent, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{float_in, normalize, one_of, Param, Value, VariantDef};
use crate::time::{to_secs, Time};

fn slow_starts() -> Vec<&'static str> {
    vec!["rfc9406", "standard"]
}

crate::params! {
    /// RFC 9438's constants.
    pub struct CubicRfc9438Params as "CubicRfc9438Params" {
        /// beta_cubic, the window kept after a congestion event.
        beta: f64 = 0.7, unit "fraction", check float_in(0.01, 0.99);
        /// C, in packets / s^3.
        c: f64 = 0.4, unit "pkts/s^3", check float_in(1e-3, 100.0);
        /// Shrink W_max when a congestion event comes before the window regained it.
        fast_convergence: bool = true;
        /// Set alpha_cubic to 1 once W_est reaches cwnd_prior (section 4.3's SHOULD); Linux's
        /// tcp_cubic keeps alpha_cubic (`tcp_friendliness`), as the `cubic` preset does.
        alpha_one: bool = true;
        /// The initial slow start: rfc9406 (HyStart++) or standard (RFC 5681, up to ssthresh).
        slow_start: String = "rfc9406".into(), unit "", check one_of(slow_starts);
    }
}

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "cubic_rfc9438",
        doc: "CUBIC as RFC 9438 (beta 0.7, Reno-friendly region) with HyStart++ (RFC 9406): today's Linux law",
        params: CubicRfc9438Params::specs,
        keys: CubicRfc9438Params::KEYS,
        normalize: normalize::<CubicRfc9438Params>,
    },
    factory,
    needs_ecn: false,
    needs_pacing: false,
    modes: &[],
};

fn factory(v: &Value) -> LawFactory {
    let p = CubicRfc9438Params::parse(v).expect("validated");
    Box::new(move || CubicRfc9438::new(&p).into())
}

pub struct CubicRfc9438 {
    beta: f64,
    c: f64,
    fast_convergence: bool,
    alpha_one: bool,
    /// alpha_cubic now: 3 (1 - beta) / (1 + beta), then 1 once W_est reaches cwnd_prior.
    alpha: f64,
    /// W_max; 0 = none yet (no congestion event: the first epoch sets it).
    w_max: f64,
    /// cwnd before the last congestion event.
    cwnd_prior: f64,
    k_s: f64,
    w_est: f64,
    /// Start of the congestion-avoidance stage; None until its first ACK.
    epoch_start: Option<Time>,
    /// The next epoch sets W_max to its first window and K to 0 (section 4.8, 4.10).
    w_max_from_epoch: bool,
    srtt_s: f64,
    /// This ACK's RTT sample, from the timestamp it echoes (`on_ack_event`).
    rtt_s: Option<f64>,
    /// HyStart++ while the initial slow start lasts.
    hystart: Option<HyStartPp>,
}

impl CubicRfc9438 {
    pub fn new(p: &CubicRfc9438Params) -> Self {
        Self {
            beta: p.beta,
            c: p.c,
            fast_convergence: p.fast_convergence,
            alpha_one: p.alpha_one,
            alpha: Self::alpha_cubic(p.beta),
            w_max: 0.0,
            cwnd_prior: 0.0,
            k_s: 0.0,
            w_est: 0.0,
            epoch_start: None,
            w_max_from_epoch: false,
            srtt_s: 0.0,
            rtt_s: None,
            hystart: (p.slow_start == "rfc9406").then(HyStartPp::default),
        }
    }

    /// Section 4.3: the Reno-friendly additive increase that matches Reno's average rate.
    fn alpha_cubic(beta: f64) -> f64 {
        3.0 * (1.0 - beta) / (1.0 + beta)
    }

    /// Figure 1: W_cubic(t) = C (t - K)^3 + W_max.
    pub fn w_cubic(&self, t_s: f64) -> f64 {
        self.c * (t_s - self.k_s).powi(3) + self.w_max
    }

    pub fn k_s(&self) -> f64 {
        self.k_s
    }

    fn start_epoch(&mut self, cwnd: f64, now: Time) -> Time {
        if self.w_max_from_epoch || self.w_max <= cwnd {
            self.w_max = cwnd;
            self.w_max_from_epoch = false;
        }
        self.k_s = ((self.w_max - cwnd) / self.c).cbrt(); // Figure 2, with cwnd_epoch = cwnd
        self.w_est = cwnd;
        now
    }

    fn slow_start(&mut self, st: &mut TcpState, ack: &Ack) {
        let grow = match &mut self.hystart {
            Some(h) => {
                let step = h.on_ack(st.highest_ack, st.maxseq, ack.acked_pkts, self.rtt_s);
                if step.to_avoidance {
                    st.cwnd = (st.cwnd + step.grow_pkts).min(st.wmax);
                    st.ssthresh = st.cwnd;
                    self.hystart = None;
                    return;
                }
                step.grow_pkts
            }
            None => ack.acked_pkts as f64,
        };
        st.cwnd = (st.cwnd + grow).min(st.ssthresh).min(st.wmax);
    }

    /// Sections 4.2-4.4: the window after an ACK in congestion avoidance.
    fn avoid(&mut self, st: &mut TcpState, ack: &Ack) {
        let cwnd = st.cwnd;
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                let e = self.start_epoch(cwnd, ack.now);
                *self.epoch_start.insert(e)
            }
        };
        let t = to_secs(ack.now - epoch);
        let acked = ack.acked_pkts as f64;
        self.w_est += self.alpha * acked / cwnd;
        if self.alpha_one && self.w_est >= self.cwnd_prior {
            self.alpha = 1.0;
        }
        let next = if self.w_cubic(t) < self.w_est {
            self.w_est.max(cwnd) // the Reno-friendly region (never a cut on an ACK)
        } else {
            let target = self.w_cubic(t + self.srtt_s).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * acked
        };
        st.cwnd = next.min(st.wmax);
    }

    /// Section 4.6: W_max (with fast convergence), cwnd_prior and ssthresh = cwnd beta. W_max and
    /// the fast-convergence test are in whole packets, as Linux's `bictcp_recalc_ssthresh` and
    /// ns-3's `TcpCubic::GetSsThresh` keep them: on the engine's fluid window, a loss at 116.49
    /// packets after one at 116.51 would cut W_max to 99, which neither does (one flow's cycles at
    /// the same peak then alternated with and without it).
    fn congestion_event(&mut self, st: &mut TcpState) {
        let cwnd = st.loss_window();
        let whole = cwnd.floor();
        self.w_max = if self.fast_convergence && whole < self.w_max.floor() {
            (whole * (1.0 + self.beta) / 2.0).floor()
        } else {
            whole
        };
        self.cwnd_prior = cwnd;
        st.ssthresh = (cwnd * self.beta).max(2.0);
        self.epoch_start = None;
        self.w_max_from_epoch = false;
        self.alpha = Self::alpha_cubic(self.beta);
        self.hystart = None; // loss or ECN in slow start or CSS: congestion avoidance (RFC 9406)
    }
}

impl WindowLaw for CubicRfc9438 {
    fn on_ack_event(&mut self, _st: &mut TcpState, ev: &AckEvent) {
        self.srtt_s = ev.srtt_s.unwrap_or(0.0);
        self.rtt_s = ev.echo.map(|e| to_secs(ev.now - e.data_sent));
    }

    fn wants_timestamps(&self) -> bool {
        true // HyStart++ needs a sample on every ACK, as Linux takes one
    }

    fn on_ack(&mut self, st: &mut TcpState, ack: &Ack) {
        if st.cwnd < st.ssthresh {
            self.slow_start(st, ack);
        } else {
            self.avoid(st, ack);
        }
    }

    fn on_fast_retransmit(&mut self, st: &mut TcpState, _now: Time) {
        self.congestion_event(st);
        st.cwnd = st.ssthresh.min(st.wmax);
    }

    /// Section 4.8: ssthresh as for any congestion event, cwnd 1, and the next epoch starts
    /// from K = 0 with W_max its first window.
    fn on_timeout(&mut self, st: &mut TcpState, _now: Time) {
        self.congestion_event(st);
        self.w_max_from_epoch = true;
        st.cwnd = 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::from_secs;

    fn standard() -> CubicRfc9438 {
        CubicRfc9438::new(&CubicRfc9438Params { slow_start: "standard".into(), ..Default::default() })
    }

    fn ack(t_s: f64, acked_pkts: i64) -> Ack {
        Ack { now: from_secs(t_s), acked_pkts, rtt_sample_s: None }
    }

    /// Sections 4.6 and 4.2: a loss at 1000 packets keeps 700, K = cbrt(300 / 0.4) = 9.09 s, and
    /// the window then tracks W_cubic(t + RTT) = 0.4 (t + RTT - K)^3 + 1000.
    #[test]
    fn after_a_loss_the_window_follows_w_cubic_from_k() {
        let mut law = standard();
        law.srtt_s = 0.1;
        let mut st = TcpState::new(1000.0, 1e9, 1e6);
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!((st.ssthresh, st.cwnd, law.w_max), (700.0, 700.0, 1000.0));
        let (mut t, mut checked) = (0.0, 0);
        while t < 12.0 {
            let acks = st.cwnd as i64; // one window of ACKs per RTT
            for i in 0..acks {
                law.on_ack(&mut st, &ack(t + 0.1 * i as f64 / acks as f64, 1));
            }
            t += 0.1;
            assert!((law.k_s() - 750f64.cbrt()).abs() < 1e-9);
            // The window trails the target by at most one RTT's growth (target leads by srtt).
            let w = 1000.0 + 0.4 * (t - law.k_s()).powi(3);
            if t > 1.0 && law.w_cubic(t) > law.w_est {
                assert!((st.cwnd - w).abs() < 2.0 + 0.01 * w, "t {t:.1}: cwnd {} vs W_cubic {w:.1}", st.cwnd);
                checked += 1;
            }
        }
        assert!(checked > 90, "{checked}");
        assert!(st.cwnd > 1000.0 && st.cwnd < 1030.0, "past K: {}", st.cwnd);
    }

    /// Section 4.3: at a small window the cubic grows slower than Reno would; W_est grows by
    /// alpha_cubic = 3 (1 - 0.7) / 1.7 = 0.529 packets an RTT and cwnd follows it, until W_est
    /// reaches cwnd_prior and alpha becomes 1; without `alpha_one` (Linux) it stays 0.529.
    #[test]
    fn the_reno_friendly_region_grows_by_alpha_cubic_then_one() {
        for (alpha_one, late) in [(true, 1.0), (false, 0.529)] {
            let p = CubicRfc9438Params { slow_start: "standard".into(), alpha_one, ..Default::default() };
            reno_friendly_growth(CubicRfc9438::new(&p), late);
        }
    }

    fn reno_friendly_growth(mut law: CubicRfc9438, late: f64) {
        law.srtt_s = 0.01;
        let mut st = TcpState::new(20.0, 1e9, 1e6);
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!(st.cwnd, 14.0);
        let mut t = 0.0;
        let mut per_rtt = vec![];
        for _ in 0..40 {
            let before = st.cwnd;
            let acks = st.cwnd as i64;
            for i in 0..acks {
                law.on_ack(&mut st, &ack(t + 0.01 * i as f64 / acks as f64, 1));
            }
            t += 0.01;
            per_rtt.push((st.cwnd - before, law.w_cubic(t) < law.w_est));
        }
        let (g, friendly) = per_rtt[2];
        assert!(friendly && (g - 0.529).abs() < 0.04, "early: +{g} an RTT");
        let (g, friendly) = per_rtt[35];
        assert!(friendly && (g - late).abs() < 0.06, "past cwnd_prior 20: +{g} an RTT, not {late}");
    }

    /// Section 4.7: a loss below the last W_max lowers W_max to cwnd (1 + beta) / 2; a timeout
    /// sets cwnd 1 and the next epoch has K = 0 and W_max its first window (section 4.8).
    #[test]
    fn fast_convergence_and_the_epoch_after_a_timeout() {
        let mut law = standard();
        let mut st = TcpState::new(100.0, 1e9, 1e6);
        law.on_fast_retransmit(&mut st, 0);
        st.cwnd = 80.0;
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!((law.w_max, st.cwnd), (80.0 * 1.7 / 2.0, 56.0));
        law.on_timeout(&mut st, 0);
        assert!(st.cwnd == 1.0 && (st.ssthresh - 39.2).abs() < 1e-9, "{}", st.ssthresh);
        st.cwnd = 40.0;
        law.on_ack(&mut st, &ack(1.0, 1));
        assert_eq!((law.k_s(), law.w_max), (0.0, 40.0));
    }

    /// Fast convergence counts whole packets, as Linux's and ns-3's CUBIC: a loss a fraction of a
    /// packet below the last keeps W_max; one a whole packet below shrinks it, to whole packets.
    #[test]
    fn fast_convergence_counts_whole_packets() {
        let mut law = standard();
        let mut st = TcpState::new(116.51, 1e9, 1e6);
        law.on_fast_retransmit(&mut st, 0);
        st.cwnd = 116.49;
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!(law.w_max, 116.0, "the same whole window: no fast convergence");
        st.cwnd = 115.9;
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!(law.w_max, (115.0_f64 * 1.7 / 2.0).floor());
    }

    /// Beta 0.5 is Reno's cut; a beta outside (0, 1) is refused naming the key.
    #[test]
    fn beta_is_checked() {
        let v = Value::map(vec![("beta", Value::Float(1.2))]);
        let e = CubicRfc9438Params::parse(&v).unwrap_err();
        assert_eq!(e.field, "beta", "{e}");
    }
}

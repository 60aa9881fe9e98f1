//! CUBIC 2.1 (`cc = cubic_2622`), as Linux 2.6.22.6's `tcp_cubic.c` in ns-2 2.35's TCP-Linux (not
//! RFC 9438: beta 819/1024; that is `cubic_rfc9438`). Details: docs/tcp.md, `tcp/cubic_2622.rs`.

use super::linux::{update_ack_ratio, LinuxCwnd, ACK_RATIO_SHIFT, BETA_SCALE, RECOMPUTE_S};
use super::{Ack, AckEvent, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{float_in, int_in, normalize, Param, Value, VariantDef};
use crate::time::{to_secs, Time};

crate::params! {
    /// CUBIC's constants (ns-2 2.35 TCP-Linux / Linux 2.6.22 defaults).
    pub struct Cubic2622Params as "Cubic2622Params" {
        /// Multiplicative decrease: the window kept after a loss (Linux 2.6.22: 819/1024).
        beta: f64 = 819.0 / 1024.0, unit "fraction", check float_in(0.01, 0.99);
        /// Cubic scaling constant C, in packets / s^3 (Linux bic_scale 41: 41 x 10 / 1024).
        c: f64 = 0.4, unit "pkts/s^3", check float_in(1e-3, 100.0);
        /// Shrink W_max when a loss comes before the window regained it.
        fast_convergence: bool = true;
        /// Never grow slower than the AIMD estimate (the TCP-friendly region).
        tcp_friendliness: bool = true;
        /// At most this many packets per min RTT of growth above W_max (Linux max_increment).
        max_increment: i64 = 16, unit "pkts", check int_in(1, 1 << 20);
    }
}

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "cubic_2622",
        doc: "CUBIC 2.1 (Linux tcp_cubic.c as in ns-2 2.35 TCP-Linux): W(t) = C (t - K)^3 + W_max",
        params: Cubic2622Params::specs,
        keys: Cubic2622Params::KEYS,
        normalize: normalize::<Cubic2622Params>,
    },
    factory,
    needs_ecn: false,
    needs_pacing: false,
    modes: &[],
};

fn factory(v: &Value) -> LawFactory {
    let p = Cubic2622Params::parse(v).expect("validated");
    Box::new(move || Cubic2622::new(p.clone()).into())
}

pub struct Cubic2622 {
    p: Cubic2622Params,
    beta: u32,
    /// Linux's beta_scale, 8 (1 + beta) / 3 / (1 - beta) in integers (23 for 819/1024).
    beta_scale: u32,
    w: LinuxCwnd,
    /// ACKs per one-packet increase.
    cnt: u32,
    last_max_cwnd: u32,
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time_s: f64,
    origin: u32,
    k_s: f64,
    delay_min_s: f64,
    /// Start of the growth epoch; None = no epoch (after a loss).
    epoch_start_s: Option<f64>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    /// Packets per ACK << 4.
    delayed_ack: u32,
}

impl Cubic2622 {
    pub fn new(p: Cubic2622Params) -> Self {
        let beta = (p.beta * BETA_SCALE as f64).round() as u32;
        let beta_scale = 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta);
        let mut c = Self {
            p,
            beta,
            beta_scale,
            w: LinuxCwnd::default(),
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time_s: 0.0,
            origin: 0,
            k_s: 0.0,
            delay_min_s: 0.0,
            epoch_start_s: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            delayed_ack: 0,
        };
        c.reset();
        c
    }

    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.loss_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time_s = 0.0;
        self.origin = 0;
        self.k_s = 0.0;
        self.delay_min_s = 0.0;
        self.epoch_start_s = None;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
    }

    /// K of the current epoch, in seconds.
    pub fn k_s(&self) -> f64 {
        self.k_s
    }

    /// Linux `bictcp_update`: the ACKs per increment (`cnt`) towards the cubic target.
    fn update(&mut self, cwnd: u32, now_s: f64) {
        self.ack_cnt += 1;
        if self.last_cwnd == cwnd && now_s - self.last_time_s <= RECOMPUTE_S {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time_s = now_s;
        let epoch = *self.epoch_start_s.get_or_insert_with(|| {
            self.ack_cnt = 1;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.k_s = 0.0;
                self.origin = cwnd;
            } else {
                self.k_s = ((self.last_max_cwnd - cwnd) as f64 / self.p.c).cbrt();
                self.origin = self.last_max_cwnd;
            }
            now_s
        });
        let t = now_s + self.delay_min_s - epoch;
        let delta = (self.p.c * (t - self.k_s).abs().powi(3)).floor();
        let target =
            if t < self.k_s { (self.origin as f64 - delta).max(0.0) } else { self.origin as f64 + delta } as u32;
        self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100u32.saturating_mul(cwnd) };
        if self.delay_min_s > 0.0 {
            let min_cnt = (cwnd as f64 * 0.1 / (self.p.max_increment as f64 * self.delay_min_s)) as u32;
            if self.cnt < min_cnt && t >= self.k_s {
                self.cnt = min_cnt; // concave growth above the origin: at most max_increment per RTT
            }
        }
        if self.loss_cwnd == 0 {
            self.cnt = 50; // no loss yet: grow slowly after slow start
        }
        if self.p.tcp_friendliness {
            let per_packet = (cwnd * self.beta_scale) >> 3;
            while per_packet > 0 && self.ack_cnt > per_packet {
                self.ack_cnt -= per_packet;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        // In 64 bits, as ns-2's glue has it (`u32` is `unsigned long`): no overflow at huge windows.
        self.cnt = (((self.cnt as u64) << ACK_RATIO_SHIFT) / self.delayed_ack as u64).max(1) as u32;
    }

    /// Linux `bictcp_recalc_ssthresh`: ends the epoch, sets W_max, returns ssthresh.
    fn ssthresh(&mut self, st: &TcpState) -> u32 {
        let cwnd = LinuxCwnd::cwnd(st);
        self.epoch_start_s = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.p.fast_convergence {
            cwnd * (BETA_SCALE + self.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.loss_cwnd = cwnd;
        (cwnd * self.beta / BETA_SCALE).max(2)
    }
}

impl WindowLaw for Cubic2622 {
    fn on_ack_event(&mut self, _st: &mut TcpState, ev: &AckEvent) {
        self.delayed_ack = update_ack_ratio(self.delayed_ack, ev);
    }

    fn on_ack(&mut self, st: &mut TcpState, ack: &Ack) {
        let now_s = to_secs(ack.now);
        if let Some(rtt) = ack.rtt_sample_s {
            let settled = self.epoch_start_s.is_none_or(|e| now_s - e >= 1.0);
            if settled && rtt > 0.0 && (self.delay_min_s == 0.0 || rtt < self.delay_min_s) {
                self.delay_min_s = rtt;
            }
        }
        if LinuxCwnd::in_slow_start(st) {
            self.w.slow_start(st);
            return;
        }
        self.update(LinuxCwnd::cwnd(st), now_s);
        self.w.cong_avoid_ai(st, self.cnt);
    }

    fn on_fast_retransmit(&mut self, st: &mut TcpState, _now: Time) {
        let s = self.ssthresh(st);
        self.w.on_loss(st, s, false);
    }

    fn on_timeout(&mut self, st: &mut TcpState, _now: Time) {
        let s = self.ssthresh(st);
        self.reset(); // Linux resets CUBIC on entering the Loss state, after taking ssthresh
        self.w.on_loss(st, s, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::from_secs;

    #[test]
    fn after_a_loss_the_window_follows_the_cubic_and_k() {
        // An idle path, 100 ms RTT, one ACK per packet: W_max = 1000, then a loss.
        let mut st = TcpState::new(1000.0, 10.0, 1e6);
        let mut law = Cubic2622::new(Cubic2622Params::default());
        law.delay_min_s = 0.1;
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!((st.ssthresh, st.cwnd), (799.0, 799.0), "1000 x 819 / 1024");
        let (c, w_max) = (0.4, 1000.0);
        let mut now = 1.0; // the epoch starts at the first ACK after the loss
        let mut checked = 0;
        while now < 12.0 {
            let acks = st.cwnd as usize; // one window of ACKs per RTT, evenly spread
            for i in 0..acks {
                let t = now + 0.1 * i as f64 / acks as f64;
                law.on_ack(&mut st, &Ack { now: from_secs(t), acked_pkts: 1, rtt_sample_s: None });
            }
            now += 0.1;
            let k = law.k_s();
            // Linux's cwnd <= ssthresh test gives the first ACK a slow-start increment: 799 -> 800.
            assert!((k - (200.0f64 / c).cbrt()).abs() < 1e-9, "K = cbrt((W_max - cwnd) / C) = {k}");
            // The target leads by one min RTT; the window trails the target by up to one RTT's growth.
            let t = now - 1.0 + 0.1;
            let expected = w_max + c * (t - k).powi(3);
            if (2.0..=11.0).contains(&t) && expected < w_max + 16.0 {
                assert!((st.cwnd - expected).abs() <= 3.0, "t = {t:.1}: cwnd {} vs W(t) {expected:.1}", st.cwnd);
                checked += 1;
            }
        }
        assert!(checked > 50, "{checked}");
    }

    #[test]
    fn fast_convergence_and_timeout_reset() {
        let mut st = TcpState::new(500.0, 10.0, 1e6);
        let mut law = Cubic2622::new(Cubic2622Params::default());
        law.last_max_cwnd = 600;
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!(law.last_max_cwnd, 500 * (1024 + 819) / 2048, "below the last W_max: shrink it");
        law.on_timeout(&mut st, 0);
        assert_eq!((st.cwnd, law.last_max_cwnd, law.loss_cwnd), (1.0, 0, 0));
    }
}

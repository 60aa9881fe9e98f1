//! Scalable TCP (`cc = scalable`; Kelly, CCR 2003), as Linux 2.6.22.6's `tcp_scalable.c` in
//! ns-2 2.35's TCP-Linux. Details: docs/tcp.md, `tcp/scalable.rs`.

use super::linux::LinuxCwnd;
use super::{Ack, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{float_in, int_in, normalize, Param, Value, VariantDef};
use crate::time::Time;

crate::params! {
    /// Scalable TCP's constants (Linux defaults).
    pub struct ScalableParams as "ScalableParams" {
        /// ACKs per one-packet increase above the low window (Linux TCP_SCALABLE_AI_CNT).
        ai_cnt: i64 = 50, unit "ACKs", check int_in(1, 1 << 20);
        /// Fraction of the window given up on a loss (Linux 1 / 2^TCP_SCALABLE_MD_SCALE).
        decrease: f64 = 0.125, unit "fraction", check float_in(1e-6, 0.999_999);
    }
}

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "scalable",
        doc: "Scalable TCP (Kelly 2003; Linux tcp_scalable.c): +1/ai_cnt per ACK, x (1 - decrease) on loss",
        params: ScalableParams::specs,
        keys: ScalableParams::KEYS,
        normalize: normalize::<ScalableParams>,
    },
    factory,
    needs_ecn: false,
    needs_pacing: false,
    modes: &[],
};

fn factory(v: &Value) -> LawFactory {
    let p = ScalableParams::parse(v).expect("validated");
    Box::new(move || Scalable { p: p.clone(), w: LinuxCwnd::default() }.into())
}

pub struct Scalable {
    p: ScalableParams,
    w: LinuxCwnd,
}

impl Scalable {
    fn ssthresh(&self, st: &TcpState) -> u32 {
        let cwnd = LinuxCwnd::cwnd(st);
        cwnd - (cwnd as f64 * self.p.decrease).floor() as u32
    }
}

impl WindowLaw for Scalable {
    fn on_ack(&mut self, st: &mut TcpState, _ack: &Ack) {
        if LinuxCwnd::in_slow_start(st) {
            self.w.slow_start(st);
            return;
        }
        self.w.cnt += 1;
        if self.w.cnt > LinuxCwnd::cwnd(st).min(self.p.ai_cnt as u32) {
            if st.cwnd < st.wmax {
                st.cwnd += 1.0;
            }
            self.w.cnt = 0;
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

    fn law() -> Scalable {
        Scalable { p: ScalableParams::default(), w: LinuxCwnd::default() }
    }

    fn ack() -> Ack {
        Ack { now: 0, acked_pkts: 1, rtt_sample_s: None }
    }

    #[test]
    fn grows_one_packet_per_ai_cnt_acks_and_keeps_seven_eighths() {
        let mut st = TcpState::new(1000.0, 10.0, 100_000.0);
        let mut s = law();
        for _ in 0..51 * 4 {
            s.on_ack(&mut st, &ack());
        }
        assert_eq!(st.cwnd, 1004.0, "+1 every 51 ACKs (Linux's cnt > 50): 0.0196 per ACK");
        s.on_fast_retransmit(&mut st, 0);
        assert_eq!((st.ssthresh, st.cwnd), (879.0, 879.0), "1004 - floor(1004 / 8) = 879: 12.5% decrease");
        s.on_timeout(&mut st, 0);
        assert_eq!((st.ssthresh, st.cwnd), (770.0, 1.0));
    }

    #[test]
    fn below_ai_cnt_it_grows_as_reno() {
        let mut st = TcpState::new(20.0, 10.0, 1000.0);
        let mut s = law();
        for _ in 0..21 {
            s.on_ack(&mut st, &ack());
        }
        assert_eq!(st.cwnd, 21.0, "one packet per window of ACKs below the low window");
    }
}

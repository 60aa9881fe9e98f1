//! DCTCP (`cc = dctcp`; RFC 8257, Alizadeh et al. SIGCOMM 2010) over the AIMD law, as Linux's
//! `net/ipv4/tcp_dctcp.c` and ns-3's `TcpDctcp`: alpha, the fraction of packets acknowledged with
//! ECE, is averaged once a window with gain g; an ECE that starts CWR cuts the window to
//! cwnd (1 - alpha / 2), a loss halves it. The receiver echoes each packet's CE (section 3.2).
//! Details: docs/tcp.md, `tcp/dctcp.rs`.

use super::newreno::Aimd;
use super::{Ack, AckEvent, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{float_in, normalize, Param, Value, VariantDef};
use crate::time::Time;

crate::params! {
    /// RFC 8257's (and Linux's, ns-3's) defaults.
    pub struct DctcpParams as "DctcpParams" {
        /// Gain of alpha's moving average, once a window (Linux dctcp_shift_g 4: 1/16).
        g: f64 = 0.0625, unit "fraction", check float_in(1e-6, 1.0);
        /// Alpha before the first window is measured (Linux dctcp_alpha_on_init: 1).
        alpha_init: f64 = 1.0, unit "fraction", check float_in(0.0, 1.0);
    }
}

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "dctcp",
        doc: "DCTCP (RFC 8257, Linux tcp_dctcp.c): cut to cwnd (1 - alpha / 2) per window of ECN marks",
        params: DctcpParams::specs,
        keys: DctcpParams::KEYS,
        normalize: normalize::<DctcpParams>,
    },
    factory,
    needs_ecn: true,
    needs_pacing: false,
    modes: &[],
};

fn factory(v: &Value) -> LawFactory {
    let p = DctcpParams::parse(v).expect("validated");
    Box::new(move || Dctcp::new(&p).into())
}

pub struct Dctcp {
    g: f64,
    /// The estimated fraction of marked packets.
    pub alpha: f64,
    /// Packets acknowledged in the current window, and those by ACKs carrying ECE.
    acked: i64,
    acked_ece: i64,
    /// The window ends when this sequence is acknowledged (Linux `next_seq`, snd_nxt at reset);
    /// None before the first ACK.
    window_end: Option<i64>,
}

impl Dctcp {
    pub fn new(p: &DctcpParams) -> Self {
        Self { g: p.g, alpha: p.alpha_init, acked: 0, acked_ece: 0, window_end: None }
    }
}

impl WindowLaw for Dctcp {
    /// Linux's `dctcp_update_alpha` (on every ACK, in any state): alpha = (1 - g) alpha + g F.
    fn on_ack_event(&mut self, st: &mut TcpState, ev: &AckEvent) {
        self.acked += ev.acked_pkts;
        if ev.ece {
            self.acked_ece += ev.acked_pkts;
        }
        let end = *self.window_end.get_or_insert(st.maxseq);
        if st.highest_ack + ev.acked_pkts >= end && ev.acked_pkts > 0 {
            let f = if self.acked > 0 { self.acked_ece as f64 / self.acked as f64 } else { 0.0 };
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            (self.acked, self.acked_ece, self.window_end) = (0, 0, Some(st.maxseq));
        }
    }

    fn on_ack(&mut self, st: &mut TcpState, ack: &Ack) {
        Aimd::default().on_ack(st, ack);
    }

    /// A loss: Reno's halving (`dctcp_react_to_loss`).
    fn on_fast_retransmit(&mut self, st: &mut TcpState, now: Time) {
        Aimd::default().on_fast_retransmit(st, now);
    }

    fn on_timeout(&mut self, st: &mut TcpState, now: Time) {
        Aimd::default().on_timeout(st, now);
    }

    /// `dctcp_ssthresh`: cwnd (1 - alpha / 2), at least 2 packets; the window drops to it at once
    /// (as ns-3, where CWR's exit sets cwnd = ssthresh; Linux's PRR walks it down over the RTT).
    fn on_ece(&mut self, st: &mut TcpState, _now: Time) {
        let cut = (st.cwnd * (1.0 - self.alpha / 2.0)).max(2.0);
        st.ssthresh = cut;
        st.cwnd = cut;
    }

    fn echoes_ce_exactly(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(acked_pkts: i64, ece: bool) -> AckEvent {
        AckEvent { now: 0, acked_pkts, srtt_s: None, sacked: false, open: true, echo: None, ece }
    }

    /// RFC 8257 section 3.3: per window, alpha = (1 - g) alpha + g F, F the fraction of packets
    /// acknowledged with ECE; the window ends when what was outstanding at its start is acked.
    #[test]
    fn alpha_follows_the_marked_fraction_once_a_window() {
        let mut law = Dctcp::new(&DctcpParams::default());
        let mut st = TcpState::new(10.0, 5.0, 1e6);
        st.maxseq = 9; // 10 packets out
        for k in 0..10 {
            law.on_ack_event(&mut st, &ev(1, k < 3)); // the first 3 of 10 marked
            st.highest_ack += 1;
            st.maxseq = 19; // the ACKs release 10 more packets
            if k < 9 {
                assert_eq!(law.alpha, 1.0, "no update within the window");
            }
        }
        let expect = 0.9375 * 1.0 + 0.0625 * 0.3;
        assert!((law.alpha - expect).abs() < 1e-12, "{}", law.alpha);
        // A window with no marks: alpha decays by (1 - g).
        for _ in 0..10 {
            law.on_ack_event(&mut st, &ev(1, false));
            st.highest_ack += 1;
        }
        assert!((law.alpha - 0.9375 * expect).abs() < 1e-12);
    }

    /// The cut is cwnd (1 - alpha / 2): with alpha 1, Reno's half; with alpha 0.2, a tenth.
    #[test]
    fn an_ece_cuts_by_half_alpha_and_a_loss_by_half() {
        let mut law = Dctcp::new(&DctcpParams::default());
        let mut st = TcpState::new(40.0, 5.0, 1e6);
        law.on_ece(&mut st, 0);
        assert_eq!((st.cwnd, st.ssthresh), (20.0, 20.0));
        law.alpha = 0.2;
        st.cwnd = 40.0;
        law.on_ece(&mut st, 0);
        assert_eq!(st.cwnd, 36.0);
        st.cwnd = 40.0;
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!((st.cwnd, st.ssthresh), (20.0, 20.0));
        law.alpha = 1.0;
        st.cwnd = 3.0;
        law.on_ece(&mut st, 0);
        assert_eq!(st.cwnd, 2.0, "never below 2 packets");
    }
}

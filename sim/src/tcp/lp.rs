//! TCP-LP (`cc = lp`; Kuzmanovic and Knightly, "TCP-LP: A Distributed Algorithm for Low
//! Priority Data Transfer", INFOCOM 2003), as Linux's `tcp_lp.c` in the copy ns-2 2.35's
//! TCP-Linux ships (from Linux 2.6.22.6), which the ABS paper ran:
//! - the one-way delay (OWD) of each acknowledged packet comes from timestamps: the receiver's
//!   TSval minus the echoed TSecr (the sender's send time), so the receiver must echo them
//!   (`wants_timestamps`);
//! - the law tracks the least and the greatest OWD (the greatest "forgotten" one step: a new
//!   maximum first goes to a reserve) and a smoothed OWD (a 1/8 EWMA);
//! - early congestion indication: after each new ACK, if the smoothed OWD exceeds
//!   owd_min + 15% (owd_max - owd_min), the window halves, or drops to 1 if the last early
//!   indication came within the inference time (3 x the echoed packet's RTT), and the
//!   minimum and maximum restart from the smoothed OWD; ssthresh is left alone;
//! - within the inference time the window does not grow; otherwise growth and the loss
//!   response are Reno's.
//! Timestamps are 1 ms jiffies, as ns-2's TCP-Linux rounds them, and the state is Linux's
//! integers (an OWD of 0 ms is no sample: LP cannot see a queue shorter than a millisecond).
//! Where we differ from ns-2's copy: Linux estimates the remote clock rate (`remote_hz`) and
//! scales TSval by 1000 / remote_hz in integers, which is exactly 1 only while the estimate
//! stays within 501-1000 Hz (above it the OWD becomes TSecr itself; on ABS Fig. 1's set-up ns-2
//! printed 992-998, so its OWDs were right); ns-2 runs both ends on one clock, so we take the
//! rate as known.

use super::linux::{tcp_time_stamp, timestamp_jiffies, LinuxCwnd};
use super::{Ack, AckEvent, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{int_in, normalize, Param, Value, VariantDef};
use crate::time::Time;

crate::params! {
    /// TCP-LP's constants (Linux's).
    pub struct LpParams as "LpParams" {
        /// The early-congestion threshold, in percent of the OWD range above its minimum.
        delay_threshold_pct: i64 = 15, unit "%", check int_in(0, 100);
        /// The inference timeout, in RTTs of the echoed packet.
        inference_rtts: i64 = 3, unit "RTTs", check int_in(0, 1000);
    }
}

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "lp",
        doc: "TCP-LP (Linux tcp_lp.c as in ns-2 2.35 TCP-Linux): backs off when the one-way delay crosses 15% of its range",
        params: LpParams::specs,
        keys: LpParams::KEYS,
        normalize: normalize::<LpParams>,
    },
    factory,
};

fn factory(v: &Value) -> LawFactory {
    let p = LpParams::parse(v).expect("validated");
    Box::new(move || Lp::new(p.clone()).into())
}

/// TCP-LP's state, in Linux's integers: delays in jiffies, the smoothed OWD << 3.
pub struct Lp {
    p: LpParams,
    w: LinuxCwnd,
    sowd: u32,
    owd_min: u32,
    owd_max: u32,
    owd_max_rsv: u32,
    /// When the window was last cut for an early indication; 0 = never (as Linux).
    last_drop: u32,
    inference: u32,
    within_inference: bool,
    /// Early congestion indications so far.
    pub indications: u64,
}

impl Lp {
    pub fn new(p: LpParams) -> Self {
        Self { p, w: LinuxCwnd::default(), sowd: 0, owd_min: u32::MAX, owd_max: 0, owd_max_rsv: 0, last_drop: 0,
               inference: 0, within_inference: false, indications: 0 }
    }

    /// Linux `tcp_lp_rtt_sample`: min, max (with its reserve) and the smoothed OWD; an OWD of 0
    /// jiffies is not a valid sample.
    fn owd_sample(&mut self, owd: u32) {
        if owd == 0 {
            return;
        }
        self.owd_min = self.owd_min.min(owd);
        if owd > self.owd_max {
            if owd > self.owd_max_rsv {
                self.owd_max = if self.owd_max_rsv == 0 { owd } else { self.owd_max_rsv };
                self.owd_max_rsv = owd;
            } else {
                self.owd_max = owd;
            }
        }
        self.sowd = if self.sowd == 0 { owd << 3 } else { (self.sowd as i64 + owd as i64 - (self.sowd >> 3) as i64) as u32 };
    }

    /// Linux `tcp_lp_pkts_acked`: the inference time, and the response to early congestion.
    fn pkts_acked(&mut self, st: &mut TcpState, now: u32, tsecr: Option<u32>) {
        if let Some(ecr) = tsecr.filter(|&e| now > e) {
            self.inference = self.p.inference_rtts as u32 * (now - ecr);
        }
        self.within_inference = self.last_drop != 0 && now.wrapping_sub(self.last_drop) < self.inference;
        // Linux's u32 arithmetic: before any sample (min = u32::MAX, max = 0) the range wraps to
        // 1 and the threshold is u32::MAX, so nothing is early.
        let range = self.owd_max.wrapping_sub(self.owd_min);
        let threshold = self.owd_min.wrapping_add(self.p.delay_threshold_pct as u32 * range / 100);
        if (self.sowd >> 3) < threshold {
            return;
        }
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        let cwnd = LinuxCwnd::cwnd(st);
        st.cwnd = if self.within_inference { 1.0 } else { (cwnd / 2).max(1) as f64 };
        self.last_drop = now;
        self.indications += 1;
    }
}

impl WindowLaw for Lp {
    fn wants_timestamps(&self) -> bool {
        true
    }

    fn on_ack_event(&mut self, st: &mut TcpState, ev: &AckEvent) {
        if ev.acked_pkts == 0 {
            return; // Linux calls pkts_acked for new data only
        }
        let stamps = ev.echo.map(|e| (timestamp_jiffies(e.ack_sent), timestamp_jiffies(e.data_sent)));
        if let Some((tsval, tsecr)) = stamps {
            self.owd_sample(tsval.abs_diff(tsecr));
        }
        self.pkts_acked(st, tcp_time_stamp(ev.now), stamps.map(|s| s.1));
    }

    fn on_ack(&mut self, st: &mut TcpState, _ack: &Ack) {
        if self.within_inference {
            return;
        }
        self.w.reno_cong_avoid(st);
    }

    fn on_fast_retransmit(&mut self, st: &mut TcpState, _now: Time) {
        self.w.on_loss(st, LinuxCwnd::reno_ssthresh(st), false);
    }

    fn on_timeout(&mut self, st: &mut TcpState, _now: Time) {
        self.w.on_loss(st, LinuxCwnd::reno_ssthresh(st), true);
    }

    fn min_cwnd(&self, st: &TcpState) -> Option<f64> {
        Some(LinuxCwnd::reno_min_cwnd(st))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::Echo;
    use crate::time::from_secs;

    fn ack(law: &mut Lp, st: &mut TcpState, t: f64, owd: f64, rtt: f64) {
        let echo = Echo { data_sent: from_secs(t - rtt), ack_sent: from_secs(t - rtt + owd) };
        let ev = AckEvent { now: from_secs(t), acked_pkts: 1, srtt_s: Some(rtt), sacked: false, open: true,
                            echo: Some(echo) };
        law.on_ack_event(st, &ev);
        law.on_ack(st, &Ack { now: ev.now, acked_pkts: 1, rtt_sample_s: None });
    }

    #[test]
    fn backs_off_on_delay_with_no_loss() {
        let mut st = TcpState::new(100.0, 50.0, 1e6);
        let mut law = Lp::new(LpParams::default());
        // Linux's first sample sets min = max = the smoothed OWD, which counts as crossing the
        // threshold: one indication, after which the range restarts at [OWD, 2 OWD]. The same
        // ACK then grows the halved window (slow start: 50 <= ssthresh), as in Linux, where the
        // inference flag is taken before the cut.
        let mut t = 1.0;
        ack(&mut law, &mut st, t, 0.020, 0.05);
        assert_eq!((law.indications, st.cwnd), (1, 51.0));
        // 3 RTTs later, the OWD at 20 ms with a 35 ms spike every 100 ACKs: the smoothed OWD
        // stays below 20 + 15% x 20 = 23 ms, and the window grows as Reno's.
        t += 0.2;
        for i in 0..400 {
            let owd = if i % 100 == 50 { 0.035 } else { 0.020 };
            ack(&mut law, &mut st, t, owd, 0.05);
            t += 0.001;
        }
        assert_eq!(law.indications, 1);
        let grown = st.cwnd;
        assert!(grown > 50.0, "growth while the delay is low: {grown}");
        // A queue builds: the OWD rises to 30 ms, above 23 ms. No packet is lost.
        while law.indications == 1 {
            ack(&mut law, &mut st, t, 0.030, 0.06);
            t += 0.001;
        }
        // Halved, then that ACK's slow-start increment (the cut window is below ssthresh).
        assert_eq!(st.cwnd, (grown as u32 / 2 + 1) as f64, "halved with no loss");
        assert_eq!(st.ssthresh, 50.0, "ssthresh untouched");
        // Within the inference time (3 RTTs) the window does not grow, and a second indication
        // drops it to 1.
        let cut = st.cwnd;
        let first = t;
        while law.indications == 2 && t - first < 0.17 {
            ack(&mut law, &mut st, t, 0.080, 0.06);
            assert!(st.cwnd <= cut);
            t += 0.001;
        }
        assert_eq!(law.indications, 3, "the OWD doubled past the restarted range");
        assert_eq!(st.cwnd, 1.0, "a second indication within the inference time: cwnd = 1 ({cut} before)");
    }
}

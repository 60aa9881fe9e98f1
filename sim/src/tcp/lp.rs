//! TCP-LP (`cc = lp`; Kuzmanovic and Knightly, INFOCOM 2003), as Linux 2.6.22.6's `tcp_lp.c` in
//! ns-2 2.35's TCP-Linux. Details: docs/tcp.md, `tcp/lp.rs`.

use super::linux::{tcp_time_stamp, timestamp_jiffies, LinuxCwnd, HZ};
use super::{Ack, AckEvent, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{int_in, normalize, Param, Value, VariantDef};
use crate::time::Time;

/// Linux's OWD resolution: the remote clock is scaled to 1000 ticks per second.
const LP_RESOL: Ns2U32 = 1000;

/// The module's `u32`: ns-2's TCP-Linux glue defines it as `unsigned long`.
type Ns2U32 = u64;

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
    needs_ecn: false,
    needs_pacing: false,
    modes: &[],
};

fn factory(v: &Value) -> LawFactory {
    let p = LpParams::parse(v).expect("validated");
    Box::new(move || Lp::new(p.clone()).into())
}

/// TCP-LP's state, in Linux's integers: delays in jiffies, the smoothed OWD << 3.
pub struct Lp {
    p: LpParams,
    w: LinuxCwnd,
    sowd: Ns2U32,
    owd_min: Ns2U32,
    owd_max: Ns2U32,
    owd_max_rsv: Ns2U32,
    /// The remote clock rate estimate (Hz) and the TSval and TSecr it was last taken at.
    remote_hz: Ns2U32,
    remote_ref_time: Ns2U32,
    local_ref_time: Ns2U32,
    /// When the window was last cut for an early indication; 0 = never (as Linux).
    last_drop: Ns2U32,
    inference: Ns2U32,
    within_inference: bool,
    /// Early congestion indications so far.
    pub indications: u64,
}

impl Lp {
    pub fn new(p: LpParams) -> Self {
        Self {
            p,
            w: LinuxCwnd::default(),
            sowd: 0,
            owd_min: u32::MAX as Ns2U32,
            owd_max: 0,
            owd_max_rsv: 0,
            remote_hz: 0,
            remote_ref_time: 0,
            local_ref_time: 0,
            last_drop: 0,
            inference: 0,
            within_inference: false,
            indications: 0,
        }
    }

    /// Linux `tcp_lp_remote_hz_estimator`: the remote clock rate from two consecutive (TSval,
    /// TSecr) pairs (a TSecr that went backwards wraps the divisor: a rate sample of 0); the pair
    /// is recorded as the next reference either way. Returns the estimate, signed as Linux tests it.
    fn estimate_remote_hz(&mut self, tsval: Ns2U32, tsecr: Ns2U32) -> i64 {
        let mut rhz = (self.remote_hz as i64) << 6;
        let (dv, de) = (tsval.wrapping_sub(self.remote_ref_time), tsecr.wrapping_sub(self.local_ref_time));
        if self.remote_ref_time != 0 && self.local_ref_time != 0 && dv != 0 && de != 0 {
            let m = ((HZ as Ns2U32).wrapping_mul(dv) / de) as i64;
            let m = m.wrapping_abs();
            rhz = if rhz > 0 { rhz.wrapping_add(m - (rhz >> 6)) } else { m << 6 };
        }
        self.remote_ref_time = tsval;
        self.local_ref_time = tsecr;
        rhz >> 6
    }

    /// Linux `tcp_lp_owd_calculator`: |TSval x (1000 / remote_hz) - TSecr| (integer division);
    /// None while the rate or the OWD is not positive (Linux's LP_VALID_RHZ, LP_VALID_OWD).
    fn owd(&mut self, tsval: Ns2U32, tsecr: Ns2U32) -> Option<i64> {
        let rhz = self.estimate_remote_hz(tsval, tsecr);
        self.remote_hz = rhz as Ns2U32;
        if rhz <= 0 {
            return None;
        }
        let owd =
            tsval.wrapping_mul(LP_RESOL / self.remote_hz).wrapping_sub(tsecr.wrapping_mul(LP_RESOL / HZ as Ns2U32));
        let owd = (owd as i64).wrapping_abs();
        (owd > 0).then_some(owd)
    }

    /// Linux `tcp_lp_rtt_sample`: min, max (with its reserve) and the smoothed OWD.
    fn owd_sample(&mut self, owd: i64) {
        if owd < self.owd_min as i64 {
            self.owd_min = owd as Ns2U32;
        }
        if owd > self.owd_max as i64 {
            if owd > self.owd_max_rsv as i64 {
                self.owd_max = if self.owd_max_rsv == 0 { owd as Ns2U32 } else { self.owd_max_rsv };
                self.owd_max_rsv = owd as Ns2U32;
            } else {
                self.owd_max = owd as Ns2U32;
            }
        }
        self.sowd = if self.sowd == 0 {
            (owd << 3) as Ns2U32
        } else {
            (self.sowd as i64).wrapping_add(owd - (self.sowd >> 3) as i64) as Ns2U32
        };
    }

    /// Linux `tcp_lp_pkts_acked`: the inference time, and the response to early congestion.
    fn pkts_acked(&mut self, st: &mut TcpState, now: Ns2U32, tsecr: Option<Ns2U32>) {
        if let Some(ecr) = tsecr.filter(|&e| now > e) {
            self.inference = self.p.inference_rtts as Ns2U32 * (now - ecr);
        }
        self.within_inference = self.last_drop != 0 && now.wrapping_sub(self.last_drop) < self.inference;
        // Before any sample (min = 2^32 - 1, max = 0) the range wraps and the threshold is huge:
        // nothing is early.
        let range = self.owd_max.wrapping_sub(self.owd_min);
        let threshold = self.owd_min.wrapping_add((self.p.delay_threshold_pct as Ns2U32).wrapping_mul(range) / 100);
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
        self.w.count_acked(ev); // ABC's count runs during inference too (linux.rs)
        if ev.acked_pkts == 0 {
            return; // Linux calls pkts_acked for new data only
        }
        let stamps =
            ev.echo.map(|e| (timestamp_jiffies(e.ack_sent) as Ns2U32, timestamp_jiffies(e.data_sent) as Ns2U32));
        if let Some(owd) = stamps.and_then(|(tsval, tsecr)| self.owd(tsval, tsecr)) {
            self.owd_sample(owd);
        }
        self.pkts_acked(st, tcp_time_stamp(ev.now) as Ns2U32, stamps.map(|s| s.1));
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
        let ev = AckEvent {
            now: from_secs(t),
            acked_pkts: 1,
            srtt_s: Some(rtt),
            sacked: false,
            open: true,
            echo: Some(echo),
            ece: false,
        };
        law.on_ack_event(st, &ev);
        law.on_ack(st, &Ack { now: ev.now, acked_pkts: 1, rtt_sample_s: None });
    }

    #[test]
    fn backs_off_on_delay_with_no_loss() {
        let mut st = TcpState::new(100.0, 50.0, 1e6);
        let mut law = Lp::new(LpParams::default());
        // The first ACK only records the clocks' reference (no rate estimate, no OWD). Linux's
        // first sample then sets min = max = the smoothed OWD, which counts as crossing the
        // threshold: one indication, after which the range restarts at [OWD, 2 OWD]. The same
        // ACK then grows the halved window (slow start: 50 <= ssthresh), as in Linux, where the
        // inference flag is taken before the cut.
        let mut t = 1.0;
        ack(&mut law, &mut st, t, 0.020, 0.05);
        assert_eq!((law.indications, st.cwnd), (0, 100.0));
        t += 0.001;
        ack(&mut law, &mut st, t, 0.020, 0.05);
        assert_eq!((law.indications, st.cwnd, law.remote_hz), (1, 51.0, 1000));
        // 3 RTTs later, the OWD steady at 20 ms: the smoothed OWD stays below 20 + 15% x 20 =
        // 23 ms, and the window grows as Reno's. (A rising OWD, even for one ACK, would lift the
        // clock-rate estimate above 1000 Hz, and the garbage OWD would count as a queue; see the
        // next test.)
        t += 0.2;
        for _ in 0..400 {
            ack(&mut law, &mut st, t, 0.020, 0.05);
            t += 0.001;
        }
        assert_eq!(law.indications, 1);
        let grown = st.cwnd;
        assert!(grown > 50.0, "growth while the delay is low: {grown}");
        // A queue builds: the OWD rises to 30 ms, above 23 ms. No packet is lost. (The jump also
        // lifts the clock-rate estimate above 1000 Hz, so the module's OWD is TSecr itself, in ms
        // since the start: far above the threshold either way.)
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

    #[test]
    fn remote_clock_estimate_leaves_its_valid_range_when_the_delay_grows() {
        let mut law = Lp::new(LpParams::default());
        assert_eq!(law.owd(20, 1), None, "no reference pair yet");
        // Both clocks at 1000 Hz: the OWD is TSval - TSecr.
        assert_eq!((law.owd(30, 11), law.remote_hz), (Some(19), 1000));
        // The OWD grows by 1 ms between ACKs 10 ms apart: 1000 x 11 / 10 = 1100 Hz moves the
        // 1/64 average to 1001, 1000 / 1001 = 0 in integers, and the OWD is |0 - TSecr|.
        assert_eq!((law.owd(41, 21), law.remote_hz), (Some(21), 1001));
        // It shrinks again: 900 Hz brings the estimate back to 999, and the OWD is right.
        assert_eq!((law.owd(50, 31), law.remote_hz), (Some(19), 999));
        // A TSecr that went backwards wraps the divisor: a rate sample of 0.
        assert_eq!((law.owd(60, 30), law.remote_hz), (Some(30), 983));
        // Below 501 Hz, TSval counts twice.
        let mut slow = Lp::new(LpParams::default());
        slow.owd(100, 100);
        assert_eq!((slow.owd(105, 110), slow.remote_hz), (Some(100), 500));
    }
}

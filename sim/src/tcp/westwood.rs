//! TCP Westwood+ (`cc = westwood`; Mascolo et al. 2001, Grieco and Mascolo 2004), as Linux
//! 2.6.22.6's `tcp_westwood.c` in ns-2 2.35's TCP-Linux. Details: docs/tcp.md, `tcp/westwood.rs`.

use super::linux::{LinuxCwnd, HZ};
use super::{Ack, AckEvent, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{normalize, Param, Value, VariantDef};
use crate::time::{to_secs, Time};

crate::params! {
    /// Westwood+ has no tunable constants in Linux.
    pub struct WestwoodParams as "WestwoodParams" {
    }
}

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "westwood",
        doc: "Westwood+ (Linux tcp_westwood.c as in ns-2 2.35 TCP-Linux): Reno growth, cwnd = BWE x RTTmin after loss",
        params: WestwoodParams::specs,
        keys: WestwoodParams::KEYS,
        normalize: normalize::<WestwoodParams>,
    },
    factory,
    needs_ecn: false,
    needs_pacing: false,
    modes: &[],
};

fn factory(v: &Value) -> LawFactory {
    WestwoodParams::parse(v).expect("validated");
    Box::new(|| Westwood::default().into())
}

/// The shortest bandwidth-sampling window (Linux TCP_WESTWOOD_RTT_MIN, HZ / 20).
const MIN_WINDOW_S: f64 = 0.05;
/// The RTT before any sample (Linux TCP_WESTWOOD_INIT_RTT, 20 s).
const INIT_RTT_S: f64 = 20.0;

pub struct Westwood {
    w: LinuxCwnd,
    /// The once-filtered and the twice-filtered estimate, in packets per second.
    bw_ns_est: f64,
    bw_est: f64,
    /// Start of the current sampling window; None before the first ACK.
    win_start_s: Option<f64>,
    /// Packets acknowledged in the current window.
    bk: f64,
    /// The cumulative ACK point the estimate has counted to (Linux `snd_una`), in packets.
    snd_una: i64,
    /// Packets counted for duplicate ACKs and not yet covered by a cumulative ACK.
    accounted: i64,
    rtt_s: f64,
    rtt_min_s: f64,
    reset_rtt_min: bool,
}

impl Default for Westwood {
    fn default() -> Self {
        Self {
            w: LinuxCwnd::default(),
            bw_ns_est: 0.0,
            bw_est: 0.0,
            win_start_s: None,
            bk: 0.0,
            snd_una: 0,
            accounted: 0,
            rtt_s: INIT_RTT_S,
            rtt_min_s: INIT_RTT_S,
            reset_rtt_min: true,
        }
    }
}

impl Westwood {
    /// The bandwidth estimate, in packets per second.
    pub fn bw_est_pps(&self) -> f64 {
        self.bw_est
    }

    pub fn rtt_min_s(&self) -> f64 {
        self.rtt_min_s
    }

    /// Linux `tcp_westwood_bw_rttmin`: BWE x RTTmin in packets, at least 2.
    pub fn bw_rttmin(&self) -> u32 {
        ((self.bw_est * self.rtt_min_s) as u32).max(2)
    }

    /// Linux `westwood_update_window`: closes the sampling window once it spans an RTT.
    fn update_window(&mut self, now_s: f64) {
        let start = *self.win_start_s.get_or_insert(now_s);
        let delta = now_s - start;
        if delta > self.rtt_s.max(MIN_WINDOW_S) {
            let sample = self.bk / delta;
            if self.bw_ns_est == 0.0 && self.bw_est == 0.0 {
                (self.bw_ns_est, self.bw_est) = (sample, sample);
            } else {
                self.bw_ns_est = (7.0 * self.bw_ns_est + sample) / 8.0;
                self.bw_est = (7.0 * self.bw_est + self.bw_ns_est) / 8.0;
            }
            self.bk = 0.0;
            self.win_start_s = Some(now_s);
        }
    }

    /// Linux `westwood_acked_count`: packets this ACK accounts for.
    fn acked_count(&mut self, snd_una: i64) -> i64 {
        let mut cumul = snd_una - self.snd_una;
        if cumul == 0 {
            self.accounted += 1; // a duplicate ACK: a packet left the network
            cumul = 1;
        } else if cumul > 1 {
            // A delayed or partial ACK: take back what the duplicates counted.
            if self.accounted >= cumul {
                self.accounted -= cumul;
                cumul = 1;
            } else {
                cumul -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = snd_una;
        cumul
    }

    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min_s = self.rtt_s;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min_s = self.rtt_min_s.min(self.rtt_s);
        }
    }
}

impl WindowLaw for Westwood {
    fn on_ack_event(&mut self, st: &mut TcpState, ev: &AckEvent) {
        self.w.count_acked(ev);
        let now_s = to_secs(ev.now);
        let snd_una = st.highest_ack + 1 + ev.acked_pkts;
        if self.win_start_s.is_none() {
            self.snd_una = snd_una; // the first ACK starts the count (Linux `first_ack`)
        }
        if ev.acked_pkts > 0 {
            if let Some(srtt) = ev.srtt_s {
                self.rtt_s = (srtt * HZ as f64).floor() / HZ as f64; // Linux `pkts_acked`: srtt >> 3
            }
        }
        self.update_window(now_s);
        if ev.open && ev.acked_pkts > 0 && !ev.sacked {
            // CA_EVENT_FAST_ACK
            self.bk += (snd_una - self.snd_una) as f64;
            self.snd_una = snd_una;
        } else {
            // CA_EVENT_SLOW_ACK
            self.bk += self.acked_count(snd_una) as f64;
        }
        self.update_rtt_min();
    }

    fn on_ack(&mut self, st: &mut TcpState, _ack: &Ack) {
        self.w.reno_cong_avoid(st);
    }

    fn on_fast_retransmit(&mut self, st: &mut TcpState, _now: Time) {
        self.w.on_loss(st, LinuxCwnd::reno_ssthresh(st), false);
        st.cwnd = (self.bw_rttmin() as f64).min(st.wmax);
    }

    fn on_timeout(&mut self, st: &mut TcpState, _now: Time) {
        self.w.on_loss(st, LinuxCwnd::reno_ssthresh(st), true);
    }

    fn min_cwnd(&self, _st: &TcpState) -> Option<f64> {
        Some(self.bw_rttmin() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::from_secs;

    #[test]
    fn after_a_loss_cwnd_is_the_bandwidth_estimate_times_rtt_min() {
        // A flow acknowledged at a steady 1000 packets/s with a 100 ms smoothed RTT (80 ms at
        // its least): BWE -> 1000 pkts/s, RTTmin = 80 ms, BWE x RTTmin = 80 packets.
        let mut st = TcpState::new(300.0, 10.0, 1e6);
        let mut law = Westwood::default();
        let mut ack = -1;
        for i in 0..20_000 {
            let t = i as f64 / 1000.0;
            let srtt = if i == 500 { 0.08 } else { 0.1 };
            let ev = AckEvent {
                now: from_secs(t),
                acked_pkts: 1,
                srtt_s: Some(srtt),
                sacked: false,
                open: true,
                echo: None,
                ece: false,
            };
            law.on_ack_event(&mut st, &ev);
            ack += 1;
            st.highest_ack = ack;
        }
        assert!((law.bw_est_pps() - 1000.0).abs() < 15.0, "BWE {}", law.bw_est_pps());
        assert!((law.rtt_min_s() - 0.08).abs() < 1e-12);
        law.on_fast_retransmit(&mut st, 0);
        assert_eq!(st.ssthresh, 150.0, "Reno's ssthresh: cwnd / 2");
        assert!((78.0..=80.0).contains(&st.cwnd), "cwnd = BWE x RTTmin = 80: {}", st.cwnd);
        law.on_timeout(&mut st, 0);
        assert_eq!(st.cwnd, 1.0);
    }

    #[test]
    fn duplicate_acks_count_once() {
        // 10 packets: 3 acknowledged by duplicates, then one cumulative ACK covering 4.
        let mut st = TcpState::new(20.0, 10.0, 1e6);
        let mut law = Westwood::default();
        let ev = |t: f64, acked: i64| AckEvent {
            now: from_secs(t),
            acked_pkts: acked,
            srtt_s: Some(0.1),
            sacked: false,
            open: true,
            echo: None,
            ece: false,
        };
        law.on_ack_event(&mut st, &ev(0.0, 1));
        st.highest_ack = 0;
        for i in 0..3 {
            law.on_ack_event(&mut st, &AckEvent { open: false, ..ev(0.001 * i as f64, 0) });
        }
        law.on_ack_event(&mut st, &AckEvent { open: false, ..ev(0.004, 4) });
        assert_eq!(law.bk, 4.0, "3 duplicates + the 1 packet the cumulative ACK adds");
    }
}

//! H-TCP (`cc = htcp`; Leith and Shorten, PFLDnet 2004), as Linux 2.6.22.6's `tcp_htcp.c` in
//! ns-2 2.35's TCP-Linux. Details: docs/tcp.md, `tcp/htcp.rs`.

use super::linux::{tcp_time_stamp as jiffies, LinuxCwnd, HZ};
use super::{Ack, AckEvent, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{normalize, Param, Value, VariantDef};
use crate::time::Time;

crate::params! {
    /// H-TCP's switches (Linux defaults: both on).
    pub struct HtcpParams as "HtcpParams" {
        /// Scale alpha by min RTT / 100 ms, so flows of different RTTs share fairly.
        use_rtt_scaling: bool = true;
        /// Back off by 0.5 when the throughput measured between congestion events changes by more than 20%.
        use_bandwidth_switch: bool = true;
    }
}

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "htcp",
        doc: "H-TCP (Linux tcp_htcp.c as in ns-2 2.35 TCP-Linux): alpha from the time since the last congestion event, beta = RTTmin / RTTmax",
        params: HtcpParams::specs,
        keys: HtcpParams::KEYS,
        normalize: normalize::<HtcpParams>,
    },
    factory,
    needs_ecn: false,
    needs_pacing: false,
    modes: &[],
};

fn factory(v: &Value) -> LawFactory {
    let p = HtcpParams::parse(v).expect("validated");
    Box::new(move || Htcp::new(p.clone()).into())
}

/// alpha = 1.0 and the beta bounds 0.5 and 0.8, << 7.
const ALPHA_BASE: u32 = 1 << 7;
const BETA_MIN: u32 = 1 << 6;
const BETA_MAX: u32 = 102;

pub struct Htcp {
    p: HtcpParams,
    w: LinuxCwnd,
    /// << 7.
    alpha: u32,
    /// << 7.
    beta: u32,
    modeswitch: bool,
    pkts_acked: u32,
    packetcount: u32,
    min_rtt: u32,
    max_rtt: u32,
    /// When the last congestion event ended, in jiffies.
    last_cong: u32,
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    lasttime: u32,
    /// The sender's smoothed RTT, in jiffies.
    srtt_j: u32,
    was_open: bool,
}

impl Htcp {
    pub fn new(p: HtcpParams) -> Self {
        Self {
            p,
            w: LinuxCwnd::default(),
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
            srtt_j: 0,
            was_open: true,
        }
    }

    fn cong_time(&self, now: u32) -> u32 {
        now.wrapping_sub(self.last_cong)
    }

    /// Round trips since the last congestion event.
    fn ccount(&self, now: u32) -> u32 {
        self.cong_time(now) / self.min_rtt.max(1)
    }

    /// Linux `htcp_alpha_update`: alpha << 7 at `now` (jiffies).
    fn alpha_update(&mut self, now: u32) {
        let mut diff = self.cong_time(now);
        let mut factor = 1u32;
        if diff > HZ {
            diff -= HZ;
            factor = 1 + ((10 * diff as u64 + (diff as u64 / 2) * (diff as u64 / 2) / HZ as u64) / HZ as u64) as u32;
        }
        if self.p.use_rtt_scaling && self.min_rtt > 0 {
            let scale = ((HZ << 3) / (10 * self.min_rtt)).clamp(1 << 2, 10 << 3);
            factor = ((factor << 3) / scale).max(1);
        }
        self.alpha = (2 * factor * ((1 << 7) - self.beta)).max(1);
    }

    /// Linux `htcp_beta_update`.
    fn beta_update(&mut self) {
        if self.p.use_bandwidth_switch {
            let (max_b, old_max_b) = (self.max_b as u64, self.old_max_b as u64);
            self.old_max_b = self.max_b;
            if !(4 * old_max_b..=6 * old_max_b).contains(&(5 * max_b)) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && self.min_rtt > HZ / 100 && self.max_rtt > 0 {
            self.beta = ((self.min_rtt << 7) / self.max_rtt).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// Linux `htcp_recalc_ssthresh` (with `htcp_param_update`), then the congestion event.
    fn congestion(&mut self, st: &TcpState, now: u32) -> u32 {
        self.beta_update();
        self.alpha_update(now);
        if self.min_rtt > 0 && self.max_rtt > self.min_rtt {
            self.max_rtt = self.min_rtt + (self.max_rtt - self.min_rtt) * 95 / 100;
            // fading memory
        }
        self.last_cong = now;
        ((LinuxCwnd::cwnd(st) * self.beta) >> 7).max(2)
    }

    /// Linux `measure_achieved_throughput`.
    fn measure_throughput(&mut self, st: &TcpState, ev: &AckEvent, now: u32) {
        if ev.open {
            self.pkts_acked = ev.acked_pkts as u32;
        }
        if !self.p.use_bandwidth_switch {
            return;
        }
        if !ev.open {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount += ev.acked_pkts as u32;
        let alpha_pkts = (self.alpha >> 7).max(1);
        if self.packetcount >= LinuxCwnd::cwnd(st).saturating_sub(alpha_pkts)
            && self.min_rtt > 0
            && now.wrapping_sub(self.lasttime) >= self.min_rtt
        {
            let cur_bi = self.packetcount * HZ / now.wrapping_sub(self.lasttime);
            if self.ccount(now) <= 3 {
                (self.min_b, self.max_b, self.bi) = (cur_bi, cur_bi, cur_bi); // just after backoff
            } else {
                self.bi = (3 * self.bi + cur_bi) / 4;
                self.max_b = self.max_b.max(self.bi);
                self.min_b = self.min_b.min(self.max_b);
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }

    /// Linux `measure_rtt`, from the smoothed RTT in jiffies.
    fn measure_rtt(&mut self, st: &TcpState, srtt: u32, now: u32) {
        if srtt == 0 {
            return;
        }
        if self.min_rtt > srtt || self.min_rtt == 0 {
            self.min_rtt = srtt;
        }
        if st.ca_open() && st.ssthresh < 65535.0 && self.ccount(now) > 3 {
            self.max_rtt = self.max_rtt.max(self.min_rtt);
            if self.max_rtt < srtt && srtt <= self.max_rtt + HZ / 50 {
                self.max_rtt = srtt;
            }
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / 128.0
    }

    pub fn beta(&self) -> f64 {
        self.beta as f64 / 128.0
    }
}

impl WindowLaw for Htcp {
    fn on_ack_event(&mut self, st: &mut TcpState, ev: &AckEvent) {
        let now = jiffies(ev.now);
        if ev.open && !self.was_open {
            self.last_cong = now; // back to Open: delta counts from the end of recovery
        }
        self.was_open = ev.open;
        if ev.acked_pkts > 0 {
            self.measure_throughput(st, ev, now);
        }
        if let Some(srtt) = ev.srtt_s {
            self.srtt_j = (srtt * HZ as f64) as u32;
        }
    }

    fn on_ack(&mut self, st: &mut TcpState, ack: &Ack) {
        if LinuxCwnd::in_slow_start(st) {
            self.w.slow_start(st);
            return;
        }
        let now = jiffies(ack.now);
        self.measure_rtt(st, self.srtt_j, now);
        if (self.w.cnt as u64 * self.alpha as u64) >> 7 >= LinuxCwnd::cwnd(st) as u64 {
            if st.cwnd < st.wmax {
                st.cwnd += 1.0;
            }
            self.w.cnt = 0;
            self.alpha_update(now);
        } else {
            self.w.cnt += self.pkts_acked;
        }
        self.pkts_acked = 1;
    }

    fn on_fast_retransmit(&mut self, st: &mut TcpState, now: Time) {
        let s = self.congestion(st, jiffies(now));
        self.was_open = false;
        self.w.on_loss(st, s, false);
    }

    fn on_timeout(&mut self, st: &mut TcpState, now: Time) {
        let s = self.congestion(st, jiffies(now));
        self.was_open = false;
        self.w.on_loss(st, s, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::from_secs;

    #[test]
    fn alpha_follows_the_time_since_the_last_congestion_event() {
        // min RTT 100 ms: the RTT scaling is 1 (scale = 8). beta = 0.5: alpha = factor.
        let mut law = Htcp::new(HtcpParams::default());
        law.min_rtt = 100;
        law.beta = BETA_MIN;
        law.last_cong = 10_000;
        for delta_s in [0.5f64, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0] {
            law.alpha_update(10_000 + (delta_s * 1000.0) as u32);
            let d = (delta_s - 1.0).max(0.0);
            let closed = if delta_s > 1.0 { 1.0 + 10.0 * d + (d / 2.0) * (d / 2.0) } else { 1.0 };
            assert_eq!(law.alpha(), closed.floor(), "alpha({delta_s} s) = 1 + 10 (d - 1) + ((d - 1) / 2)^2");
        }
        // beta = 0.8: alpha = 2 (1 - beta) factor, so the mean rate is AIMD's.
        law.beta = BETA_MAX;
        law.alpha_update(10_000 + 3000);
        assert!((law.alpha() - 2.0 * (1.0 - 102.0 / 128.0) * 22.0).abs() < 1e-9, "{}", law.alpha());
        // RTT scaling: a 20 ms flow gets alpha x 0.2 (scale 40 / 8).
        law.beta = BETA_MIN;
        law.min_rtt = 20;
        law.alpha_update(10_000 + 3000);
        assert_eq!(law.alpha(), (22 * 8 / 40) as f64);
    }

    #[test]
    fn beta_is_min_over_max_rtt_clamped_and_the_window_grows_by_alpha_per_rtt() {
        let mut st = TcpState::new(100.0, 10.0, 1e6);
        let mut law = Htcp::new(HtcpParams { use_bandwidth_switch: false, ..HtcpParams::default() });
        (law.min_rtt, law.max_rtt, law.modeswitch) = (100, 140, true);
        law.on_fast_retransmit(&mut st, from_secs(20.0));
        assert_eq!(law.beta, (100 << 7) / 140, "beta = min RTT / max RTT = 0.714");
        assert_eq!(st.cwnd, ((100 * law.beta) >> 7) as f64);
        (law.min_rtt, law.max_rtt, law.modeswitch) = (100, 400, true);
        law.on_fast_retransmit(&mut st, from_secs(21.0));
        assert_eq!(law.beta, BETA_MIN, "clamped to 0.5");
        // 2.5 s after the event, alpha = 2 (1 - 0.5) (1 + 15 + 0.5625) = 16: +16 per RTT.
        let mut st = TcpState::new(200.0, 10.0, 1e6);
        law.alpha_update(jiffies(from_secs(23.5)));
        assert_eq!(law.alpha(), 16.0);
        for _ in 0..200 {
            law.on_ack(&mut st, &Ack { now: from_secs(23.5), acked_pkts: 1, rtt_sample_s: None });
        }
        // alpha per window of ACKs, less Linux's counting (the increment comes on the ACK after
        // cnt x alpha reaches cwnd: 14 ACKs, not 12.5, per packet here).
        assert!((212.0..=217.0).contains(&st.cwnd), "one window of ACKs grows ~alpha packets: {}", st.cwnd);
    }
}

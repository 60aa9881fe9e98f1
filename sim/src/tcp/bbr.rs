//! BBR v1 (`cc = bbr`; Cardwell et al., ACM Queue 2016), as Linux's `net/ipv4/tcp_bbr.c` in
//! 4.9-5.x, with 5.x's ACK-aggregation allowance (as ns-3's `TcpBbr` has it too): it models the
//! path by the windowed max of delivery-rate samples (`rate.rs`) over 10 rounds and the 10-s
//! windowed min RTT, paces at pacing_gain x BtlBw and caps inflight at cwnd_gain x BDP, through
//! STARTUP, DRAIN, PROBE_BW's 8-phase gain cycle and PROBE_RTT, with Linux's long-term (policer)
//! mode. It sets its own window on every ACK (Linux's `cong_control`). Rates are packets per
//! second and times the engine's, where Linux keeps fixed point: the gains are Linux's 1/256
//! fractions. Not modelled: EDT's departure-time queue (pacing here has none), idle restart.
//! Details: docs/tcp.md, `tcp/bbr.rs`.

use super::minmax::WindowedMax;
use super::rate::{CaState, InFlight, RateSample};
use super::{Ack, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{normalize, Param, Value, VariantDef};
use crate::rng::SimRng;
use crate::time::{from_secs, to_secs, Time};
use rand::{Rng, SeedableRng};

/// Linux's gains, in its 1/256 units: 2/ln 2 for STARTUP and its inverse for DRAIN.
const HIGH_GAIN: f64 = 739.0 / 256.0;
const DRAIN_GAIN: f64 = 88.0 / 256.0;
const CWND_GAIN: f64 = 2.0;
const PACING_GAINS: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// PROBE_BW starts at a random phase of the cycle, never the 0.75 one.
const CYCLE_RAND: u32 = 7;
const BW_FILTER_ROUNDS: u64 = 10;
const MIN_RTT_WINDOW_S: f64 = 10.0;
const PROBE_RTT_S: f64 = 0.2;
const CWND_MIN_TARGET: f64 = 4.0;
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;
const PACING_MARGIN: f64 = 0.01;
/// Linux's TCP_INIT_CWND: the window before any RTT sample.
const INIT_CWND: f64 = 10.0;
const LT_INTERVAL_MIN_ROUNDS: u32 = 4;
const LT_LOSS_THRESH: f64 = 50.0 / 256.0;
const LT_BW_RATIO: f64 = 1.0 / 8.0;
const LT_BW_DIFF_BYTES_PER_S: f64 = 4000.0 / 8.0;
const LT_BW_MAX_ROUNDS: u32 = 48;
const EXTRA_ACKED_WINDOW_ROUNDS: u32 = 5;
const ACK_EPOCH_RESET_PKTS: u64 = 1 << 20;
const EXTRA_ACKED_MAX_S: f64 = 0.1;

crate::params! {
    /// Linux's switches (ns-3's TcpBbr has no long-term mode).
    pub struct BbrParams as "BbrParams" {
        /// Long-term (policer) mode: two lossy rounds-long intervals at a consistent rate make BBR
        /// pace at their average for 48 rounds (Linux's lt_bw).
        long_term: bool = true;
        /// Add the recent excess of ACKed data over the model to cwnd (Linux 5.x extra_acked).
        ack_aggregation: bool = true;
    }
}

/// The names of BBR's modes, in `Mode` order (`WindowLaw::mode`).
pub const MODES: &[&str] = &["startup", "drain", "probe_bw", "probe_rtt"];

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "bbr",
        doc: "BBR v1 (Linux tcp_bbr.c): paces at the windowed max delivery rate, cwnd 2 BDP",
        params: BbrParams::specs,
        keys: BbrParams::KEYS,
        normalize: normalize::<BbrParams>,
    },
    factory,
    needs_ecn: false,
    needs_pacing: true,
    modes: MODES,
};

fn factory(v: &Value) -> LawFactory {
    let p = BbrParams::parse(v).expect("validated");
    Box::new(move || Bbr::new(&p).into())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// The long-term (policer) estimator's state.
#[derive(Clone, Copy, Debug, Default)]
struct LongTerm {
    sampling: bool,
    rounds: u32,
    use_bw: bool,
    bw: f64,
    last_delivered: u64,
    last_stamp_ms: u64,
    last_lost: u64,
}

/// The ACK-aggregation estimator's state.
#[derive(Clone, Copy, Debug, Default)]
struct Aggregation {
    epoch_stamp: Time,
    epoch_acked: u64,
    extra: [f64; 2],
    window_rounds: u32,
    window_idx: usize,
}

pub struct Bbr {
    long_term: bool,
    ack_aggregation: bool,
    rng: SimRng,
    pkt_bytes: f64,
    started: bool,
    pub mode: Mode,
    bw: WindowedMax,
    min_rtt: Option<Time>,
    min_rtt_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    rounds: u64,
    next_round_delivered: u64,
    round_start: bool,
    cycle_stamp: Time,
    cycle_idx: usize,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    full_bw_reached: bool,
    full_bw_rounds: u32,
    full_bw: f64,
    prior_cwnd: f64,
    prev_ca: CaState,
    packet_conservation: bool,
    has_seen_rtt: bool,
    pacing_rate: f64,
    lt: LongTerm,
    agg: Aggregation,
    /// The connection's counters at the last ACK (delivered, when, lost): a timeout samples them.
    last: (u64, Time, u64),
}

impl Bbr {
    pub fn new(p: &BbrParams) -> Self {
        Self {
            long_term: p.long_term,
            ack_aggregation: p.ack_aggregation,
            rng: SimRng::seed_from_u64(0),
            pkt_bytes: 1500.0,
            started: false,
            mode: Mode::Startup,
            bw: WindowedMax::default(),
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            rounds: 0,
            next_round_delivered: 0,
            round_start: false,
            cycle_stamp: 0,
            cycle_idx: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_rounds: 0,
            full_bw: 0.0,
            prior_cwnd: 0.0,
            prev_ca: CaState::Open,
            packet_conservation: false,
            has_seen_rtt: false,
            pacing_rate: 0.0,
            lt: LongTerm::default(),
            agg: Aggregation::default(),
            last: (0, 0, 0),
        }
    }

    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    /// The bandwidth BBR paces by: the long-term rate when policed, else the windowed max.
    pub fn bw(&self) -> f64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.max_bw()
        }
    }

    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }

    fn pacing_for(bw: f64, gain: f64) -> f64 {
        bw * gain * (1.0 - PACING_MARGIN)
    }

    /// `bbr_init`, at the handshake (with its RTT) or else at the first ACK: the min RTT filter
    /// and the ACK-aggregation epoch start now, the pacing rate from the window.
    fn begin(&mut self, cwnd: f64, now: Time, rtt_s: Option<f64>) {
        self.started = true;
        (self.min_rtt, self.min_rtt_stamp) = (rtt_s.map(from_secs), now);
        self.agg.epoch_stamp = now;
        self.init_pacing_rate(cwnd, rtt_s);
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain x cwnd / (srtt, or 1 ms before any sample).
    fn init_pacing_rate(&mut self, cwnd: f64, srtt_s: Option<f64>) {
        let rtt = srtt_s.map_or(1e-3, |s| s.max(1e-6));
        self.has_seen_rtt |= srtt_s.is_some();
        self.pacing_rate = Self::pacing_for(cwnd / rtt, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: before the pipe is full, the rate only grows.
    fn set_pacing_rate(&mut self, cwnd: f64, bw: f64, srtt_s: Option<f64>) {
        let rate = Self::pacing_for(bw, self.pacing_gain);
        if !self.has_seen_rtt && srtt_s.is_some() {
            self.init_pacing_rate(cwnd, srtt_s);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: packets per TSO burst at the pacing rate (a 1-ms burst, 2 to 127).
    fn tso_segs_goal(&self) -> f64 {
        let bytes_per_s = self.pacing_rate * self.pkt_bytes;
        let min_segs = if bytes_per_s < 1.2e6 / 8.0 { 1.0 } else { 2.0 };
        let bytes = (bytes_per_s / 1024.0).min(crate::tcp::tso_defer::GSO_MAX_BYTES);
        (bytes / self.pkt_bytes).floor().max(min_segs).min(127.0)
    }

    /// `bbr_bdp`: ceil(bw x min RTT x gain); Linux's initial window before any RTT sample.
    fn bdp(&self, bw: f64, gain: f64) -> f64 {
        self.min_rtt.map_or(INIT_CWND, |m| (bw * to_secs(m) * gain).ceil())
    }

    /// `bbr_quantization_budget`: room for three bursts, an even window, and 2 more packets in
    /// the probing phase.
    fn quantization_budget(&self, cwnd: f64) -> f64 {
        let mut c = cwnd + 3.0 * self.tso_segs_goal();
        c = ((c as u64 + 1) & !1) as f64;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            c += 2.0;
        }
        c
    }

    fn inflight(&self, bw: f64, gain: f64) -> f64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt` with no departure-time queue: the packets in flight, and the
    /// next burst when probing upwards.
    fn in_net(&self, in_flight: i64) -> f64 {
        in_flight as f64 + if self.pacing_gain > 1.0 { self.tso_segs_goal() } else { 0.0 }
    }

    /// `bbr_save_cwnd`: the last good window, to restore after recovery or PROBE_RTT.
    fn save_cwnd(&mut self, st: &TcpState) {
        if self.prev_ca < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = st.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(st.cwnd);
        }
    }

    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAINS.len();
        self.cycle_stamp = now;
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = PACING_GAINS.len() - 1 - self.rng.random_range(0..CYCLE_RAND) as usize;
        self.advance_cycle_phase(now);
    }

    fn reset_mode(&mut self, now: Time) {
        if self.full_bw_reached {
            self.enter_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_update_bw`: packet-timed rounds and the bandwidth filter.
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        if !rs.is_valid() {
            return;
        }
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.delivered_total;
            self.rounds += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_sampling(rs);
        let bw = rs.rate_pps();
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(BW_FILTER_ROUNDS, self.rounds, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: the most data ACKed beyond bw x time in an epoch, kept as a
    /// max over 5-10 rounds.
    fn update_ack_aggregation(&mut self, st: &TcpState, rs: &RateSample) {
        if !self.ack_aggregation || rs.acked_sacked <= 0 || !rs.is_valid() {
            return;
        }
        let a = &mut self.agg;
        if self.round_start {
            a.window_rounds = (a.window_rounds + 1).min(31);
            if a.window_rounds >= EXTRA_ACKED_WINDOW_ROUNDS {
                a.window_rounds = 0;
                a.window_idx ^= 1;
                a.extra[a.window_idx] = 0.0;
            }
        }
        let bw = if self.lt.use_bw { self.lt.bw } else { self.bw.get() };
        let mut expected = (bw * to_secs(rs.delivered_time - a.epoch_stamp)).floor() as u64;
        if a.epoch_acked <= expected || a.epoch_acked + rs.acked_sacked as u64 >= ACK_EPOCH_RESET_PKTS {
            a.epoch_acked = 0;
            a.epoch_stamp = rs.delivered_time;
            expected = 0;
        }
        a.epoch_acked = (a.epoch_acked + rs.acked_sacked as u64).min(0xF_FFFF);
        let extra = ((a.epoch_acked - expected) as f64).min(st.cwnd);
        a.extra[a.window_idx] = a.extra[a.window_idx].max(extra);
    }

    fn ack_aggregation_cwnd(&self) -> f64 {
        if !self.ack_aggregation || !self.full_bw_reached {
            return 0.0;
        }
        self.agg.extra[0].max(self.agg.extra[1]).min(self.bw() * EXTRA_ACKED_MAX_S)
    }

    /// `bbr_is_next_cycle_phase`: a phase lasts a min RTT; probing also waits to reach its
    /// inflight (or a loss), draining ends early once inflight is down to the BDP.
    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| rs.delivered_time - self.cycle_stamp > m);
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        debug_assert_ne!(rs.prior_in_flight, super::rate::UNCOUNTED, "reads_prior_in_flight said no");
        let in_net = self.in_net(rs.prior_in_flight);
        if self.pacing_gain > 1.0 {
            return full_length && (rs.losses > 0 || in_net >= self.inflight(self.max_bw(), self.pacing_gain));
        }
        full_length || in_net <= self.inflight(self.max_bw(), 1.0)
    }

    /// `bbr_check_full_bw_reached`: three rounds without 25% growth fill the pipe.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.max_bw();
            self.full_bw_rounds = 0;
            return;
        }
        self.full_bw_rounds += 1;
        self.full_bw_reached = self.full_bw_rounds >= FULL_BW_ROUNDS;
    }

    fn check_drain(&mut self, st: &mut TcpState, rs: &RateSample, in_flight: &InFlight) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            st.ssthresh = self.inflight(self.max_bw(), 1.0);
        }
        if self.mode == Mode::Drain && self.in_net(in_flight.get()) <= self.inflight(self.max_bw(), 1.0) {
            self.enter_probe_bw(rs.delivered_time);
        }
    }

    /// `bbr_update_min_rtt`: the 10-s min RTT filter, and PROBE_RTT when it expires: 4 packets
    /// for 200 ms and a round, then back to the mode BBR was in. Only a strictly lower RTT renews
    /// the filter, as Linux's `rs->rtt_us < bbr->min_rtt_us`: with `<=`, the equal samples of an
    /// empty queue kept one flow out of PROBE_RTT (0.999 of the link, the kernel 0.975; issue 72).
    /// Linux also keeps the old min on expiry when the ACK may have been delayed (one packet sent
    /// alone, `is_ack_delayed`); left out here, whose receivers ack every packet by default.
    fn update_min_rtt(&mut self, st: &mut TcpState, rs: &RateSample, in_flight: &InFlight) {
        let expired = rs.now > self.min_rtt_stamp + from_secs(MIN_RTT_WINDOW_S);
        if let Some(rtt) = rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = rs.now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt; // first, as Linux: the save keeps the larger of the two
            self.save_cwnd(st);
            self.probe_rtt_done = None;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        match self.probe_rtt_done {
            None if in_flight.get() as f64 <= CWND_MIN_TARGET => {
                self.probe_rtt_done = Some(rs.now + from_secs(PROBE_RTT_S));
                self.probe_rtt_round_done = false;
                self.next_round_delivered = rs.delivered_total;
            }
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && rs.now > done {
                    self.min_rtt_stamp = rs.now;
                    st.cwnd = st.cwnd.max(self.prior_cwnd);
                    self.reset_mode(rs.delivered_time);
                }
            }
            None => {}
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.lt.use_bw => (1.0, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAINS[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: losses come off the window; the first round of
    /// recovery conserves packets (one out per one delivered); leaving recovery restores the
    /// window from before it. Returns the window and whether conservation decides it.
    fn recover_or_restore(&mut self, st: &TcpState, rs: &RateSample, in_flight: &InFlight, acked: f64) -> (f64, bool) {
        let mut cwnd = st.cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd - rs.losses as f64).max(1.0);
        }
        let (state, prev) = (rs.ca, self.prev_ca);
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_round_delivered = rs.delivered_total; // the round starts now
            cwnd = in_flight.get() as f64 + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca = state;
        if self.packet_conservation {
            return (cwnd.max(in_flight.get() as f64 + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: slow-start towards cwnd_gain x BDP (plus aggregation and bursts), or
    /// snap down to it once the pipe is full; 4 packets at least, and at most in PROBE_RTT.
    fn set_cwnd(&mut self, st: &mut TcpState, rs: &RateSample, in_flight: &InFlight, bw: f64) {
        let acked = rs.acked_sacked as f64;
        let mut cwnd = st.cwnd;
        if acked > 0.0 {
            let (c, conserving) = self.recover_or_restore(st, rs, in_flight, acked);
            cwnd = c;
            if !conserving {
                let target = self.quantization_budget(self.bdp(bw, self.cwnd_gain) + self.ack_aggregation_cwnd());
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || rs.delivered_total < INIT_CWND as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        st.cwnd = cwnd.min(st.wmax);
        if self.mode == Mode::ProbeRtt {
            st.cwnd = st.cwnd.min(CWND_MIN_TARGET);
        }
    }

    fn reset_lt_interval(&mut self, delivered: u64, delivered_time: Time, lost: u64) {
        self.lt.last_stamp_ms = delivered_time / from_secs(1e-3);
        self.lt.last_delivered = delivered;
        self.lt.last_lost = lost;
        self.lt.rounds = 0;
    }

    fn reset_lt(&mut self, delivered: u64, delivered_time: Time, lost: u64) {
        (self.lt.bw, self.lt.use_bw, self.lt.sampling) = (0.0, false, false);
        self.reset_lt_interval(delivered, delivered_time, lost);
    }

    /// `bbr_lt_bw_sampling`: intervals of 4-16 rounds that end in a loss, with at least 20% of
    /// packets lost; two at a rate within 1/8 (or 4 kb/s) of each other mean a policer, whose
    /// rate BBR then uses for 48 rounds.
    fn lt_sampling(&mut self, rs: &RateSample) {
        if !self.long_term {
            return;
        }
        let (delivered, now, lost) = (rs.delivered_total, rs.delivered_time, rs.lost_total);
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rounds += 1;
                if self.lt.rounds >= LT_BW_MAX_ROUNDS {
                    self.reset_lt(delivered, now, lost);
                    self.enter_probe_bw(now);
                }
            }
            return;
        }
        if !self.lt.sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_interval(delivered, now, lost);
            self.lt.sampling = true;
        }
        if rs.is_app_limited {
            return self.reset_lt(delivered, now, lost);
        }
        self.lt.rounds += u32::from(self.round_start);
        if self.lt.rounds < LT_INTERVAL_MIN_ROUNDS {
            return;
        }
        if self.lt.rounds > 4 * LT_INTERVAL_MIN_ROUNDS {
            return self.reset_lt(delivered, now, lost);
        }
        let (lost_n, delivered_n) = (lost - self.lt.last_lost, delivered - self.lt.last_delivered);
        if rs.losses == 0 || delivered_n == 0 || (lost_n as f64) < LT_LOSS_THRESH * delivered_n as f64 {
            return;
        }
        let t_ms = (now / from_secs(1e-3)).saturating_sub(self.lt.last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        let bw = delivered_n as f64 / (t_ms as f64 * 1e-3);
        if self.lt.bw > 0.0 {
            let diff = (bw - self.lt.bw).abs();
            let diff_bytes = diff * self.pkt_bytes * (1.0 - PACING_MARGIN);
            if diff <= LT_BW_RATIO * self.lt.bw || diff_bytes <= LT_BW_DIFF_BYTES_PER_S {
                self.lt.bw = (bw + self.lt.bw) / 2.0;
                (self.lt.use_bw, self.pacing_gain, self.lt.rounds) = (true, 1.0, 0);
                return;
            }
        }
        self.lt.bw = bw;
        self.reset_lt_interval(delivered, now, lost);
    }
}

impl WindowLaw for Bbr {
    fn on_ack(&mut self, _st: &mut TcpState, _ack: &Ack) {} // the window is set in `on_rate_sample`

    /// Linux calls the `ssthresh` hook on entering recovery: BBR keeps ssthresh and notes cwnd.
    fn on_fast_retransmit(&mut self, st: &mut TcpState, _now: Time) {
        self.save_cwnd(st);
    }

    fn on_ece(&mut self, st: &mut TcpState, _now: Time) {
        self.save_cwnd(st); // BBR v1 ignores ECN
    }

    /// `tcp_enter_loss` then `bbr_set_state(TCP_CA_Loss)`: cwnd 1, the round ends, the full-pipe
    /// estimate restarts, and the long-term sampler counts a loss.
    fn on_timeout(&mut self, st: &mut TcpState, _now: Time) {
        self.save_cwnd(st);
        st.cwnd = 1.0;
        self.prev_ca = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        let (delivered, delivered_time, lost) = self.last;
        let rs = RateSample { losses: 1, delivered_total: delivered, delivered_time, lost_total: lost, ..Default::default() };
        self.lt_sampling(&rs);
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    /// Linux's `cong_control`: BBR sets cwnd on every ACK, recovery (PRR) only chooses what to send.
    fn sets_window(&self) -> bool {
        true
    }

    /// `bbr_main`: the model, then the pacing rate and the window.
    fn on_rate_sample(&mut self, st: &mut TcpState, rs: &RateSample, in_flight: &InFlight) {
        if !self.started {
            self.begin(st.cwnd, rs.now, None);
        }
        self.update_bw(rs);
        self.update_ack_aggregation(st, rs);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase(rs.delivered_time);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(st, rs, in_flight);
        self.update_min_rtt(st, rs, in_flight);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(st.cwnd, bw, rs.srtt_s);
        self.set_cwnd(st, rs, in_flight, bw);
        self.last = (rs.delivered_total, rs.delivered_time, rs.lost_total);
    }

    fn pacing_rate_pps(&self) -> Option<f64> {
        (self.started && self.pacing_rate > 0.0).then_some(self.pacing_rate)
    }

    /// `bbr_tso_segs_goal`: Linux's skbs at BBR's rate (2 packets above 1.2 Mb/s, a 1-ms burst).
    fn tso_segs(&self) -> u32 {
        self.tso_segs_goal() as u32
    }

    /// `bbr_is_next_cycle_phase` reads it, in PROBE_BW with a gain other than 1; nothing before
    /// it in `on_rate_sample` changes the mode or the gain.
    fn reads_prior_in_flight(&self) -> bool {
        self.mode == Mode::ProbeBw && self.pacing_gain != 1.0
    }

    fn marks_app_limited(&self) -> bool {
        self.mode == Mode::ProbeRtt // its low-rate samples must not lower the bandwidth estimate
    }

    /// `bbr_init` after the handshake: the min RTT filter starts at the SYN's RTT (`tcp_min_rtt`)
    /// and the pacing rate at high_gain x cwnd / srtt (`bbr_init_pacing_rate_from_rtt`), so the
    /// initial window leaves paced, not at once.
    fn on_connected(&mut self, st: &TcpState, now: Time, rtt_s: f64) {
        self.begin(st.cwnd, now, Some(rtt_s));
    }

    fn init(&mut self, rng: SimRng, pkt_bytes: f64) {
        self.rng = rng;
        self.pkt_bytes = pkt_bytes;
    }

    fn mode(&self) -> Option<usize> {
        Some(self.mode as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;

    /// A path of 1000 packets/s and a 100-ms RTT (a BDP of 100 packets), one ACK a millisecond,
    /// each delivering one packet sent a BDP of deliveries ago, with `in_flight` packets out.
    struct Path {
        now: Time,
        delivered: u64,
    }

    impl Path {
        fn ack(&mut self, law: &mut Bbr, st: &mut TcpState, rtt: Time, in_flight: i64) {
            self.now += MS;
            self.delivered += 1;
            let rs = RateSample {
                now: self.now,
                delivered: 100,
                interval: 100 * MS,
                prior_delivered: self.delivered.saturating_sub(100),
                acked_sacked: 1,
                rtt: Some(rtt),
                prior_in_flight: in_flight,
                delivered_total: self.delivered,
                delivered_time: self.now,
                ..Default::default()
            };
            law.on_rate_sample(st, &rs, &InFlight::known(in_flight));
        }
    }

    /// STARTUP until three rounds bring no 25% growth, DRAIN, then PROBE_BW: its gains cycle
    /// 1.25, 0.75, then six of 1 (from a random phase, never the 0.75 one first), a min RTT each;
    /// the pacing rate is gain x BtlBw less 1%, and cwnd 2 BDP plus the bursts' allowance.
    #[test]
    fn startup_drain_then_the_gain_cycle() {
        let mut law = Bbr::new(&BbrParams::default());
        law.init(SimRng::seed_from_u64(7), 1000.0);
        let mut st = TcpState::new(10.0, 1e9, 1e6);
        let mut path = Path { now: 0, delivered: 0 };
        let mut left_startup_at = None;
        let mut gains = vec![];
        for i in 0..2000 {
            // Probing raises inflight past 1.25 BDP plus the bursts; draining lowers it to the BDP.
            let in_flight = if law.pacing_gain > 1.0 { 140 } else { 100 };
            path.ack(&mut law, &mut st, 100 * MS, in_flight);
            if law.mode != Mode::Startup && left_startup_at.is_none() {
                left_startup_at = Some(i);
            }
            if law.mode == Mode::ProbeBw && gains.last() != Some(&law.pacing_gain) {
                gains.push(law.pacing_gain);
            }
        }
        let rounds = left_startup_at.unwrap() / 100;
        assert_eq!(rounds, 3, "full bandwidth after 3 rounds without growth");
        assert_eq!(law.mode, Mode::ProbeBw);
        assert!((law.max_bw() - 1000.0).abs() < 1e-9);
        let first = gains.iter().position(|&g| g == 1.25).unwrap();
        assert_eq!(&gains[first..first + 3], &[1.25, 0.75, 1.0], "{gains:?}");
        assert_ne!(gains[0], 0.75, "PROBE_BW never starts in the draining phase");
        assert!(gains.len() >= 4, "about 15 phases of 100 ms, with the six 1.0s merged: {gains:?}");
        let rate = law.pacing_rate_pps().unwrap();
        assert!((rate - law.pacing_gain * 1000.0 * 0.99).abs() < 1e-6, "{rate}");
        // 2 BDP + 3 bursts of 2 (10 kB/s / 1024 = 0 packets a burst, at least 2), even: 206 (+2 probing).
        assert!(st.cwnd == 206.0 || st.cwnd == 208.0, "cwnd {}", st.cwnd);
    }

    /// The min RTT filter keeps its value 10 s from its first sample (equal samples do not renew
    /// it: Linux's strict `<`); then PROBE_RTT caps cwnd at 4 packets for 200 ms and a round,
    /// takes the newer RTT as the min, and restores the window.
    #[test]
    fn probe_rtt_after_ten_seconds_without_a_lower_rtt() {
        let mut law = Bbr::new(&BbrParams::default());
        let mut st = TcpState::new(10.0, 1e9, 1e6);
        let mut path = Path { now: 0, delivered: 0 };
        for _ in 0..1000 {
            path.ack(&mut law, &mut st, 100 * MS, 100);
        }
        assert_eq!(law.min_rtt(), Some(100 * MS));
        let before = st.cwnd;
        let mut entered = None;
        let mut exited = None;
        while path.now < 12_000 * MS {
            let in_flight = if law.mode == Mode::ProbeRtt { 4 } else { 100 };
            path.ack(&mut law, &mut st, 120 * MS, in_flight);
            match (law.mode, entered, exited) {
                (Mode::ProbeRtt, None, _) => entered = Some(path.now),
                (Mode::ProbeRtt, Some(_), _) => assert!(st.cwnd <= 4.0),
                (_, Some(_), None) => exited = Some(path.now),
                _ => {}
            }
        }
        let (entered, exited) = (entered.unwrap(), exited.unwrap());
        assert!(entered > 10_000 * MS && entered < 10_010 * MS, "10 s after the first 100-ms sample: {entered}");
        let stay = exited - entered;
        assert!(stay > 200 * MS && stay < 320 * MS, "200 ms and a round: {} ms", stay / MS);
        assert_eq!(law.min_rtt(), Some(120 * MS), "the expired filter took the newer RTT");
        assert_eq!(st.cwnd, before.max(st.cwnd), "the window is restored: {} from {before}", st.cwnd);
    }

    /// Recovery's first round conserves packets: cwnd = in flight + delivered; leaving recovery
    /// restores the window saved on entering it.
    #[test]
    fn recovery_conserves_packets_then_restores_the_window() {
        let mut law = Bbr::new(&BbrParams::default());
        let mut st = TcpState::new(10.0, 1e9, 1e6);
        let mut path = Path { now: 0, delivered: 0 };
        for _ in 0..1000 {
            path.ack(&mut law, &mut st, 100 * MS, 100);
        }
        let before = st.cwnd;
        law.on_fast_retransmit(&mut st, path.now);
        path.now += MS;
        path.delivered += 1;
        let rs = RateSample {
            now: path.now,
            acked_sacked: 1,
            losses: 1,
            delivered_total: path.delivered,
            delivered_time: path.now,
            ca: CaState::Recovery,
            ..Default::default()
        };
        law.on_rate_sample(&mut st, &rs, &InFlight::known(60));
        assert_eq!(st.cwnd, 61.0, "in flight + delivered");
        let rs = RateSample { ca: CaState::Open, ..rs };
        law.on_rate_sample(&mut st, &rs, &InFlight::known(61));
        assert!(st.cwnd >= before - 2.0, "restored (to the target, which moves with the gain phase): {} from {before}", st.cwnd);
    }
}

//! The sender's state and transmit path (`SenderCore`), on which the window law, the recovery and
//! the release act: window, RTT and RTO, ECN's once-a-window reduction. Below `recovery/`,
//! `release/` and `sender.rs`, which holds them together. Details: docs/tcp.md.

use super::rate::RateSampler;
use super::seq_ring::SeqRing;
use super::TcpState;
use crate::rng::SimRng;
use crate::time::{from_secs, Time};
use rand::Rng;
use std::rc::Rc;

#[derive(Clone, Copy, Debug)]
pub struct TcpParams {
    pub init_cwnd: f64,
    pub init_ssthresh: f64,
    pub wmax: f64,
    pub min_rto_s: f64,
    pub max_rto_s: f64,
    pub init_rto_s: f64,
    /// `tcp.handshake`: the flow's RTT is its first RTT sample (`TcpSender::connect`).
    pub handshake: bool,
    pub tick_s: f64,
    pub limited_transmit: bool,
    pub max_burst: u32,
    pub ecn: bool,
    /// The receiver delays ACKs, with this timer (the sender's group decides; `world` reads it).
    pub delayed_ack: Option<Time>,
    /// RACK's reordering window as a fraction of the min RTT (`tcp.rack_reo_wnd_min_rtts`).
    pub rack_reo_wnd: f64,
    /// The window release's send jitter (`tcp.send_jitter_ms`); 0 = none.
    pub send_jitter: Time,
    /// ns-3's rules: `tcp.ssthresh_from_pipe`, `tcp.rto_first_partial_only` and
    /// `tcp.rto_backoff_reset_on_ack`, each on by itself or with `tcp.compat=ns3`.
    pub ssthresh_from_pipe: bool,
    pub rto_first_partial_only: bool,
    pub rto_backoff_reset_on_ack: bool,
    /// `tcp.tso_defer` (off under `tcp.compat=ns3`), and the packet size its skbs are counted in.
    pub tso_defer: bool,
    pub pkt_bytes: f64,
    /// `tcp.tsecr_rtt`: Linux's RTT sample for the rate estimator (`rate.rs`).
    pub tsecr_rtt: bool,
}

#[cfg(test)]
impl TcpParams {
    /// The test senders' settings: 10 packets of window, a 200-ms minimum RTO, exact RTT samples.
    pub(crate) fn for_tests() -> Self {
        Self {
            init_cwnd: 10.0,
            init_ssthresh: 100.0,
            wmax: 100.0,
            min_rto_s: 0.2,
            max_rto_s: 60.0,
            init_rto_s: 3.0,
            handshake: false,
            tick_s: 0.0,
            limited_transmit: true,
            max_burst: 0,
            ecn: false,
            delayed_ack: None,
            rack_reo_wnd: 0.25,
            send_jitter: 0,
            ssthresh_from_pipe: false,
            rto_first_partial_only: false,
            rto_backoff_reset_on_ack: false,
            tso_defer: false,
            pkt_bytes: 1500.0,
            tsecr_rtt: false,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// Window reductions for an ECN echo (ECE).
    pub ecn_reductions: u64,
}

/// The most modes a window law may have (`LawEntry::modes`).
pub const MAX_MODES: usize = 4;

/// Time spent in each of the window law's modes (`WindowLaw::mode`, BBR's states) up to the
/// last change, and the mode since then. Boxed in the sender, and only for a law with modes.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModeClock {
    time: [Time; MAX_MODES],
    since: Time,
    mode: Option<usize>,
}

impl ModeClock {
    /// Time spent in each mode up to `now`.
    pub fn times(&self, now: Time) -> [Time; MAX_MODES] {
        let mut t = self.time;
        if let Some(m) = self.mode {
            t[m] += now.saturating_sub(self.since);
        }
        t
    }

    pub(super) fn enter(&mut self, mode: usize, now: Time) {
        if self.mode != Some(mode) {
            self.time = self.times(now);
            (self.mode, self.since) = (Some(mode), now);
        }
    }
}

/// The sender's state and transmit path, on which the window law, recovery and release act.
pub struct SenderCore {
    pub st: TcpState,
    /// Its group's parameters, shared by the group's senders.
    pub(super) p: Rc<TcpParams>,
    pub(super) srtt_s: Option<f64>,
    pub(super) rttvar_s: f64,
    pub(super) backoff: u32,
    /// A partial ACK has come in this fast recovery (`TcpParams::rto_first_partial_only`).
    pub(super) partial_seen: bool,
    /// (sequence, send time) of the segment being timed.
    pub(super) timing: Option<(i64, Time)>,
    pub rto_deadline: Option<Time>,
    pub send_deadline: Option<Time>,
    /// Packets to send in all (i64::MAX = unbounded).
    pub(super) size_pkts: i64,
    pub stats: SenderStats,
    /// The window law's mode times, once it has entered a mode.
    pub(super) modes: Option<Box<ModeClock>>,
    /// When each outstanding packet was last sent (ns-2's `tss`): the timestamp an ACK echoes, and
    /// RACK's send times. Empty unless the window law or the recovery reads them.
    pub(super) sent_at: SeqRing<Time>,
    /// ECN: no new reduction for an ECE until this sequence is acknowledged (one a window), and
    /// whether the next data packet carries CWR.
    pub(super) ecn_recover: i64,
    pub(super) cwr_pending: bool,
    /// The packets just sent that carry PSH (the last of each skb, `tso_defer.rs`), until the
    /// world takes them.
    pub(super) pushes: Vec<i64>,
    /// The ACK being processed carried ECE (`on_ece` precedes its `on_ack_*`).
    pub(super) ece_ack: bool,
    /// The delivery-rate estimator, if the window law reads its samples.
    pub(super) rate: Option<Box<RateSampler>>,
    /// Packets the recoveries have marked lost (Linux `tp->lost`).
    pub lost_pkts: u64,
    /// The window law's pacing rate, which the paced release follows.
    pub pacing_rate_pps: Option<f64>,
    /// Packets a paced skb may hold (the law's `tso_segs`; `send_clock.rs`).
    pub tso_segs: u32,
    /// The last ACK's RTT sample (exact, in s) and delivery rate (packets/s, if a valid sample
    /// not app-limited), for the world's meters (`TcpSender::take_samples`).
    pub(super) samples: (Option<f64>, Option<f64>),
    /// The send jitter's draws for a recovery that sends itself (`send_clock.rs`); a stream of
    /// its own, so that the release's draws stay as they were.
    jitter_rng: Option<SimRng>,
}

impl SenderCore {
    /// A sender's state before its first packet.
    pub fn new(p: Rc<TcpParams>) -> Self {
        Self {
            st: TcpState::new(p.init_cwnd, p.init_ssthresh, p.wmax),
            p,
            srtt_s: None,
            rttvar_s: 0.0,
            backoff: 1,
            partial_seen: false,
            timing: None,
            rto_deadline: None,
            send_deadline: None,
            size_pkts: i64::MAX,
            stats: SenderStats::default(),
            modes: None,
            sent_at: SeqRing::new(false),
            ecn_recover: -1,
            cwr_pending: false,
            pushes: Vec::new(),
            ece_ack: false,
            rate: None,
            lost_pkts: 0,
            pacing_rate_pps: None,
            tso_segs: 1,
            samples: (None, None),
            jitter_rng: None,
        }
    }

    pub fn set_jitter_rng(&mut self, rng: SimRng) {
        self.jitter_rng = Some(rng);
    }

    /// A send's wait, uniform in [0, send jitter]: 0, and nothing drawn, without jitter.
    pub fn draw_send_jitter(&mut self) -> Time {
        match (self.p.send_jitter, &mut self.jitter_rng) {
            (0, _) | (_, None) => 0,
            (j, Some(rng)) => (rng.random::<f64>() * j as f64) as Time,
        }
    }

    pub fn srtt_s(&self) -> Option<f64> {
        self.srtt_s
    }

    pub fn size_pkts(&self) -> i64 {
        self.size_pkts
    }

    /// The window release's send jitter, at most (0 = none).
    pub fn send_jitter(&self) -> Time {
        self.p.send_jitter
    }

    /// Linux's TSO deferral (`tcp.tso_defer`), and the packet size its skbs are counted in.
    pub fn tso_defer(&self) -> bool {
        self.p.tso_defer
    }

    pub fn pkt_bytes(&self) -> f64 {
        self.p.pkt_bytes
    }

    pub fn max_burst(&self) -> u32 {
        self.p.max_burst
    }

    /// RACK's reordering window as a fraction of the min RTT.
    pub fn rack_reo_wnd(&self) -> f64 {
        self.p.rack_reo_wnd
    }

    /// Current retransmission timeout in seconds, backoff included.
    pub fn rto_s(&self) -> f64 {
        let base = match self.srtt_s {
            Some(srtt) => srtt + 4.0 * self.rttvar_s,
            None => self.p.init_rto_s,
        };
        // The minimum applies before the backoff: with srtt + 4 rttvar at 60 ms and min_rto
        // 200 ms, the second timeout waits 400 ms, not 200 (engine < 0.8.0 clamped after it).
        (base.max(self.p.min_rto_s) * self.backoff as f64).min(self.p.max_rto_s)
    }

    pub(super) fn restart_rto(&mut self, now: Time) {
        self.rto_deadline = Some(now + from_secs(self.rto_s()));
    }

    /// Restarts the retransmission timer if anything is outstanding, else stops it.
    pub fn renew_rto(&mut self, now: Time) {
        if self.st.maxseq > self.st.highest_ack {
            self.restart_rto(now);
        } else {
            self.rto_deadline = None;
        }
    }

    /// Takes an RTT sample; returns it as the estimator used it (rounded to the tick).
    pub(super) fn rtt_sample(&mut self, rtt_s: f64) -> f64 {
        let r = if self.p.tick_s > 0.0 {
            ((rtt_s / self.p.tick_s).round() * self.p.tick_s).max(self.p.tick_s)
        } else {
            rtt_s
        };
        match self.srtt_s {
            None => {
                self.srtt_s = Some(r);
                self.rttvar_s = r / 2.0;
            }
            Some(srtt) => {
                self.rttvar_s = 0.75 * self.rttvar_s + 0.25 * (srtt - r).abs();
                self.srtt_s = Some(0.875 * srtt + 0.125 * r);
            }
        }
        self.backoff = 1;
        r
    }

    /// When `seq` was last sent, if the sender keeps send times (for timestamps or RACK).
    pub fn sent_at(&self, seq: i64) -> Option<Time> {
        self.sent_at.get(seq, self.st.maxseq)
    }

    /// Emits `seq` (new data or a retransmission) and arms the RTO if it is not running.
    pub(super) fn output(&mut self, now: Time, seq: i64, out: &mut Vec<i64>) {
        if self.sent_at.enabled() {
            self.sent_at.set(seq, now, self.st.highest_ack, self.st.maxseq);
        }
        if let Some(r) = &mut self.rate {
            r.on_send(seq, now, self.st.highest_ack, self.st.maxseq);
        }
        if seq > self.st.maxseq {
            self.st.maxseq = seq;
            if self.timing.is_none() {
                self.timing = Some((seq, now));
            }
        } else {
            self.stats.retransmits += 1;
        }
        self.stats.sent += 1;
        if self.rto_deadline.is_none() {
            self.restart_rto(now);
        }
        out.push(seq);
    }

    /// CWR ends with the first ACK beyond the data outstanding when it began (ns-3's
    /// `ackNumber > m_recover`), before that ACK is processed, so it may grow the window.
    pub(super) fn end_cwr(&mut self, ackno: i64) {
        if self.st.cwr && ackno > self.ecn_recover {
            self.st.cwr = false;
        }
    }

    /// The window (and the transfer's size) allow the next packet.
    pub fn can_send(&self) -> bool {
        self.st.t_seqno <= self.st.highest_ack + self.st.window() && self.st.t_seqno < self.size_pkts
    }

    /// Karn's rule for a recovery that retransmits holes: the pending RTT sample, if it times
    /// `seq` or a later packet, would measure the repair of `seq`; drop it.
    pub fn karn(&mut self, seq: i64) {
        if self.timing.is_some_and(|(timed, _)| timed >= seq) {
            self.timing = None;
        }
    }

    /// Retransmits `seq` (a hole the recovery chose).
    pub fn retransmit(&mut self, now: Time, seq: i64, out: &mut Vec<i64>) {
        debug_assert!(seq <= self.st.maxseq, "a retransmission is of a packet sent before");
        self.output(now, seq, out);
    }

    /// The new packet just sent carries PSH (`TcpSender::take_push`).
    pub fn push_last(&mut self) {
        self.pushes.push(self.st.t_seqno - 1);
    }

    /// Sends the next packet in sequence.
    pub fn send_next(&mut self, now: Time, out: &mut Vec<i64>) {
        let seq = self.st.t_seqno;
        self.output(now, seq, out);
        self.st.t_seqno += 1;
    }

    /// Sends what the window allows, at most `budget` packets (0 = no limit).
    pub fn send_window(&mut self, now: Time, budget: u32, out: &mut Vec<i64>) {
        let mut n = 0;
        while self.can_send() && (budget == 0 || n < budget) {
            self.send_next(now, out);
            n += 1;
        }
    }

    /// Mean gap between releases for paced and Poisson senders: the law's pacing rate if it
    /// sets one, else srtt / window.
    pub fn release_gap_s(&self) -> f64 {
        if let Some(rate) = self.pacing_rate_pps {
            return 1.0 / rate;
        }
        let w = (self.st.cwnd + self.st.dupwnd as f64).min(self.st.wmax).max(1.0);
        self.srtt_s.unwrap_or(0.0) / w
    }
}

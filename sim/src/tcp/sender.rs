//! The TCP sender machinery shared by every law, recovery and release, after ns-2's one-way
//! `Agent/TCP`: window, RTT and RTO, duplicate ACKs, go-back-N.
//! Details: docs/tcp.md, `tcp/sender.rs`.

use super::rate::{CaState, InFlight, RateSample, RateSampler, UNCOUNTED};
use super::sender_core::{SenderCore, SenderStats, TcpParams, MAX_MODES};
use super::seq_ring::SeqRing;
use super::{
    Ack, AckEvent, AckKind, AnyLaw, AnyRecovery, AnyRelease, CwndAction, Echo, Recovery, Release, Reports, TcpState,
    WindowLaw,
};
use crate::time::{to_secs, Time};
use std::rc::Rc;

pub struct TcpSender {
    pub core: SenderCore,
    law: AnyLaw,
    recovery: AnyRecovery,
    release: AnyRelease,
    /// Paused by an on/off schedule (see `pause`).
    paused: bool,
    /// `start` was called: the connection is open (see `resume`).
    started: bool,
    /// The receiver echoes timestamps: the window law reads them.
    stamps: bool,
    /// Whether and when the recovery tells the rate estimator what each ACK newly delivered
    /// (`Recovery::report_deliveries`).
    rate_fed: Reports,
}

impl TcpSender {
    pub fn new(p: Rc<TcpParams>, law: AnyLaw, recovery: AnyRecovery, release: AnyRelease) -> Self {
        let core = SenderCore::new(p);
        let stamps = law.wants_timestamps();
        let mut recovery = recovery;
        recovery.configure(law.sets_window(), release.paces());
        let mut sender =
            Self { core, law, recovery, release, paused: false, started: false, stamps, rate_fed: Reports::No };
        sender.core.sent_at = SeqRing::new(stamps || sender.recovery.wants_send_times());
        if sender.law.wants_rate_samples() {
            sender.core.rate = Some(Box::new(RateSampler::with_tsecr_rtt(sender.core.p.tsecr_rtt)));
            sender.rate_fed = sender.recovery.report_deliveries();
        }
        sender
    }

    pub fn params(&self) -> &TcpParams {
        &self.core.p
    }

    /// The RTT sample (s) and delivery rate (packets/s) the last ACK gave, if any; taken once.
    pub fn take_samples(&mut self) -> (Option<f64>, Option<f64>) {
        std::mem::take(&mut self.core.samples)
    }

    /// The receiver must send SACK blocks (`on_ack_with`).
    pub fn uses_sack(&self) -> bool {
        self.recovery.uses_sack()
    }

    /// The receiver must echo timestamps (`on_ack_stamped`).
    pub fn wants_timestamps(&self) -> bool {
        self.stamps
    }

    /// A finite transfer of `size_pkts` packets (a short flow).
    pub fn with_size(mut self, size_pkts: i64) -> Self {
        self.core.size_pkts = size_pkts;
        self
    }

    /// The application stops giving data (an on/off schedule): what was sent is still
    /// delivered, retransmitted if need be, but nothing new is sent until `resume`.
    pub fn pause(&mut self) {
        self.core.size_pkts = (self.core.st.maxseq + 1).max(0);
        self.paused = true;
    }

    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The application has data again. A sender whose every packet is acknowledged has been
    /// idle, and restarts from at most its initial window (RFC 5681 section 4.1's restart window;
    /// the schedule's gaps are far longer than an RTO).
    /// Before the connection opened (`start`), it only records that the application has data.
    pub fn resume(&mut self, now: Time, out: &mut Vec<i64>) {
        self.core.size_pkts = i64::MAX;
        self.paused = false;
        let st = &mut self.core.st;
        if st.highest_ack >= st.maxseq {
            st.cwnd = st.cwnd.min(self.core.p.init_cwnd);
        }
        if self.started {
            self.start(now, out);
        }
    }

    /// Every packet of a finite transfer is acknowledged.
    pub fn finished(&self) -> bool {
        self.core.st.highest_ack >= self.core.size_pkts - 1
    }

    pub fn st(&self) -> &TcpState {
        &self.core.st
    }

    pub fn stats(&self) -> SenderStats {
        self.core.stats
    }

    /// Time spent in each of the window law's modes up to `now` (zeros for a law without modes).
    pub fn mode_times(&self, now: Time) -> [Time; MAX_MODES] {
        self.core.modes.as_ref().map_or([0; MAX_MODES], |m| m.times(now))
    }

    /// Whether the window law has modes whose time the sender keeps (BBR's).
    pub fn has_modes(&self) -> bool {
        self.law.mode().is_some()
    }

    pub fn rto_deadline(&self) -> Option<Time> {
        self.core.rto_deadline
    }

    pub fn send_deadline(&self) -> Option<Time> {
        self.core.send_deadline
    }

    /// A new flow's connection is set up: with `tcp.handshake`, its SYN's RTT `rtt_s` (queueing
    /// included, `world::handshake`) is the first RTT sample, and the window law initializes from
    /// it, as Linux's `tcp_rcv_synsent_state_process` takes the SYN's RTT (`tcp_ack_update_rtt`)
    /// before `tcp_init_transfer` initializes the congestion control. That starts the window at
    /// 1 packet if the SYN was resent more than once (`cut_cwnd`, RFC 5681 section 3.1).
    /// Without a handshake, nothing.
    pub fn connect(&mut self, now: Time, rtt_s: f64, cut_cwnd: bool) {
        if self.core.p.handshake {
            if cut_cwnd {
                self.core.st.cwnd = 1.0;
            }
            let r = self.core.rtt_sample(rtt_s);
            self.law.on_connected(&self.core.st, now, r);
        }
    }

    pub fn start(&mut self, now: Time, out: &mut Vec<i64>) {
        self.started = true;
        self.release.restart(now);
        let burst = self.core.p.max_burst;
        self.release.send(&mut self.core, now, burst, out);
        self.check_app_limited();
    }

    /// The release timer of a paced or Poisson sender fired.
    pub fn on_send_timer(&mut self, now: Time, out: &mut Vec<i64>) {
        match self.core.send_deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        self.core.send_deadline = None;
        if !self.recovery.on_send_timer(&mut self.core, now, out) {
            self.release.on_timer(&mut self.core, now, out);
        }
    }

    pub fn on_ack(&mut self, now: Time, ackno: i64, out: &mut Vec<i64>) {
        self.on_ack_with(now, ackno, &[], out);
    }

    /// An ACK carrying SACK blocks ([start, end) in packets; empty without SACK).
    pub fn on_ack_with(&mut self, now: Time, ackno: i64, sack: &[(i64, i64)], out: &mut Vec<i64>) {
        self.on_ack_stamped(now, ackno, sack, None, out);
    }

    /// An ACK with SACK blocks and, if the sender keeps timestamps, the sequence whose timestamp
    /// it echoes with the time the receiver sent it.
    pub fn on_ack_stamped(
        &mut self,
        now: Time,
        ackno: i64,
        sack: &[(i64, i64)],
        stamp: Option<(i64, Time)>,
        out: &mut Vec<i64>,
    ) {
        if !sack.is_empty() || self.rate_fed == Reports::OnSack {
            self.recovery.on_sack(&self.core.st, sack, ackno); // reporting, even without blocks
        }
        let c = &mut self.core;
        let ece = std::mem::take(&mut c.ece_ack);
        if ackno < c.st.highest_ack {
            return; // an old ACK, reordered behind newer ones: nothing to learn
        }
        c.end_cwr(ackno);
        let maxseq = c.st.maxseq; // `on_any_ack` sends nothing: the records it reads stay
        let (sample, prior) = self.sample_before(ackno, sack, now);
        let c = &mut self.core;
        let mut rtt_sample_s = None;
        if let Some((seq, sent_at)) = c.timing {
            if ackno >= seq && ackno > c.st.highest_ack {
                let rtt_s = if self.recovery.counts_rtt_ticks() && c.p.tick_s > 0.0 {
                    let ticks = |t: Time| (to_secs(t) / c.p.tick_s).floor();
                    (ticks(now) - ticks(sent_at)) * c.p.tick_s
                } else {
                    to_secs(now - sent_at)
                };
                c.samples.0 = Some(to_secs(now - sent_at));
                rtt_sample_s = Some(c.rtt_sample(rtt_s));
                c.timing = None;
            }
        }
        let echo = stamp.and_then(|(seq, ack_sent)| Some(Echo { data_sent: c.sent_at(seq)?, ack_sent }));
        let ev = AckEvent {
            now,
            acked_pkts: ackno - c.st.highest_ack,
            srtt_s: c.srtt_s,
            sacked: !sack.is_empty(),
            open: c.st.ca_open(),
            echo,
            ece,
        };
        self.law.on_ack_event(&mut c.st, &ev);
        let ack = Ack { now, acked_pkts: ackno - c.st.highest_ack, rtt_sample_s };
        if self.recovery.on_any_ack(&mut self.core, &mut self.law, &ack, ackno, sack, out) {
            let fed = self.core.rate.as_mut().filter(|_| self.rate_fed == Reports::OnAck);
            let sample = sample.or_else(|| fed.map(|r| r.on_delivered(self.recovery.delivered(), ackno, maxseq, now)));
            if let (Some(rs), Some(prior)) = (sample, prior) {
                self.rate_sample(rs, prior);
            }
            self.recovery.after_ack(&mut self.core, now, out);
            return self.check_app_limited();
        }
        let c = &mut self.core;
        if ackno > c.st.highest_ack {
            let kind = self.recovery.on_new_ack(&mut c.st, &mut self.law, &ack, ackno);
            c.st.highest_ack = ackno;
            if c.p.rto_backoff_reset_on_ack {
                c.backoff = 1; // ns-3's `NewAck`: the RTO from SRTT and RTTVAR again
            }
            if c.st.t_seqno < ackno + 1 {
                c.st.t_seqno = ackno + 1;
            }
            match kind {
                AckKind::Full => {
                    c.st.dupacks = 0;
                    if c.st.maxseq > ackno {
                        c.restart_rto(now);
                    } else {
                        c.rto_deadline = None;
                    }
                }
                AckKind::Partial { restart_timer } => {
                    if restart_timer {
                        c.restart_rto(now);
                    }
                    c.lost_pkts += 1;
                    c.output(now, ackno + 1, out);
                }
                AckKind::InRecovery => {
                    // dupacks stays >= 3 until recovery ends, as after NewReno's partial ACKs:
                    // the duplicates that follow must not release Limited Transmit packets.
                    // ns-3's rule: in fast recovery, only its first partial ACK restarts the timer.
                    let fast = c.st.last_action == CwndAction::DupAck;
                    if !(c.p.rto_first_partial_only && fast && c.partial_seen) {
                        c.restart_rto(now);
                    }
                    c.partial_seen = true;
                }
            }
        } else {
            c.st.dupacks += 1;
            if c.st.dupacks == 3 {
                let recovered = c.st.highest_ack > c.st.recover;
                // highest_ack <= 0: allow fast retransmit when the first packets were lost.
                if recovered || c.st.highest_ack <= 0 {
                    self.fast_retransmit(now, out);
                }
            } else if c.st.dupacks > 3 && c.st.last_action == CwndAction::DupAck && self.recovery.inflates_window() {
                c.st.dupwnd += 1;
            } else if c.st.dupacks < 3 && c.p.limited_transmit {
                let t = c.st.t_seqno;
                let limit = c.st.highest_ack as f64 + c.st.cwnd + c.st.dupacks as f64;
                if t <= c.st.highest_ack + c.st.wmax as i64 && (t as f64) <= limit && t < c.size_pkts {
                    c.send_next(now, out);
                }
            }
        }
        if let (Some(rs), Some(prior)) = (sample, prior) {
            self.rate_sample(rs, prior);
        }
        if !self.recovery.send(&mut self.core, now, out) {
            if let Some(budget) = self.recovery.send_budget(&self.core.st, self.core.p.max_burst) {
                self.release.send(&mut self.core, now, budget, out);
            }
        }
        self.check_app_limited();
    }

    /// Before the ACK is taken: what its rate sample compares with (in flight before it, a
    /// scoreboard's walk, so only if the law reads it; the losses so far), and the sample, unless
    /// the recovery lists the ACK's deliveries only in `on_any_ack`.
    #[inline(always)]
    fn sample_before(
        &mut self,
        ackno: i64,
        sack: &[(i64, i64)],
        now: Time,
    ) -> (Option<RateSample>, Option<(i64, u64)>) {
        let c = &mut self.core;
        let Some(r) = c.rate.as_mut() else { return (None, None) };
        let read = self.law.reads_prior_in_flight();
        let prior = (if read { self.recovery.in_flight(&c.st) } else { UNCOUNTED }, c.lost_pkts);
        let (una, maxseq) = (c.st.highest_ack, c.st.maxseq);
        let sample = match self.rate_fed {
            Reports::No => Some(r.on_ack(una, ackno, sack, maxseq, now)),
            Reports::OnSack => Some(r.on_delivered(self.recovery.delivered(), ackno, maxseq, now)),
            Reports::OnAck => None, // after `on_any_ack`
        };
        (sample, Some(prior))
    }

    /// Completes the ACK's rate sample with what the recovery made of it (in flight before and
    /// after, losses marked), and gives it to the window law (Linux's `tcp_cong_control`).
    fn rate_sample(&mut self, mut rs: RateSample, (prior_in_flight, prior_lost): (i64, u64)) {
        let c = &mut self.core;
        c.lost_pkts += self.recovery.mark_lost(&c.st);
        rs.prior_in_flight = prior_in_flight;
        rs.losses = (c.lost_pkts - prior_lost) as i64;
        rs.lost_total = c.lost_pkts;
        rs.srtt_s = c.srtt_s;
        rs.ca = ca_state(&c.st);
        // The law changes only the window: the count after the ACK reads the state as it is now.
        let (recovery, st) = (&self.recovery, c.st.clone());
        let count = || recovery.in_flight(&st);
        let in_flight = InFlight::new(&count);
        self.law.on_rate_sample(&mut c.st, &rs, &in_flight);
        c.pacing_rate_pps = self.law.pacing_rate_pps();
        c.tso_segs = self.law.tso_segs();
        if rs.is_valid() && !rs.is_app_limited {
            c.samples.1 = Some(rs.rate_pps());
        }
        if let Some(m) = self.law.mode() {
            c.modes.get_or_insert_with(Box::default).enter(m, rs.now);
        }
        if self.law.marks_app_limited() {
            if let Some(r) = &mut c.rate {
                r.mark_app_limited(in_flight.get());
            }
        }
    }

    /// Linux `tcp_rate_check_app_limited`: a sender with no data left to send and room in its
    /// window is app-limited, and so are the rate samples of what it sends until then.
    fn check_app_limited(&mut self) {
        let c = &mut self.core;
        if let Some(r) = c.rate.as_mut().filter(|_| c.st.t_seqno >= c.size_pkts) {
            let in_flight = self.recovery.in_flight(&c.st); // a scoreboard's walk: only when out of data
            if (in_flight as f64) < c.st.cwnd {
                r.mark_app_limited(in_flight);
            }
        }
    }

    fn fast_retransmit(&mut self, now: Time, out: &mut Vec<i64>) {
        let c = &mut self.core;
        c.stats.fast_retransmits += 1;
        c.lost_pkts += 1;
        c.st.cwr = false; // loss recovery supersedes CWR, as ns-3's CA_RECOVERY and Linux's
        c.st.recover = c.st.maxseq;
        c.st.last_action = CwndAction::DupAck;
        if c.p.ssthresh_from_pipe {
            let flight = flight_at_loss(&self.recovery, &c.st);
            self.law.on_loss_from_flight(&mut c.st, now, flight, None);
        } else {
            self.law.on_fast_retransmit(&mut c.st, now);
        }
        c.partial_seen = false;
        if !c.p.rto_first_partial_only {
            c.restart_rto(now); // ns-3 leaves the running timer as it is (`SendDataPacket`)
        }
        c.timing = None; // Karn: the retransmission makes the pending sample ambiguous
        let seq = c.st.highest_ack + 1;
        c.output(now, seq, out);
        if self.recovery.inflates_window() {
            c.st.dupwnd = 3;
        }
        self.recovery.on_fast_retransmit(&mut c.st);
    }

    /// Data packets are ECN-capable (ECT(0)).
    pub fn ecn(&self) -> bool {
        self.core.p.ecn
    }

    /// The receiver echoes each packet's CE exactly (the window law asks: DCTCP).
    pub fn echoes_ce_exactly(&self) -> bool {
        self.law.echoes_ce_exactly()
    }

    /// An ACK carrying ECE arrives (before its `on_ack_*`): RFC 3168 section 6.1.2, as ns-3's
    /// `TcpSocketBase` does it. An ACK of new data outside CWR and loss recovery makes the window
    /// law cut (`WindowLaw::on_ece`: as for a loss; DCTCP by its alpha), with nothing
    /// retransmitted, and enters CWR: the window holds until an ACK passes the data outstanding
    /// now. Only ECN senders get ECE.
    pub fn on_ece(&mut self, now: Time, ackno: i64) {
        let c = &mut self.core;
        c.ece_ack = true;
        c.end_cwr(ackno);
        if ackno <= c.st.highest_ack || c.st.cwr || c.st.highest_ack <= c.st.recover {
            return;
        }
        c.stats.ecn_reductions += 1;
        self.law.on_ece(&mut c.st, now);
        c.st.cwr = true;
        c.ecn_recover = c.st.maxseq;
        c.cwr_pending = true;
    }

    /// Whether the data packet being sent carries CWR (the first after a reduction).
    pub fn take_cwr(&mut self) -> bool {
        std::mem::take(&mut self.core.cwr_pending)
    }

    /// Whether the data packet `seq` being sent carries PSH (it ends an skb).
    #[inline]
    pub fn take_push(&mut self, seq: i64) -> bool {
        let pushes = &mut self.core.pushes;
        match pushes.iter().position(|&s| s == seq) {
            Some(i) => {
                pushes.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// Whether the data packet `seq` being sent is a retransmitted copy (asked under
    /// `tcp.tsecr_rtt`, whose rate estimator keeps the records).
    #[inline]
    pub fn sent_as_retx(&self, seq: i64) -> bool {
        let c = &self.core;
        c.rate.as_ref().is_some_and(|r| r.retransmitted(seq, c.st.maxseq))
    }

    /// Before an ACK is taken: whether its timestamp echoes a retransmitted copy (`rate.rs`).
    #[inline]
    pub fn note_echo(&mut self, retx: bool) {
        if let Some(r) = self.core.rate.as_mut() {
            r.echo_retx = retx;
        }
    }

    /// The retransmission timer fired; returns false if it was stale (deadline moved).
    pub fn on_rto_timer(&mut self, now: Time, out: &mut Vec<i64>) -> bool {
        let c = &mut self.core;
        match c.rto_deadline {
            Some(d) if d <= now => {}
            _ => return false,
        }
        if self.recovery.on_timer(&mut self.core, &mut self.law, now, out) {
            return true;
        }
        let c = &mut self.core;
        // ns-3's ssthresh rule (`ReTxTimeout`): from the flight before the timeout, kept at a
        // repeated one (in loss recovery with the head retransmitted already).
        let from_pipe = c.p.ssthresh_from_pipe.then(|| {
            let in_loss = c.st.last_action == CwndAction::Timeout && c.st.highest_ack < c.st.recover;
            let head_resent = !self.recovery.goes_back_n() || c.st.t_seqno > c.st.highest_ack + 1;
            (flight_at_loss(&self.recovery, &c.st), in_loss && head_resent)
        });
        c.stats.timeouts += 1;
        c.lost_pkts += c.st.outstanding().max(0) as u64; // Linux `tcp_enter_loss` marks it all lost
        c.st.cwr = false;
        c.st.dupwnd = 0;
        c.st.dupacks = 0;
        c.st.recover = c.st.maxseq;
        c.st.last_action = CwndAction::Timeout;
        match from_pipe {
            Some((flight, repeated)) => self.law.on_loss_from_flight(&mut c.st, now, flight, Some(repeated)),
            None => self.law.on_timeout(&mut c.st, now),
        }
        c.backoff = (c.backoff * 2).min(64);
        self.recovery.on_timeout(&c.st);
        if self.recovery.goes_back_n() {
            c.st.t_seqno = c.st.highest_ack + 1;
        }
        c.timing = None;
        c.restart_rto(now);
        c.send_deadline = None;
        self.release.restart(now);
        if !self.recovery.send(&mut self.core, now, out) {
            let burst = self.core.p.max_burst;
            self.release.send(&mut self.core, now, burst, out);
        }
        true
    }
}

/// Packets in flight at a loss as ns-3's `BytesInFlight` counts them (`tcp.ssthresh_from_pipe`):
/// with SACK the scoreboard's pipe; without, ns-3 counts each duplicate ACK as one SACKed packet
/// (`AddRenoSack`) and adds back the head it marks lost.
fn flight_at_loss(recovery: &AnyRecovery, st: &TcpState) -> f64 {
    match recovery.uses_sack() {
        true => recovery.in_flight(st) as f64,
        false => (st.outstanding() - st.dupacks as i64).max(0) as f64,
    }
}

/// The sender's state as Linux names it, for rate-based laws.
fn ca_state(st: &TcpState) -> CaState {
    match st.last_action {
        CwndAction::DupAck => CaState::Recovery,
        CwndAction::Timeout if st.highest_ack < st.recover => CaState::Loss,
        _ if st.cwr => CaState::Cwr,
        _ => CaState::Open,
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
#[path = "sender_rack_tests.rs"]
mod rack_tests;

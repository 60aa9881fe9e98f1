//! The TCP sender machinery shared by every variant, after ns-2's one-way `Agent/TCP`:
//! - window: packets `t_seqno <= highest_ack + window` may be in flight;
//! - RTT: one segment timed at a time (no timestamps, as ns-2's default), samples rounded to
//!   the clock tick (ns-2 `tcpTick_`, 10 ms), srtt/rttvar per RFC 6298, RTO = srtt + 4 rttvar
//!   clamped to [min_rto, max_rto], exponential backoff reset by the next valid sample (Karn);
//! - three duplicate ACKs start fast retransmit unless they are below `recover` (ns-2
//!   `bugFix_`: no second fast retransmit for losses of a window already being recovered);
//!   the first two duplicates may each release one new packet (Limited Transmit, ns-2
//!   `singledup_`);
//! - a timeout halves ssthresh, sets cwnd to 1 and goes back to the first unacknowledged packet
//!   (go-back-N); duplicate ACKs caused by those retransmissions cannot trigger fast retransmit.
//!
//! A sender sends forever (a long-lived flow) unless given a size (`with_size`): a short flow
//! sends packets 0..size and is finished once all are acknowledged.
//!
//! The sender does not schedule events itself: it appends the sequences to transmit to `out`
//! and exposes its timer deadlines (`rto_deadline`, `send_deadline`), which the world turns
//! into (lazily rescheduled) events.

use super::{make_variant, AckKind, CwndAction, Release, TcpState, Variant};
use crate::rng::SimRng;
use crate::time::{from_secs, to_secs, Time};
use rand_distr::{Distribution, Exp1};

#[derive(Clone, Copy, Debug)]
pub struct TcpParams {
    pub init_cwnd: f64,
    pub init_ssthresh: f64,
    pub wmax: f64,
    pub min_rto_s: f64,
    pub max_rto_s: f64,
    pub init_rto_s: f64,
    pub tick_s: f64,
    pub limited_transmit: bool,
    pub max_burst: u32,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
}

pub struct TcpSender {
    pub st: TcpState,
    variant: Box<dyn Variant>,
    release: Release,
    p: TcpParams,
    srtt_s: Option<f64>,
    rttvar_s: f64,
    backoff: u32,
    /// (sequence, send time) of the segment being timed.
    timing: Option<(i64, Time)>,
    pub rto_deadline: Option<Time>,
    pub send_deadline: Option<Time>,
    next_release: Time,
    rng: SimRng,
    /// Packets to send in all (i64::MAX = unbounded).
    size_pkts: i64,
    pub stats: SenderStats,
}

impl TcpSender {
    pub fn new(variant: &str, p: TcpParams, rng: SimRng) -> Self {
        let variant = make_variant(variant).expect("variant validated in config");
        Self {
            st: TcpState::new(p.init_cwnd, p.init_ssthresh, p.wmax),
            release: variant.release(),
            variant,
            p,
            srtt_s: None,
            rttvar_s: 0.0,
            backoff: 1,
            timing: None,
            rto_deadline: None,
            send_deadline: None,
            next_release: 0,
            rng,
            size_pkts: i64::MAX,
            stats: SenderStats::default(),
        }
    }

    /// A finite transfer of `size_pkts` packets (a short flow).
    pub fn with_size(mut self, size_pkts: i64) -> Self {
        self.size_pkts = size_pkts;
        self
    }

    /// Every packet of a finite transfer is acknowledged.
    pub fn finished(&self) -> bool {
        self.st.highest_ack >= self.size_pkts - 1
    }

    pub fn srtt_s(&self) -> Option<f64> {
        self.srtt_s
    }

    /// Current retransmission timeout in seconds, backoff included.
    pub fn rto_s(&self) -> f64 {
        let base = match self.srtt_s {
            Some(srtt) => srtt + 4.0 * self.rttvar_s,
            None => self.p.init_rto_s,
        };
        (base * self.backoff as f64).clamp(self.p.min_rto_s, self.p.max_rto_s)
    }

    fn restart_rto(&mut self, now: Time) {
        self.rto_deadline = Some(now + from_secs(self.rto_s()));
    }

    fn rtt_sample(&mut self, rtt_s: f64) {
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
    }

    pub fn start(&mut self, now: Time, out: &mut Vec<i64>) {
        self.next_release = now;
        self.send_much(now, self.p.max_burst, out);
    }

    /// Emits `seq` (new data or a retransmission) and arms the RTO if it is not running.
    fn output(&mut self, now: Time, seq: i64, out: &mut Vec<i64>) {
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

    fn can_send(&self) -> bool {
        self.st.t_seqno <= self.st.highest_ack + self.st.window() && self.st.t_seqno < self.size_pkts
    }

    /// Mean gap between releases for paced and Poisson senders: srtt / window.
    fn release_gap_s(&self) -> f64 {
        let w = (self.st.cwnd + self.st.dupwnd as f64).min(self.st.wmax).max(1.0);
        self.srtt_s.unwrap_or(0.0) / w
    }

    /// Releases what the window allows, under the variant's release discipline.
    fn send_much(&mut self, now: Time, budget: u32, out: &mut Vec<i64>) {
        let release = if self.srtt_s.is_none() { Release::Window } else { self.release };
        match release {
            Release::Window => {
                let mut n = 0;
                while self.can_send() && (budget == 0 || n < budget) {
                    let seq = self.st.t_seqno;
                    self.output(now, seq, out);
                    self.st.t_seqno += 1;
                    n += 1;
                }
            }
            Release::Paced => {
                if self.can_send() && now >= self.next_release {
                    let seq = self.st.t_seqno;
                    self.output(now, seq, out);
                    self.st.t_seqno += 1;
                    self.next_release = now + from_secs(self.release_gap_s());
                }
                self.send_deadline = self.can_send().then_some(self.next_release.max(now));
            }
            Release::Poisson => {
                if self.send_deadline.is_none() {
                    self.send_deadline = Some(now + self.poisson_gap());
                }
            }
        }
    }

    fn poisson_gap(&mut self) -> Time {
        let e: f64 = Exp1.sample(&mut self.rng);
        from_secs(e * self.release_gap_s()).max(1)
    }

    /// The release timer of a paced or Poisson sender fired.
    pub fn on_send_timer(&mut self, now: Time, out: &mut Vec<i64>) {
        match self.send_deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        self.send_deadline = None;
        if self.release == Release::Poisson && self.srtt_s.is_some() {
            let in_flight = self.st.t_seqno - self.st.highest_ack - 1;
            if (in_flight as f64) < 2.0 * self.st.wmax && self.st.t_seqno < self.size_pkts {
                let seq = self.st.t_seqno;
                self.output(now, seq, out);
                self.st.t_seqno += 1;
            }
            // A finished transfer stops its clock (a timeout's go-back-N restarts it).
            if self.st.t_seqno < self.size_pkts {
                self.send_deadline = Some(now + self.poisson_gap());
            }
        } else {
            self.send_much(now, self.p.max_burst, out);
        }
    }

    pub fn on_ack(&mut self, now: Time, ack: i64, out: &mut Vec<i64>) {
        if ack > self.st.highest_ack {
            if let Some((seq, sent_at)) = self.timing {
                if ack >= seq {
                    self.rtt_sample(to_secs(now - sent_at));
                    self.timing = None;
                }
            }
            let kind = self.variant.on_new_ack(&mut self.st, ack);
            self.st.highest_ack = ack;
            if self.st.t_seqno < ack + 1 {
                self.st.t_seqno = ack + 1;
            }
            match kind {
                AckKind::Full => {
                    self.st.dupacks = 0;
                    if self.st.maxseq > ack {
                        self.restart_rto(now);
                    } else {
                        self.rto_deadline = None;
                    }
                }
                AckKind::Partial { restart_timer } => {
                    if restart_timer {
                        self.restart_rto(now);
                    }
                    self.output(now, ack + 1, out);
                }
            }
        } else if ack == self.st.highest_ack {
            self.st.dupacks += 1;
            if self.st.dupacks == 3 {
                let recovered = self.st.highest_ack > self.st.recover;
                // highest_ack <= 0: allow fast retransmit when the first packets were lost.
                if recovered || self.st.highest_ack <= 0 {
                    self.fast_retransmit(now, out);
                }
            } else if self.st.dupacks > 3 && self.st.last_action == CwndAction::DupAck {
                self.st.dupwnd += 1;
            } else if self.st.dupacks < 3 && self.p.limited_transmit {
                let t = self.st.t_seqno;
                let limit = self.st.highest_ack as f64 + self.st.cwnd + self.st.dupacks as f64;
                if t <= self.st.highest_ack + self.st.wmax as i64 && (t as f64) <= limit && t < self.size_pkts {
                    self.output(now, t, out);
                    self.st.t_seqno += 1;
                }
            }
        } else {
            return; // an old ACK, reordered behind newer ones: nothing to learn
        }
        if let Some(budget) = self.variant.send_budget(&self.st, self.p.max_burst) {
            self.send_much(now, budget, out);
        }
    }

    fn fast_retransmit(&mut self, now: Time, out: &mut Vec<i64>) {
        self.stats.fast_retransmits += 1;
        self.st.recover = self.st.maxseq;
        self.st.last_action = CwndAction::DupAck;
        self.st.halve();
        self.restart_rto(now);
        self.timing = None; // Karn: the retransmission makes the pending sample ambiguous
        let seq = self.st.highest_ack + 1;
        self.output(now, seq, out);
        self.st.dupwnd = 3;
        self.variant.on_fast_retransmit();
    }

    /// The retransmission timer fired; returns false if it was stale (deadline moved).
    pub fn on_rto_timer(&mut self, now: Time, out: &mut Vec<i64>) -> bool {
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return false,
        }
        self.stats.timeouts += 1;
        self.st.dupwnd = 0;
        self.st.dupacks = 0;
        self.st.recover = self.st.maxseq;
        self.st.last_action = CwndAction::Timeout;
        self.st.collapse();
        self.backoff = (self.backoff * 2).min(64);
        self.st.t_seqno = self.st.highest_ack + 1;
        self.timing = None;
        self.restart_rto(now);
        self.next_release = now;
        self.send_deadline = None;
        self.send_much(now, self.p.max_burst, out);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Stream};
    use crate::tcp::receiver::TcpReceiver;
    use std::collections::{HashSet, VecDeque};

    fn params() -> TcpParams {
        TcpParams {
            init_cwnd: 10.0,
            init_ssthresh: 100.0,
            wmax: 100.0,
            min_rto_s: 0.2,
            max_rto_s: 60.0,
            init_rto_s: 3.0,
            tick_s: 0.0,
            limited_transmit: true,
            max_burst: 0,
        }
    }

    /// A lossless-except-`drops` path with a 100 ms RTT and 1 ms between packets; returns the
    /// retransmitted sequences (in order) and the number of timeouts until `until` is acked.
    fn recover(variant: &str, drops: &[i64], until: i64) -> (Vec<i64>, u64) {
        let s = TcpSender::new(variant, params(), stream(1, Stream::Sender, 0));
        let (retx, timeouts, _) = drive(s, drops, until);
        (retx, timeouts)
    }

    /// `recover` for a given sender; also returns every sequence sent.
    fn drive(mut s: TcpSender, drops: &[i64], until: i64) -> (Vec<i64>, u64, HashSet<i64>) {
        const RTT: Time = 100_000_000_000;
        const GAP: Time = 1_000_000_000;
        let mut r = TcpReceiver::new(false, 0);
        let mut dropped: HashSet<i64> = HashSet::new();
        let mut wire: VecDeque<(Time, i64)> = VecDeque::new(); // (arrival at receiver, seq)
        let mut acks: VecDeque<(Time, i64)> = VecDeque::new();
        let mut sent: HashSet<i64> = HashSet::new();
        let mut retx = Vec::new();
        let mut out = Vec::new();
        let mut now: Time = 0;
        let mut last_tx: Time = 0;
        s.start(now, &mut out);
        for _ in 0..100_000 {
            for seq in out.drain(..) {
                if !sent.insert(seq) {
                    retx.push(seq);
                }
                last_tx = last_tx.max(now) + GAP;
                if drops.contains(&seq) && dropped.insert(seq) {
                    continue; // first transmission lost
                }
                wire.push_back((last_tx + RTT / 2, seq));
            }
            if s.st.highest_ack >= until {
                return (retx, s.stats.timeouts, sent);
            }
            let next_data = wire.front().map(|w| w.0);
            let next_ack = acks.front().map(|a| a.0);
            let next_rto = s.rto_deadline;
            let t = [next_data, next_ack, next_rto].into_iter().flatten().min().expect("stalled");
            now = t;
            if next_data == Some(t) {
                let (_, seq) = wire.pop_front().unwrap();
                if let (Some(a), _) = r.on_data(now, seq) {
                    acks.push_back((now + RTT / 2, a));
                }
            } else if next_ack == Some(t) {
                let (_, a) = acks.pop_front().unwrap();
                s.on_ack(now, a, &mut out);
            } else {
                s.on_rto_timer(now, &mut out);
            }
        }
        panic!("no progress");
    }

    #[test]
    fn newreno_repairs_several_losses_in_one_window_without_timeout() {
        let (retx, timeouts) = recover("newreno", &[2, 5, 7], 40);
        assert_eq!(retx, vec![2, 5, 7], "only the holes are retransmitted");
        assert_eq!(timeouts, 0);
    }

    #[test]
    fn reno_needs_a_timeout_for_the_second_loss_of_a_window() {
        let (retx, timeouts) = recover("reno", &[2, 5, 7], 40);
        assert_eq!(timeouts, 1);
        assert_eq!(retx[0], 2, "the first loss is fast-retransmitted");
        assert!(retx.contains(&5) && retx.contains(&7));
    }

    #[test]
    fn single_loss_is_one_fast_retransmit_for_both() {
        for v in ["reno", "newreno"] {
            let (retx, timeouts) = recover(v, &[4], 40);
            assert_eq!(retx, vec![4], "{v}");
            assert_eq!(timeouts, 0, "{v}");
        }
    }

    #[test]
    fn a_sized_transfer_sends_exactly_its_packets_and_finishes() {
        for v in ["reno", "newreno", "paced"] {
            let s = TcpSender::new(v, params(), stream(1, Stream::Sender, 0)).with_size(14);
            assert!(!s.finished());
            let (retx, _, sent) = drive(s, &[3, 13], 13);
            assert_eq!(sent, (0..14).collect::<HashSet<i64>>(), "{v}: packets 0..14 and nothing beyond");
            assert!(retx.contains(&3) && retx.contains(&13), "{v}: both losses repaired");
        }
    }

    #[test]
    fn rto_follows_rfc6298_with_backoff() {
        let mut s = TcpSender::new("reno", params(), stream(1, Stream::Sender, 0));
        assert_eq!(s.rto_s(), 3.0); // initial RTO
        s.rtt_sample(0.1);
        assert!((s.rto_s() - 0.3).abs() < 1e-12); // srtt 0.1 + 4 x 0.05
        s.rtt_sample(0.1);
        // rttvar = 0.75 x 0.05 = 0.0375 -> 0.1 + 0.15 = 0.25
        assert!((s.rto_s() - 0.25).abs() < 1e-12);
        s.backoff = 4;
        assert!((s.rto_s() - 1.0).abs() < 1e-12);
    }
}

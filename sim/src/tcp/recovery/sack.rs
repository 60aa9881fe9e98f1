//! SACK loss recovery (`recovery = sack`), RFC 6675, with sequence numbers counting packets.
//! Details: docs/tcp.md, `tcp/recovery/sack.rs`.

use crate::tcp::ranges::{add_range, add_range_at, first_ending_above, gaps, touching, LastBlocks};
use crate::tcp::sender_core::SenderCore;
use crate::tcp::{Ack, AckKind, AnyLaw, CwndAction, Recovery, Reports, TcpState, WindowLaw};
use crate::time::Time;

/// RFC 6675's DupThresh, in packets.
const DUP_THRESH: i64 = 3;

pub const ENTRY: super::RecoveryEntry = super::RecoveryEntry {
    name: "sack",
    make: || Sack::default().into(),
    releases: &[],
    jitter: false,
};

#[derive(Default)]
pub struct Sack {
    /// SACKed packets above the cumulative ACK: sorted, disjoint, non-adjacent [start, end).
    sacked: Vec<(i64, i64)>,
    /// The packets in `sacked` (kept, not summed: RACK reads it several times an ACK).
    sacked_count: i64,
    /// `before[i] - before[0]`: the packets in `sacked[..i]`. Prefix sums, so that `pipe` (twice an
    /// ACK) counts below a limit in one search instead of a sum over up to a hundred ranges.
    before: Vec<i64>,
    /// No prefix sums: the owner never asks for `pipe` (RACK-TLP counts its own in-flight).
    no_pipe: bool,
    last: LastBlocks,
    /// The highest packet retransmitted in this recovery (RFC 6675 HighRxt).
    high_rxt: i64,
    in_recovery: bool,
    /// Keeps the scoreboard across a timeout (`sack_retain.rs`) instead of forgetting it.
    retain: bool,
    /// After a timeout that kept the scoreboard: every unSACKed packet below this is lost, until
    /// the cumulative ACK passes what was outstanding then.
    rto_lost: Option<i64>,
    /// `sack_retain` under a pacing release: what recovery sends leaves paced too, one packet
    /// every `core.release_gap_s()`, the next no earlier than `next_send`.
    paced: bool,
    next_send: Time,
    /// Every unSACKed packet below this (and above the cumulative ACK) is counted lost already
    /// (`mark_lost`).
    lost_to: i64,
    /// Lists what each ACK newly delivers in `newly`, for the rate estimator (`report`).
    report: bool,
    newly: Vec<(i64, i64)>,
    /// Reporting: what a timeout made the scoreboard forget, still above the cumulative ACK.
    /// Delivered already, it is not reported again when SACKed again.
    forgotten: Vec<(i64, i64)>,
}

impl Sack {
    /// A scoreboard kept across timeouts (`recovery = sack_retain`).
    pub fn retaining() -> Self {
        Self { retain: true, ..Self::default() }
    }

    /// A scoreboard without `pipe`, whose owner counts what is in flight itself (RACK-TLP): it
    /// keeps no prefix sums.
    pub fn without_pipe() -> Self {
        Self { no_pipe: true, ..Self::default() }
    }

    /// Lists from now on what each ACK newly delivers (`delivered`): the rate estimator then keeps
    /// no scoreboard of its own (`Recovery::report_deliveries`).
    pub fn report(&mut self) {
        self.report = true;
    }

    /// An ACK's SACK blocks, before its cumulative ACK `ackno` is taken (`drop_to`); reporting,
    /// also what it newly delivers (`delivered`).
    pub fn take_blocks(&mut self, st: &TcpState, blocks: &[(i64, i64)], ackno: i64) {
        let una = st.highest_ack;
        if !self.report {
            for &(start, end) in blocks {
                // Held since the last ACK; or at or below the cumulative ACK (a D-SACK or a stale
                // block): nothing new.
                if !self.last.has((start, end)) && end > start.max(una + 1) {
                    self.add((start.max(una + 1), end), None);
                }
            }
            return self.last.set(blocks);
        }
        let mut newly = std::mem::take(&mut self.newly);
        newly.clear();
        if ackno > una {
            gaps(&self.sacked, una + 1, ackno + 1, &mut newly);
        }
        for &(start, end) in blocks {
            if !self.last.has((start, end)) && end > start.max(una + 1) {
                self.add((start.max(una + 1), end), Some((ackno, &mut newly)));
            }
        }
        self.last.set(blocks);
        if !self.forgotten.is_empty() {
            let mut kept = Vec::with_capacity(newly.len());
            newly.iter().for_each(|&(a, b)| gaps(&self.forgotten, a, b, &mut kept));
            newly = kept;
        }
        self.newly = newly;
    }

    /// Adds a SACK block to the scoreboard, merging it with those it touches. With `report`
    /// (`ackno`, `newly`), first pushes onto `newly` the parts of it above `ackno` not SACKed
    /// before.
    fn add(&mut self, block: (i64, i64), report: Option<(i64, &mut Vec<(i64, i64)>)>) {
        let (lo, hi) = touching(&self.sacked, block);
        // Held whole by one range (`covers`): ranges neither touch nor overlap, so that range is
        // the only one the block touches.
        if hi == lo + 1 && self.sacked[lo].0 <= block.0 && block.1 <= self.sacked[lo].1 {
            return;
        }
        if let Some((ackno, newly)) = report {
            // Ranges touching the whole block include those touching the part above `ackno`.
            let from = block.0.max(ackno + 1);
            if block.1 > from {
                gaps(&self.sacked[lo..hi], from, block.1, newly);
            }
        }
        let at = |i: usize| self.before.get(i).copied().unwrap_or_else(|| self.before_end());
        // The packets in sacked[lo..hi]: a few ranges, summed, without prefix sums.
        let (at_lo, merged) = match self.no_pipe {
            true => (0, self.sacked[lo..hi].iter().map(|&(s, e)| e - s).sum()),
            false => (at(lo), at(hi) - at(lo)),
        };
        add_range_at(&mut self.sacked, lo, hi, block);
        let grown = self.sacked[lo].1 - self.sacked[lo].0 - merged; // merged at `lo`
        self.sacked_count += grown;
        if !self.no_pipe {
            self.before.splice(lo..hi, [at_lo]);
            self.before[lo + 1..].iter_mut().for_each(|b| *b += grown);
        }
    }

    /// What `before` would hold for a range after the last.
    fn before_end(&self) -> i64 {
        self.before.first().map_or(0, |b0| b0 + self.sacked_count)
    }

    /// Forgets what the cumulative ACK `ackno` now covers.
    #[inline]
    pub fn drop_to(&mut self, ackno: i64) {
        if !self.forgotten.is_empty() {
            self.forget_to(ackno);
        }
        if self.sacked.first().is_none_or(|b| b.0 > ackno) {
            return; // most ACKs: nothing SACKed at or below them
        }
        let keep = self.sacked.partition_point(|b| b.1 <= ackno + 1);
        self.sacked_count -= self.sacked.drain(..keep).map(|(s, e)| e - s).sum::<i64>();
        if !self.no_pipe {
            self.before.drain(..keep);
        }
        if let Some(first) = self.sacked.first_mut() {
            let start = first.0.max(ackno + 1);
            self.sacked_count -= start - first.0;
            if !self.no_pipe {
                self.before[0] += start - first.0; // counted before the first range now
            }
            first.0 = start;
        }
    }

    /// `drop_to` for `forgotten`, after a timeout only.
    #[cold]
    fn forget_to(&mut self, ackno: i64) {
        let gone = self.forgotten.partition_point(|b| b.1 <= ackno + 1);
        self.forgotten.drain(..gone);
        if let Some(first) = self.forgotten.first_mut() {
            first.0 = first.0.max(ackno + 1);
        }
    }

    /// The DupThresh-th highest SACKed packet: every unSACKed packet below it has DupThresh SACKed
    /// packets above it and is lost (RFC 6675 `IsLost`); none above it is.
    fn lost_below(&self) -> i64 {
        let mut above = 0;
        for &(start, end) in self.sacked.iter().rev() {
            if above + (end - start) >= DUP_THRESH {
                return end - (DUP_THRESH - above);
            }
            above += end - start;
        }
        i64::MIN
    }

    /// SACKed packets in (st.highest_ack, below), from the prefix sums.
    fn sacked_below(&self, below: i64) -> i64 {
        debug_assert!(!self.no_pipe, "a scoreboard without pipe counts no packets below");
        if self.sacked.first().is_none_or(|b| below <= b.0) {
            return 0; // outside recovery HighRxt is below every SACKed packet
        }
        let i = self.sacked.partition_point(|b| b.1 <= below); // ranges wholly below
        let n = match self.sacked.get(i) {
            Some(&(s, _)) => self.before[i] - self.before[0] + (below - s).max(0),
            None => self.sacked_count,
        };
        debug_assert_eq!(n, self.sacked.iter().map(|&(s, e)| (e.min(below) - s).max(0)).sum::<i64>());
        n
    }

    /// The unSACKed ranges [start, end) above `after` and below `limit`, in order, in one pass.
    pub fn holes(&self, after: i64, limit: i64) -> impl Iterator<Item = (i64, i64)> + '_ {
        let mut s = after + 1;
        let first = first_ending_above(&self.sacked, s); // those before cannot start a hole
        let mut blocks = self.sacked[first..].iter();
        std::iter::from_fn(move || {
            while s < limit {
                let Some(&(start, end)) = blocks.next() else {
                    let hole = (s, limit);
                    s = limit;
                    return Some(hole);
                };
                if start > s {
                    let hole = (s, start.min(limit));
                    s = end.max(s);
                    return Some(hole);
                }
                s = s.max(end);
            }
            None
        })
    }

    /// The first unSACKed packet above `after` and below `limit`.
    pub fn first_hole(&self, after: i64, limit: i64) -> Option<i64> {
        let mut s = after + 1;
        let first = first_ending_above(&self.sacked, s);
        for &(start, end) in &self.sacked[first..] {
            if start > s {
                break;
            }
            s = end;
        }
        (s < limit).then_some(s)
    }

    /// RFC 6675 `SetPipe()`: packets outstanding that are neither SACKed nor lost, plus every
    /// unSACKed packet retransmitted in this recovery.
    pub fn pipe(&self, st: &TcpState) -> i64 {
        let (low, high) = (st.highest_ack, st.maxseq);
        // Every SACKed packet is below maxseq + 1: the searches are left to the limits that need one.
        debug_assert_eq!(self.sacked_below(high + 1), self.sacked_count);
        let unsacked = (high - low) - self.sacked_count;
        let by_dupthresh = self.lost_below();
        let lost_limit = by_dupthresh.max(self.rto_lost.unwrap_or(i64::MIN)).clamp(low + 1, high + 1);
        let lost_sacked = if lost_limit == by_dupthresh {
            self.sacked_count - DUP_THRESH // DupThresh SACKed packets lie at or above it
        } else {
            self.sacked_below(lost_limit)
        };
        debug_assert_eq!(lost_sacked, self.sacked_below(lost_limit));
        let lost = (lost_limit - low - 1) - lost_sacked;
        let rxt_limit = self.high_rxt.clamp(low, high) + 1;
        let retransmitted = (rxt_limit - low - 1) - self.sacked_below(rxt_limit);
        unsacked - lost + retransmitted
    }

    /// RFC 6675 `NextSeg()`, rules 1 to 3: Some((seq, is_new_data)).
    fn next_seg(&self, core: &SenderCore) -> Option<(i64, bool)> {
        let st = &core.st;
        let after = self.high_rxt.max(st.highest_ack);
        let highest_sacked = self.sacked.last().map_or(i64::MIN, |b| b.1);
        let lost_limit = self.lost_below().min(highest_sacked).max(self.rto_lost.unwrap_or(i64::MIN));
        if let Some(s) = self.first_hole(after, lost_limit) {
            return Some((s, false));
        }
        let rwnd_ok = st.t_seqno <= st.highest_ack + st.wmax as i64;
        if rwnd_ok && st.t_seqno < core.size_pkts() && st.t_seqno > st.maxseq {
            return Some((st.t_seqno, true));
        }
        self.first_hole(after, highest_sacked).map(|s| (s, false))
    }
}

impl Sack {
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// SACKed packets above the cumulative ACK.
    pub fn sacked_pkts(&self) -> i64 {
        debug_assert_eq!(self.sacked_count, self.sacked.iter().map(|&(s, e)| e - s).sum::<i64>());
        self.sacked_count
    }

    /// Sends the segment RFC 6675's `NextSeg()` picks; false if there is none.
    pub fn send_one(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
        match self.next_seg(core) {
            Some((_, true)) => core.send_next(now, out),
            Some((seq, false)) => {
                core.retransmit(now, seq, out); // counted lost when marked (`mark_lost`)
                self.high_rxt = seq;
            }
            None => return false,
        }
        true
    }
}

impl Recovery for Sack {
    fn on_sack(&mut self, st: &TcpState, blocks: &[(i64, i64)], ackno: i64) {
        self.take_blocks(st, blocks, ackno);
    }

    fn report_deliveries(&mut self) -> Reports {
        self.report();
        Reports::OnSack
    }

    /// The cumulative ACK's unSACKed part, then each block's part above the cumulative ACK not
    /// SACKed before.
    fn delivered(&self) -> &[(i64, i64)] {
        &self.newly
    }

    fn on_new_ack(&mut self, st: &mut TcpState, law: &mut AnyLaw, ack: &Ack, ackno: i64) -> AckKind {
        self.drop_to(ackno);
        if self.in_recovery && ackno < st.recover {
            if self.rto_lost.is_some() {
                law.on_ack(st, ack); // the window grows from the timeout's, as after go-back-N
            }
            return AckKind::InRecovery;
        }
        if self.in_recovery {
            self.in_recovery = false;
            self.rto_lost = None;
            st.last_action = CwndAction::Exited;
        }
        st.dupwnd = 0;
        law.on_ack(st, ack);
        AckKind::Full
    }

    fn send_budget(&self, st: &TcpState, max_burst: u32) -> Option<u32> {
        // Outside recovery: as NewReno, never on the first two duplicates (Limited Transmit's).
        (st.dupacks == 0 || st.dupacks >= 3).then_some(max_burst)
    }

    fn on_fast_retransmit(&mut self, st: &mut TcpState) {
        self.in_recovery = true;
        self.high_rxt = st.highest_ack + 1; // the sender has just retransmitted it
        self.lost_to = self.lost_to.max(st.highest_ack + 2); // and counted it lost
    }

    fn inflates_window(&self) -> bool {
        false
    }

    fn send(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
        if !self.in_recovery {
            return false;
        }
        let paced = self.paced && (core.pacing_rate_pps.is_some() || core.srtt_s().is_some());
        // Each segment sent adds exactly one to the pipe: new data is one more unSACKed packet
        // below maxseq + 1, and a retransmission's hole is the first unSACKed packet above
        // HighRxt, which it moves to. So the pipe is counted once, not once a segment.
        let mut pipe = self.pipe(&core.st);
        while core.st.cwnd - pipe as f64 >= 1.0 {
            if paced && now < self.next_send {
                core.send_deadline = Some(self.next_send);
                break;
            }
            if !self.send_one(core, now, out) {
                break;
            }
            pipe += 1;
            debug_assert_eq!(pipe, self.pipe(&core.st));
            if paced {
                self.next_send = now + crate::time::from_secs(core.release_gap_s());
            }
        }
        true
    }

    fn configure(&mut self, _law_sets_window: bool, paced: bool) {
        self.paced = self.retain && paced; // `sack` sends at once, as ns-2 (which has no pacing)
    }

    fn on_send_timer(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
        self.paced && self.in_recovery && self.send(core, now, out)
    }

    fn uses_sack(&self) -> bool {
        true
    }

    /// Counts the unSACKed packets newly below RFC 6675's `IsLost` limit in recovery, when the ACK
    /// that makes them lost arrives, as Linux's `tcp_mark_head_lost` raises `tp->lost` before the
    /// rate sample (not when they are resent, later and paced). After a timeout the sender counted
    /// everything outstanding.
    fn mark_lost(&mut self, st: &TcpState) -> u64 {
        if !self.in_recovery || self.rto_lost.is_some() {
            return 0;
        }
        let from = self.lost_to.max(st.highest_ack + 1);
        let limit = self.lost_below().min(st.maxseq + 1);
        if limit <= from {
            return 0;
        }
        self.lost_to = limit;
        self.holes(from - 1, limit).map(|(s, e)| e - s).sum::<i64>() as u64
    }

    fn in_flight(&self, st: &TcpState) -> i64 {
        self.pipe(st)
    }

    fn on_timeout(&mut self, st: &TcpState) {
        self.lost_to = st.maxseq + 1; // the sender counted everything outstanding lost
        if self.retain {
            // Every unSACKed packet sent is lost; none is retransmitted yet.
            (self.in_recovery, self.rto_lost, self.high_rxt) = (true, Some(st.maxseq + 1), st.highest_ack);
            return;
        }
        if self.report {
            self.sacked.iter().for_each(|&r| add_range(&mut self.forgotten, r));
        }
        self.sacked.clear();
        self.before.clear();
        self.last = LastBlocks::default();
        self.sacked_count = 0;
        self.in_recovery = false;
        self.high_rxt = i64::MIN;
    }

    fn goes_back_n(&self) -> bool {
        !self.retain
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::ranges::lcg;

    fn st(highest_ack: i64, maxseq: i64) -> TcpState {
        let mut s = TcpState::new(10.0, 100.0, 100.0);
        s.highest_ack = highest_ack;
        s.maxseq = maxseq;
        s.t_seqno = maxseq + 1;
        s
    }

    #[test]
    fn scoreboard_merges_and_forgets_what_is_acked() {
        let mut r = Sack::default();
        let s = st(-1, 20);
        r.on_sack(&s, &[(3, 5), (8, 9)], s.highest_ack);
        r.on_sack(&s, &[(5, 6), (10, 12)], s.highest_ack);
        assert_eq!(r.sacked, vec![(3, 6), (8, 9), (10, 12)]);
        r.on_sack(&s, &[(9, 10)], s.highest_ack);
        assert_eq!(r.sacked, vec![(3, 6), (8, 12)]);
        r.drop_to(4);
        assert_eq!(r.sacked, vec![(5, 6), (8, 12)]);
        r.drop_to(7);
        assert_eq!(r.sacked, vec![(8, 12)]);
    }

    /// A block the last ACK carried is skipped without a search; a timeout that forgets the
    /// scoreboard forgets those blocks too, so the same ACK again rebuilds it.
    #[test]
    fn blocks_reported_again_after_a_timeout_are_held_again() {
        let mut r = Sack::default();
        let s = st(-1, 20);
        r.on_sack(&s, &[(3, 5), (8, 9)], s.highest_ack);
        r.on_sack(&s, &[(3, 5), (8, 9)], s.highest_ack);
        assert_eq!((r.sacked.clone(), r.sacked_pkts()), (vec![(3, 5), (8, 9)], 3));
        r.on_timeout(&s);
        assert_eq!(r.sacked_pkts(), 0);
        r.on_sack(&s, &[(3, 5), (8, 9)], s.highest_ack);
        assert_eq!((r.sacked.clone(), r.sacked_pkts()), (vec![(3, 5), (8, 9)], 3));
        let mut kept = Sack::retaining();
        kept.on_sack(&s, &[(3, 5)], s.highest_ack);
        kept.on_timeout(&s);
        kept.on_sack(&s, &[(3, 5), (10, 11)], s.highest_ack);
        assert_eq!(kept.sacked, vec![(3, 5), (10, 11)]);
    }

    #[test]
    fn holes_are_the_gaps_between_sacked_blocks() {
        let mut r = Sack::default();
        r.on_sack(&st(0, 20), &[(3, 5), (8, 9)], 0);
        assert_eq!(r.holes(0, 21).collect::<Vec<_>>(), vec![(1, 3), (5, 8), (9, 21)]);
        assert_eq!(r.holes(3, 7).collect::<Vec<_>>(), vec![(5, 7)]);
        assert_eq!(r.holes(0, 2).collect::<Vec<_>>(), vec![(1, 2)]);
    }

    /// The prefix sums `pipe` counts from stay equal to a plain count through merges, inserts
    /// below and above, and cumulative ACKs that cut into a range.
    #[test]
    fn counts_below_a_limit_match_a_plain_count() {
        let mut r = Sack::default();
        let plain = |r: &Sack, below: i64| r.sacked.iter().map(|&(s, e)| (e.min(below) - s).max(0)).sum::<i64>();
        let mut rand = lcg(7); // the tests' LCG: no random crate needed
        let mut una = -1;
        for step in 0..3000 {
            let start = una + 1 + rand(200);
            r.on_sack(&st(una, una + 300), &[(start, start + 1 + rand(6))], una);
            if step % 7 == 0 {
                una += rand(20);
                r.drop_to(una);
            }
            for below in [una + 1, una + 5, una + 50, una + 150, una + 400] {
                assert_eq!(r.sacked_below(below), plain(&r, below), "step {step}, below {below}");
            }
            assert_eq!(r.sacked_pkts(), plain(&r, i64::MAX));
        }
    }

    #[test]
    fn is_lost_needs_three_sacked_above_and_pipe_counts_per_rfc6675() {
        let mut r = Sack::default();
        let s = st(0, 10); // outstanding 1..=10
        r.on_sack(&s, &[(3, 4), (6, 8)], s.highest_ack); // SACKed 3, 6, 7
        assert_eq!(r.lost_below(), 3, "1 and 2 have 3 SACKed above; 4 and 5 only 2");
        // unSACKed 1 2 4 5 8 9 10 = 7; lost 1 2; nothing retransmitted: pipe 5
        r.high_rxt = i64::MIN;
        assert_eq!(r.pipe(&s), 5);
        r.high_rxt = 1; // 1 retransmitted: counted again
        assert_eq!(r.pipe(&s), 6);
    }

    /// Losses are counted when the ACK that makes a hole `IsLost` arrives, once each (not again
    /// when resent), the hole the fast retransmit resent (counted by the sender) not again, and
    /// nothing outside recovery or after a timeout (the sender counts everything outstanding then).
    #[test]
    fn losses_are_counted_when_marked_not_when_resent() {
        let mut r = Sack::retaining();
        let mut s = st(0, 20); // outstanding 1..=20
        r.on_sack(&s, &[(3, 4), (6, 8)], s.highest_ack);
        assert_eq!(r.mark_lost(&s), 0, "outside recovery");
        r.on_fast_retransmit(&mut s); // 1 resent and counted by the sender
        assert_eq!(r.mark_lost(&s), 1, "2: three SACKed above it");
        assert_eq!(r.mark_lost(&s), 0, "once");
        r.on_sack(&s, &[(10, 12)], s.highest_ack); // SACKed 3, 6, 7, 10, 11: lost below 7
        assert_eq!(r.mark_lost(&s), 2, "4 and 5");
        r.high_rxt = 5; // 2, 4 and 5 resent: the watermark keeps them counted once
        assert_eq!(r.mark_lost(&s), 0, "resending counts nothing");
        r.on_timeout(&s);
        r.on_sack(&s, &[(14, 18)], s.highest_ack);
        assert_eq!(r.mark_lost(&s), 0, "after a timeout");
    }

    /// A SACK scoreboard reports what each ACK newly delivers (`Sack::report`) exactly as this
    /// estimator's own scoreboard finds it, in the same order, over random ACKs: blocks repeated,
    /// grown, stale, below the cumulative ACK, duplicate ACKs, and timeouts after which `sack`
    /// forgets its scoreboard (`sack_retain` and RACK-TLP's keep it), while this one keeps it.
    #[test]
    fn a_sack_scoreboard_reports_the_deliveries_this_estimator_finds() {
        use crate::tcp::rate::RateSampler;
        for (mut sack, timeouts) in [(Sack::without_pipe(), false), (Sack::default(), true), (Sack::retaining(), true)]
        {
            sack.report();
            let mut rand = lcg(5);
            let (mut r, mut st) = (RateSampler::default(), TcpState::new(2.0, 64.0, 1e9));
            st.highest_ack = -1;
            st.maxseq = 1_000_000;
            let mut blocks: Vec<(i64, i64)> = vec![];
            for step in 0..5000 {
                let una = st.highest_ack;
                let ackno = if rand(4) == 0 { una + rand(12) } else { una };
                match rand(3) {
                    0 => blocks.iter_mut().for_each(|b| b.1 += rand(3)), // grown, or repeated as they were
                    1 => {
                        let start = una + 1 + rand(40);
                        blocks.insert(0, (start, start + 1 + rand(6)));
                        blocks.truncate(1 + rand(4) as usize);
                    }
                    _ => blocks.retain(|b| b.1 > ackno + 1 || rand(2) == 0), // some stale ones stay
                }
                if timeouts && rand(50) == 0 {
                    sack.on_timeout(&st);
                }
                r.on_ack(una, ackno, &blocks, una + 60, 0);
                sack.take_blocks(&st, &blocks, ackno);
                sack.drop_to(ackno);
                assert_eq!(sack.delivered(), r.last_newly(), "step {step}: ack {ackno}, blocks {blocks:?}");
                st.highest_ack = ackno;
            }
        }
    }
}

//! RACK-TLP loss recovery (`recovery = rack_tlp`), RFC 8985, as Linux runs it (`tcp_recovery.c`,
//! `tcp_input.c`): a packet is lost once a packet sent after it has been delivered and RACK.rtt
//! plus a reordering window (`tcp.rack_reo_wnd_min_rtts` x min RTT, 1/4 as the RFC, at most SRTT;
//! 0 in recovery or with 3 SACKed and no reordering seen) has passed since it was sent; the
//! reordering timer catches the rest. A tail loss probe (2 SRTT, plus 200 ms with one packet out)
//! sends new data or the last packet again. During recovery, what is sent follows PRR (`prr.rs`,
//! as Linux), lost packets first.
//! The engine's receivers send no D-SACK, so the reordering window does not adapt (section 6.2
//! step 4), and a probe that retransmitted counts as repairing a loss when the ACK covering it
//! comes at least a min RTT after it (Linux's test for an ambiguous RACK sample).
//! Details: docs/tcp.md, `tcp/recovery/rack_tlp.rs`.

use super::prr::PrrCount;
use super::rack_marks::Marks;
use super::sack::Sack;
use crate::tcp::ranges::LastBlocks;
use crate::tcp::send_clock::SendClock;
use crate::tcp::sender_core::SenderCore;
use crate::tcp::tso_defer::{TsoDefer, Window};
use crate::tcp::{Ack, AckKind, AnyLaw, CwndAction, Recovery, Reports, TcpState, WindowLaw};
use crate::time::{from_secs, Time};

pub const ENTRY: super::RecoveryEntry = super::RecoveryEntry {
    name: "rack_tlp",
    make: || RackTlp::default().into(),
    releases: &["window", "paced"],
    jitter: true,
};

/// RFC 8985's WCDelAckT, the worst-case delayed-ACK timer a lone probe waits out.
const WC_DEL_ACK_S: f64 = 0.2;
/// RFC 6675's DupThresh: RACK's window closes once this many packets are SACKed.
const DUP_THRESH: i64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum State {
    #[default]
    Open,
    /// Fast recovery (Linux `TCP_CA_Recovery`).
    Recovery,
    /// After a retransmission timeout (Linux `TCP_CA_Loss`).
    Loss,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Timer {
    #[default]
    Rto,
    Reordering,
    Probe,
}

/// An outstanding tail loss probe.
#[derive(Clone, Copy, Debug)]
struct Probe {
    /// The highest packet sent with it (TLP.end_seq less one).
    end: i64,
    /// When it went out, if it was a retransmission.
    retransmitted_at: Option<Time>,
}

#[derive(Default)]
pub struct RackTlp {
    sack: Sack,
    /// Which packets are marked lost, and which were retransmitted when.
    marks: Marks,
    state: State,
    prr: PrrCount,
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent packet known delivered.
    rack: Option<(Time, i64)>,
    rack_rtt: Time,
    min_rtt: Option<Time>,
    /// RACK.fack: the highest packet delivered.
    fack: i64,
    /// The last ACK's SACK blocks whose delivery this recovery has taken in full: reported again,
    /// as most are, they change nothing and are skipped (`advance`).
    settled: LastBlocks,
    reordering_seen: bool,
    timer: Timer,
    /// When the retransmission timeout expires (the deadline may be an earlier RACK or TLP timer).
    rto_at: Option<Time>,
    probe: Option<Probe>,
    /// An RTO fired: mark the losses in `send`, which has the send times.
    rto_fired: bool,
    /// Every packet below it is SACKed, marked lost or retransmitted (a packet, once so, stays so
    /// until delivered; only a timeout unmarks retransmissions): RACK's scan starts here.
    scan_from: i64,
    /// The window law sets the window (BBR): no PRR in recovery, only the window.
    law_sets_window: bool,
    /// Packets leave paced (`release = paced`) at the times `clock` gives, which also holds the
    /// send jitter; `credit` is what PRR still lets out meanwhile.
    paced: bool,
    clock: SendClock,
    credit: i64,
    /// Linux's TSO skbs and deferral for new data in Open (`tcp.tso_defer`, ACK-clocked).
    tso: TsoDefer,
    /// What the last ACK left for `after_ack`: packets it delivered, whether it advanced the
    /// cumulative ACK, and the reordering timer's wait.
    pending: (i64, bool, Option<Time>),
}

/// Whether bit `i` of `mask` is set (blocks past the 64th never are).
fn is_repeated(mask: u64, i: usize) -> bool {
    i < 64 && mask >> i & 1 == 1
}

/// RACK's order of transmission: by time, then by sequence.
fn sent_after(a: (Time, i64), b: (Time, i64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
}

impl RackTlp {
    /// Packets in flight: sent, neither delivered nor marked lost (retransmissions count).
    fn in_flight(&self, st: &TcpState) -> i64 {
        st.outstanding() - self.sack.sacked_pkts() - self.marks.lost_pkts()
    }

    /// RFC 8985 section 6.2 step 4, without D-SACK's multiplier.
    fn reo_wnd(&self, core: &SenderCore) -> Time {
        if !self.reordering_seen && (self.state != State::Open || self.sack.sacked_pkts() >= DUP_THRESH) {
            return 0;
        }
        let srtt = from_secs(core.srtt_s().unwrap_or(0.0));
        self.min_rtt.map_or(0, |m| ((m as f64 * core.rack_reo_wnd()) as Time).min(srtt))
    }

    /// Steps 2 and 3: RACK.xmit_ts, RACK.rtt and min RTT from the most recently sent packet this
    /// ACK delivers (its cumulative ACK, the ends of its SACK blocks, and retransmissions they
    /// cover); reordering if it fills a hole below RACK.fack with a packet never retransmitted.
    /// Blocks in `repeated` (a bit per block) were settled by the last ACK.
    fn advance(&mut self, core: &SenderCore, ackno: i64, blocks: &[(i64, i64)], repeated: u64, now: Time) {
        let una = core.st.highest_ack;
        let mut s = una;
        while let Some(h) = self.sack.first_hole(s, (ackno + 1).min(self.fack)) {
            self.reordering_seen |= !self.marks.is_retransmitted(h); // RACK.fack as it was before this ACK
            s = h;
        }
        let mut settled = LastBlocks::default();
        settled.set(blocks);
        for (i, &(start, end)) in blocks.iter().enumerate() {
            if is_repeated(repeated, i) {
                #[cfg(debug_assertions)]
                self.check_settled(core, (start, end), now);
                continue;
            }
            if end - 1 > una && !self.consider(core, end - 1, now) {
                settled.forget(i);
            }
            let resent = self.marks.retransmitted_in(start.max(una + 1), end);
            resent.into_iter().for_each(|seq| _ = self.consider(core, seq, now));
        }
        self.settled = settled;
        if ackno > una {
            self.consider(core, ackno, now);
            let resent = self.marks.retransmitted_in(una + 1, ackno + 1);
            resent.into_iter().for_each(|seq| _ = self.consider(core, seq, now));
        }
    }

    /// Debug builds: a settled block, taken again, changes nothing.
    #[cfg(debug_assertions)]
    fn check_settled(&mut self, core: &SenderCore, (start, end): (i64, i64), now: Time) {
        let una = core.st.highest_ack;
        let before = (self.rack, self.rack_rtt, self.min_rtt, self.fack);
        if end - 1 > una {
            self.consider(core, end - 1, now);
        }
        assert_eq!(before, (self.rack, self.rack_rtt, self.min_rtt, self.fack), "settled block {start}..{end}");
        assert!(self.marks.retransmitted_in(start.max(una + 1), end).is_empty(), "settled block {start}..{end}");
    }

    /// Which of `blocks` the last ACK settled: a bit each.
    fn repeated(&self, blocks: &[(i64, i64)]) -> u64 {
        blocks.iter().take(64).enumerate().fold(0, |m, (i, &b)| m | (u64::from(self.settled.has(b)) << i))
    }

    /// One delivered packet: RACK moves to it if it was sent later than RACK's (a retransmission
    /// only if its RTT is not below the min RTT: else the original may have been delivered).
    /// Returns whether the same packet, delivered again later and not sent since, changes nothing:
    /// RACK, the min RTT and RACK.fack then already cover it.
    fn consider(&mut self, core: &SenderCore, seq: i64, now: Time) -> bool {
        let Some(sent) = core.sent_at(seq) else { return false };
        let rtt = now - sent;
        let settled = if self.marks.is_retransmitted(seq) {
            if self.min_rtt.is_some_and(|m| rtt < m) {
                return false;
            }
            self.min_rtt.is_some() // else, no longer marked retransmitted, it would set the min RTT
        } else {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            true
        };
        if self.rack.is_none_or(|r| sent_after((sent, seq), r)) {
            self.rack = Some((sent, seq));
            self.rack_rtt = rtt;
        }
        self.fack = self.fack.max(seq);
        settled
    }

    /// Forgets what this ACK delivered: its SACK blocks and its cumulative ACK. A settled block's
    /// marks went when it was first reported (only a loss probe marks a SACKed packet again).
    fn take_delivered(&mut self, st: &TcpState, ackno: i64, blocks: &[(i64, i64)], repeated: u64) {
        self.sack.take_blocks(st, blocks, ackno);
        self.sack.drop_to(ackno);
        for (i, &(start, end)) in blocks.iter().enumerate() {
            if !is_repeated(repeated, i) {
                self.marks.delivered(start, end);
            }
        }
        self.marks.acked_to(ackno);
    }

    /// Step 5, `RACK_detect_loss`: marks lost every packet sent before RACK's that has waited
    /// RACK.rtt + reo_wnd; returns how many it marked and how long the next one still has to
    /// wait, if any. Original transmissions leave in sequence order, so the scan of the holes'
    /// unmarked packets stops at the first sent after RACK's, and starts at the first the last
    /// scan left unmarked; retransmissions are scanned in the order they left, up to the first
    /// not yet due (`rack_marks.rs`).
    fn detect_loss(&mut self, core: &SenderCore, now: Time) -> (u64, Option<Time>) {
        let Some(rack) = self.rack else { return (0, None) };
        let wait = self.rack_rtt + self.reo_wnd(core);
        let (mut newly_lost, mut remaining) = (vec![], None::<Time>);
        // The first unmarked packet this scan leaves unmarked: the next scan starts there.
        let mut left: Option<i64> = None;
        let from = self.scan_from.max(core.st.highest_ack + 1);
        'scan: for (start, end) in self.sack.holes(from - 1, core.st.maxseq + 1) {
            for (a, b) in self.marks.unmarked(start, end) {
                for seq in a..b {
                    let Some(sent) = core.sent_at(seq) else {
                        left.get_or_insert(seq);
                        continue;
                    };
                    if !sent_after(rack, (sent, seq)) {
                        left.get_or_insert(seq);
                        break 'scan;
                    }
                    let due = sent + wait;
                    if due <= now {
                        newly_lost.push(seq);
                    } else {
                        remaining = Some(remaining.map_or(due - now, |r| r.max(due - now)));
                        left.get_or_insert(seq);
                    }
                }
            }
        }
        self.scan_from = left.unwrap_or(core.st.maxseq + 1);
        // Due times follow send times: the last retransmission before RACK's waits longest, and
        // if it is due, all are.
        let mut resent = self.marks.retransmitted_before(rack);
        match resent.next_back() {
            Some((sent, seq)) if sent + wait <= now => {
                newly_lost.extend(resent.map(|(_, s)| s));
                newly_lost.push(seq);
            }
            Some((sent, _)) => {
                remaining = Some(remaining.map_or(sent + wait - now, |r| r.max(sent + wait - now)));
                newly_lost.extend(resent.take_while(|&(t, _)| t + wait <= now).map(|(_, s)| s));
            }
            None => drop(resent),
        }
        for &seq in &newly_lost {
            self.marks.mark_lost(seq);
        }
        (newly_lost.len() as u64, remaining)
    }

    /// Fast recovery starts (Linux `tcp_enter_recovery`): the window law cuts, PRR starts counting.
    fn enter_recovery(&mut self, core: &mut SenderCore, law: &mut AnyLaw, now: Time) {
        let st = &mut core.st;
        st.cwr = false;
        st.recover = st.maxseq;
        st.last_action = CwndAction::DupAck;
        law.on_fast_retransmit(st, now);
        core.stats.fast_retransmits += 1;
        self.prr = PrrCount::start(core.st.outstanding());
        self.state = State::Recovery;
    }

    /// Sends one packet: the lowest marked lost, else new data; false if neither may go.
    fn send_one(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
        if let Some(seq) = self.marks.pop_lost() {
            self.marks.retransmitted(seq, now);
            core.karn(seq);
            core.retransmit(now, seq, out);
            if seq == core.st.highest_ack + 1 {
                self.rto_at = None; // Linux `tcp_xmit_retransmit_queue`: the head's resend restarts the RTO
            }
            return true;
        }
        let st = &core.st;
        if st.t_seqno < core.size_pkts() && st.t_seqno <= st.highest_ack + st.wmax as i64 {
            core.send_next(now, out);
            return true;
        }
        false
    }

    /// Sends what the state allows: PRR's count in recovery, else what the window leaves; paced,
    /// one packet now at most and the release timer for the next (`send_clock.rs`, as the jitter).
    fn transmit(&mut self, core: &mut SenderCore, now: Time, delivered: i64, una_advanced: bool, out: &mut Vec<i64>) {
        if self.state == State::Recovery && !self.law_sets_window {
            if delivered > 0 {
                self.prr.delivered += delivered;
                let pipe = self.in_flight(&core.st);
                let mut n = self.prr.sndcnt(pipe, core.st.ssthresh, delivered, una_advanced);
                if self.prr.out == 0 {
                    n = n.max(1); // Linux: the first ACK of recovery always lets the retransmission out
                }
                core.st.cwnd = (pipe + n) as f64;
                self.credit = n;
            }
        } else {
            self.credit = i64::MAX;
        }
        // A law's own rate paces from its first ACK on (Linux paces from the start); srtt / window
        // needs an RTT sample, which a flow whose every packet was retransmitted may still lack.
        let paced = self.paced && (core.pacing_rate_pps.is_some() || core.srtt_s().is_some());
        let cap = if core.max_burst() > 0 { core.max_burst() as i64 } else { i64::MAX };
        let tso = core.tso_defer() && !paced;
        let mut sent = 0;
        while sent < self.credit.min(cap) {
            if self.credit == i64::MAX && self.in_flight(&core.st) as f64 >= core.st.cwnd.min(core.st.wmax).floor() {
                break;
            }
            if tso && !self.tso.in_skb() && self.tso_holds(core, now) {
                break;
            }
            if !self.clock.ready(core, now, paced) || !self.send_one(core, now, out) {
                break;
            }
            sent += 1;
            self.clock.sent(core, now, paced);
            if tso && self.tso.sent(now) {
                core.push_last();
            }
        }
        self.clock.done(now);
        if self.tso.done() {
            core.push_last();
        }
        if self.credit != i64::MAX {
            self.credit -= sent;
            self.prr.out += sent;
        }
    }

    /// Linux's TSO deferral holds the next new packet (in Open, with none marked lost): else an
    /// skb of it starts (`tso_defer.rs`).
    fn tso_holds(&mut self, core: &SenderCore, now: Time) -> bool {
        let Some(srtt_s) = core.srtt_s().filter(|_| self.state == State::Open && self.marks.lost_pkts() == 0) else {
            return false;
        };
        let st = &core.st;
        let data_left = core.size_pkts().saturating_sub(st.t_seqno);
        let w = Window {
            now,
            cwnd: st.cwnd.min(st.wmax).floor() as i64,
            ssthresh: st.ssthresh,
            in_flight: self.in_flight(st),
            outstanding: st.outstanding(),
            send_room: (st.highest_ack + st.wmax as i64 + 1 - st.t_seqno).min(data_left),
            data_left,
            srtt_s,
            min_rtt: self.min_rtt.unwrap_or(from_secs(srtt_s)),
            head_sent: core.sent_at(st.highest_ack + 1),
            mss_bytes: core.pkt_bytes(),
        };
        !self.tso.start_skb(&w)
    }

    /// Arms the one timer: RACK's reordering timer if a packet awaits it, else a loss probe in
    /// Open with none outstanding, else the retransmission timeout.
    fn arm(&mut self, core: &mut SenderCore, now: Time, reordering_wait: Option<Time>) {
        if core.st.outstanding() <= 0 {
            (self.rto_at, core.rto_deadline, self.timer) = (None, None, Timer::Rto);
            return;
        }
        let rto_at = *self.rto_at.get_or_insert(now + from_secs(core.rto_s()));
        let (timer, at) = match (reordering_wait, core.srtt_s()) {
            (Some(w), _) if now + w < rto_at => (Timer::Reordering, now + w),
            (None, Some(srtt)) if self.state == State::Open && self.probe.is_none() => {
                // Section 7.2: no later than the RTO would fire, and in its place.
                let lone = if core.st.outstanding() == 1 { WC_DEL_ACK_S } else { 0.0 };
                (Timer::Probe, (now + from_secs(2.0 * srtt + lone)).min(rto_at))
            }
            _ => (Timer::Rto, rto_at),
        };
        (self.timer, core.rto_deadline) = (timer, Some(at));
    }

    /// RFC 8985 section 7.4: an ACK that covers a retransmitted probe after a min RTT means the
    /// probe repaired a tail loss, and the window law responds as to a loss.
    fn on_probe_acked(&mut self, core: &mut SenderCore, law: &mut AnyLaw, ackno: i64, now: Time) {
        let Some(p) = self.probe.filter(|p| ackno >= p.end) else { return };
        self.probe = None;
        let repaired = p.retransmitted_at.is_some_and(|t| now - t >= self.min_rtt.unwrap_or(0));
        if repaired && self.state == State::Open {
            law.on_fast_retransmit(&mut core.st, now);
        }
    }

    /// Section 7.3: the probe timer fired. Sends one new packet if it may (the window aside),
    /// else the highest packet sent again; the retransmission timer then runs.
    fn send_probe(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) {
        let st = &core.st;
        let retransmitted_at = if st.t_seqno < core.size_pkts() && st.t_seqno <= st.highest_ack + st.wmax as i64 {
            core.send_next(now, out);
            None
        } else {
            let seq = st.maxseq;
            core.karn(seq);
            core.retransmit(now, seq, out);
            self.marks.retransmitted(seq, now);
            self.settled = LastBlocks::default(); // the packet may be SACKed: its block is news again
            Some(now)
        };
        self.probe = Some(Probe { end: core.st.maxseq, retransmitted_at });
        self.rto_at = None; // the RTO restarts with the probe
        self.arm(core, now, None);
    }

    /// Linux `tcp_timeout_mark_lost` after an RTO: the first outstanding packet is lost, the
    /// others if RACK.rtt + reo_wnd has passed since they were sent.
    fn mark_lost_on_rto(&mut self, core: &SenderCore, now: Time) {
        let wait = self.rack_rtt + self.reo_wnd(core);
        self.marks.clear_retransmissions();
        self.settled = LastBlocks::default();
        self.scan_from = 0;
        let mut s = core.st.highest_ack;
        while let Some(h) = self.sack.first_hole(s, core.st.maxseq + 1) {
            if h == core.st.highest_ack + 1 || core.sent_at(h).is_none_or(|t| now - t >= wait) {
                self.marks.mark_lost(h);
            }
            s = h;
        }
    }
}

impl Recovery for RackTlp {
    fn on_new_ack(&mut self, st: &mut TcpState, law: &mut AnyLaw, ack: &Ack, _ackno: i64) -> AckKind {
        law.on_ack(st, ack); // not reached: `on_any_ack` takes every ACK
        AckKind::Full
    }

    fn send_budget(&self, _st: &TcpState, _max_burst: u32) -> Option<u32> {
        None
    }

    fn inflates_window(&self) -> bool {
        false
    }

    fn uses_sack(&self) -> bool {
        true
    }

    fn goes_back_n(&self) -> bool {
        false
    }

    fn wants_send_times(&self) -> bool {
        true
    }

    fn in_flight(&self, st: &TcpState) -> i64 {
        RackTlp::in_flight(self, st)
    }

    fn on_any_ack(
        &mut self,
        core: &mut SenderCore,
        law: &mut AnyLaw,
        ack: &Ack,
        ackno: i64,
        sack: &[(i64, i64)],
        _out: &mut Vec<i64>,
    ) -> bool {
        let now = ack.now;
        let una = core.st.highest_ack;
        let advanced = ackno > una;
        let sacked_before = self.sack.sacked_pkts();
        let repeated = self.repeated(sack);
        self.advance(core, ackno, sack, repeated, now);
        self.take_delivered(&core.st, ackno, sack, repeated);
        let delivered = (ackno - una).max(0) + self.sack.sacked_pkts() - sacked_before;
        if advanced {
            if self.state != State::Recovery {
                law.on_ack(&mut core.st, ack);
            }
            core.st.highest_ack = ackno;
            core.st.t_seqno = core.st.t_seqno.max(ackno + 1);
            self.rto_at = None; // restarts (RFC 6298 5.3)
        }
        if self.state != State::Open && ackno >= core.st.recover {
            if self.state == State::Recovery && !self.law_sets_window {
                core.st.cwnd = core.st.ssthresh.min(core.st.wmax); // PRR's end of recovery
            }
            self.state = State::Open;
            core.st.last_action = CwndAction::Exited;
        }
        self.on_probe_acked(core, law, ackno, now);
        let (newly_lost, wait) = self.detect_loss(core, now);
        core.lost_pkts += newly_lost;
        if newly_lost > 0 && self.state == State::Open {
            self.enter_recovery(core, law, now);
        }
        self.pending = (delivered, advanced, wait);
        true
    }

    fn after_ack(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) {
        let (delivered, advanced, wait) = self.pending;
        self.transmit(core, now, delivered, advanced, out);
        self.arm(core, now, wait);
    }

    /// After a retransmission timeout (the window law has set cwnd).
    fn send(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
        if std::mem::take(&mut self.rto_fired) {
            self.mark_lost_on_rto(core, now);
        }
        self.transmit(core, now, 0, false, out);
        self.rto_at = None;
        self.arm(core, now, None);
        true
    }

    fn on_timeout(&mut self, _st: &TcpState) {
        self.state = State::Loss;
        self.probe = None;
        self.rto_fired = true;
    }

    fn configure(&mut self, law_sets_window: bool, paced: bool) {
        (self.law_sets_window, self.paced) = (law_sets_window, paced);
        self.sack = Sack::without_pipe(); // once, before any ACK (and `report_deliveries`)
    }

    fn report_deliveries(&mut self) -> Reports {
        self.sack.report();
        Reports::OnAck // `take_delivered` takes the blocks after `advance` read the scoreboard
    }

    fn delivered(&self) -> &[(i64, i64)] {
        self.sack.delivered()
    }

    fn on_send_timer(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
        let mine = self.paced || self.clock.waiting();
        if mine {
            self.transmit(core, now, 0, false, out);
        }
        mine
    }

    fn on_timer(&mut self, core: &mut SenderCore, law: &mut AnyLaw, now: Time, out: &mut Vec<i64>) -> bool {
        match self.timer {
            Timer::Rto => false,
            Timer::Probe => {
                self.send_probe(core, now, out);
                true
            }
            Timer::Reordering => {
                let (newly_lost, wait) = self.detect_loss(core, now);
                core.lost_pkts += newly_lost;
                if newly_lost > 0 && self.state == State::Open {
                    self.enter_recovery(core, law, now);
                }
                self.transmit(core, now, i64::from(newly_lost > 0), false, out);
                self.arm(core, now, wait);
                true
            }
        }
    }
}

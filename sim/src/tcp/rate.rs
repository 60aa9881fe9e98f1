//! The delivery-rate estimator of Linux's `net/ipv4/tcp_rate.c` (draft-cheng-iccrg-delivery-rate-
//! estimation), a component any window law may ask for (`WindowLaw::wants_rate_samples`; BBR
//! does). Each packet sent records the connection's delivered count and the time of the last
//! delivery; each ACK yields a rate sample from the most recently sent packet it delivers
//! (cumulatively or by SACK): packets delivered since that packet left, over the longer of its
//! send and ACK intervals, marked app-limited when the sender ran out of data. With `tsecr_rtt`
//! its RTT sample is Linux's (`tcp_clean_rtx_queue`, `tcp_sacktag_one`, `tcp_ack_update_rtt` in
//! `net/ipv4/tcp_input.c`, 6.18): the newest packet newly SACKed, else the newest cumulatively
//! acked unless a retransmission is among them (Karn), else, for the ACK of a retransmission
//! that filled the receiver's hole, the timestamp it echoes, in whole ms (`tcp_rtt_tsopt_us`).
//! Details: docs/tcp.md.

use super::ranges::{add_range_reporting, covers, gaps, LastBlocks};
use super::seq_ring::SeqRing;
use crate::time::Time;

/// Linux's congestion-avoidance states, in its order (a law compares them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    #[default]
    Open,
    /// Holding the window after an ECN cut.
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout, until what was outstanding then is acknowledged.
    Loss,
}

/// What one ACK tells a rate-based law (Linux's `struct rate_sample`, with the connection's
/// counters it reads beside it).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    pub now: Time,
    /// Packets delivered over `interval`; the sample is valid only if `interval > 0`.
    pub delivered: i64,
    pub interval: Time,
    /// The connection's delivered count when the sampled packet was sent.
    pub prior_delivered: u64,
    /// Packets this ACK delivered (cumulatively or by SACK).
    pub acked_sacked: i64,
    /// Packets the recovery marked lost while processing this ACK.
    pub losses: i64,
    pub is_app_limited: bool,
    /// RTT of the most recently sent packet this ACK delivered, if never retransmitted.
    pub rtt: Option<Time>,
    /// Packets in flight (the recovery's count) before the ACK; `UNCOUNTED` if the law said it
    /// would not read it (`WindowLaw::reads_prior_in_flight`). The count after it is an `InFlight`.
    pub prior_in_flight: i64,
    /// The connection's counters after the ACK: delivered, when last delivered, lost.
    pub delivered_total: u64,
    pub delivered_time: Time,
    pub lost_total: u64,
    pub ca: CaState,
    pub srtt_s: Option<f64>,
}

impl RateSample {
    pub fn is_valid(&self) -> bool {
        self.interval > 0 && self.delivered >= 0
    }

    /// The delivery rate, in packets per second.
    pub fn rate_pps(&self) -> f64 {
        self.delivered as f64 / crate::time::to_secs(self.interval)
    }
}

/// `RateSample::prior_in_flight` when the law did not ask for it.
pub const UNCOUNTED: i64 = i64::MIN;

/// Packets in flight after an ACK (the recovery's count), counted when first read: a SACK
/// scoreboard's count takes searches, and BBR reads it only in some states.
pub struct InFlight<'a> {
    count: &'a dyn Fn() -> i64,
    memo: std::cell::Cell<Option<i64>>,
}

impl<'a> InFlight<'a> {
    pub fn new(count: &'a dyn Fn() -> i64) -> Self {
        Self { count, memo: std::cell::Cell::new(None) }
    }

    /// A count already known (tests).
    pub fn known(n: i64) -> InFlight<'static> {
        InFlight { count: &|| unreachable!("known"), memo: std::cell::Cell::new(Some(n)) }
    }

    pub fn get(&self) -> i64 {
        if let Some(n) = self.memo.get() {
            return n;
        }
        let n = (self.count)();
        self.memo.set(Some(n));
        n
    }
}

/// What a packet carried when it left (Linux's `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default)]
struct TxRecord {
    sent: Time,
    first_tx: Time,
    delivered_time: Time,
    delivered: u64,
    app_limited: bool,
    retransmitted: bool,
}

/// Bytes a packet's record takes in the sampler's ring (the cost estimate's, `estimate.rs`).
pub const RECORD_BYTES: usize = std::mem::size_of::<TxRecord>();

/// A millisecond: Linux's timestamp clock ticks (TCP_TS_HZ 1000).
const TS_TICK: Time = 1_000_000_000;

/// The send times an ACK's RTT sample may come from (`RateSampler::on_delivered`).
#[derive(Default)]
struct RttFrom {
    /// The newest packet newly delivered and never retransmitted among those SACKed, and among
    /// those cumulatively acked.
    sacked: Option<Time>,
    cum: Option<Time>,
    /// A retransmission is among the packets cumulatively acked (Karn).
    cum_retx: bool,
    /// The lowest packet cumulatively acked, the receiver's hole, if it was retransmitted: when
    /// the copy that filled it was (`echo_retx`), its timestamp is the one echoed.
    hole_retx: Option<Time>,
    first_cum: bool,
}

impl RttFrom {
    fn add(&mut self, rec: &TxRecord, cum: bool) {
        let newer = |t: &mut Option<Time>| *t = Some(t.map_or(rec.sent, |x| x.max(rec.sent)));
        if cum && !std::mem::replace(&mut self.first_cum, true) && rec.retransmitted {
            self.hole_retx = Some(rec.sent);
        }
        match (rec.retransmitted, cum) {
            (true, c) => self.cum_retx |= c,
            (false, c) => newer(if c { &mut self.cum } else { &mut self.sacked }),
        }
    }

    /// The newest packet newly delivered and never retransmitted (the sample without `tsecr_rtt`).
    fn newest(&self) -> Option<Time> {
        self.sacked.max(self.cum)
    }

    /// `tcp_ack_update_rtt`'s `ca_rtt_us`, and whether it is exact (not a timestamp's). The echo
    /// is a difference of two ms clocks, at least 1 (`tcp_rtt_tsopt_us(tp, 1)`, TCP_TS_HZ 1000):
    /// up to 1 ms under the retransmission's RTT. Where the original filled the hole
    /// (`echo_retx` false: the retransmission was spurious) Linux echoes the original's time,
    /// which the record no longer holds: no sample here, where Linux's is that queued RTT.
    fn linux(&self, now: Time, echo_retx: bool) -> Option<(Time, bool)> {
        let exact = self.sacked.or(if self.cum_retx { None } else { self.cum });
        let echo = self.hole_retx.filter(|_| echo_retx);
        exact.map(|t| (now - t, true)).or_else(|| echo.map(|t| ((now / TS_TICK - t / TS_TICK).max(1) * TS_TICK, false)))
    }
}

#[derive(Debug)]
pub struct RateSampler {
    tx: SeqRing<TxRecord>,
    /// Packets delivered so far, and when the last was.
    delivered: u64,
    delivered_time: Time,
    /// Send time of the most recently sent packet delivered (the start of the send interval).
    first_tx: Time,
    /// Nonzero: the sender is app-limited until `delivered` passes this.
    app_limited: u64,
    /// Packets delivered by SACK above the cumulative ACK: sorted, disjoint [start, end).
    sacked: Vec<(i64, i64)>,
    last: LastBlocks,
    min_rtt: Option<Time>,
    /// Scratch for an ACK's newly delivered ranges.
    newly: Vec<(i64, i64)>,
    /// Linux's RTT sample, timestamps included (`tcp.tsecr_rtt`); off: the newest packet newly
    /// delivered and never retransmitted.
    tsecr_rtt: bool,
    /// The ACK being taken echoes a retransmitted copy's timestamp (`TcpSender::note_echo`).
    pub echo_retx: bool,
    /// The least exact RTT sample (`linux_rtt`).
    min_exact: Option<Time>,
}

impl Default for RateSampler {
    fn default() -> Self {
        Self {
            tx: SeqRing::new(true),
            delivered: 0,
            delivered_time: 0,
            first_tx: 0,
            app_limited: 0,
            sacked: Vec::new(),
            tsecr_rtt: false,
            echo_retx: false,
            min_exact: None,
            last: LastBlocks::default(),
            min_rtt: None,
            newly: Vec::new(),
        }
    }
}

impl RateSampler {
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Linux `tcp_rate_skb_sent`: packet `seq` leaves now, with `una` the cumulative ACK and
    /// `maxseq` the highest sent before it. A flight that starts from nothing restarts both
    /// intervals.
    pub fn on_send(&mut self, seq: i64, now: Time, una: i64, maxseq: i64) {
        if maxseq <= una {
            self.first_tx = now;
            self.delivered_time = now;
        }
        let rec = TxRecord {
            sent: now,
            first_tx: self.first_tx,
            delivered_time: self.delivered_time,
            delivered: self.delivered,
            app_limited: self.app_limited != 0,
            retransmitted: seq <= maxseq,
        };
        self.tx.set(seq, rec, una, maxseq);
    }

    /// Linux `tcp_rate_check_app_limited`: the sender has nothing more to send with `in_flight`
    /// packets out; samples taken until those are delivered are app-limited.
    pub fn mark_app_limited(&mut self, in_flight: i64) {
        self.app_limited = (self.delivered + in_flight.max(0) as u64).max(1);
    }

    /// Linux `tcp_rate_skb_delivered` for every packet the ACK (`ackno`, SACK `blocks`) newly
    /// delivers, then `tcp_rate_gen`. `una` is the cumulative ACK before it, `maxseq` the highest
    /// packet sent. The sample's loss, in-flight and state fields are the sender's to fill.
    pub fn on_ack(&mut self, una: i64, ackno: i64, blocks: &[(i64, i64)], maxseq: i64, now: Time) -> RateSample {
        let mut newly = std::mem::take(&mut self.newly); // reused: no allocation per ACK
        newly.clear();
        if ackno > una {
            // (A duplicate ACK cuts nothing: every range already lies above una + 1.)
            gaps(&self.sacked, una + 1, ackno + 1, &mut newly);
            let covered = self.sacked.partition_point(|b| b.1 <= ackno + 1); // sorted: a prefix
            self.sacked.drain(..covered);
            if let Some(first) = self.sacked.first_mut() {
                first.0 = first.0.max(ackno + 1);
            }
        }
        for &(start, end) in blocks {
            if self.last.has((start, end)) {
                continue;
            }
            let start = start.max(ackno + 1);
            if end > start && !covers(&self.sacked, start, end) {
                add_range_reporting(&mut self.sacked, (start, end), &mut newly);
            }
        }
        self.last.set(blocks);
        let rs = self.on_delivered(&newly, ackno, maxseq, now);
        self.newly = newly;
        rs
    }

    /// The ranges the last `on_ack` found newly delivered (tests compare a recovery's report).
    #[cfg(test)]
    pub fn last_newly(&self) -> &[(i64, i64)] {
        &self.newly
    }

    /// Linux's sample (`RttFrom::linux`). The engine remembers only a packet's last copy: an echo
    /// more than 1 ms under the exact min RTT so far came from an earlier copy, and is dropped.
    fn linux_rtt(&mut self, rtt: &RttFrom, now: Time) -> Option<Time> {
        match rtt.linux(now, self.echo_retx)? {
            (r, true) => {
                self.min_exact = Some(self.min_exact.map_or(r, |m| m.min(r)));
                Some(r)
            }
            (r, false) => self.min_exact.is_none_or(|m| r + TS_TICK > m).then_some(r),
        }
    }

    /// Whether the packet `seq`, last sent at or below `maxseq`, was sent more than once.
    pub fn retransmitted(&self, seq: i64, maxseq: i64) -> bool {
        self.tx.get(seq, maxseq).is_some_and(|r| r.retransmitted)
    }

    /// With Linux's RTT sample (`tcp.tsecr_rtt`, the module's comment).
    pub fn with_tsecr_rtt(on: bool) -> Self {
        Self { tsecr_rtt: on, ..Self::default() }
    }

    /// The second half of `on_ack`, for the packets `newly` ([start, end) ranges, in `on_ack`'s
    /// order) the ACK newly delivered, those up to `ackno` cumulatively: from `on_ack`, or from a
    /// recovery that works them out (`Recovery::report_deliveries`), in which case this
    /// estimator's own scoreboard stays empty.
    pub fn on_delivered(&mut self, newly: &[(i64, i64)], ackno: i64, maxseq: i64, now: Time) -> RateSample {
        let mut rs = RateSample { now, delivered: -1, ..Default::default() };
        let mut best: Option<TxRecord> = None;
        let mut rtt = RttFrom::default();
        for &(a, b) in newly {
            for seq in a..b {
                let Some(rec) = self.tx.get(seq, maxseq) else { continue };
                rs.acked_sacked += 1;
                if best.is_none_or(|p| (rec.delivered, rec.sent) > (p.delivered, p.sent)) {
                    best = Some(rec);
                }
                rtt.add(&rec, seq <= ackno);
            }
        }
        self.delivered += rs.acked_sacked as u64;
        if rs.acked_sacked > 0 {
            self.delivered_time = now;
        }
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        rs.rtt = if self.tsecr_rtt { self.linux_rtt(&rtt, now) } else { rtt.newest().map(|t| now - t) };
        if let Some(r) = rs.rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        (rs.delivered_total, rs.delivered_time) = (self.delivered, self.delivered_time);
        let Some(p) = best else { return rs };
        self.first_tx = p.sent;
        rs.prior_delivered = p.delivered;
        rs.is_app_limited = p.app_limited;
        rs.delivered = (self.delivered - p.delivered) as i64;
        let interval = (p.sent - p.first_tx).max(now - p.delivered_time);
        // Shorter than the min RTT: a compressed burst of ACKs, which would over-estimate.
        rs.interval = if self.min_rtt.is_some_and(|m| interval < m) { 0 } else { interval };
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;

    /// A steady flow, one packet a millisecond, each acknowledged 100 ms after it left: once the
    /// ACKs flow, each sample is the 100 packets delivered while its packet was out, over 100 ms.
    #[test]
    fn the_rate_of_a_steady_flow_is_its_sending_rate() {
        let mut r = RateSampler::default();
        let mut rates = vec![];
        for t in 0..300i64 {
            if t >= 100 {
                let seq = t - 100; // the ACK of the packet sent 100 ms ago arrives first
                let rs = r.on_ack(seq - 1, seq, &[], t - 1, t as Time * MS);
                assert_eq!((rs.acked_sacked, rs.rtt), (1, Some(100 * MS)));
                rates.push((seq, rs.is_valid().then(|| rs.rate_pps())));
            }
            r.on_send(t, t as Time * MS, (t - 100).max(-1), t - 1);
        }
        for &(seq, rate) in &rates[100..] {
            assert!((rate.unwrap() - 1000.0).abs() < 1e-6, "ack {seq}: {rate:?} pkt/s");
        }
        // The first flight left before any delivery: its samples span the whole wait.
        assert!(rates[1].1.unwrap() < 100.0, "{:?}", rates[1]);
        assert_eq!(r.delivered(), 200);
    }

    /// SACKed packets count once: as delivered when SACKed, not again when the cumulative ACK
    /// passes them; a retransmission gives no RTT sample.
    #[test]
    fn sacked_packets_are_delivered_once() {
        let mut r = RateSampler::default();
        for seq in 0..6 {
            r.on_send(seq, 0, -1, seq - 1);
        }
        let rs = r.on_ack(-1, 0, &[(2, 4)], 5, 100 * MS);
        assert_eq!(rs.acked_sacked, 3, "0, and 2-3 by SACK");
        r.on_send(1, 110 * MS, 0, 5); // 1 retransmitted
        let rs = r.on_ack(0, 5, &[], 5, 210 * MS);
        assert_eq!(rs.acked_sacked, 3, "1, 4 and 5: not 2 and 3 again");
        assert_eq!(rs.rtt, Some(210 * MS), "from 5, the newest never retransmitted");
        assert_eq!(r.delivered(), 6);
    }

    /// Linux's sample (`tsecr_rtt`): an ACK of a retransmission that filled the hole takes the
    /// echoed timestamp, in whole ms, even beside new packets cumulatively acked (Karn), unless it
    /// SACKs a new one; where the original filled it (a spurious retransmission), none.
    #[test]
    fn linux_takes_an_acked_retransmissions_rtt_from_its_timestamp_in_whole_ms() {
        let ack_of_1 = |sack: &[(i64, i64)], echo_retx: bool| {
            let mut r = RateSampler::with_tsecr_rtt(true);
            for seq in 0..8 {
                r.on_send(seq, 0, -1, seq - 1);
            }
            r.on_ack(-1, 0, &[(2, 4)], 7, 100 * MS);
            r.on_send(1, 110 * MS + MS * 7 / 10, 0, 7); // 1 resent at 110.7 ms
            assert!(r.retransmitted(1, 7) && !r.retransmitted(4, 7));
            r.echo_retx = echo_retx;
            r.on_ack(0, 5, sack, 7, 210 * MS + MS / 5).rtt // acked at 210.2 ms: 99.5 ms later
        };
        assert_eq!(ack_of_1(&[], true), Some(100 * MS), "210 - 110 on the ms clocks, not 4 and 5's 210.2");
        assert_eq!(ack_of_1(&[(6, 7)], true), Some(210 * MS + MS / 5), "6, SACKed, was sent at 0");
        assert_eq!(ack_of_1(&[], false), None, "the original filled the hole");
        let mut r = RateSampler::with_tsecr_rtt(true);
        r.on_send(0, 0, -1, -1);
        r.on_send(0, MS / 2, -1, 0);
        r.echo_retx = true;
        assert_eq!(r.on_ack(-1, 0, &[], 0, MS * 9 / 10).rtt, Some(MS), "one tick at least");
    }

    /// Once the sender runs out of data, samples are app-limited until what was in flight then
    /// is delivered.
    #[test]
    fn app_limited_marks_last_until_the_flight_is_delivered() {
        let mut r = RateSampler::default();
        for seq in 0..4 {
            r.on_send(seq, 0, -1, seq - 1);
        }
        r.mark_app_limited(4);
        r.on_send(4, MS, -1, 3);
        assert!(!r.on_ack(-1, 3, &[], 4, 100 * MS).is_app_limited, "sent before the mark");
        assert!(r.on_ack(3, 4, &[], 4, 101 * MS).is_app_limited, "sent after it");
        r.on_send(5, 102 * MS, 4, 4);
        assert!(!r.on_ack(4, 5, &[], 5, 202 * MS).is_app_limited, "the mark passed: 5 delivered");
    }
}

//! `codel`: Controlled Delay (RFC 8289, section 5's pseudocode; Linux `include/net/codel_impl.h`).
//! Drops (or marks) at dequeue once the sojourn time has stayed above `target_ms` for
//! `interval_ms`, then every interval / sqrt(count). Details: docs/engine.md, `queue/codel.rs`.
//!
//! As the RFC, the control law divides by an exact sqrt (Linux and ns-3 keep a 16-bit Newton
//! estimate of 1/sqrt(count), within 0.01% after a few drops); "bytes left <= one packet" uses
//! the link's packet size as MAXPACKET (Linux: the MTU, 1514 B; ns-3: MinBytes 1500, strict <).

use super::droptail::Fifo;
use super::{ecn_param, Cause, Discipline, Limit, LinkInfo, QueueDiscipline, QueueEntry, QueueState, Verdicts};
use crate::packet::Packet;
use crate::params::{positive, ConfigError, Param, Value, VariantDef};
use crate::time::{from_secs, to_secs, Time};

crate::params! {
    /// RFC 8289's defaults.
    pub struct CodelParams as "Codel" {
        /// The acceptable standing sojourn time.
        target_ms: f64 = 5.0, unit "ms", check positive(1e5);
        /// The window over which the sojourn must stay above target before the first drop (about a
        /// worst-case RTT).
        interval_ms: f64 = 100.0, unit "ms", check positive(1e6);
        /// Mark ECN-capable packets CE instead of dropping them (tcp.ecn=true).
        ecn: bool = false;
    }
}

pub const ENTRY: QueueEntry = QueueEntry {
    def: VariantDef {
        name: "codel",
        doc: "CoDel (RFC 8289): dequeue-time drops or marks when the sojourn stays above target",
        params: CodelParams::specs,
        keys: CodelParams::KEYS,
        normalize,
    },
    marks: ecn_param,
    make,
};

fn normalize(v: &Value) -> Result<Value, ConfigError> {
    let p = CodelParams::parse(v)?;
    if p.target_ms >= p.interval_ms {
        return Err(ConfigError::at("target_ms", format!("must be < interval_ms ({}), got {}", p.interval_ms, p.target_ms)));
    }
    Ok(p.value())
}

fn make(v: &Value, limit: Limit, link: &LinkInfo) -> Discipline {
    let p = CodelParams::parse(v).expect("validated");
    Discipline::Codel(Codel::new(limit, &p, link.pkt_bytes as u64))
}

/// CoDel's state and control law over one FIFO (a `codel` queue's, or one FQ-CoDel flow's).
pub struct CodelVars {
    target: Time,
    interval: Time,
    ecn: bool,
    /// MAXPACKET: no drop while at most this many bytes would remain queued.
    max_packet_bytes: u64,
    /// When the sojourn will have been above target for a whole interval; None when it is not.
    first_above: Option<Time>,
    drop_next: Time,
    pub count: u64,
    lastcount: u64,
    dropping: bool,
}

impl CodelVars {
    pub fn new(target_ms: f64, interval_ms: f64, ecn: bool, max_packet_bytes: u64) -> Self {
        CodelVars {
            target: from_secs(target_ms / 1e3),
            interval: from_secs(interval_ms / 1e3),
            ecn,
            max_packet_bytes,
            first_above: None,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
        }
    }

    /// t + interval / sqrt(count).
    fn control_law(&self, t: Time) -> Time {
        t + (self.interval as f64 / (self.count as f64).sqrt()).round() as Time
    }

    /// RFC 8289's dodequeue's verdict on `pkt`, just taken from the head: true once its sojourn
    /// has been above target for an interval and more than a packet remains (`backlog` bytes,
    /// the whole queue's: in FQ-CoDel all flows', as Linux).
    fn ok_to_drop(&mut self, pkt: &Packet, backlog: u64, now: Time) -> bool {
        if now - pkt.stamp < self.target || backlog <= self.max_packet_bytes {
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    /// The head packet of `fifo` and its verdict (`others`: bytes queued beside `fifo`); an empty
    /// queue leaves the dropping state.
    fn head(&mut self, fifo: &mut Fifo, others: u64, now: Time) -> Option<(Packet, bool)> {
        match fifo.pop() {
            Some(p) => {
                let drop = self.ok_to_drop(&p, fifo.bytes() + others, now);
                Some((p, drop))
            }
            None => {
                self.first_above = None;
                self.dropping = false;
                None
            }
        }
    }

    /// Drops `pkt`, or marks it and hands it back.
    fn signal(&mut self, mut pkt: Packet, out: &mut Verdicts) -> Option<Packet> {
        if self.ecn && pkt.mark_ce() {
            out.marks += 1;
            return Some(pkt);
        }
        out.dropped.push((pkt, Cause::Early));
        None
    }

    /// RFC 8289's dequeue from `fifo`: the next packet, after the drops the control law calls for.
    pub fn dequeue(&mut self, fifo: &mut Fifo, others: u64, now: Time, out: &mut Verdicts) -> Option<Packet> {
        let (mut pkt, drop) = self.head(fifo, others, now)?;
        if self.dropping {
            if !drop {
                self.dropping = false;
                return Some(pkt);
            }
            while now >= self.drop_next {
                self.count += 1;
                if let Some(marked) = self.signal(pkt, out) {
                    self.drop_next = self.control_law(self.drop_next);
                    return Some(marked);
                }
                let (next, drop) = self.head(fifo, others, now)?;
                pkt = next;
                if !drop {
                    self.dropping = false;
                    return Some(pkt);
                }
                self.drop_next = self.control_law(self.drop_next);
            }
            return Some(pkt);
        }
        if !drop {
            return Some(pkt);
        }
        // Enter the dropping state: drop (or mark) this packet; resume near the previous rate if
        // the last dropping state ended recently (RFC 8289 section 5.5, as Linux).
        let next = match self.signal(pkt, out) {
            Some(marked) => Some(marked),
            None => self.head(fifo, others, now).map(|(p, _)| p),
        };
        self.dropping = true;
        let delta = self.count - self.lastcount;
        self.count = if delta > 1 && now < self.drop_next + 16 * self.interval { delta } else { 1 };
        self.lastcount = self.count;
        self.drop_next = self.control_law(now);
        next
    }

    pub fn state(&self) -> QueueState {
        QueueState {
            codel_drop_next_s: self.dropping.then(|| to_secs(self.drop_next)),
            codel_count: Some(self.count),
            ..QueueState::default()
        }
    }
}

pub struct Codel {
    fifo: Fifo,
    limit: Limit,
    vars: CodelVars,
}

impl Codel {
    pub fn new(limit: Limit, p: &CodelParams, max_packet_bytes: u64) -> Self {
        Codel { fifo: Fifo::default(), limit, vars: CodelVars::new(p.target_ms, p.interval_ms, p.ecn, max_packet_bytes) }
    }
}

impl QueueDiscipline for Codel {
    fn enqueue(&mut self, pkt: Packet, _: Time, out: &mut Verdicts) -> bool {
        self.fifo.push_within(self.limit, pkt, out)
    }

    fn dequeue(&mut self, now: Time, out: &mut Verdicts) -> Option<Packet> {
        self.vars.dequeue(&mut self.fifo, 0, now, out)
    }

    super::fifo_methods!();

    fn state(&self) -> QueueState {
        self.vars.state()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    const MS: Time = 1_000_000_000;

    fn codel(ecn: bool) -> Codel {
        Codel::new(Limit::Packets(100_000), &CodelParams { target_ms: 5.0, interval_ms: 100.0, ecn }, 1000)
    }

    fn arrive(q: &mut Codel, at: Time, ect: bool) {
        let mut p = Packet::new(Kind::Data, 0, 1000, 0);
        p.stamp = at;
        if ect {
            p.set_ect();
        }
        assert!(q.enqueue(p, at, &mut Verdicts::default()));
    }

    /// A standing queue of old packets served one per ms: the first drop comes one interval after
    /// the sojourn first exceeds target, then the n-th at interval / sqrt(n) after the previous.
    #[test]
    fn drop_times_follow_interval_over_sqrt_count() {
        let mut q = codel(false);
        for _ in 0..5000 {
            arrive(&mut q, 0, false);
        }
        let mut drops = Vec::new();
        for ms in 10..2000 {
            let mut out = Verdicts::default();
            q.dequeue(ms * MS, &mut out);
            drops.extend(out.dropped.iter().map(|_| ms * MS));
        }
        assert_eq!(drops[0], 110 * MS, "first above target at 10 ms; dropping one interval later");
        let mut expect = 110 * MS;
        for (n, &t) in drops.iter().enumerate().skip(1) {
            // The n-th drop after the first is due interval / sqrt(n) after the previous one's due
            // time (the law runs on the schedule, not on the dequeue that carried it out) ...
            expect += (100.0 * MS as f64 / (n as f64).sqrt()).round() as Time;
            // ... and, served once per ms, happens at the first dequeue at or after it.
            assert_eq!(t, expect.div_ceil(MS) * MS, "drop {n}");
        }
        assert!(drops.len() > 20);
        assert_eq!(q.state().codel_count, Some(drops.len() as u64));
    }

    #[test]
    fn below_target_or_a_single_packet_is_never_dropped() {
        let mut q = codel(false);
        for i in 0..200 {
            arrive(&mut q, i * MS, false);
            let mut out = Verdicts::default();
            q.dequeue(i * MS + 4 * MS, &mut out); // sojourn 4 ms < target
            assert!(out.dropped.is_empty());
        }
        let mut q = codel(false);
        arrive(&mut q, 0, false);
        arrive(&mut q, 0, false);
        let mut out = Verdicts::default();
        for t in [200, 400] {
            q.dequeue(t * MS, &mut out);
        }
        assert!(out.dropped.is_empty(), "at most one packet left: no drop");
    }

    #[test]
    fn ecn_marks_instead_of_dropping_capable_packets() {
        let mut q = codel(true);
        for _ in 0..500 {
            arrive(&mut q, 0, true);
        }
        let mut out = Verdicts::default();
        let mut ce = 0;
        for ms in 10..300 {
            if q.dequeue(ms * MS, &mut out).is_some_and(|p| p.ce()) {
                ce += 1;
            }
        }
        assert!(out.dropped.is_empty() && out.marks > 1 && out.marks == ce);
    }
}

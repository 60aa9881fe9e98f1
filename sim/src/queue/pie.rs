//! `pie`: Proportional Integral controller Enhanced (RFC 8033, sections 4 and 5; ns-3's
//! `PieQueueDisc`, Linux `net/sched/sch_pie.c`): every `t_update_ms` the drop probability moves by
//! alpha x (qdelay - target) + beta x (qdelay - qdelay_old), auto-scaled while it is small;
//! arrivals are dropped (or marked) with it. Details: docs/engine.md, `queue/pie.rs`.
//!
//! qdelay is the sojourn of the last dequeued packet (timestamps, as ns-3 and Linux by default).
//! The periodic update runs lazily, at the next packet event, for every instant it missed: the
//! state it reads changes only at packet events, so the result is the timer's. The burst
//! allowance is RFC 8033's (re-armed when the queue is calm, appendix A); ns-3 instead holds the
//! probability at 0 during it and re-arms after 1.5 s of calm.

use super::droptail::Fifo;
use super::{ecn_param, fraction, Cause, Discipline, Limit, LinkInfo, QueueDiscipline, QueueEntry, QueueState, Verdicts};
use crate::packet::Packet;
use crate::params::{int_in, non_negative, opt, positive, Param, Value, VariantDef};
use crate::rng::{stream, SimRng, Stream};
use crate::time::{from_secs, to_secs, Time};
use rand::Rng;

crate::params! {
    /// RFC 8033's defaults (ns-3 3.44's).
    pub struct PieParams as "Pie" {
        /// QDELAY_REF: the queueing delay PIE steers to.
        target_ms: f64 = 15.0, unit "ms", check positive(1e5);
        /// T_UPDATE: the interval of the probability update.
        t_update_ms: f64 = 15.0, unit "ms", check positive(1e5);
        /// The integral gain (per second of delay error).
        alpha: f64 = 0.125, unit "1/s", check non_negative(1e3);
        /// The proportional gain on the delay's change.
        beta: f64 = 1.25, unit "1/s", check non_negative(1e3);
        /// MAX_BURST: no early drop for this long after a calm queue.
        max_burst_ms: f64 = 150.0, unit "ms", check non_negative(1e6);
        /// Mark ECN-capable packets CE while the probability is below mark_ecn_th (tcp.ecn=true).
        ecn: bool = false;
        /// Above this drop probability, ECN-capable packets are dropped too (RFC 8033 5.1).
        mark_ecn_th: f64 = 0.1, unit "1", check fraction();
        /// Derandomize drops with the accumulated probability (RFC 8033 5.4; Linux always, ns-3 off).
        derandomize: bool = false;
        /// MEAN_PKTSIZE of the safeguard (no drop with 2 packets or less queued); null = pkt_bytes.
        mean_pkt_bytes: Option<i64> = None, unit "bytes", check opt(int_in(1, 65_535));
    }
}

pub const ENTRY: QueueEntry = QueueEntry {
    def: VariantDef {
        name: "pie",
        doc: "PIE (RFC 8033): enqueue drops or marks with a probability steered to a delay target",
        params: PieParams::specs,
        keys: PieParams::KEYS,
        normalize: crate::params::normalize::<PieParams>,
    },
    marks: ecn_param,
    make,
};

fn make(v: &Value, limit: Limit, link: &LinkInfo) -> Discipline {
    let p = PieParams::parse(v).expect("validated");
    let t_update = from_secs(p.t_update_ms / 1e3);
    Discipline::Pie(Pie {
        fifo: Fifo::default(),
        limit,
        target: from_secs(p.target_ms / 1e3),
        t_update,
        max_burst: from_secs(p.max_burst_ms / 1e3),
        mean_bytes: p.mean_pkt_bytes.unwrap_or(link.pkt_bytes as i64) as u64,
        drop_prob: 0.0,
        qdelay: 0,
        qdelay_old: 0,
        burst_allowance: from_secs(p.max_burst_ms / 1e3),
        accu_prob: 0.0,
        next_update: t_update,
        rng: stream(link.seed, Stream::Queue, link.link),
        p,
    })
}

pub struct Pie {
    fifo: Fifo,
    limit: Limit,
    p: PieParams,
    target: Time,
    t_update: Time,
    max_burst: Time,
    mean_bytes: u64,
    drop_prob: f64,
    /// The sojourn of the last packet dequeued (0 once the queue emptied), and its value at the
    /// previous update.
    qdelay: Time,
    qdelay_old: Time,
    burst_allowance: Time,
    accu_prob: f64,
    next_update: Time,
    rng: SimRng,
}

impl Pie {
    /// RFC 8033 section 4.2 (with 5.5's cap): one update of the drop probability.
    fn update(&mut self) {
        let (qdelay, old) = (to_secs(self.qdelay), to_secs(self.qdelay_old));
        let mut p = self.p.alpha * (qdelay - to_secs(self.target)) + self.p.beta * (qdelay - old);
        // While the probability is small, so are its steps (a table of RFC 8033 section 4.2).
        const SCALE: [(f64, f64); 6] = [(1e-6, 2048.0), (1e-5, 512.0), (1e-4, 128.0), (1e-3, 32.0), (1e-2, 8.0), (0.1, 2.0)];
        if let Some(&(_, div)) = SCALE.iter().find(|(below, _)| self.drop_prob < *below) {
            p /= div;
        }
        if self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        if self.qdelay == 0 && self.qdelay_old == 0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.qdelay_old = self.qdelay;
        self.burst_allowance = self.burst_allowance.saturating_sub(self.t_update);
    }

    /// Every update due by `now`.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            self.update();
            self.next_update += self.t_update;
        }
    }

    /// RFC 8033 section 4.1 (with 5.4's derandomization): an early drop of an arrival.
    fn drop_early(&mut self) -> bool {
        if self.burst_allowance > 0 {
            return false;
        }
        if (self.qdelay_old < self.target / 2 && self.drop_prob < 0.2) || self.fifo.bytes() <= 2 * self.mean_bytes {
            return false;
        }
        if self.p.derandomize {
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        self.rng.random::<f64>() < self.drop_prob
    }
}

impl QueueDiscipline for Pie {
    fn enqueue(&mut self, mut pkt: Packet, now: Time, out: &mut Verdicts) -> bool {
        self.catch_up(now);
        if self.fifo.full(self.limit, &pkt) {
            self.accu_prob = 0.0;
            out.dropped.push((pkt, Cause::Overflow));
            return false;
        }
        let calm = self.target / 2;
        if self.drop_prob == 0.0 && self.qdelay < calm && self.qdelay_old < calm {
            self.burst_allowance = self.max_burst;
        }
        if self.drop_early() {
            if self.p.ecn && self.drop_prob < self.p.mark_ecn_th && pkt.mark_ce() {
                out.marks += 1;
            } else {
                self.accu_prob = 0.0;
                out.dropped.push((pkt, Cause::Early));
                return false;
            }
        }
        self.fifo.push(pkt);
        true
    }

    fn dequeue(&mut self, now: Time, _: &mut Verdicts) -> Option<Packet> {
        self.catch_up(now);
        let p = self.fifo.pop();
        self.qdelay = match (&p, self.fifo.is_empty()) {
            (Some(pkt), false) => now - pkt.stamp,
            _ => 0,
        };
        p
    }

    super::fifo_methods!();

    fn state(&self) -> QueueState {
        QueueState { pie_prob: Some(self.drop_prob), ..QueueState::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    const MS: Time = 1_000_000_000;

    fn pie() -> Pie {
        let link = LinkInfo { rate_bps: 8e6, pkt_bytes: 1000, seed: 1, link: 0 };
        let Discipline::Pie(q) = make(&Value::map(vec![]), Limit::Packets(100_000), &link) else { unreachable!() };
        q
    }

    /// A standing queue served one packet per ms, every packet enqueued at 0: the sojourn at t is
    /// t. Each update, every 15 ms, moves the probability by RFC 8033's equation from the last
    /// sojourn seen before it (at t - 1 ms), scaled by the table while the probability is small.
    #[test]
    fn the_probability_follows_the_update_equation_step_by_step() {
        let mut q = pie();
        let mut out = Verdicts::default();
        for _ in 0..5000 {
            q.fifo.push(Packet::new(Kind::Data, 0, 1000, 0));
        }
        let (mut prob, mut old) = (0.0f64, 0.0f64);
        for ms in 1..=3000 {
            q.dequeue(ms * MS, &mut out);
            if ms % 15 == 0 {
                // The update at `ms` ran before this dequeue: it saw the sojourn of the one before.
                let qdelay = (ms - 1) as f64 / 1e3;
                let mut p = 0.125 * (qdelay - 0.015) + 1.25 * (qdelay - old);
                let div = [(1e-6, 2048.0), (1e-5, 512.0), (1e-4, 128.0), (1e-3, 32.0), (1e-2, 8.0), (0.1, 2.0)]
                    .iter()
                    .find(|(b, _)| prob < *b)
                    .map_or(1.0, |&(_, d)| d);
                p /= div;
                if prob >= 0.1 && p > 0.02 {
                    p = 0.02;
                }
                prob = (prob + p).clamp(0.0, 1.0);
                old = qdelay;
                assert!((q.drop_prob - prob).abs() < 1e-12, "at {ms} ms: {} vs {prob}", q.drop_prob);
            }
        }
        // The first step, by hand: (0.125 x (0.014 - 0.015) + 1.25 x 0.014) / 2048.
        let mut first = pie();
        for _ in 0..100 {
            first.fifo.push(Packet::new(Kind::Data, 0, 1000, 0));
        }
        first.dequeue(14 * MS, &mut out);
        first.dequeue(15 * MS, &mut out);
        assert!((first.drop_prob - 0.017375 / 2048.0).abs() < 1e-15);
        assert!(prob > 0.5, "a growing delay drives the probability up: {prob}");
    }

    #[test]
    fn an_idle_queue_decays_the_probability_and_rearms_the_burst_allowance() {
        let mut q = pie();
        q.drop_prob = 0.5;
        q.burst_allowance = 0;
        let mut out = Verdicts::default();
        q.dequeue(150 * MS, &mut out); // ten updates with both delays 0
        // Each: the step alpha x (0 - target), unscaled above 10%, then the 2% decay.
        let want = (0..10).fold(0.5, |p: f64, _| (p - 0.125 * 0.015) * 0.98);
        assert!((q.drop_prob - want).abs() < 1e-12);
        q.drop_prob = 0.0;
        assert!(q.enqueue(Packet::new(Kind::Data, 0, 1000, 0), 150 * MS, &mut out));
        assert_eq!(q.burst_allowance, 150 * MS);
    }

    #[test]
    fn a_short_queue_is_never_dropped_early() {
        let mut q = pie();
        q.drop_prob = 1.0;
        q.burst_allowance = 0;
        q.qdelay_old = 100 * MS;
        let mut out = Verdicts::default();
        for _ in 0..3 {
            assert!(q.enqueue(Packet::new(Kind::Data, 0, 1000, 0), 0, &mut out));
        }
        assert!(!q.enqueue(Packet::new(Kind::Data, 0, 1000, 0), 0, &mut out), "3 queued: above 2 packets");
    }
}

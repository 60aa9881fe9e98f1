//! `red`: Random Early Detection (Floyd and Jacobson 1993, Fig. 2, with Floyd's "gentle" variant of
//! 2000), as ns-2's `queue/red.cc` runs it and ns-3's `RedQueueDisc` ports it: the average on each
//! arrival with the idle-time correction, count-spaced early drops (`wait`), marks with `ecn`.
//! Details: docs/engine.md, `queue/red.rs`.
//!
//! A forced drop (average above max_th, or 2 max_th when gentle) resets the count as ns-2 does
//! (ns-3 inverts that condition). `bytes` measures the queue in bytes over mean_pkt_bytes, so
//! the thresholds stay in packets (ns-2's queue_in_bytes_), and scales p by size / mean.

use super::droptail::Fifo;
use super::{ecn_param, fraction, Cause, Discipline, Limit, LinkInfo, QueueDiscipline, QueueEntry, QueueState, Verdicts};
use crate::packet::Packet;
use crate::params::{int_in, non_negative, opt, ConfigError, Param, Value, VariantDef};
use crate::rng::{stream, SimRng, Stream};
use crate::time::{to_secs, Time};
use rand::Rng;

crate::params! {
    /// ns-3 3.44's RedQueueDisc defaults (FJ93's most common settings).
    pub struct RedParams as "Red" {
        /// Early drops start when the average reaches this.
        min_th: f64 = 5.0, unit "pkts", check non_negative(1e9);
        /// The drop probability reaches max_p here (and 1 at 2 max_th when gentle).
        max_th: f64 = 15.0, unit "pkts", check non_negative(1e9);
        /// The early-drop probability at max_th (ns: 1 / linterm).
        max_p: f64 = 0.02, unit "1", check fraction();
        /// The average's weight of each sample.
        w_q: f64 = 0.002, unit "1", check fraction();
        /// Between max_th and 2 max_th, p rises from max_p to 1 instead of jumping to 1.
        gentle: bool = true;
        /// Space drops uniformly in [1/p, 2/p] packets (ns's wait_) rather than [1, 1/p].
        wait: bool = true;
        /// Measure the queue in bytes (in units of mean_pkt_bytes) and scale p by size / mean.
        bytes: bool = false;
        /// The typical packet size (the idle-time correction's and byte mode's unit); null = pkt_bytes.
        mean_pkt_bytes: Option<i64> = None, unit "bytes", check opt(int_in(1, 65_535));
        /// Mark ECN-capable packets CE instead of dropping them early (tcp.ecn=true).
        ecn: bool = false;
    }
}

pub const ENTRY: QueueEntry = QueueEntry {
    def: VariantDef {
        name: "red",
        doc: "RED (Floyd and Jacobson 1993, gentle): early drops or marks as the average queue grows",
        params: RedParams::specs,
        keys: RedParams::KEYS,
        normalize,
    },
    marks: ecn_param,
    make,
};

fn normalize(v: &Value) -> Result<Value, ConfigError> {
    let p = RedParams::parse(v)?;
    if p.min_th >= p.max_th {
        return Err(ConfigError::at("max_th", format!("must be > min_th ({}), got {}", p.min_th, p.max_th)));
    }
    Ok(p.value())
}

fn make(v: &Value, limit: Limit, link: &LinkInfo) -> Discipline {
    let p = RedParams::parse(v).expect("validated");
    let mean = p.mean_pkt_bytes.unwrap_or(link.pkt_bytes as i64) as f64;
    Discipline::Red(Red {
        fifo: Fifo::default(),
        limit,
        ptc: link.rate_bps / (8.0 * mean),
        mean,
        avg: 0.0,
        count: 0,
        count_bytes: 0,
        above: false,
        idle_since: Some(0),
        rng: stream(link.seed, Stream::Queue, link.link),
        p,
    })
}

pub struct Red {
    fifo: Fifo,
    limit: Limit,
    p: RedParams,
    /// The link's rate in mean-size packets per second.
    ptc: f64,
    mean: f64,
    avg: f64,
    /// Arrivals (and their bytes) since the last early drop or mark.
    count: u64,
    count_bytes: u64,
    /// The average was at or above min_th at the previous arrival (ns's `old`).
    above: bool,
    /// When a dequeue last found the queue empty (None while busy).
    idle_since: Option<Time>,
    rng: SimRng,
}

impl Red {
    /// The instantaneous queue in the average's unit.
    fn q(&self) -> f64 {
        if self.p.bytes {
            self.fifo.bytes() as f64 / self.mean
        } else {
            self.fifo.len() as f64
        }
    }

    /// FJ93's estimator with ns's idle correction: after m packet times idle, as if m empty
    /// samples had arrived.
    fn update_avg(&mut self, now: Time) {
        let m = match self.idle_since.take() {
            Some(t) => (self.ptc * to_secs(now - t)).floor(),
            None => 0.0,
        };
        self.avg = self.avg * (1.0 - self.p.w_q).powf(m + 1.0) + self.p.w_q * self.q();
    }

    /// The early-drop probability before the count correction.
    fn p_b(&self) -> f64 {
        let RedParams { min_th, max_th, max_p, .. } = self.p;
        let p = if self.avg < max_th {
            max_p * (self.avg - min_th) / (max_th - min_th)
        } else if self.p.gentle {
            max_p + (1.0 - max_p) * (self.avg - max_th) / max_th
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// ns's drop_early: p_b spaced by the count, scaled by size in byte mode, one uniform draw.
    fn drop_early(&mut self, size: u64) -> bool {
        let p = self.p_b();
        let c = if self.p.bytes { (self.count_bytes as f64 / self.mean).floor() } else { self.count as f64 };
        let mut pa = if self.p.wait {
            match c * p {
                x if x < 1.0 => 0.0,
                x if x < 2.0 => p / (2.0 - x),
                _ => 1.0,
            }
        } else if c * p < 1.0 {
            p / (1.0 - c * p)
        } else {
            1.0
        };
        if self.p.bytes && pa < 1.0 {
            pa = (pa * size as f64 / self.mean).min(1.0);
        }
        self.rng.random::<f64>() <= pa
    }
}

impl QueueDiscipline for Red {
    fn enqueue(&mut self, mut pkt: Packet, now: Time, out: &mut Verdicts) -> bool {
        self.update_avg(now);
        self.count += 1;
        self.count_bytes += pkt.bytes as u64;
        if self.avg >= self.p.min_th && self.fifo.len() > 1 {
            let forced = self.avg >= self.p.max_th * if self.p.gentle { 2.0 } else { 1.0 };
            if forced {
                self.count = 0;
                self.count_bytes = 0;
                out.dropped.push((pkt, Cause::Early));
                return false;
            }
            if !self.above {
                self.above = true;
                self.count = 1;
                self.count_bytes = pkt.bytes as u64;
            } else if self.drop_early(pkt.bytes as u64) {
                self.count = 0;
                self.count_bytes = 0;
                if !(self.p.ecn && pkt.mark_ce()) {
                    out.dropped.push((pkt, Cause::Early));
                    return false;
                }
                out.marks += 1;
            }
        } else {
            self.above = false;
        }
        if self.fifo.full(self.limit, &pkt) {
            out.dropped.push((pkt, Cause::Overflow));
            return false;
        }
        self.fifo.push(pkt);
        true
    }

    fn dequeue(&mut self, now: Time, _: &mut Verdicts) -> Option<Packet> {
        let p = self.fifo.pop();
        if p.is_none() {
            self.idle_since = Some(now);
        }
        p
    }

    super::fifo_methods!();

    fn state(&self) -> QueueState {
        QueueState { red_avg: Some(self.avg), ..QueueState::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn red(p: RedParams) -> Red {
        let link = LinkInfo { rate_bps: 8e6, pkt_bytes: 1000, seed: 1, link: 0 };
        let Discipline::Red(q) = make(&p.value(), Limit::Packets(10_000), &link) else { unreachable!() };
        q
    }

    fn params() -> RedParams {
        RedParams::parse(&Value::map(vec![])).unwrap()
    }

    fn pkt() -> Packet {
        Packet::new(Kind::Data, 0, 1000, 0)
    }

    #[test]
    fn the_average_is_an_ewma_of_the_queue_at_each_arrival() {
        let mut q = red(RedParams { min_th: 1e6, max_th: 2e6, ..params() });
        let mut out = Verdicts::default();
        let mut avg = 0.0;
        for n in 0..50u64 {
            q.enqueue(pkt(), 0, &mut out); // the queue before this arrival held n packets
            avg = avg * (1.0 - 0.002) + 0.002 * n as f64;
            assert!((q.avg - avg).abs() < 1e-12);
        }
        // 1,000 packet times idle (1 ms each at 8 Mb/s): decayed as by 1,000 empty samples.
        while q.dequeue(5_000_000_000, &mut out).is_some() {}
        q.dequeue(5_000_000_000, &mut out);
        q.enqueue(pkt(), 5_000_000_000 + 1_000_000_000_000, &mut out);
        assert!((q.avg - avg * 0.998f64.powi(1001)).abs() < 1e-12);
    }

    #[test]
    fn the_drop_probability_follows_the_gentle_ramp() {
        let mut q = red(params());
        for (avg, want) in [(5.0, 0.0), (10.0, 0.01), (15.0, 0.02), (22.5, 0.51), (29.0, 0.02 + 0.98 * 14.0 / 15.0)] {
            q.avg = avg;
            assert!((q.p_b() - want).abs() < 1e-12, "avg {avg}");
        }
        let mut hard = red(RedParams { gentle: false, ..params() });
        hard.avg = 15.0;
        assert_eq!(hard.p_b(), 1.0);
    }

    /// With wait, no drop comes within 1/p arrivals of the last, and all come within 2/p.
    #[test]
    fn count_spacing_keeps_drops_between_one_and_two_over_p() {
        let mut q = red(RedParams { w_q: 1.0, ..params() });
        let mut out = Verdicts::default();
        for _ in 0..10 {
            q.enqueue(pkt(), 0, &mut out); // the average follows the queue exactly (w_q = 1)
        }
        // Hold the queue at 10 waiting (avg 10: p_b = 0.01): each arrival then a departure.
        let mut since = Vec::new();
        let mut n = 0;
        for _ in 0..20_000 {
            n += 1;
            if !q.enqueue(pkt(), 0, &mut out) {
                since.push(n);
                n = 0;
            } else {
                q.dequeue(0, &mut out);
            }
        }
        assert!(since.len() > 50);
        assert!(since[1..].iter().all(|&g| (100..=200).contains(&g)), "{since:?}");
        assert!(out.dropped.iter().all(|d| d.1 == Cause::Early));
    }

    #[test]
    fn rejects_min_th_at_or_above_max_th() {
        let v = Value::map(vec![("min_th", Value::Float(15.0)), ("max_th", Value::Float(15.0))]);
        assert_eq!(normalize(&v).unwrap_err().field, "max_th");
    }
}

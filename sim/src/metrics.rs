//! Metrics accumulated in place: running counters (snapshotted at the end of warm-up and at each
//! sample tick, so any interval is a difference), a time-weighted queue-length integral with
//! its distribution, and a queueing-delay histogram. Nothing is logged per event.

use crate::time::Time;
use hdrhistogram::Histogram;

/// Running totals at a link.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkCounters {
    pub arrivals: u64,
    /// Bits of the arrivals (ABS's S1 + S2).
    pub arrival_bits: u64,
    /// Every drop; `early_drops` of them by the discipline's choice, the rest at the hard limit.
    pub drops: u64,
    pub early_drops: u64,
    /// Packets marked CE.
    pub marks: u64,
    pub tx_pkts: u64,
    pub tx_bits: u64,
    /// Time spent transmitting (ps). Utilization is busy time over elapsed time, so that a
    /// transmission straddling the end of warm-up or of a sample interval is split between the
    /// two, and no interval can exceed 1 (crediting a packet's bits when it finishes gave 80 for
    /// a 10 ms sample at 10 kb/s).
    pub busy_ps: u64,
}

impl LinkCounters {
    pub fn since(&self, earlier: &LinkCounters) -> LinkCounters {
        LinkCounters {
            arrivals: self.arrivals - earlier.arrivals,
            arrival_bits: self.arrival_bits - earlier.arrival_bits,
            drops: self.drops - earlier.drops,
            early_drops: self.early_drops - earlier.early_drops,
            marks: self.marks - earlier.marks,
            tx_pkts: self.tx_pkts - earlier.tx_pkts,
            tx_bits: self.tx_bits - earlier.tx_bits,
            busy_ps: self.busy_ps - earlier.busy_ps,
        }
    }
}

/// Time-weighted queue length: over the measurement window (mean and distribution) and over
/// the current sample interval (mean and max).
pub struct QueueMonitor {
    len: usize,
    last: Time,
    warm: Time,
    window_area: u128,
    /// Picoseconds spent at each queue length during the window.
    window_hist: Vec<u64>,
    sample_area: u128,
    sample_max: usize,
}

impl QueueMonitor {
    pub fn new(warm: Time) -> Self {
        Self { len: 0, last: 0, warm, window_area: 0, window_hist: vec![0], sample_area: 0, sample_max: 0 }
    }

    pub fn integrate(&mut self, now: Time) {
        let dt = (now - self.last) as u128;
        self.sample_area += self.len as u128 * dt;
        if now > self.warm {
            let d = now - self.last.max(self.warm);
            self.window_area += self.len as u128 * d as u128;
            if self.window_hist.len() <= self.len {
                self.window_hist.resize(self.len + 1, 0);
            }
            self.window_hist[self.len] += d;
        }
        self.last = now;
    }

    #[inline]
    pub fn set_len(&mut self, now: Time, len: usize) {
        self.integrate(now);
        self.len = len;
        if len > self.sample_max {
            self.sample_max = len;
        }
    }

    /// Closes a sample interval of `dt` ps: (mean, max) queue length over it.
    pub fn take_sample(&mut self, now: Time, dt: Time) -> (f64, usize) {
        self.integrate(now);
        let mean = if dt > 0 { self.sample_area as f64 / dt as f64 } else { self.len as f64 };
        let max = self.sample_max;
        self.sample_area = 0;
        self.sample_max = self.len;
        (mean, max)
    }

    pub fn window_mean(&self, window: Time) -> f64 {
        self.window_area as f64 / window as f64
    }

    /// Smallest queue length q such that the queue was at most q for `p` of the window's time.
    pub fn window_quantile(&self, p: f64) -> f64 {
        let total: u64 = self.window_hist.iter().sum();
        if total == 0 {
            return 0.0;
        }
        let target = p * total as f64;
        let mut acc = 0u64;
        for (len, &t) in self.window_hist.iter().enumerate() {
            acc += t;
            if acc as f64 >= target {
                return len as f64;
            }
        }
        (self.window_hist.len() - 1) as f64
    }
}

pub fn new_delay_histogram() -> Histogram<u64> {
    // Nanoseconds with 3 significant digits: 0.1% precision at any scale.
    Histogram::new(3).expect("valid histogram precision")
}

/// Jain's fairness index (sum x)^2 / (n sum x^2); 1 for perfectly equal shares; None without
/// flows or without any goodput.
/// The p-quantile (nearest rank) of samples; None if there are none.
pub fn quantile(samples: &[f32], p: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut v = samples.to_vec();
    let k = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    let (_, x, _) = v.select_nth_unstable_by(k, f32::total_cmp);
    Some(*x as f64)
}

pub fn jain(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 {
        return None;
    }
    Some(s * s / (n * s2))
}

/// What is measured at each link of the topology: counters (snapshotted at the end of warm-up and
/// at each sample), the queue, the queueing delay, and the data delivered to the flows crossing it.
pub struct LinkStats {
    pub ctr: LinkCounters,
    pub at_warm: LinkCounters,
    pub at_sample: LinkCounters,
    pub queue: QueueMonitor,
    pub delay_ns: Histogram<u64>,
    /// Every packet's waiting time summed, and the packets (warm-up included): the precision
    /// series' mean delay per sample interval.
    pub delay_sum_ns: u64,
    pub delay_n: u64,
    /// What `World::link_delivered` was at the end of warm-up and at the last sample.
    pub delivered_at_warm: u64,
    pub delivered_at_sample: u64,
    /// Start of the transmission in progress.
    tx_since: Option<Time>,
}

impl LinkStats {
    pub fn new(warm: Time) -> Self {
        Self {
            ctr: LinkCounters::default(),
            at_warm: LinkCounters::default(),
            at_sample: LinkCounters::default(),
            queue: QueueMonitor::new(warm),
            delay_ns: new_delay_histogram(),
            delay_sum_ns: 0,
            delay_n: 0,
            delivered_at_warm: 0,
            delivered_at_sample: 0,
            tx_since: None,
        }
    }

    /// The link starts transmitting a packet.
    #[inline]
    pub fn start_tx(&mut self, now: Time) {
        self.tx_since = Some(now);
    }

    /// The link finished transmitting a packet of `bits`; `next` if it starts another at once.
    #[inline]
    pub fn end_tx(&mut self, now: Time, bits: u64, next: bool) {
        self.ctr.tx_pkts += 1;
        self.ctr.tx_bits += bits;
        self.ctr.busy_ps += now - self.tx_since.expect("a transmission in progress");
        self.tx_since = next.then_some(now);
    }

    /// The counters at `now`, with the transmission in progress credited up to `now`.
    pub fn counters_at(&self, now: Time) -> LinkCounters {
        let mut c = self.ctr;
        c.busy_ps += self.tx_since.map_or(0, |t| now - t);
        c
    }
}

/// Busy time over elapsed time.
/// a / b, or 0 when b is 0 (a loss rate with nothing offered is 0).
pub fn ratio(a: u64, b: u64) -> f64 {
    if b > 0 {
        a as f64 / b as f64
    } else {
        0.0
    }
}

pub fn utilization(c: &LinkCounters, elapsed: Time) -> f64 {
    c.busy_ps as f64 / elapsed as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_mean_is_time_weighted_and_window_only() {
        let mut q = QueueMonitor::new(10);
        q.set_len(5, 4); // before the window: ignored by the window mean
        q.set_len(20, 2); // length 4 during [10, 20)
        q.integrate(30); // length 2 during [20, 30)
        assert_eq!(q.window_mean(20), 3.0);
        assert_eq!(q.window_quantile(0.5), 2.0);
        assert_eq!(q.window_quantile(0.99), 4.0);
    }

    #[test]
    fn busy_time_is_split_at_a_snapshot() {
        let mut s = LinkStats::new(0);
        s.start_tx(0);
        let mid = s.counters_at(60); // a snapshot in the middle of a 100 ps transmission
        s.end_tx(100, 800, true);
        let end = s.counters_at(150);
        assert_eq!(utilization(&mid, 60), 1.0);
        assert_eq!(utilization(&end.since(&mid), 90), 1.0);
        assert_eq!((end.tx_pkts, end.busy_ps), (1, 150));
    }

    #[test]
    fn jain_index() {
        assert!((jain(&[1.0, 1.0, 1.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0]).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
    }
}

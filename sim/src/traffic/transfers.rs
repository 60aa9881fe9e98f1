//! Finite TCP transfers on reusable connection slots after the long flows, and their completion
//! times. Details: docs/engine.md, `traffic/transfers.rs`.

use crate::metrics::new_delay_histogram;
use crate::time::{to_secs, Time};
use hdrhistogram::Histogram;

/// Completion-time size buckets (bytes): < 10 KB, 10-100 KB, 100 KB-1 MB, > 1 MB.
pub const BUCKET_BOUNDS: [f64; 3] = [10e3, 100e3, 1e6];

/// Completion times of one generator's transfers that started in the measured window.
pub struct FctStats {
    pub started: u64,
    pub done: u64,
    sum_s: f64,
    hist_ns: Histogram<u64>,
    /// Per size bucket: (done, sum of completion times in s).
    buckets: [(u64, f64); 4],
    /// Packets of the transfers started in the window (their offered load), and their sizes.
    pub started_pkts: u64,
    sizes_pkts: Histogram<u64>,
}

impl Default for FctStats {
    fn default() -> Self {
        Self {
            started: 0,
            done: 0,
            sum_s: 0.0,
            hist_ns: new_delay_histogram(),
            buckets: [(0, 0.0); 4],
            started_pkts: 0,
            sizes_pkts: new_delay_histogram(),
        }
    }
}

impl FctStats {
    fn record(&mut self, fct: Time, bytes: f64) {
        self.done += 1;
        let s = to_secs(fct);
        self.sum_s += s;
        self.hist_ns.record(fct / 1000).expect("histogram auto-resizes");
        let b = BUCKET_BOUNDS.iter().take_while(|&&x| bytes >= x).count();
        self.buckets[b].0 += 1;
        self.buckets[b].1 += s;
    }

    /// Adds another generator's figures (for a class of several generators).
    pub fn merge(&mut self, other: &FctStats) {
        self.started += other.started;
        self.done += other.done;
        self.sum_s += other.sum_s;
        self.hist_ns.add(&other.hist_ns).expect("histograms auto-resize");
        for (b, o) in self.buckets.iter_mut().zip(other.buckets) {
            b.0 += o.0;
            b.1 += o.1;
        }
        self.started_pkts += other.started_pkts;
        self.sizes_pkts.add(&other.sizes_pkts).expect("histograms auto-resize");
    }

    /// A quantile of the sizes (packets) of the transfers started in the window; None if none.
    pub fn size_quantile_pkts(&self, q: f64) -> Option<f64> {
        (self.started > 0).then(|| self.sizes_pkts.value_at_quantile(q) as f64)
    }

    /// Mean completion time (ms); None if none completed.
    pub fn mean_ms(&self) -> Option<f64> {
        (self.done > 0).then(|| self.sum_s / self.done as f64 * 1000.0)
    }

    /// A quantile of the completion times (ms); None if none completed.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        (self.done > 0).then(|| self.hist_ns.value_at_quantile(q) as f64 / 1e6)
    }

    /// Mean completion time (ms) per size bucket; None where none completed.
    pub fn bucket_mean_ms(&self) -> [Option<f64>; 4] {
        self.buckets.map(|(n, s)| (n > 0).then(|| s / n as f64 * 1000.0))
    }
}

/// One transfer's book-keeping.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    started: Time,
    /// The forward propagation delay the world folds into the return path: half the flow's RTT
    /// less the delay of the route's links, which the packets cross for real.
    one_way: Time,
    /// Data packets and ACKs of this transfer still in queues, links or the return path.
    in_network: u64,
    size_pkts: u64,
    /// The transfer's size as drawn (bytes; its packets carry at least this).
    size_bytes: f64,
    generator: u32,
    pool: u32,
    /// The receiver has every packet (its completion time is recorded, once).
    delivered: bool,
    busy: bool,
}

/// A slot given to a new transfer.
pub struct Placed {
    pub conn: usize,
    /// Whether `conn` is a new connection index (the world must grow its per-connection state).
    pub fresh: bool,
}

pub struct Transfers {
    /// Slot k is the world's connection `first + k`.
    first: usize,
    slots: Vec<Slot>,
    /// Free slots per pool: a slot is reused only by a transfer of its pool (the same route and
    /// TCP, so that its connection's links fit).
    free: Vec<Vec<usize>>,
    warm: Time,
    /// Per generator (flat short flows first if any, then traffic groups in order).
    pub stats: Vec<FctStats>,
    /// All generators together.
    pub all: FctStats,
}

impl Transfers {
    /// `first` is the first connection index after the long flows.
    pub fn new(first: usize, generators: usize, warm: Time) -> Self {
        Self {
            first,
            slots: Vec::new(),
            free: Vec::new(),
            warm,
            stats: (0..generators).map(|_| FctStats::default()).collect(),
            all: FctStats::default(),
        }
    }

    /// A transfer of generator `generator` starts now: picks its slot (the most recently freed,
    /// else a new one).
    pub fn place(
        &mut self,
        now: Time,
        pool: usize,
        generator: usize,
        size_pkts: i64,
        size_bytes: f64,
        one_way: Time,
    ) -> Placed {
        if self.free.len() <= pool {
            self.free.resize_with(pool + 1, Vec::new);
        }
        let (k, fresh) = match self.free[pool].pop() {
            Some(k) => (k, false),
            None => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1, true)
            }
        };
        self.slots[k] = Slot {
            started: now,
            one_way,
            in_network: 0,
            size_pkts: size_pkts as u64,
            size_bytes,
            generator: generator as u32,
            pool: pool as u32,
            delivered: false,
            busy: true,
        };
        if now >= self.warm {
            for s in [&mut self.stats[generator], &mut self.all] {
                s.started += 1;
                s.started_pkts += size_pkts as u64;
                s.sizes_pkts.record(size_pkts as u64).expect("histogram auto-resizes");
            }
        }
        Placed { conn: self.first + k, fresh }
    }

    fn slot(&mut self, conn: usize) -> Option<&mut Slot> {
        conn.checked_sub(self.first).and_then(move |k| self.slots.get_mut(k))
    }

    pub fn is_transfer(&self, conn: usize) -> bool {
        conn >= self.first
    }

    /// The generator of the transfer on `conn` (a transfer's connection).
    pub fn generator(&self, conn: usize) -> usize {
        self.slots[conn - self.first].generator as usize
    }

    /// A data packet or ACK of `conn` entered the network.
    #[inline]
    pub fn entered(&mut self, conn: usize) {
        if let Some(s) = self.slot(conn) {
            s.in_network += 1;
        }
    }

    /// A data packet or ACK of `conn` left the network (delivered, dropped, or ACK received).
    #[inline]
    pub fn left(&mut self, conn: usize) {
        if let Some(s) = self.slot(conn) {
            s.in_network -= 1;
        }
    }

    /// The receiver of `conn` now holds `delivered_pkts` in order: records the completion time
    /// (first packet sent to last packet received) when that is the whole transfer. The world
    /// puts the propagation delay not on the route's links on the return path; on a path with
    /// equal delays both ways the last packet reaches the receiver half an RTT after it left,
    /// so the part of that half not crossed for real is added.
    pub fn on_delivered(&mut self, conn: usize, now: Time, delivered_pkts: u64) {
        let warm = self.warm;
        let Some(s) = self.slot(conn) else { return };
        if s.delivered || delivered_pkts < s.size_pkts {
            return;
        }
        s.delivered = true;
        let (started, fct, bytes, g) = (s.started, now + s.one_way - s.started, s.size_bytes, s.generator as usize);
        if started >= warm {
            self.stats[g].record(fct, bytes);
            self.all.record(fct, bytes);
        }
    }

    /// Frees `conn`'s slot if its transfer is over (`sender_finished`) and nothing of it is left
    /// in the network.
    pub fn release_if_done(&mut self, conn: usize, sender_finished: bool) {
        let Some(k) = conn.checked_sub(self.first) else { return };
        let s = &mut self.slots[k];
        if s.busy && sender_finished && s.in_network == 0 {
            s.busy = false;
            self.free[s.pool as usize].push(k);
        }
    }

    /// Connection `conn` holds a transfer that has not completed.
    pub fn in_progress(&self, conn: usize) -> bool {
        let s = &self.slots[conn - self.first];
        s.busy && !s.delivered
    }

    /// Transfers in progress.
    pub fn active(&self) -> usize {
        self.slots.len() - self.free.iter().map(Vec::len).sum::<usize>()
    }

    /// Connection slots ever used (the peak number of concurrent transfers).
    pub fn slots_used(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_only_when_empty_and_finished() {
        let mut t = Transfers::new(5, 1, 0);
        let a = t.place(0, 0, 0, 2, 2000.0, 50_000_000_000);
        assert_eq!((a.conn, a.fresh), (5, true));
        t.entered(5);
        t.on_delivered(5, 10, 2);
        t.release_if_done(5, true); // a packet is still in the network
        let b = t.place(20, 0, 0, 2, 2000.0, 0);
        assert_eq!((b.conn, b.fresh), (6, true));
        t.left(5);
        t.release_if_done(5, true);
        let c = t.place(30, 0, 0, 2, 2000.0, 0);
        assert_eq!((c.conn, c.fresh), (5, false), "the emptied slot is reused");
        assert_eq!((t.slots_used(), t.active()), (2, 2));
        assert_eq!(t.stats[0].done, 1);
        let mean = t.stats[0].mean_ms().unwrap();
        assert!((mean - 50.0).abs() < 1e-6, "10 ps + half the 100 ms RTT: {mean}");
        assert_eq!(t.stats[0].bucket_mean_ms()[0], Some(mean), "2 KB: the < 10 KB bucket");
    }
}

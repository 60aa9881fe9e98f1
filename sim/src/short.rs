//! Short TCP flows: transfers of a fixed number of packets arriving as a Poisson process at the
//! rate that offers `short_mbps` of load (the short-flow traffic of Appenzeller et al., Figs.
//! 11-13). Each is a whole TCP connection of the run's variant (slow start from the initial
//! window, loss recovery, the initial RTO), placed on a connection slot after the long flows.
//!
//! This module keeps the arrival process, which slots are free, and the completion times; the
//! world builds the sender and receiver of each slot and moves the packets. A slot is reused only
//! when its previous flow is finished and nothing of it (data or ACK) is left in the network, so
//! a late packet can never reach the next flow. Pending timer events of the old flow are harmless:
//! every timer event re-checks the current deadline of whoever holds the slot.

use crate::metrics::new_delay_histogram;
use crate::rng::{stream, SimRng, Stream};
use crate::time::{from_secs, Time};
use hdrhistogram::Histogram;
use rand::Rng;
use rand_distr::{Distribution, Exp1};

/// One short flow's book-keeping.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    started: Time,
    /// The forward propagation delay the world folds into the return path: half the flow's RTT
    /// less the delay of the route's links, which the packets cross for real.
    one_way: Time,
    /// Data packets and ACKs of this flow still in queues, links or the return path.
    in_network: u64,
    /// The receiver has every packet (its completion time is recorded, once).
    delivered: bool,
    busy: bool,
}

pub struct ShortFlows {
    pub size_pkts: i64,
    mean_gap_s: f64,
    rtt_ms: f64,
    rtt_spread_ms: f64,
    rng: SimRng,
    seed: u64,
    /// One-way delay of the links of the flows' route.
    route_delay: Time,
    /// Arrivals so far (the next flow's index, which names its random stream).
    arrived: u64,
    /// Slot k here is the world's connection `first + k`.
    first: usize,
    slots: Vec<Slot>,
    free: Vec<usize>,
    warm: Time,
    /// Flows that started in the measurement window, and those of them that completed.
    pub measured_started: u64,
    pub measured_done: u64,
    fct_sum_s: f64,
    fct_ns: Histogram<u64>,
}

/// A new flow for the world to build on connection `conn`.
pub struct NewFlow {
    pub conn: usize,
    /// Whether `conn` is a new connection index (the world must grow its per-connection state).
    pub fresh: bool,
    pub rtt_s: f64,
    pub sender_rng: SimRng,
}

impl ShortFlows {
    /// `first` is the first connection index after the long flows.
    #[allow(clippy::too_many_arguments)]
    pub fn new(short_mbps: f64, size_pkts: i64, pkt_bytes: u16, rtt_ms: f64, rtt_spread_ms: f64, seed: u64,
               first: usize, warm: Time, route_delay: Time) -> Self {
        let flow_bits = size_pkts as f64 * pkt_bytes as f64 * 8.0;
        Self {
            size_pkts,
            mean_gap_s: flow_bits / (short_mbps * 1e6),
            rtt_ms,
            rtt_spread_ms,
            rng: stream(seed, Stream::ShortArrivals, 0),
            seed,
            route_delay,
            arrived: 0,
            first,
            slots: Vec::new(),
            free: Vec::new(),
            warm,
            measured_started: 0,
            measured_done: 0,
            fct_sum_s: 0.0,
            fct_ns: new_delay_histogram(),
        }
    }

    /// Time to the next arrival.
    pub fn next_gap(&mut self) -> Time {
        let e: f64 = Exp1.sample(&mut self.rng);
        from_secs(e * self.mean_gap_s).max(1)
    }

    /// A flow arrives now: picks its slot and RTT (uniform in rtt_ms +/- rtt_spread_ms / 2, as
    /// the long flows).
    pub fn arrive(&mut self, now: Time) -> NewFlow {
        let u: f64 = self.rng.random();
        let rtt_s = (self.rtt_ms + (u - 0.5) * self.rtt_spread_ms) / 1000.0;
        let sender_rng = stream(self.seed, Stream::ShortSender, self.arrived);
        self.arrived += 1;
        let (k, fresh) = match self.free.pop() {
            Some(k) => (k, false),
            None => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1, true)
            }
        };
        let one_way = from_secs(rtt_s / 2.0).saturating_sub(self.route_delay);
        self.slots[k] = Slot { started: now, one_way, in_network: 0, delivered: false, busy: true };
        if now >= self.warm {
            self.measured_started += 1;
        }
        NewFlow { conn: self.first + k, fresh, rtt_s, sender_rng }
    }

    /// The slot of connection `conn`, if it is a short flow's.
    fn slot(&mut self, conn: usize) -> Option<&mut Slot> {
        conn.checked_sub(self.first).and_then(move |k| self.slots.get_mut(k))
    }

    pub fn is_short(&self, conn: usize) -> bool {
        conn >= self.first
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
        let (size, warm) = (self.size_pkts as u64, self.warm);
        let Some(s) = self.slot(conn) else { return };
        if s.delivered || delivered_pkts < size {
            return;
        }
        s.delivered = true;
        let (started, fct) = (s.started, now + s.one_way - s.started);
        if started >= warm {
            self.measured_done += 1;
            self.fct_sum_s += crate::time::to_secs(fct);
            self.fct_ns.record(fct / 1000).expect("histogram auto-resizes");
        }
    }

    /// Frees `conn`'s slot if its flow is over (`sender_finished`) and nothing of it is left in
    /// the network.
    pub fn release_if_done(&mut self, conn: usize, sender_finished: bool) {
        let Some(k) = conn.checked_sub(self.first) else { return };
        let s = &mut self.slots[k];
        if s.busy && sender_finished && s.in_network == 0 {
            s.busy = false;
            self.free.push(k);
        }
    }

    /// Mean and 99th-percentile completion time (ms) of the measured flows that completed.
    pub fn fct_ms(&self) -> (Option<f64>, Option<f64>) {
        if self.measured_done == 0 {
            return (None, None);
        }
        (Some(self.fct_sum_s / self.measured_done as f64 * 1000.0), Some(self.fct_ns.value_at_quantile(0.99) as f64 / 1e6))
    }

    /// Connection slots ever used (the peak number of concurrent short flows).
    pub fn slots_used(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_only_when_empty_and_finished() {
        let mut s = ShortFlows::new(10.0, 2, 1000, 100.0, 0.0, 1, 5, 0, 0);
        let a = s.arrive(0);
        assert_eq!((a.conn, a.fresh), (5, true));
        s.entered(5);
        s.on_delivered(5, 10, 2);
        s.release_if_done(5, true); // a packet is still in the network
        let b = s.arrive(20);
        assert_eq!((b.conn, b.fresh), (6, true));
        s.left(5);
        s.release_if_done(5, true);
        let c = s.arrive(30);
        assert_eq!((c.conn, c.fresh), (5, false), "the emptied slot is reused");
        assert_eq!(s.slots_used(), 2);
        assert_eq!(s.measured_done, 1);
        let afct = s.fct_ms().0.unwrap();
        assert!((afct - 50.0).abs() < 1e-6, "10 ps + half the 100 ms RTT: {afct}");
    }

    #[test]
    fn arrival_rate_offers_the_configured_load() {
        // 8 Mb/s of 10-packet, 1000-byte flows = 100 flows/s.
        let mut s = ShortFlows::new(8.0, 10, 1000, 100.0, 0.0, 3, 0, 0, 0);
        let n = 20_000;
        let total: Time = (0..n).map(|_| s.next_gap()).sum();
        let rate = n as f64 / crate::time::to_secs(total);
        assert!((rate - 100.0).abs() < 3.0, "rate {rate}");
    }
}

//! Drop-tail FIFO. As in ns-2's DropTail, the limit counts packets *waiting*, not the one being
//! serialised by the link, so `buffer_pkts = 0` drops every packet that finds the link busy.
//! The limit can be changed during a run (adaptive buffer sizing); shrinking it never drops
//! packets already queued, it only refuses arrivals until the queue has drained below it.

use crate::packet::Packet;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

pub struct DropTailQueue {
    fifo: VecDeque<Packet>,
    limit: Limit,
    bytes: u64,
}

impl DropTailQueue {
    pub fn new(limit: Limit) -> Self {
        Self { fifo: VecDeque::new(), limit, bytes: 0 }
    }

    /// Appends `pkt` if it fits; returns false (a tail drop) otherwise.
    pub fn offer(&mut self, pkt: Packet) -> bool {
        let fits = match self.limit {
            Limit::Packets(n) => (self.fifo.len() as u64) < n,
            Limit::Bytes(b) => self.bytes + pkt.bytes as u64 <= b,
        };
        if fits {
            self.bytes += pkt.bytes as u64;
            self.fifo.push_back(pkt);
        }
        fits
    }

    pub fn pop(&mut self) -> Option<Packet> {
        let p = self.fifo.pop_front()?;
        self.bytes -= p.bytes as u64;
        Some(p)
    }

    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    pub fn limit(&self) -> Limit {
        self.limit
    }

    pub fn set_limit(&mut self, limit: Limit) {
        self.limit = limit;
    }

    /// The limit expressed in packets (bytes limits are divided by `pkt_bytes`), for reporting.
    pub fn capacity_pkts(&self, pkt_bytes: u32) -> f64 {
        match self.limit {
            Limit::Packets(n) => n as f64,
            Limit::Bytes(b) => b as f64 / pkt_bytes as f64,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.fifo.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn pkt(bytes: u32) -> Packet {
        Packet { kind: Kind::Data, flow: 0, bytes, seq: 0, enqueued_at: 0 }
    }

    #[test]
    fn packet_limit_drops_at_tail() {
        let mut q = DropTailQueue::new(Limit::Packets(2));
        assert!(q.offer(pkt(1000)));
        assert!(q.offer(pkt(1000)));
        assert!(!q.offer(pkt(1000)));
        assert_eq!(q.len(), 2);
        q.pop();
        assert!(q.offer(pkt(1000)));
    }

    #[test]
    fn zero_limit_holds_nothing() {
        let mut q = DropTailQueue::new(Limit::Packets(0));
        assert!(!q.offer(pkt(40)));
    }

    #[test]
    fn byte_limit_counts_bytes() {
        let mut q = DropTailQueue::new(Limit::Bytes(2500));
        assert!(q.offer(pkt(1000)));
        assert!(q.offer(pkt(1000)));
        assert!(!q.offer(pkt(1000)));
        assert!(q.offer(pkt(500)));
    }

    #[test]
    fn shrinking_limit_keeps_queued_packets() {
        let mut q = DropTailQueue::new(Limit::Packets(5));
        for _ in 0..5 {
            assert!(q.offer(pkt(1000)));
        }
        q.set_limit(Limit::Packets(2));
        assert_eq!(q.len(), 5);
        assert!(!q.offer(pkt(1000)));
        q.pop();
        q.pop();
        q.pop();
        assert!(!q.offer(pkt(1000)));
        q.pop();
        assert!(q.offer(pkt(1000)));
    }
}

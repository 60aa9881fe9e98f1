//! Queue disciplines (`QueueDiscipline`): what a link's buffer admits and in which order it serves.
//! Details: docs/engine.md, `queue.rs`.

use crate::packet::Packet;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

/// A link's buffer.
pub trait QueueDiscipline: Send {
    /// Admits `pkt` (true) or drops it (false).
    fn offer(&mut self, pkt: Packet) -> bool;
    /// The next packet to transmit.
    fn pop(&mut self) -> Option<Packet>;
    /// Packets waiting.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn limit(&self) -> Limit;
    /// Changes the capacity (a buffer controller); never drops what is queued.
    fn set_limit(&mut self, limit: Limit);
    /// The packets waiting, in service order.
    fn packets(&self) -> Box<dyn Iterator<Item = &Packet> + '_>;

    /// The limit expressed in packets (bytes limits are divided by `pkt_bytes`), for reporting.
    fn capacity_pkts(&self, pkt_bytes: u32) -> f64 {
        match self.limit() {
            Limit::Packets(n) => n as f64,
            Limit::Bytes(b) => b as f64 / pkt_bytes as f64,
        }
    }
}

/// The disciplines a link can have. A queue operation is on every packet's path, so links hold
/// this enum (static dispatch, inlined) rather than a boxed trait object: a new discipline is its
/// file, implementing `QueueDiscipline`, and one variant here.
pub enum Discipline {
    DropTail(DropTailQueue),
}

macro_rules! each {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            Discipline::DropTail($q) => $e,
        }
    };
}

impl QueueDiscipline for Discipline {
    #[inline]
    fn offer(&mut self, pkt: Packet) -> bool {
        each!(self, q => q.offer(pkt))
    }
    #[inline]
    fn pop(&mut self) -> Option<Packet> {
        each!(self, q => q.pop())
    }
    #[inline]
    fn len(&self) -> usize {
        each!(self, q => q.len())
    }
    fn limit(&self) -> Limit {
        each!(self, q => q.limit())
    }
    fn set_limit(&mut self, limit: Limit) {
        each!(self, q => q.set_limit(limit))
    }
    fn packets(&self) -> Box<dyn Iterator<Item = &Packet> + '_> {
        each!(self, q => q.packets())
    }
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
}

impl QueueDiscipline for DropTailQueue {
    /// Appends `pkt` if it fits; returns false (a tail drop) otherwise.
    #[inline]
    fn offer(&mut self, pkt: Packet) -> bool {
        let fits = match self.limit {
            Limit::Packets(n) => (self.fifo.len() as u64) + 1 < n,
            Limit::Bytes(b) => self.bytes + (pkt.bytes as u64) < b,
        };
        if fits {
            self.bytes += pkt.bytes as u64;
            self.fifo.push_back(pkt);
        }
        fits
    }

    #[inline]
    fn pop(&mut self) -> Option<Packet> {
        let p = self.fifo.pop_front()?;
        self.bytes -= p.bytes as u64;
        Some(p)
    }

    #[inline]
    fn len(&self) -> usize {
        self.fifo.len()
    }

    fn limit(&self) -> Limit {
        self.limit
    }

    fn set_limit(&mut self, limit: Limit) {
        self.limit = limit;
    }

    fn packets(&self) -> Box<dyn Iterator<Item = &Packet> + '_> {
        Box::new(self.fifo.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn pkt(bytes: u16) -> Packet {
        Packet::new(Kind::Data, 0, bytes, 0)
    }

    /// ns-2's `queue-limit 3`: two packets wait (the third of the link's three is in service).
    #[test]
    fn packet_limit_counts_the_packet_in_service() {
        let mut q = DropTailQueue::new(Limit::Packets(3));
        assert!(q.offer(pkt(1000)));
        assert!(q.offer(pkt(1000)));
        assert!(!q.offer(pkt(1000)));
        assert_eq!(q.len(), 2);
        q.pop();
        assert!(q.offer(pkt(1000)));
    }

    #[test]
    fn limits_of_zero_and_one_leave_no_waiting_room() {
        for n in [0, 1] {
            let mut q = DropTailQueue::new(Limit::Packets(n));
            assert!(!q.offer(pkt(40)));
        }
    }

    /// ns-2's `queue-in-bytes`: dropped when the queued bytes plus the arrival reach the limit.
    #[test]
    fn byte_limit_counts_bytes() {
        let mut q = DropTailQueue::new(Limit::Bytes(2500));
        assert!(q.offer(pkt(1000)));
        assert!(q.offer(pkt(1000)));
        assert!(!q.offer(pkt(1000)));
        assert!(!q.offer(pkt(500)), "2000 + 500 reaches the limit");
        assert!(q.offer(pkt(499)));
    }

    #[test]
    fn shrinking_limit_keeps_queued_packets() {
        let mut q = DropTailQueue::new(Limit::Packets(6));
        for _ in 0..5 {
            assert!(q.offer(pkt(1000)));
        }
        q.set_limit(Limit::Packets(3));
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

//! `droptail`: a FIFO that drops the arrival when the buffer is full (ns-2's DropTail, Linux's
//! pfifo / bfifo). The default, and the FIFO the other disciplines queue in. Details:
//! docs/engine.md, `queue/mod.rs`.

use super::{never, Cause, Discipline, Limit, LinkInfo, QueueDiscipline, QueueEntry, Verdicts};
use crate::packet::Packet;
use crate::params::{normalize, Value, VariantDef};
use crate::time::Time;
use std::collections::VecDeque;

crate::params! {
    /// A FIFO up to the hard limit.
    pub struct DropTailParams as "DropTail" {}
}

pub const ENTRY: QueueEntry = QueueEntry {
    def: VariantDef {
        name: "droptail",
        doc: "a FIFO that drops arrivals at the hard limit (buffer_pkts / buffer_bytes)",
        params: DropTailParams::specs,
        keys: DropTailParams::KEYS,
        normalize: normalize::<DropTailParams>,
    },
    marks: never,
    make: |_: &Value, limit: Limit, _: &LinkInfo| Discipline::DropTail(DropTail::new(limit)),
};

/// A FIFO of packets with its byte count.
#[derive(Default)]
pub struct Fifo {
    pkts: VecDeque<Packet>,
    bytes: u64,
}

impl Fifo {
    #[inline(always)]
    pub fn push(&mut self, pkt: Packet) {
        self.bytes += pkt.bytes as u64;
        self.pkts.push_back(pkt);
    }

    /// Whether `pkt` would reach the hard limit `limit`.
    #[inline(always)]
    pub fn full(&self, limit: Limit, pkt: &Packet) -> bool {
        limit.full(self.len(), self.bytes, pkt.bytes as u64)
    }

    /// Appends `pkt` below the hard limit (true), or drops it as an overflow (false).
    #[inline(always)]
    pub fn push_within(&mut self, limit: Limit, pkt: Packet, out: &mut Verdicts) -> bool {
        if self.full(limit, &pkt) {
            out.dropped.push((pkt, Cause::Overflow));
            return false;
        }
        self.push(pkt);
        true
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<Packet> {
        let p = self.pkts.pop_front()?;
        self.bytes -= p.bytes as u64;
        Some(p)
    }

    pub fn front(&self) -> Option<&Packet> {
        self.pkts.front()
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.pkts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    #[inline(always)]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.pkts.iter()
    }
}

pub struct DropTail {
    fifo: Fifo,
    limit: Limit,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        Self { fifo: Fifo::default(), limit }
    }
}

impl QueueDiscipline for DropTail {
    /// Appends `pkt` if it fits; drops it (a tail drop) otherwise.
    #[inline(always)]
    fn enqueue(&mut self, pkt: Packet, _: Time, out: &mut Verdicts) -> bool {
        self.fifo.push_within(self.limit, pkt, out)
    }

    #[inline(always)]
    fn dequeue(&mut self, _: Time, _: &mut Verdicts) -> Option<Packet> {
        self.fifo.pop()
    }

    super::fifo_methods!();
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
        let mut q = DropTail::new(Limit::Packets(3));
        assert!(q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
        assert!(q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
        assert!(!q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
        assert_eq!(q.len(), 2);
        q.dequeue(0, &mut Verdicts::default());
        assert!(q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
    }

    #[test]
    fn limits_of_zero_and_one_leave_no_waiting_room() {
        for n in [0, 1] {
            let mut q = DropTail::new(Limit::Packets(n));
            assert!(!q.enqueue(pkt(40), 0, &mut Verdicts::default()));
        }
    }

    /// ns-2's `queue-in-bytes`: dropped when the queued bytes plus the arrival reach the limit.
    #[test]
    fn byte_limit_counts_bytes() {
        let mut q = DropTail::new(Limit::Bytes(2500));
        assert!(q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
        assert!(q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
        assert!(!q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
        assert!(!q.enqueue(pkt(500), 0, &mut Verdicts::default()), "2000 + 500 reaches the limit");
        assert!(q.enqueue(pkt(499), 0, &mut Verdicts::default()));
    }

    #[test]
    fn shrinking_limit_keeps_queued_packets() {
        let mut q = DropTail::new(Limit::Packets(6));
        for _ in 0..5 {
            assert!(q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
        }
        q.set_limit(Limit::Packets(3));
        assert_eq!(q.len(), 5);
        assert!(!q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
        q.dequeue(0, &mut Verdicts::default());
        q.dequeue(0, &mut Verdicts::default());
        q.dequeue(0, &mut Verdicts::default());
        assert!(!q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
        q.dequeue(0, &mut Verdicts::default());
        assert!(q.enqueue(pkt(1000), 0, &mut Verdicts::default()));
    }
}

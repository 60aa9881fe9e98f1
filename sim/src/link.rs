//! Links: serialisation at a rate from a queue discipline, then a FIFO propagation pipe;
//! a link without a rate is a pure delay. Details: docs/engine.md, `link.rs`.

use crate::packet::Packet;
use crate::queue::{Discipline, QueueDiscipline, Verdicts};
use crate::time::Time;
use std::collections::VecDeque;

/// What happened to a packet offered to a link.
#[derive(Debug, PartialEq)]
pub enum Arrival {
    /// The link was idle: serialisation started and ends at this time.
    Started(Time),
    Queued,
    /// The queue dropped it (`Verdicts` has it, with the cause).
    Dropped,
    /// A pure-delay link took it into its pipe; the time is due when the pipe was empty (the
    /// caller schedules the pipe's exit then).
    Propagating(Option<Time>),
}

/// The serialising part of a link: a queue and the packet being transmitted.
pub struct Serializer {
    ps_per_bit: f64,
    pub queue: Discipline,
    in_service: Option<Packet>,
    /// The queue's drops and marks, until the network reads them (`take_verdicts`).
    verdicts: Verdicts,
}

/// What a link is to the network that holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Link `i` of the topology: measured, reported, traced.
    Net(u32),
    /// A connection's access link (counted together with the others).
    Access,
    /// A pure delay: a connection's return path, or the forward propagation ahead of the route of
    /// a connection that measures one-way delay.
    Return,
}

/// A link is mostly a pure delay (every connection's return path is one), so the serialiser,
/// the bulk of a serialising link, is boxed: a pure-delay link is 56 bytes. The role sits in
/// the link rather than in a table beside it: it is read at every hop, with the link (in the
/// 1000-flow access-link benchmark a separate table cost 3% more L1 misses).
pub struct Link {
    pub role: Role,
    tx: Option<Box<Serializer>>,
    pipe: DelayLine,
}

impl Link {
    /// A link of `rate_bps` with its queue and propagation delay.
    pub fn serial(rate_bps: f64, queue: Discipline, delay: Time, role: Role) -> Self {
        let tx = Serializer { ps_per_bit: 1e12 / rate_bps, queue, in_service: None, verdicts: Verdicts::default() };
        Self { role, tx: Some(Box::new(tx)), pipe: DelayLine::new(delay) }
    }

    /// A pure propagation delay (no rate, no queue).
    pub fn delay_only(delay: Time, role: Role) -> Self {
        Self { role, tx: None, pipe: DelayLine::new(delay) }
    }

    #[inline(always)]
    pub fn delay(&self) -> Time {
        self.pipe.delay
    }

    /// Changes the delay of an empty pure-delay link (a reused short-flow connection).
    pub fn set_delay(&mut self, delay: Time) {
        debug_assert!(self.pipe.is_empty());
        self.pipe = DelayLine::new(delay);
    }

    pub fn tx_time(&self, bytes: u32) -> Time {
        let tx = self.tx.as_ref().expect("tx_time of a pure-delay link");
        (bytes as f64 * 8.0 * tx.ps_per_bit).round() as Time
    }

    /// The queue (None for a pure-delay link).
    pub fn queue(&self) -> Option<&Discipline> {
        self.tx.as_deref().map(|t| &t.queue)
    }

    pub fn queue_mut(&mut self) -> Option<&mut Discipline> {
        self.tx.as_mut().map(|t| &mut t.queue)
    }

    /// Packets waiting in the queue (0 for a pure-delay link).
    #[inline]
    pub fn queue_len(&self) -> usize {
        self.tx.as_ref().map_or(0, |t| t.queue.len())
    }

    #[inline(always)]
    pub fn arrive(&mut self, mut pkt: Packet, now: Time) -> Arrival {
        let Some(tx) = self.tx.as_mut() else {
            return Arrival::Propagating(self.pipe.push(now, pkt));
        };
        pkt.stamp = now;
        if tx.in_service.is_none() {
            let done = now + (pkt.bytes as f64 * 8.0 * tx.ps_per_bit).round() as Time;
            tx.in_service = Some(pkt);
            Arrival::Started(done)
        } else if tx.queue.enqueue(pkt, now, &mut tx.verdicts) {
            Arrival::Queued
        } else {
            Arrival::Dropped
        }
    }

    /// Finishes the packet in service; starts the next one, returning it (so the caller can
    /// measure its queueing delay) with its completion time.
    #[inline(always)]
    pub fn complete(&mut self, now: Time) -> (Packet, Option<(Packet, Time)>) {
        let tx = self.tx.as_mut().expect("completion on a pure-delay link");
        let done = tx.in_service.take().expect("completion without a packet in service");
        let next = tx.queue.dequeue(now, &mut tx.verdicts).map(|p| {
            tx.in_service = Some(p);
            (p, now + (p.bytes as f64 * 8.0 * tx.ps_per_bit).round() as Time)
        });
        (done, next)
    }

    /// Whether the queue dropped or marked since `take_verdicts` last ran.
    #[inline(always)]
    pub fn has_verdicts(&self) -> bool {
        self.tx.as_ref().is_some_and(|t| !t.verdicts.is_empty())
    }

    /// The queue's drops (with their causes) and marks since the last call; hand the emptied
    /// list back with `return_verdicts` to keep its allocation.
    pub fn take_verdicts(&mut self) -> (Vec<(Packet, crate::queue::Cause)>, u64) {
        let v = &mut self.tx.as_mut().expect("a serialising link").verdicts;
        (std::mem::take(&mut v.dropped), std::mem::take(&mut v.marks))
    }

    pub fn return_verdicts(&mut self, mut dropped: Vec<(Packet, crate::queue::Cause)>) {
        dropped.clear();
        self.tx.as_mut().expect("a serialising link").verdicts.dropped = dropped;
    }

    /// A transmitted packet starts propagating (or a packet enters a pure-delay link); returns its
    /// due time if the pipe was empty.
    #[inline(always)]
    pub fn propagate(&mut self, now: Time, pkt: Packet) -> Option<Time> {
        self.pipe.push(now, pkt)
    }

    /// The head packet reaches the far end; returns it and the due time of the next.
    #[inline(always)]
    pub fn exit(&mut self) -> (Packet, Option<Time>) {
        self.pipe.pop()
    }

    /// Every packet on the link: in service, queued, propagating.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        let (service, queued) = match self.tx.as_deref() {
            Some(t) => (t.in_service.as_ref(), Some(t.queue.packets())),
            None => (None, None),
        };
        service.into_iter().chain(queued.into_iter().flatten()).chain(self.pipe.items())
    }

    /// Packets queued or in service (not propagating).
    pub fn held(&self) -> usize {
        self.tx.as_ref().map_or(0, |t| t.queue.len() + t.in_service.is_some() as usize)
    }
}

/// A FIFO of packets with a constant delay: they leave in arrival order, `delay` after they
/// entered. A packet's `stamp` holds its entry time, so an entry is just the packet.
pub struct DelayLine {
    delay: Time,
    fifo: VecDeque<Packet>,
}

impl DelayLine {
    pub fn new(delay: Time) -> Self {
        Self { delay, fifo: VecDeque::new() }
    }

    /// Adds a packet; returns its due time if the line was empty (the caller schedules it).
    #[inline]
    pub fn push(&mut self, now: Time, mut pkt: Packet) -> Option<Time> {
        pkt.stamp = now;
        self.fifo.push_back(pkt);
        (self.fifo.len() == 1).then_some(now + self.delay)
    }

    /// Removes the head packet; returns it and the due time of the new head, if any.
    #[inline]
    pub fn pop(&mut self) -> (Packet, Option<Time>) {
        let pkt = self.fifo.pop_front().expect("delay line event without a packet");
        (pkt, self.fifo.front().map(|p| p.stamp + self.delay))
    }

    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    pub fn items(&self) -> impl Iterator<Item = &Packet> {
        self.fifo.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;
    use crate::queue::{droptail::DropTail, Discipline, Limit};

    fn pkt(bytes: u16) -> Packet {
        Packet::new(Kind::Data, 0, bytes, 0)
    }

    fn link(rate_bps: f64, limit: u64, delay: Time) -> Link {
        Link::serial(rate_bps, Discipline::DropTail(DropTail::new(Limit::Packets(limit))), delay, Role::Net(0))
    }

    #[test]
    fn serialisation_time_is_bits_over_rate() {
        assert_eq!(link(100e6, 10, 0).tx_time(1000), 80_000_000); // 80 us in ps
    }

    #[test]
    fn busy_link_queues_then_drops() {
        // A buffer of 2 (ns-2's queue-limit 2): one packet in service, one waiting.
        let mut l = link(1e6, 2, 0);
        assert_eq!(l.arrive(pkt(125), 0), Arrival::Started(1_000_000_000));
        assert_eq!(l.arrive(pkt(125), 0), Arrival::Queued);
        assert_eq!(l.arrive(pkt(125), 0), Arrival::Dropped);
        assert_eq!(l.held(), 2);
        let (_, next) = l.complete(1_000_000_000);
        assert_eq!(next.map(|n| n.1), Some(2_000_000_000));
    }

    #[test]
    fn transmitted_packets_propagate_in_order() {
        let mut l = link(1e6, 10, 5);
        assert_eq!(l.propagate(10, pkt(1)), Some(15));
        assert_eq!(l.propagate(12, pkt(2)), None);
        assert_eq!(l.packets().count(), 2);
        assert_eq!(l.exit().1, Some(17));
        let mut d = Link::delay_only(7, Role::Return);
        assert_eq!(d.arrive(pkt(40), 3), Arrival::Propagating(Some(10)));
        assert_eq!(d.queue_len(), 0);
    }

    #[test]
    fn delay_line_is_fifo_with_constant_delay() {
        let mut d = DelayLine::new(10);
        assert_eq!(d.push(0, pkt(1)), Some(10));
        assert_eq!(d.push(3, pkt(2)), None);
        let (first, next) = d.pop();
        assert_eq!((first.bytes, next), (1, Some(13)));
        let (second, next) = d.pop();
        assert_eq!((second.bytes, next), (2, None));
    }
}

//! Links: a serialising link with its own drop-tail queue (bottleneck and access links), and a
//! pure delay line (the uncongested return path). Both keep their packets in FIFOs and report
//! only the time of their next completion, so the event list holds one entry per link.

use crate::packet::Packet;
use crate::queue::{DropTailQueue, Limit};
use crate::time::Time;
use std::collections::VecDeque;

/// What happened to a packet offered to a link.
#[derive(Debug, PartialEq)]
pub enum Arrival {
    /// The link was idle: serialisation started and ends at this time.
    Started(Time),
    Queued,
    Dropped,
}

pub struct Link {
    ps_per_bit: f64,
    pub queue: DropTailQueue,
    in_service: Option<Packet>,
}

impl Link {
    pub fn new(rate_bps: f64, limit: Limit) -> Self {
        Self { ps_per_bit: 1e12 / rate_bps, queue: DropTailQueue::new(limit), in_service: None }
    }

    pub fn tx_time(&self, bytes: u32) -> Time {
        (bytes as f64 * 8.0 * self.ps_per_bit).round() as Time
    }

    pub fn busy(&self) -> bool {
        self.in_service.is_some()
    }

    pub fn arrive(&mut self, mut pkt: Packet, now: Time) -> Arrival {
        pkt.enqueued_at = now;
        if self.in_service.is_none() {
            let done = now + self.tx_time(pkt.bytes);
            self.in_service = Some(pkt);
            Arrival::Started(done)
        } else if self.queue.offer(pkt) {
            Arrival::Queued
        } else {
            Arrival::Dropped
        }
    }

    /// Finishes the packet in service; starts the next one, returning it (so the caller can
    /// measure its queueing delay) with its completion time.
    pub fn complete(&mut self, now: Time) -> (Packet, Option<(Packet, Time)>) {
        let done = self.in_service.take().expect("completion without a packet in service");
        let next = self.queue.pop().map(|p| {
            self.in_service = Some(p);
            (p, now + self.tx_time(p.bytes))
        });
        (done, next)
    }

    /// Every packet on the link (queued or in service).
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.in_service.iter().chain(self.queue.iter())
    }
}

/// A FIFO with a constant delay: items leave in arrival order, `delay` after they entered.
pub struct DelayLine<T> {
    delay: Time,
    fifo: VecDeque<(Time, T)>,
}

impl<T: Copy> DelayLine<T> {
    pub fn new(delay: Time) -> Self {
        Self { delay, fifo: VecDeque::new() }
    }

    /// Adds an item; returns its due time if the line was empty (the caller schedules it).
    pub fn push(&mut self, now: Time, item: T) -> Option<Time> {
        let due = now + self.delay;
        self.fifo.push_back((due, item));
        (self.fifo.len() == 1).then_some(due)
    }

    /// Removes the head item; returns it and the due time of the new head, if any.
    pub fn pop(&mut self) -> (T, Option<Time>) {
        let (_, item) = self.fifo.pop_front().expect("delay line event without an item");
        (item, self.fifo.front().map(|&(due, _)| due))
    }

    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
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
    fn serialisation_time_is_bits_over_rate() {
        let l = Link::new(100e6, Limit::Packets(10));
        assert_eq!(l.tx_time(1000), 80_000_000); // 80 us in ps
    }

    #[test]
    fn busy_link_queues_then_drops() {
        let mut l = Link::new(1e6, Limit::Packets(1));
        assert_eq!(l.arrive(pkt(125), 0), Arrival::Started(1_000_000_000));
        assert_eq!(l.arrive(pkt(125), 0), Arrival::Queued);
        assert_eq!(l.arrive(pkt(125), 0), Arrival::Dropped);
        let (_, next) = l.complete(1_000_000_000);
        assert_eq!(next.map(|n| n.1), Some(2_000_000_000));
    }

    #[test]
    fn delay_line_is_fifo_with_constant_delay() {
        let mut d = DelayLine::new(10);
        assert_eq!(d.push(0, 1), Some(10));
        assert_eq!(d.push(3, 2), None);
        assert_eq!(d.pop(), (1, Some(13)));
        assert_eq!(d.pop(), (2, None));
    }
}

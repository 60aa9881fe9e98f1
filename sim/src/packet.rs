//! Packets are small `Copy` values moved through the FIFOs of links and queues: no heap
//! allocation per packet, and memory is bounded by the packets in flight.

use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A TCP data segment of flow `flow`.
    Data,
    /// A packet of open-loop source `flow` (Poisson or CBR).
    OpenLoop,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub kind: Kind,
    /// Flow id (for `Data`) or source id (for `OpenLoop`).
    pub flow: u32,
    pub bytes: u32,
    pub seq: i64,
    /// When the packet entered the queue it is waiting in (for queueing delay).
    pub enqueued_at: Time,
}

//! Packets are small `Copy` values moved through the FIFOs of links and queues: no heap
//! allocation per packet, and memory is bounded by the packets in flight. A packet says how far
//! along its route it is; its route is its connection's (or source's), so links need not know it.

use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A TCP data segment of connection `flow`.
    Data,
    /// A TCP acknowledgement for connection `flow` (`seq` is the cumulative ACK number).
    Ack,
    /// A packet of open-loop source `flow` (Poisson or CBR).
    OpenLoop,
}

/// 24 bytes: packets fill every queue and propagation pipe, and the pipes of the return paths
/// are read about one RTT after they were written, from memory; at 32 bytes plus an 8-byte due
/// time per pipe entry, that read drew 18% of the event loop's samples in the 1000-flow
/// access-link benchmark (perf).
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Sequence number (`Data`), cumulative ACK number (`Ack`); 0 for `OpenLoop`.
    pub seq: i64,
    /// When the packet entered what holds it: a queue (its queueing delay is measured from
    /// here) or a propagation pipe (it leaves at `stamp` + the link's delay).
    pub stamp: Time,
    /// Connection id (for `Data` and `Ack`) or source id (for `OpenLoop`).
    pub flow: u32,
    /// Size: an IP packet has at most 65,535 bytes (the config's limit on packet sizes).
    pub bytes: u16,
    pub kind: Kind,
    /// The links of its route it has entered so far (its route follows from `kind` and `flow`).
    pub hop: u8,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 24);

impl Packet {
    /// A new packet, before the first link of its route.
    #[inline(always)]
    pub fn new(kind: Kind, flow: usize, bytes: u16, seq: i64) -> Self {
        Packet { seq, stamp: 0, flow: flow as u32, bytes, kind, hop: 0 }
    }
}

/// Bytes of a TCP acknowledgement (ns-2's ACK size).
pub const ACK_BYTES: u16 = 40;

//! Packets are small `Copy` values moved through the FIFOs of links and queues: no heap
//! allocation per packet, and memory is bounded by the packets in flight. A packet says how far
//! along its route it is; its route is its connection's (or source's), so links need not know it.

use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A TCP data segment of connection `flow`.
    Data,
    /// A TCP acknowledgement for connection `flow` (`seq` is the cumulative ACK number).
    Ack,
    /// A packet of open-loop source `flow` (Poisson or CBR).
    OpenLoop,
}

/// A packet's kind and its ECN bits (RFC 3168) in one byte, so that a packet stays 24 bytes:
/// bits 0-1 the kind, bit 2 ECT(0) (an ECN-capable data packet), bit 3 CE (congestion
/// experienced, set by a marking queue), bit 4 the TCP flag its kind carries (ECE on an ACK, CWR
/// on a data packet), bit 5 PSH on a data packet (the last of a Linux sender's skb), bit 6 a
/// retransmitted copy (data) or an ACK whose timestamp echoes one (`tcp.tsecr_rtt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag(u8);

const ECT: u8 = 1 << 2;
const CE: u8 = 1 << 3;
const FLAG: u8 = 1 << 4;
const PUSH: u8 = 1 << 5;
const RETX: u8 = 1 << 6;

impl Tag {
    #[inline(always)]
    pub fn kind(self) -> Kind {
        match self.0 & 3 {
            0 => Kind::Data,
            1 => Kind::Ack,
            _ => Kind::OpenLoop,
        }
    }
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
    /// The kind and the ECN bits (`kind()`, `ect()`, `ce()`, `flag()`).
    pub tag: Tag,
    /// The links of its route it has entered so far (its route follows from `kind` and `flow`).
    pub hop: u8,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 24);

impl Packet {
    /// A new packet, before the first link of its route.
    #[inline(always)]
    pub fn new(kind: Kind, flow: usize, bytes: u16, seq: i64) -> Self {
        Packet { seq, stamp: 0, flow: flow as u32, bytes, tag: Tag(kind as u8), hop: 0 }
    }

    #[inline(always)]
    pub fn kind(&self) -> Kind {
        self.tag.kind()
    }

    /// ECN-capable transport (ECT(0)): a marking queue may set CE instead of dropping it.
    #[inline(always)]
    pub fn ect(&self) -> bool {
        self.tag.0 & ECT != 0
    }

    #[inline(always)]
    pub fn ce(&self) -> bool {
        self.tag.0 & CE != 0
    }

    /// ECE on an ACK (the receiver echoes a CE mark), CWR on a data packet (the sender reduced).
    #[inline(always)]
    pub fn flag(&self) -> bool {
        self.tag.0 & FLAG != 0
    }

    pub fn set_ect(&mut self) {
        self.tag.0 |= ECT;
    }

    pub fn set_flag(&mut self) {
        self.tag.0 |= FLAG;
    }

    /// PSH on a data packet: a Linux receiver ACKs it at once (`TcpReceiver::on_data`).
    #[inline(always)]
    pub fn push(&self) -> bool {
        self.tag.0 & PUSH != 0
    }

    pub fn set_push(&mut self) {
        self.tag.0 |= PUSH;
    }

    /// A retransmitted copy (data), or an ACK whose timestamp echoes one: which copy filled the
    /// receiver's hole, the original or a retransmission (`TcpReceiver::echo_retx`).
    #[inline(always)]
    pub fn retx(&self) -> bool {
        self.tag.0 & RETX != 0
    }

    pub fn set_retx(&mut self) {
        self.tag.0 |= RETX;
    }

    /// A SYN or SYN-ACK (`SYN_SEQ`).
    #[inline(always)]
    pub fn is_handshake(&self) -> bool {
        self.seq < SYN_SEQ + 64
    }

    /// Marks an ECN-capable packet CE (true); a packet that is not ECT cannot be marked (false).
    #[inline]
    pub fn mark_ce(&mut self) -> bool {
        if self.ect() {
            self.tag.0 |= CE;
        }
        self.ect()
    }
}

/// Bytes of a TCP acknowledgement (ns-2's ACK size).
pub const ACK_BYTES: u16 = 40;

/// A SYN is a `Data` packet, and a SYN-ACK an `Ack`, whose `seq` is `SYN_SEQ` plus the try
/// (0 for the first SYN, 1 for the first resent one...): far below any real sequence or ACK
/// number, so that they take their connection's routes and queues unchanged (`world::handshake`).
pub const SYN_SEQ: i64 = i64::MIN;
/// A SYN's size: 20 bytes of IP and 20 of TCP header, and 20 of options (MSS, SACK permitted,
/// timestamps, window scale), as Linux sends it.
pub const SYN_BYTES: u16 = 60;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_keeps_the_kind_beside_the_ecn_bits() {
        for kind in [Kind::Data, Kind::Ack, Kind::OpenLoop] {
            let mut p = Packet::new(kind, 3, 1000, 7);
            assert!(!p.ect() && !p.ce() && !p.flag() && !p.push());
            assert!(!p.mark_ce(), "a packet that is not ECT cannot be marked");
            p.set_ect();
            p.set_flag();
            p.set_push();
            assert!(p.mark_ce() && p.ce() && p.flag() && p.ect() && p.push());
            assert_eq!(p.kind(), kind);
        }
    }
}

//! The TCP receiver (ns-2 `TCPSink`, `DelAckSink`, `TCPSink/Sack1`): cumulative ACKs, SACK
//! blocks, delayed ACKs; a data packet with PSH is ACKed at once, as Linux does since 6.6
//! (commit 4720852ed9af, `tcp_measure_rcv_mss` and `tcp_cleanup_rbuf` in net/ipv4/tcp_input.c and
//! tcp.c, for an application that reads all it gets). Details: docs/tcp.md.

use crate::time::Time;

/// At most this many SACK blocks fit in an ACK (40 bytes of TCP options: 4 blocks, 3 beside the
/// timestamp option).
pub const MAX_SACK_BLOCKS: usize = 4;

/// The SACK blocks of one ACK, [start, end) in packets, the first the most recent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackList {
    pub blocks: [(i64, i64); MAX_SACK_BLOCKS],
    pub len: u8,
}

impl SackList {
    pub fn as_slice(&self) -> &[(i64, i64)] {
        &self.blocks[..self.len as usize]
    }

    fn push(&mut self, b: (i64, i64)) {
        self.blocks[self.len as usize] = b;
        self.len += 1;
    }
}

pub struct TcpReceiver {
    /// Next in-order sequence expected.
    next_expected: i64,
    /// The packets held out of order: sorted, disjoint, non-adjacent [start, end) blocks above
    /// `next_expected`. A handful at a time (one per hole), so a sorted vector beats a tree.
    held: Vec<(i64, i64)>,
    /// The most recently changed blocks, the newest first (SACK order), as they are now: a block
    /// changes only by taking the arriving packet, and then it is the newest. An entry the
    /// cumulative ACK has passed (end <= next_expected) is stale: it keeps its slot, unreported.
    /// Ranges, not packets: finding a packet's block took a search per entry on every arrival.
    recent: [(i64, i64); MAX_SACK_BLOCKS],
    n_recent: usize,
    delayed_ack: bool,
    delack: Time,
    pub delack_deadline: Option<Time>,
    /// Packets that arrived (duplicates included).
    pub arrivals: u64,
    /// The sequence of the last packet that arrived: its timestamp is the one an ACK echoes (as
    /// ns-2's TCPSink echoes the packet that triggered the ACK).
    pub last_arrival_seq: i64,
    /// The copy whose timestamp the next ACK echoes is a retransmission: Linux's `ts_recent`
    /// (RFC 7323) is the in-order segment at the left edge, the first of a delayed pair
    /// (`note_copy`; `tcp.tsecr_rtt`).
    pub echo_retx: bool,
    /// New in-order packets delivered to the application.
    pub delivered: u64,
    /// ECN: ACKs carry ECE from a CE mark until a CWR arrives (RFC 3168 section 6.1.3), or, with
    /// `exact_ce`, while the last packet was CE (DCTCP's receiver, RFC 8257 section 3.2).
    pub ece: bool,
    exact_ce: bool,
}

impl TcpReceiver {
    pub fn new(delayed_ack: bool, delack: Time) -> Self {
        Self {
            next_expected: 0,
            held: Vec::new(),
            recent: [(0, 0); MAX_SACK_BLOCKS],
            n_recent: 0,
            delayed_ack,
            delack,
            delack_deadline: None,
            arrivals: 0,
            last_arrival_seq: -1,
            echo_retx: false,
            delivered: 0,
            ece: false,
            exact_ce: false,
        }
    }

    /// DCTCP's receiver: ECE echoes the CE state of the packets acknowledged (`ce_changes`).
    pub fn echoing_ce_exactly(mut self) -> Self {
        self.exact_ce = true;
        self
    }

    /// DCTCP's receiver (RFC 8257 section 3.2, Linux `dctcp_ece_ack_update`): a data packet whose
    /// CE differs from the state so far, with an ACK owed (delayed), first sends that ACK, with
    /// the old state; returns it. The caller sends it before `on_ecn`.
    pub fn ce_changes(&mut self, ce: bool) -> Option<i64> {
        if !self.exact_ce || ce == self.ece {
            return None;
        }
        self.delack_deadline.take().map(|_| self.ack_no())
    }

    fn ack_no(&self) -> i64 {
        self.next_expected - 1
    }

    /// Index of the first held block ending above `seq`. Most arrivals out of order extend the
    /// highest block, so the last two are looked at before a search over up to a hundred.
    fn first_ending_above(&self, seq: i64) -> usize {
        let n = self.held.len();
        if n == 0 || self.held[n - 1].1 <= seq {
            n
        } else if n == 1 || self.held[n - 2].1 <= seq {
            n - 1
        } else {
            self.held[..n - 2].partition_point(|b| b.1 <= seq)
        }
    }

    /// Holds out-of-order `seq` (> next_expected): joins it to its neighbours' blocks.
    fn hold(&mut self, seq: i64) {
        let i = self.first_ending_above(seq);
        if i < self.held.len() && self.held[i].0 <= seq {
            return; // already held
        }
        let joins_left = i > 0 && self.held[i - 1].1 == seq;
        let joins_right = i < self.held.len() && self.held[i].0 == seq + 1;
        let block = match (joins_left, joins_right) {
            (true, true) => {
                self.held[i - 1].1 = self.held[i].1;
                self.held.remove(i);
                i - 1
            }
            (true, false) => {
                self.held[i - 1].1 = seq + 1;
                i - 1
            }
            (false, true) => {
                self.held[i].0 = seq;
                i
            }
            (false, false) => {
                self.held.insert(i, (seq, seq + 1));
                i
            }
        };
        self.note_recent(self.held[block]);
    }

    /// `block` (which just took a packet) becomes the most recent; entries now inside it are
    /// dropped; stale ones keep their slots.
    fn note_recent(&mut self, block: (i64, i64)) {
        let mut kept = [(0, 0); MAX_SACK_BLOCKS];
        let mut n = 1;
        kept[0] = block;
        for &r in &self.recent[..self.n_recent] {
            let inside = block.0 <= r.0 && r.1 <= block.1;
            if n < MAX_SACK_BLOCKS && !inside {
                kept[n] = r;
                n += 1;
            }
        }
        self.recent = kept;
        self.n_recent = n;
    }

    /// A data packet's ECN bits: CWR stops the echo, CE (re)starts it (with `exact_ce`: the
    /// echo is this packet's CE).
    #[inline(always)]
    pub fn on_ecn(&mut self, ce: bool, cwr: bool) {
        if self.exact_ce {
            self.ece = ce;
            return;
        }
        if cwr {
            self.ece = false;
        }
        if ce {
            self.ece = true;
        }
    }

    /// Before `on_data`: whether the arriving copy of `seq` was a retransmission (`echo_retx`).
    #[inline(always)]
    pub fn note_copy(&mut self, seq: i64, retx: bool) {
        if seq == self.next_expected && self.delack_deadline.is_none() {
            self.echo_retx = retx;
        }
    }

    /// A data packet arrived, with PSH or not; returns (ACK to send now, new in-order packets
    /// delivered).
    pub fn on_data(&mut self, now: Time, seq: i64, push: bool) -> (Option<i64>, u64) {
        self.arrivals += 1;
        self.last_arrival_seq = seq;
        let mut in_order = false;
        let mut new = 0u64;
        if seq == self.next_expected {
            in_order = self.held.is_empty();
            self.next_expected += 1;
            new = 1;
            if let Some(&(start, end)) = self.held.first() {
                if start == self.next_expected {
                    new += (end - start) as u64;
                    self.next_expected = end;
                    self.held.remove(0);
                }
            }
        } else if seq > self.next_expected {
            self.hold(seq);
        }
        self.delivered += new;
        if self.delayed_ack && in_order {
            if self.delack_deadline.take().is_some() || push {
                return (Some(self.ack_no()), new);
            }
            self.delack_deadline = Some(now + self.delack);
            return (None, new);
        }
        self.delack_deadline = None;
        (Some(self.ack_no()), new)
    }

    /// The SACK blocks an ACK sent now carries: at most `max_blocks`, in RFC 2018 order.
    pub fn sack_blocks(&self, max_blocks: usize) -> SackList {
        let mut out = SackList::default();
        let max = max_blocks.min(MAX_SACK_BLOCKS);
        for &r in &self.recent[..self.n_recent] {
            if out.len as usize >= max {
                break;
            }
            if r.1 > self.next_expected && !out.as_slice().contains(&r) {
                out.push(r);
            }
        }
        out
    }

    /// The delayed-ACK timer fired; returns the ACK to send, if still owed.
    pub fn on_delack_timer(&mut self, now: Time) -> Option<i64> {
        match self.delack_deadline {
            Some(d) if d <= now => {
                self.delack_deadline = None;
                Some(self.ack_no())
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_out_of_order_and_acks_cumulatively() {
        let mut r = TcpReceiver::new(false, 0);
        assert_eq!(r.on_data(0, 0, false), (Some(0), 1));
        assert_eq!(r.on_data(0, 2, false), (Some(0), 0)); // hole at 1: duplicate ACK
        assert_eq!(r.on_data(0, 3, false), (Some(0), 0));
        assert_eq!(r.on_data(0, 1, false), (Some(3), 3)); // hole filled: jumps to 3
        assert_eq!(r.on_data(0, 2, false), (Some(3), 0)); // duplicate data: duplicate ACK
        assert_eq!(r.delivered, 4);
        assert_eq!(r.arrivals, 5);
    }

    #[test]
    fn several_holes() {
        let mut r = TcpReceiver::new(false, 0);
        for s in [1, 3, 5] {
            assert_eq!(r.on_data(0, s, false).0, Some(-1));
        }
        assert_eq!(r.on_data(0, 0, false).0, Some(1));
        assert_eq!(r.on_data(0, 2, false).0, Some(3));
        assert_eq!(r.on_data(0, 4, false).0, Some(5));
    }

    #[test]
    fn delayed_ack_every_second_packet_or_timer() {
        let mut r = TcpReceiver::new(true, 100);
        assert_eq!(r.on_data(0, 0, false).0, None);
        assert_eq!(r.on_data(1, 1, false).0, Some(1));
        assert_eq!(r.on_data(2, 2, false).0, None);
        assert_eq!(r.on_delack_timer(50), None);
        assert_eq!(r.on_delack_timer(102), Some(2));
        assert_eq!(r.on_data(200, 4, false).0, Some(2)); // out of order: at once
    }

    /// Linux since 6.6: a packet with PSH (the end of the sender's skb) is ACKed at once, so the
    /// ACKs follow the sender's skbs where they would pair packets across them.
    #[test]
    fn a_pushed_packet_is_acked_at_once() {
        let mut r = TcpReceiver::new(true, 100);
        assert_eq!(r.on_data(0, 0, true).0, Some(0), "pushed: at once");
        assert_eq!(r.on_data(1, 1, false).0, None);
        assert_eq!(r.on_data(2, 2, false).0, Some(2), "every second packet, as before");
        assert_eq!(r.on_data(3, 3, true).0, Some(3), "the pushed one does not wait for its pair");
        assert_eq!(r.delack_deadline, None);
    }

    /// RFC 3168: ECE from a CE until CWR. DCTCP (RFC 8257 3.2): ECE is the CE of the packets
    /// acknowledged; a change of CE state with an ACK owed sends that ACK first, with the old state.
    #[test]
    fn ece_until_cwr_or_exactly_per_packet() {
        let mut classic = TcpReceiver::new(false, 0);
        for (ce, cwr, ece) in [(false, false, false), (true, false, true), (false, false, true), (false, true, false)] {
            classic.on_ecn(ce, cwr);
            assert_eq!(classic.ece, ece);
        }
        let mut r = TcpReceiver::new(true, 100).echoing_ce_exactly();
        let mut acks = Vec::new(); // (ackno, ECE)
        for (seq, ce) in [(0i64, false), (1, true), (2, true), (3, false), (4, false), (5, true)] {
            if let Some(owed) = r.ce_changes(ce) {
                acks.push((owed, r.ece));
            }
            r.on_ecn(ce, false);
            if let Some(a) = r.on_data(seq as Time, seq, false).0 {
                acks.push((a, r.ece));
            }
        }
        // 0 is owed when CE starts at 1; 1-2 are acked marked; 3 and 4 unmarked; 5's change
        // finds nothing owed and waits for its own (delayed) ACK.
        assert_eq!(acks, vec![(0, false), (2, true), (4, false)]);
        assert_eq!(r.on_delack_timer(1000), Some(5));
        assert!(r.ece);
    }

    #[test]
    fn sack_blocks_newest_first_merged_and_capped() {
        let mut r = TcpReceiver::new(false, 0);
        r.on_data(0, 0, false);
        r.on_data(0, 2, false); // hole at 1
        assert_eq!(r.sack_blocks(3).as_slice(), &[(2, 3)]);
        r.on_data(0, 3, false);
        assert_eq!(r.sack_blocks(3).as_slice(), &[(2, 4)]);
        r.on_data(0, 6, false); // hole at 4, 5
        r.on_data(0, 9, false); // hole at 7, 8
        assert_eq!(r.sack_blocks(3).as_slice(), &[(9, 10), (6, 7), (2, 4)]);
        r.on_data(0, 12, false);
        assert_eq!(r.sack_blocks(3).as_slice(), &[(12, 13), (9, 10), (6, 7)], "at most 3, the oldest left out");
        r.on_data(0, 5, false); // joins 6's block; it becomes the most recent
        assert_eq!(r.sack_blocks(4).as_slice(), &[(5, 7), (12, 13), (9, 10), (2, 4)]);
        r.on_data(0, 4, false); // fills 4: (2, 7) is one block now
        assert_eq!(r.sack_blocks(4).as_slice(), &[(2, 7), (12, 13), (9, 10)]);
        r.on_data(0, 1, false); // cumulative ACK jumps to 6: that block is gone
        assert_eq!(r.on_data(0, 13, false).0, Some(6));
        assert_eq!(r.sack_blocks(4).as_slice(), &[(12, 14), (9, 10)]);
        r.on_data(0, 7, false);
        r.on_data(0, 8, false);
        assert_eq!(r.on_data(0, 10, false).0, Some(10));
        assert_eq!(r.sack_blocks(4).as_slice(), &[(12, 14)]);
        assert_eq!(r.on_data(0, 11, false).0, Some(13));
        assert_eq!(r.sack_blocks(4).as_slice(), &[]);
        assert_eq!(r.delivered, 14);
    }

    /// A block the cumulative ACK has passed keeps its slot among the recent ones until pushed
    /// out: here it costs (4, 5) its place in the ACK (the behaviour the fingerprints hold).
    #[test]
    fn a_passed_block_keeps_its_recent_slot() {
        let mut r = TcpReceiver::new(false, 0);
        for s in [0, 4, 6, 8, 2] {
            r.on_data(0, s, false);
        }
        assert_eq!(r.sack_blocks(4).as_slice(), &[(2, 3), (8, 9), (6, 7), (4, 5)]);
        assert_eq!(r.on_data(0, 1, false).0, Some(2), "(2, 3) is passed, and stale");
        assert_eq!(r.sack_blocks(4).as_slice(), &[(8, 9), (6, 7), (4, 5)]);
        r.on_data(0, 10, false);
        assert_eq!(r.sack_blocks(4).as_slice(), &[(10, 11), (8, 9), (6, 7)]);
    }

    /// The ACK's echo (`tcp.tsecr_rtt`): the copy at the left edge, not one out of order.
    #[test]
    fn the_echo_is_the_copy_that_filled_the_hole() {
        let mut r = TcpReceiver::new(false, 100);
        for (seq, retx, echo) in [(0, false, false), (2, true, false), (1, true, true), (3, false, false)] {
            r.note_copy(seq, retx);
            r.on_data(0, seq, false);
            assert_eq!(r.echo_retx, echo, "after {seq}");
        }
    }
}

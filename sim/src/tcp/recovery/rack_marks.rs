//! RACK-TLP's marks on outstanding packets (`rack_tlp.rs`): which are marked lost, which were
//! retransmitted and when, kept so that RACK's loss scan costs what it marks, not what is
//! outstanding. Linux gets the same from its `tsorted_sent_queue` (`tcp_rack_detect_loss`);
//! here original transmissions need no queue (they leave in sequence order), retransmissions
//! are ordered by (send time, sequence), which is RACK's order, and the marked packets form
//! ranges the scan of originals jumps over. Details: docs/tcp.md.
//! Each packet's marks sit in a ring indexed by sequence number, and the two orders are a heap
//! and a queue whose entries are checked against the ring when read (lazy deletion), which costs
//! less per loss than a search tree per order (numbers in docs/tcp.md).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::tcp::ranges::{add_range, first_ending_above, remove_range};
use crate::time::Time;

/// No retransmission outstanding.
const NEVER: Time = Time::MAX;

/// One packet's marks; a slot whose `seq` is another packet's holds none for this one.
#[derive(Clone, Copy, Debug)]
struct Slot {
    seq: i64,
    lost: bool,
    resent_at: Time,
}

/// Bytes a packet's marks take in the ring (the cost estimate's, `estimate.rs`).
pub const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

const EMPTY: Slot = Slot { seq: -1, lost: false, resent_at: NEVER };

/// The slot of `seq` in `slots` (a power of two long, or empty), if it is `seq`'s.
fn lookup(slots: &[Slot], base: i64, seq: i64) -> Option<&Slot> {
    let mask = slots.len().checked_sub(1)?;
    let slot = &slots[seq as usize & mask];
    (seq >= base && slot.seq == seq).then_some(slot)
}

#[derive(Default)]
pub struct Marks {
    /// Marks of packets in [base, base + len), packet `seq` at `seq % len`.
    slots: Vec<Slot>,
    /// The lowest packet not cumulatively acknowledged: lower ones carry no mark.
    base: i64,
    lost_pkts: i64,
    /// Packets marked lost, lowest first; an entry whose slot no longer says so is skipped.
    lost: BinaryHeap<Reverse<i64>>,
    /// Retransmissions in the order they left, (send time, sequence); an entry whose slot holds
    /// another time (or none) is skipped.
    by_time: Vec<(Time, i64)>,
    /// How many of `by_time`'s entries are live: past twice as many, the queue is compacted.
    live: usize,
    /// Every packet marked lost or retransmitted, as sorted, disjoint ranges [start, end).
    marked: Vec<(i64, i64)>,
}

impl Marks {
    pub fn lost_pkts(&self) -> i64 {
        self.lost_pkts
    }

    fn slot(&self, seq: i64) -> Option<&Slot> {
        lookup(&self.slots, self.base, seq)
    }

    /// The slot of `seq`, claimed for it; the ring doubles until it spans `seq` from `base`.
    fn slot_mut(&mut self, seq: i64) -> &mut Slot {
        debug_assert!(seq >= self.base, "a mark below the cumulative ACK");
        let span = (seq - self.base + 1) as usize;
        if span > self.slots.len() {
            let len = (2 * span).next_power_of_two().max(64);
            let mut ring = vec![EMPTY; len];
            for s in self.slots.iter().filter(|s| s.seq >= self.base) {
                ring[s.seq as usize & (len - 1)] = *s;
            }
            self.slots = ring;
        }
        let mask = self.slots.len() - 1;
        let slot = &mut self.slots[seq as usize & mask];
        if slot.seq != seq {
            *slot = Slot { seq, ..EMPTY };
        }
        slot
    }

    /// Clears the marks of every marked packet in [start, end), and takes them out of `marked`;
    /// compacts `by_time` if a retransmission died.
    fn unmark(&mut self, start: i64, end: i64) {
        let live = self.live;
        let mask = self.slots.len().wrapping_sub(1);
        let i = first_ending_above(&self.marked, start);
        for &(a, b) in self.marked[i..].iter().take_while(|m| m.0 < end) {
            for seq in a.max(start)..b.min(end) {
                if let Some(slot) = self.slots.get_mut(seq as usize & mask).filter(|s| s.seq == seq) {
                    self.lost_pkts -= i64::from(slot.lost);
                    self.live -= usize::from(slot.resent_at != NEVER);
                    *slot = EMPTY;
                }
            }
        }
        remove_range(&mut self.marked, (start, end));
        if self.live < live {
            self.compact();
        }
    }

    /// The marked packets in [start, end), in order.
    fn marked_in(&self, start: i64, end: i64) -> impl Iterator<Item = i64> + '_ {
        let i = first_ending_above(&self.marked, start);
        self.marked[i..].iter().take_while(move |m| m.0 < end).flat_map(move |m| m.0.max(start)..m.1.min(end))
    }

    pub fn is_retransmitted(&self, seq: i64) -> bool {
        self.slot(seq).is_some_and(|s| s.resent_at != NEVER)
    }

    /// Whether [start, end) holds a marked packet: a binary search in a few ranges.
    fn may_touch(&self, start: i64, end: i64) -> bool {
        let i = first_ending_above(&self.marked, start);
        self.marked.get(i).is_some_and(|m| m.0 < end)
    }

    /// The retransmitted packets in [start, end).
    pub fn retransmitted_in(&self, start: i64, end: i64) -> Vec<i64> {
        if start >= end || !self.may_touch(start, end) {
            return vec![]; // an empty Vec does not allocate
        }
        self.marked_in(start, end).filter(|&s| self.is_retransmitted(s)).collect()
    }

    pub fn mark_lost(&mut self, seq: i64) {
        let slot = self.slot_mut(seq);
        let was_resent = std::mem::replace(&mut slot.resent_at, NEVER) != NEVER;
        let newly_lost = !std::mem::replace(&mut slot.lost, true);
        self.live -= usize::from(was_resent);
        if newly_lost {
            self.lost_pkts += 1;
            self.lost.push(Reverse(seq));
        }
        add_range(&mut self.marked, (seq, seq + 1));
    }

    /// The lowest packet marked lost, no longer marked lost (its retransmission follows).
    pub fn pop_lost(&mut self) -> Option<i64> {
        while let Some(Reverse(seq)) = self.lost.pop() {
            if self.slot(seq).is_some_and(|s| s.lost) {
                self.slot_mut(seq).lost = false;
                self.lost_pkts -= 1;
                return Some(seq);
            }
        }
        None
    }

    /// `seq` was sent again at `now` (times never decrease).
    pub fn retransmitted(&mut self, seq: i64, now: Time) {
        let old = std::mem::replace(&mut self.slot_mut(seq).resent_at, now);
        if old != now {
            self.live += usize::from(old == NEVER); // else the old entry dies as this one lives
        }
        let q = &mut self.by_time;
        let at = q.len() - q.iter().rev().take_while(|&&e| e > (now, seq)).count();
        if at == 0 || q[at - 1] != (now, seq) {
            q.insert(at, (now, seq));
        }
        add_range(&mut self.marked, (seq, seq + 1));
    }

    /// The packets in [start, end) were delivered (a SACK block).
    pub fn delivered(&mut self, start: i64, end: i64) {
        if !self.may_touch(start, end) {
            return; // most blocks: no mark inside
        }
        self.unmark(start, end);
    }

    /// The cumulative ACK reached `ackno`.
    pub fn acked_to(&mut self, ackno: i64) {
        if self.marked.first().is_some_and(|m| m.0 <= ackno) {
            self.unmark(i64::MIN, ackno + 1);
        }
        self.base = self.base.max(ackno + 1);
        while self.lost.peek().is_some_and(|&Reverse(s)| s <= ackno) {
            self.lost.pop();
        }
    }

    /// Drops `by_time`'s dead entries at both ends, and all of them once they outnumber the live
    /// ones (amortized O(1)); unit tests drop all every time, which checks the live count.
    fn compact(&mut self) {
        let (slots, base) = (&self.slots, self.base);
        let live = |&(t, seq): &(Time, i64)| lookup(slots, base, seq).is_some_and(|s| s.resent_at == t);
        // Retransmissions are mostly delivered in the order they left: the dead are at the front.
        let dead = self.by_time.iter().take_while(|e| !live(e)).count();
        self.by_time.drain(..dead); // a few entries: a short move
        while self.by_time.last().is_some_and(|e| !live(e)) {
            self.by_time.pop();
        }
        if self.by_time.len() > 2 * self.live + 16 || cfg!(test) {
            self.by_time.retain(live);
            debug_assert_eq!(self.by_time.len(), self.live, "live retransmissions");
        }
    }

    /// After a timeout no packet counts as retransmitted (Linux `tcp_timeout_mark_lost`).
    pub fn clear_retransmissions(&mut self) {
        self.by_time.clear();
        self.live = 0;
        let mut kept = vec![];
        for seq in self.marked_in(i64::MIN, i64::MAX).collect::<Vec<_>>() {
            let slot = self.slot_mut(seq);
            slot.resent_at = NEVER;
            if slot.lost {
                add_range(&mut kept, (seq, seq + 1));
            }
        }
        self.marked = kept;
    }

    /// The ranges of [start, end) that hold no packet marked lost or retransmitted, in order.
    pub fn unmarked(&self, start: i64, end: i64) -> impl Iterator<Item = (i64, i64)> + '_ {
        let mut i = first_ending_above(&self.marked, start);
        let mut at = start;
        std::iter::from_fn(move || {
            while at < end {
                match self.marked.get(i) {
                    Some(&(a, b)) if a <= at => {
                        at = b;
                        i += 1;
                    }
                    next => {
                        let stop = next.map_or(end, |m| m.0.min(end));
                        let range = (at, stop);
                        at = stop;
                        return Some(range);
                    }
                }
            }
            None
        })
    }

    /// Retransmissions sent before `rack` (send time, sequence), earliest first.
    pub fn retransmitted_before(&self, rack: (Time, i64)) -> impl DoubleEndedIterator<Item = (Time, i64)> + '_ {
        let (slots, base) = (&self.slots, self.base);
        let n = match self.by_time.last() {
            _ if self.live == 0 => 0,
            Some(&last) if last < rack => self.by_time.len(), // most often: all sent before RACK's
            _ => self.by_time.partition_point(|&e| e < rack),
        };
        let live = move |&(t, seq): &(Time, i64)| lookup(slots, base, seq).is_some_and(|s| s.resent_at == t);
        self.by_time[..n].iter().copied().filter(live)
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmarked_ranges_skip_lost_and_retransmitted_packets() {
        let mut m = Marks::default();
        for seq in [3, 4, 5, 9] {
            m.mark_lost(seq);
        }
        let first = m.pop_lost().unwrap();
        m.retransmitted(first, 7);
        m.retransmitted(12, 8);
        let ranges: Vec<_> = m.unmarked(0, 14).collect();
        assert_eq!(ranges, vec![(0, 3), (6, 9), (10, 12), (13, 14)]);
        assert_eq!(m.unmarked(4, 6).collect::<Vec<_>>(), vec![]);
        assert_eq!(m.lost_pkts(), 3);
    }

    #[test]
    fn retransmissions_keep_their_send_order_until_delivered_or_lost() {
        let mut m = Marks::default();
        m.retransmitted(20, 5);
        m.retransmitted(10, 6);
        m.retransmitted(30, 6);
        assert_eq!(m.retransmitted_before((6, 30)).collect::<Vec<_>>(), vec![(5, 20), (6, 10)]);
        m.retransmitted(20, 9); // again, later
        assert_eq!(m.retransmitted_before((7, 0)).collect::<Vec<_>>(), vec![(6, 10), (6, 30)]);
        m.mark_lost(10);
        m.delivered(30, 31);
        assert_eq!(m.retransmitted_before((100, 0)).collect::<Vec<_>>(), vec![(9, 20)]);
        m.acked_to(25);
        assert!(!m.is_retransmitted(20) && m.lost_pkts() == 0);
        assert_eq!(m.retransmitted_before((100, 0)).count(), 0);
    }

    /// Random marks, retransmissions, deliveries, cumulative ACKs and timeouts, against a model
    /// made of search trees: every answer the same, across the ring's growth and wrap-around.
    #[test]
    fn answers_as_a_model_of_search_trees_does() {
        use rand::{Rng, SeedableRng};
        use std::collections::{BTreeMap, BTreeSet};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let (mut m, mut lost, mut resent) = (Marks::default(), BTreeSet::new(), BTreeMap::new());
        let (mut base, mut now) = (0i64, 0 as Time);
        for step in 0..20_000 {
            let window = if step % 5000 < 2500 { 20 } else { 300 };
            let seq = base + rng.random_range(0..window);
            match rng.random_range(0..100) {
                0..30 => {
                    m.mark_lost(seq);
                    resent.remove(&seq);
                    lost.insert(seq);
                }
                30..55 => {
                    let got = m.pop_lost();
                    assert_eq!(got, lost.pop_first());
                    if let Some(s) = got {
                        m.retransmitted(s, now);
                        resent.insert(s, now);
                    }
                }
                55..60 => {
                    m.retransmitted(seq, now);
                    resent.insert(seq, now);
                }
                60..80 => {
                    let end = seq + rng.random_range(1..8);
                    m.delivered(seq, end);
                    lost.retain(|s| !(seq..end).contains(s));
                    resent.retain(|s, _| !(seq..end).contains(s));
                }
                80..97 => {
                    base += rng.random_range(0..6);
                    m.acked_to(base - 1);
                    lost.retain(|&s| s >= base);
                    resent.retain(|&s, _| s >= base);
                }
                _ => {
                    m.clear_retransmissions();
                    resent.clear();
                }
            }
            now += rng.random_range(0..3);
            assert_eq!(m.lost_pkts(), lost.len() as i64);
            let (a, b) = (base + rng.random_range(0..window), base + rng.random_range(0..window));
            let want: Vec<i64> = resent.range(a..b.max(a)).map(|(&s, _)| s).collect();
            assert_eq!(m.retransmitted_in(a, b), want);
            assert_eq!(m.is_retransmitted(a), resent.contains_key(&a));
            let rack = (now.saturating_sub(rng.random_range(0..4)), base + rng.random_range(0..window));
            let mut order: Vec<(Time, i64)> = resent.iter().map(|(&s, &t)| (t, s)).filter(|&e| e < rack).collect();
            order.sort();
            assert_eq!(m.retransmitted_before(rack).collect::<Vec<_>>(), order);
            assert_eq!(m.retransmitted_before(rack).next_back(), order.last().copied());
            let mut free = vec![];
            for s in a..b {
                if lost.contains(&s) || resent.contains_key(&s) {
                    continue;
                }
                match free.last_mut() {
                    Some((_, e)) if *e == s => *e += 1,
                    _ => free.push((s, s + 1)),
                }
            }
            assert_eq!(m.unmarked(a, b).filter(|r| r.0 < r.1).collect::<Vec<_>>(), free, "step {step}");
        }
    }
}

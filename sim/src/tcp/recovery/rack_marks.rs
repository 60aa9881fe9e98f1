//! RACK-TLP's marks on outstanding packets (`rack_tlp.rs`): which are marked lost, which were
//! retransmitted and when, kept so that RACK's loss scan costs what it marks, not what is
//! outstanding. Linux gets the same from its `tsorted_sent_queue` (`tcp_rack_detect_loss`);
//! here original transmissions need no queue (they leave in sequence order), retransmissions
//! are ordered by (send time, sequence), which is RACK's order, and the packets that are lost
//! or retransmitted form ranges the scan of originals jumps over. Details: docs/tcp.md.

use std::collections::{BTreeMap, BTreeSet};

use super::sack::add_range;
use crate::time::Time;

#[derive(Default)]
pub struct Marks {
    /// Marked lost and not retransmitted since.
    lost: BTreeSet<i64>,
    /// Retransmitted and not yet delivered, with when.
    retrans: BTreeMap<i64, Time>,
    /// The same, in the order they left.
    by_time: BTreeSet<(Time, i64)>,
    /// Every packet in `lost` or `retrans` as sorted, disjoint ranges [start, end); it may also
    /// hold packets delivered since, which the scans of holes never visit.
    marked: Vec<(i64, i64)>,
}

impl Marks {
    pub fn lost_pkts(&self) -> i64 {
        self.lost.len() as i64
    }

    pub fn is_retransmitted(&self, seq: i64) -> bool {
        // Most packets asked about carry no mark: the ranges' search answers them.
        !self.retrans.is_empty() && self.may_touch(seq, seq + 1) && self.retrans.contains_key(&seq)
    }

    /// Whether [start, end) may hold a marked packet (`marked` covers them all): a binary search in
    /// a few ranges, where a tree's range search costs several times more.
    fn may_touch(&self, start: i64, end: i64) -> bool {
        let i = self.marked.partition_point(|m| m.1 <= start);
        self.marked.get(i).is_some_and(|m| m.0 < end)
    }

    /// The retransmitted packets in [start, end).
    pub fn retransmitted_in(&self, start: i64, end: i64) -> Vec<i64> {
        if start >= end || self.retrans.is_empty() || !self.may_touch(start, end) {
            return vec![]; // an empty Vec does not allocate
        }
        self.retrans.range(start..end).map(|(&s, _)| s).collect()
    }

    pub fn mark_lost(&mut self, seq: i64) {
        self.forget_retransmission(seq);
        self.lost.insert(seq);
        add_range(&mut self.marked, (seq, seq + 1));
    }

    /// The lowest packet marked lost, no longer marked.
    pub fn pop_lost(&mut self) -> Option<i64> {
        self.lost.pop_first()
    }

    /// `seq` was sent again at `now`.
    pub fn retransmitted(&mut self, seq: i64, now: Time) {
        self.forget_retransmission(seq);
        self.retrans.insert(seq, now);
        self.by_time.insert((now, seq));
        add_range(&mut self.marked, (seq, seq + 1));
    }

    fn forget_retransmission(&mut self, seq: i64) {
        if let Some(t) = self.retrans.remove(&seq) {
            self.by_time.remove(&(t, seq));
        }
    }

    /// The packets in [start, end) were delivered (a SACK block).
    pub fn delivered(&mut self, start: i64, end: i64) {
        if (self.lost.is_empty() && self.retrans.is_empty()) || !self.may_touch(start, end) {
            return; // most blocks: no mark inside
        }
        let lost: Vec<i64> = self.lost.range(start..end).copied().collect();
        lost.iter().for_each(|s| {
            self.lost.remove(s);
        });
        for seq in self.retransmitted_in(start, end) {
            self.forget_retransmission(seq);
        }
    }

    /// The cumulative ACK reached `ackno`.
    pub fn acked_to(&mut self, ackno: i64) {
        // Splitting a tree allocates: only when the ACK covers a mark.
        if self.lost.first().is_some_and(|&s| s <= ackno) {
            self.lost = self.lost.split_off(&(ackno + 1));
        }
        if self.retrans.first_key_value().is_some_and(|(&s, _)| s <= ackno) {
            let kept = self.retrans.split_off(&(ackno + 1));
            for (seq, t) in std::mem::replace(&mut self.retrans, kept) {
                self.by_time.remove(&(t, seq));
            }
        }
        let keep = self.marked.partition_point(|m| m.1 <= ackno + 1);
        self.marked.drain(..keep);
    }

    /// After a timeout no packet counts as retransmitted (Linux `tcp_timeout_mark_lost`).
    pub fn clear_retransmissions(&mut self) {
        self.retrans.clear();
        self.by_time.clear();
        self.marked.clear();
        for &seq in &self.lost {
            add_range(&mut self.marked, (seq, seq + 1));
        }
    }

    /// The ranges of [start, end) that hold no packet marked lost or retransmitted, in order.
    pub fn unmarked(&self, start: i64, end: i64) -> impl Iterator<Item = (i64, i64)> + '_ {
        let mut i = self.marked.partition_point(|m| m.1 <= start);
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
        self.by_time.range(..rack).copied()
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
}

//! The scoreboard of the `linux` recovery: ns-2 2.35 TCP-Linux's `ScoreBoard1`
//! (`tcp/scoreboard1.{h,cc}`). Details: docs/tcp.md, `tcp/recovery/scoreboard.rs`.

use std::collections::VecDeque;

/// Linux's and ns-2's `dupack_threshold` (tcp_reordering), in packets.
pub const DUP_THRESH: i64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    InFlight,
    Sacked,
    Lost,
    /// Retransmitted when the next new packet was `snd_nxt`, as retransmission number `id`.
    Rtx {
        snd_nxt: i64,
        id: i64,
    },
}

/// What an update found (ns-2's FLAG_DATA_SACKED and FLAG_DATA_LOST).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub newly_sacked: bool,
    pub newly_lost: bool,
}

#[derive(Debug)]
pub struct Scoreboard {
    /// The first packet not cumulatively acknowledged; `marks[0]` is its mark.
    una: i64,
    marks: VecDeque<Mark>,
    /// The highest SACKed packet (ns-2 `fack_`); -1 when the board is clear.
    fack: i64,
    sacked_out: i64,
    lost_out: i64,
    /// The next retransmission's id, and the highest id known delivered.
    rtx_id: i64,
    acked_rtx_id: i64,
    /// Retransmissions possibly still in flight, oldest first.
    rtx_order: VecDeque<i64>,
    /// FACK marking has looked at every packet below this.
    fack_scan: i64,
    /// No lost packet lies below this.
    lost_scan: i64,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Self {
            una: 0,
            marks: VecDeque::new(),
            fack: -1,
            sacked_out: 0,
            lost_out: 0,
            rtx_id: 0,
            acked_rtx_id: -1,
            rtx_order: VecDeque::new(),
            fack_scan: 0,
            lost_scan: 0,
        }
    }
}

impl Scoreboard {
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// ns-2 `ClearScoreBoard`.
    pub fn clear(&mut self) {
        let una = self.una;
        *self = Self { una, fack_scan: una, lost_scan: una, ..Self::default() };
    }

    /// Packets in flight: `snd_nxt - una - lost - SACKed` (ns-2 `packets_in_flight`), where `una`
    /// is the first packet not cumulatively acknowledged.
    pub fn in_flight(&self, una: i64, snd_nxt: i64) -> i64 {
        snd_nxt - una - self.lost_out - self.sacked_out
    }

    fn at(&mut self, seq: i64) -> &mut Mark {
        &mut self.marks[(seq - self.una) as usize]
    }

    /// Keeps marks up to `last` (new ones in flight).
    fn extend_to(&mut self, last: i64) {
        while self.una + (self.marks.len() as i64) <= last {
            self.marks.push_back(Mark::InFlight);
        }
    }

    /// ns-2 `CleanRtxQueue`: forgets what the cumulative ACK `ackno` covers; true if it covered a
    /// retransmission younger than any known delivered.
    fn clean(&mut self, ackno: i64) -> bool {
        let mut newer_rtx_acked = false;
        while self.una <= ackno {
            match self.marks.pop_front() {
                Some(Mark::Sacked) => self.sacked_out -= 1,
                Some(Mark::Lost) => self.lost_out -= 1,
                Some(Mark::Rtx { id, .. }) if id > self.acked_rtx_id => {
                    self.acked_rtx_id = id;
                    newer_rtx_acked = true;
                }
                Some(_) => {}
                None => {
                    self.una = ackno;
                }
            }
            self.una += 1;
        }
        self.fack_scan = self.fack_scan.max(self.una);
        self.lost_scan = self.lost_scan.max(self.una);
        newer_rtx_acked
    }

    /// ns-2 `UpdateScoreBoard` for an ACK of everything up to `ackno` with SACK blocks
    /// ([start, end) in packets).
    pub fn update(&mut self, ackno: i64, blocks: &[(i64, i64)]) -> Found {
        let mut found = Found::default();
        let mut thorough = self.clean(ackno);
        if self.marks.is_empty() {
            self.clear();
            thorough = false;
        }
        // Blocks below the cumulative ACK (D-SACKs) are ignored, as ns-2 does; the rest in order.
        let mut sorted: Vec<(i64, i64)> = blocks.iter().copied().filter(|&(s, e)| s >= ackno && e > s).collect();
        if !thorough && sorted.is_empty() {
            return found;
        }
        sorted.sort_unstable();
        if let Some(top) = sorted.iter().map(|b| b.1 - 1).max() {
            if top > self.fack {
                self.fack = top;
                thorough = true;
            }
        }
        self.extend_to(self.fack);
        for &(start, end) in &sorted {
            for seq in start.max(self.una)..end.min(self.fack + 1) {
                let mark = *self.at(seq);
                match mark {
                    Mark::Sacked => continue,
                    Mark::Lost => self.lost_out -= 1,
                    Mark::Rtx { id, .. } => {
                        self.acked_rtx_id = id; // ns-2 assigns (not max) here
                        thorough = true;
                    }
                    Mark::InFlight => {}
                }
                *self.at(seq) = Mark::Sacked;
                self.sacked_out += 1;
                found.newly_sacked = true;
            }
        }
        if thorough {
            found.newly_lost = self.mark_fack_losses() | self.mark_lost_retransmissions();
        }
        found
    }

    fn mark_lost(&mut self, seq: i64) {
        *self.at(seq) = Mark::Lost;
        self.lost_out += 1;
        self.lost_scan = self.lost_scan.min(seq);
    }

    /// Packets in flight at least DUP_THRESH + 1 below `fack` are lost.
    fn mark_fack_losses(&mut self) -> bool {
        let mut any = false;
        while self.fack_scan <= self.fack - (DUP_THRESH + 1) {
            let seq = self.fack_scan;
            if *self.at(seq) == Mark::InFlight {
                self.mark_lost(seq);
                any = true;
            }
            self.fack_scan += 1;
        }
        any
    }

    /// Retransmissions overtaken by `fack` or by younger delivered retransmissions are lost.
    fn mark_lost_retransmissions(&mut self) -> bool {
        let mut any = false;
        while let Some(&seq) = self.rtx_order.front() {
            if seq >= self.una {
                if let Mark::Rtx { snd_nxt, id } = *self.at(seq) {
                    if snd_nxt > self.fack && id + DUP_THRESH + 1 >= self.acked_rtx_id {
                        break; // and so are all younger ones
                    }
                    self.mark_lost(seq);
                    any = true;
                }
            }
            self.rtx_order.pop_front();
        }
        any
    }

    /// ns-2 `GetNextRetran`: the lowest lost packet.
    pub fn next_retransmission(&mut self) -> Option<i64> {
        let end = self.una + self.marks.len() as i64;
        while self.lost_scan < end {
            if *self.at(self.lost_scan) == Mark::Lost {
                return Some(self.lost_scan);
            }
            self.lost_scan += 1;
        }
        None
    }

    /// ns-2 `MarkRetran`: `seq` (from `next_retransmission`) leaves again, before `snd_nxt`.
    pub fn mark_retransmitted(&mut self, seq: i64, snd_nxt: i64) {
        debug_assert_eq!(*self.at(seq), Mark::Lost);
        *self.at(seq) = Mark::Rtx { snd_nxt, id: self.rtx_id };
        self.rtx_id += 1;
        self.lost_out -= 1;
        self.rtx_order.push_back(seq);
    }

    /// ns-2 `MarkLoss` at a timeout: every unSACKed packet sent (below `snd_nxt`) is lost.
    pub fn mark_all_lost(&mut self, una: i64, snd_nxt: i64) {
        self.clean(una - 1); // brings `una` up to date (a no-op when every ACK updated the board)
        self.extend_to(snd_nxt - 1);
        for seq in self.una..snd_nxt {
            match *self.at(seq) {
                Mark::Sacked | Mark::Lost => {}
                _ => self.mark_lost(seq),
            }
        }
        self.lost_scan = self.una;
        self.rtx_order.clear();
        self.rtx_id = 0;
        self.acked_rtx_id = -1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marks as a string from the cumulative ACK: . in flight, S SACKed, L lost, R retransmitted.
    fn show(b: &Scoreboard) -> String {
        b.marks
            .iter()
            .map(|m| match m {
                Mark::InFlight => '.',
                Mark::Sacked => 'S',
                Mark::Lost => 'L',
                Mark::Rtx { .. } => 'R',
            })
            .collect()
    }

    #[test]
    fn fack_marks_packets_four_below_the_highest_sacked_lost() {
        let mut b = Scoreboard::default();
        // 0 acked; 1..=20 sent; 3 SACKed: fack 3, nothing 4 below it.
        let f = b.update(0, &[(3, 4)]);
        assert_eq!((show(&b).as_str(), f), ("..S", Found { newly_sacked: true, newly_lost: false }));
        // 5 SACKed: fack 5 -> packet 1 is lost (5 - 4); 2 and 4 are not.
        let f = b.update(0, &[(5, 6), (3, 4)]);
        assert_eq!((show(&b).as_str(), f), ("L.S.S", Found { newly_sacked: true, newly_lost: true }));
        assert_eq!(b.in_flight(1, 21), 20 - 1 - 2);
        assert_eq!(b.next_retransmission(), Some(1));
        b.mark_retransmitted(1, 21);
        assert_eq!(b.in_flight(1, 21), 20 - 2);
        // fack 8: 2 and 4 lost; the retransmission of 1 (sent before 21) is not overtaken.
        let f = b.update(0, &[(6, 9)]);
        assert_eq!((show(&b).as_str(), f.newly_lost), ("RLSLSSSS", true));
        assert_eq!(b.next_retransmission(), Some(2));
    }

    #[test]
    fn a_retransmission_is_lost_again_once_fack_passes_its_snd_nxt() {
        let mut b = Scoreboard::default();
        b.update(0, &[(5, 6)]); // 1 lost
        let seq = b.next_retransmission().unwrap();
        b.mark_retransmitted(seq, 10);
        b.update(0, &[(6, 10)]); // fack 9 < 10: still in flight (2 to 4 lost by FACK)
        assert_eq!(show(&b), "RLLLSSSSS");
        let f = b.update(0, &[(10, 11)]); // fack 10 >= snd_nxt 10: lost again
        assert!(f.newly_lost);
        assert_eq!(&show(&b)[..1], "L");
        assert_eq!(b.next_retransmission(), Some(1));
    }

    #[test]
    fn a_retransmission_is_lost_once_five_younger_ones_are_delivered() {
        let mut b = Scoreboard::default();
        b.update(0, &[(10, 11)]); // 1..=6 lost (fack 10)
        assert_eq!(show(&b), "LLLLLL...S");
        for _ in 0..6 {
            let seq = b.next_retransmission().unwrap();
            b.mark_retransmitted(seq, 100); // ids 0..=5
        }
        // The retransmission of 6 (id 5) is SACKed: 0 + 3 + 1 < 5, so 1 (id 0) is lost again.
        let f = b.update(0, &[(6, 7), (10, 11)]);
        assert!(f.newly_lost);
        assert_eq!(show(&b), "LRRRRS...S");
        // A cumulative ACK to 3 removes 1..=3 and their marks.
        b.update(3, &[(6, 7), (10, 11)]);
        assert_eq!(show(&b), "RRS...S");
        assert_eq!(b.in_flight(4, 100), 100 - 4 - 2);
    }

    #[test]
    fn a_timeout_marks_every_unsacked_packet_lost_and_a_full_ack_clears() {
        let mut b = Scoreboard::default();
        b.update(0, &[(3, 5)]);
        b.mark_all_lost(1, 8);
        assert_eq!(show(&b), "LLSSLLL");
        assert_eq!(b.in_flight(1, 8), 0);
        assert_eq!(b.next_retransmission(), Some(1));
        b.update(7, &[]);
        assert!(b.is_empty());
        assert_eq!(b.in_flight(8, 20), 12);
    }
}

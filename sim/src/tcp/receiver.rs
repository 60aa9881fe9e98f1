//! The TCP receiver (ns-2 `TCPSink`): cumulative ACKs carrying the highest in-order sequence,
//! out-of-order packets held until the hole fills, one ACK per packet by default. With delayed
//! ACKs (ns-2 `DelAckSink`), an in-order packet is ACKed with the next one or when the timer
//! (100 ms by default) expires; out-of-order and duplicate packets are ACKed at once.

use crate::time::Time;
use std::collections::VecDeque;

pub struct TcpReceiver {
    /// Next in-order sequence expected.
    next_expected: i64,
    /// held[i] is true when sequence next_expected + 1 + i has arrived out of order.
    held: VecDeque<bool>,
    delayed_ack: bool,
    delack: Time,
    pub delack_deadline: Option<Time>,
    /// Packets that arrived (duplicates included).
    pub arrivals: u64,
    /// New in-order packets delivered to the application.
    pub delivered: u64,
}

impl TcpReceiver {
    pub fn new(delayed_ack: bool, delack: Time) -> Self {
        Self {
            next_expected: 0,
            held: VecDeque::new(),
            delayed_ack,
            delack,
            delack_deadline: None,
            arrivals: 0,
            delivered: 0,
        }
    }

    fn ack_no(&self) -> i64 {
        self.next_expected - 1
    }

    /// A data packet arrived; returns (ACK to send now, new in-order packets delivered).
    pub fn on_data(&mut self, now: Time, seq: i64) -> (Option<i64>, u64) {
        self.arrivals += 1;
        let mut in_order = false;
        let mut new = 0u64;
        if seq == self.next_expected {
            in_order = self.held.is_empty();
            self.next_expected += 1;
            new = 1;
            while let Some(got) = self.held.pop_front() {
                if !got {
                    break;
                }
                self.next_expected += 1;
                new += 1;
            }
        } else if seq > self.next_expected {
            let idx = (seq - self.next_expected - 1) as usize;
            if self.held.len() <= idx {
                self.held.resize(idx + 1, false);
            }
            self.held[idx] = true;
        }
        self.delivered += new;
        if self.delayed_ack && in_order {
            if self.delack_deadline.take().is_some() {
                return (Some(self.ack_no()), new);
            }
            self.delack_deadline = Some(now + self.delack);
            return (None, new);
        }
        self.delack_deadline = None;
        (Some(self.ack_no()), new)
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
        assert_eq!(r.on_data(0, 0), (Some(0), 1));
        assert_eq!(r.on_data(0, 2), (Some(0), 0)); // hole at 1: duplicate ACK
        assert_eq!(r.on_data(0, 3), (Some(0), 0));
        assert_eq!(r.on_data(0, 1), (Some(3), 3)); // hole filled: jumps to 3
        assert_eq!(r.on_data(0, 2), (Some(3), 0)); // duplicate data: duplicate ACK
        assert_eq!(r.delivered, 4);
        assert_eq!(r.arrivals, 5);
    }

    #[test]
    fn several_holes() {
        let mut r = TcpReceiver::new(false, 0);
        for s in [1, 3, 5] {
            assert_eq!(r.on_data(0, s).0, Some(-1));
        }
        assert_eq!(r.on_data(0, 0).0, Some(1));
        assert_eq!(r.on_data(0, 2).0, Some(3));
        assert_eq!(r.on_data(0, 4).0, Some(5));
    }

    #[test]
    fn delayed_ack_every_second_packet_or_timer() {
        let mut r = TcpReceiver::new(true, 100);
        assert_eq!(r.on_data(0, 0).0, None);
        assert_eq!(r.on_data(1, 1).0, Some(1));
        assert_eq!(r.on_data(2, 2).0, None);
        assert_eq!(r.on_delack_timer(50), None);
        assert_eq!(r.on_delack_timer(102), Some(2));
        assert_eq!(r.on_data(200, 4).0, Some(2)); // out of order: at once
    }
}

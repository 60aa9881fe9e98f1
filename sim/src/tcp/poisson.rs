//! The sender of Enachescu et al.'s Theorem 1: NewReno window dynamics, but packets leave as a
//! Poisson process of rate window / srtt. Choices the paper leaves open:
//! - the process ignores cwnd, as in the theorem ("it can result in the window size being
//!   violated"), but never has more than 2 x wmax packets outstanding, so a stalled flow
//!   cannot flood the network;
//! - before the first RTT sample the initial window goes out as an ordinary window;
//! - fast retransmissions leave at once, outside the Poisson process.

use super::newreno::NewReno;
use super::{AckKind, Release, TcpState, Variant};

#[derive(Default)]
pub struct PoissonTcp(NewReno);

impl Variant for PoissonTcp {
    fn on_new_ack(&mut self, st: &mut TcpState, ack: i64) -> AckKind {
        self.0.on_new_ack(st, ack)
    }

    fn send_budget(&self, st: &TcpState, max_burst: u32) -> Option<u32> {
        self.0.send_budget(st, max_burst)
    }

    fn on_fast_retransmit(&mut self) {
        self.0.on_fast_retransmit()
    }

    fn release(&self) -> Release {
        Release::Poisson
    }
}

//! Paced TCP (Enachescu et al. 2006, after Aggarwal et al. 2000): NewReno whose transmissions
//! are spread evenly over the RTT, one every srtt / window. Choices the paper leaves open:
//! - before the first RTT sample there is no srtt, so the initial window goes out unpaced;
//! - fast retransmissions leave at once (they repair a hole; pacing them only adds delay);
//!   everything else, including go-back-N after a timeout, is paced.

use super::newreno::NewReno;
use super::{AckKind, Release, TcpState, Variant};

#[derive(Default)]
pub struct Paced(NewReno);

impl Variant for Paced {
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
        Release::Paced
    }
}

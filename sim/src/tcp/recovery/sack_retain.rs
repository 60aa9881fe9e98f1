//! SACK loss recovery that keeps its scoreboard across a retransmission timeout
//! (`recovery = sack_retain`): RFC 6675 recovery (`sack.rs`) with the option of its section 5.1
//! (RFC Errata 1610) that ns-3 3.44 (`TcpSocketBase::ReTxTimeout`, `TcpTxBuffer::SetSentListLost`
//! with SACK on) and Linux (`tcp_enter_loss`) take. After a timeout every unSACKed packet sent is
//! lost and is retransmitted by `NextSeg()`, SACKed ones never again; the window grows as after
//! go-back-N. Under a pacing release (BBR) what recovery sends is paced, as ns-3 paces every
//! transmission. `sack` keeps RFC 2018's rule, forgetting the scoreboard, and sends recovery's
//! packets at once, as ns-2's Sack1 does.
//! Details: docs/tcp.md, `tcp/recovery/sack_retain.rs`.

use super::sack::Sack;
use crate::tcp::sender_core::SenderCore;
use crate::tcp::{Ack, AckKind, AnyLaw, Recovery, Reports, TcpState};
use crate::time::Time;

pub const ENTRY: super::RecoveryEntry = super::RecoveryEntry {
    name: "sack_retain",
    make: || SackRetain(Sack::retaining()).into(),
    releases: &[],
    jitter: false,
};

/// `Sack` built to retain (`Sack::retaining`); every call goes to it.
pub struct SackRetain(Sack);

impl Recovery for SackRetain {
    fn on_sack(&mut self, st: &TcpState, blocks: &[(i64, i64)], ackno: i64) {
        self.0.on_sack(st, blocks, ackno)
    }

    fn report_deliveries(&mut self) -> Reports {
        self.0.report_deliveries()
    }

    fn delivered(&self) -> &[(i64, i64)] {
        self.0.delivered()
    }

    fn on_new_ack(&mut self, st: &mut TcpState, law: &mut AnyLaw, ack: &Ack, ackno: i64) -> AckKind {
        self.0.on_new_ack(st, law, ack, ackno)
    }

    fn send_budget(&self, st: &TcpState, max_burst: u32) -> Option<u32> {
        self.0.send_budget(st, max_burst)
    }

    fn on_fast_retransmit(&mut self, st: &mut TcpState) {
        self.0.on_fast_retransmit(st)
    }

    fn inflates_window(&self) -> bool {
        self.0.inflates_window()
    }

    fn send(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
        self.0.send(core, now, out)
    }

    fn uses_sack(&self) -> bool {
        self.0.uses_sack()
    }

    fn mark_lost(&mut self, st: &TcpState) -> u64 {
        self.0.mark_lost(st)
    }

    fn in_flight(&self, st: &TcpState) -> i64 {
        self.0.in_flight(st)
    }

    fn on_timeout(&mut self, st: &TcpState) {
        self.0.on_timeout(st)
    }

    fn configure(&mut self, law_sets_window: bool, paced: bool) {
        self.0.configure(law_sets_window, paced)
    }

    fn on_send_timer(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
        self.0.on_send_timer(core, now, out)
    }

    fn goes_back_n(&self) -> bool {
        self.0.goes_back_n()
    }
}

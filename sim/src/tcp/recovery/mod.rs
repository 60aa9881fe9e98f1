//! Loss recovery (`tcp.recovery`): after three duplicate ACKs (reno, newreno, sack), or from a
//! scoreboard (linux, with `scoreboard.rs`); one file each, one line in `recoveries!` below.

pub mod rack_marks;
pub mod scoreboard;

use super::sender_core::SenderCore;
use super::{Ack, AckKind, AnyLaw, Recovery, Reports, TcpState};
use crate::time::Time;

/// A registered loss recovery: its name (`tcp.recovery`) and its constructor.
pub struct RecoveryEntry {
    pub name: &'static str,
    pub make: fn() -> AnyRecovery,
    /// The releases it combines with (empty: any). A recovery that decides every transmission
    /// itself names those it implements: the ACK clock (`window`), and pacing (`paced`).
    pub releases: &'static [&'static str],
    /// It applies `tcp.send_jitter_ms` itself, with each of those releases (`send_clock.rs`).
    pub jitter: bool,
}

/// Declares the recoveries: for each `module::Type`, `pub mod module;`, an `AnyRecovery` variant
/// dispatching `Recovery` to it, and `module::ENTRY` in `RECOVERIES` (see `tcp` on why a macro).
macro_rules! recoveries {
    ($($module:ident::$ty:ident $([$boxed:ident])?),* $(,)?) => {
        $(pub mod $module;)*

        /// A loss recovery, statically dispatched; the scoreboards boxed (`held!`): a Reno flow
        /// need not carry RACK-TLP's 576 bytes, at a pointer's reach on every ACK for a SACK one.
        pub enum AnyRecovery {
            $($ty(held!($module::$ty $(, $boxed)?)),)*
        }

        $(impl From<$module::$ty> for AnyRecovery {
            fn from(r: $module::$ty) -> Self {
                AnyRecovery::$ty(r.into())
            }
        })*

        impl Recovery for AnyRecovery {
            #[inline]
            fn on_new_ack(&mut self, st: &mut TcpState, law: &mut AnyLaw, ack: &Ack, ackno: i64) -> AckKind {
                match self { $(AnyRecovery::$ty(r) => r.on_new_ack(st, law, ack, ackno),)* }
            }
            #[inline]
            fn send_budget(&self, st: &TcpState, max_burst: u32) -> Option<u32> {
                match self { $(AnyRecovery::$ty(r) => r.send_budget(st, max_burst),)* }
            }
            #[inline]
            fn on_fast_retransmit(&mut self, st: &mut TcpState) {
                match self { $(AnyRecovery::$ty(r) => r.on_fast_retransmit(st),)* }
            }
            #[inline]
            fn on_sack(&mut self, st: &TcpState, blocks: &[(i64, i64)], ackno: i64) {
                match self { $(AnyRecovery::$ty(r) => r.on_sack(st, blocks, ackno),)* }
            }
            #[inline]
            fn inflates_window(&self) -> bool {
                match self { $(AnyRecovery::$ty(r) => r.inflates_window(),)* }
            }
            #[inline]
            fn send(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
                match self { $(AnyRecovery::$ty(r) => r.send(core, now, out),)* }
            }
            #[inline]
            fn on_timeout(&mut self, st: &TcpState) {
                match self { $(AnyRecovery::$ty(r) => r.on_timeout(st),)* }
            }
            #[inline]
            fn configure(&mut self, law_sets_window: bool, paced: bool) {
                match self { $(AnyRecovery::$ty(r) => r.configure(law_sets_window, paced),)* }
            }
            #[inline]
            fn after_ack(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) {
                match self { $(AnyRecovery::$ty(r) => r.after_ack(core, now, out),)* }
            }
            #[inline]
            fn on_send_timer(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
                match self { $(AnyRecovery::$ty(r) => r.on_send_timer(core, now, out),)* }
            }
            #[inline]
            fn in_flight(&self, st: &TcpState) -> i64 {
                match self { $(AnyRecovery::$ty(r) => r.in_flight(st),)* }
            }
            #[inline]
            fn wants_send_times(&self) -> bool {
                match self { $(AnyRecovery::$ty(r) => r.wants_send_times(),)* }
            }
            #[inline]
            fn report_deliveries(&mut self) -> Reports {
                match self { $(AnyRecovery::$ty(r) => r.report_deliveries(),)* }
            }
            #[inline]
            fn delivered(&self) -> &[(i64, i64)] {
                match self { $(AnyRecovery::$ty(r) => r.delivered(),)* }
            }
            #[inline]
            fn on_timer(&mut self, core: &mut SenderCore, law: &mut AnyLaw, now: Time, out: &mut Vec<i64>) -> bool {
                match self { $(AnyRecovery::$ty(r) => r.on_timer(core, law, now, out),)* }
            }
            #[inline]
            fn goes_back_n(&self) -> bool {
                match self { $(AnyRecovery::$ty(r) => r.goes_back_n(),)* }
            }
            #[inline]
            fn mark_lost(&mut self, st: &TcpState) -> u64 {
                match self { $(AnyRecovery::$ty(r) => r.mark_lost(st),)* }
            }
            #[inline]
            fn uses_sack(&self) -> bool {
                match self { $(AnyRecovery::$ty(r) => r.uses_sack(),)* }
            }
            #[inline]
            fn counts_rtt_ticks(&self) -> bool {
                match self { $(AnyRecovery::$ty(r) => r.counts_rtt_ticks(),)* }
            }
            #[inline]
            fn on_any_ack(
                &mut self,
                core: &mut SenderCore,
                law: &mut AnyLaw,
                ack: &Ack,
                ackno: i64,
                sack: &[(i64, i64)],
                out: &mut Vec<i64>,
            ) -> bool {
                match self { $(AnyRecovery::$ty(r) => r.on_any_ack(core, law, ack, ackno, sack, out),)* }
            }
        }

        /// The loss recoveries (`tcp.recovery`).
        pub const RECOVERIES: &[RecoveryEntry] = &[$($module::ENTRY,)*];
    };
}

// The recoveries: one line each.
recoveries! {
    reno::Reno,
    newreno::NewReno,
    sack::Sack [boxed],
    sack_retain::SackRetain [boxed],
    linux::Linux [boxed],
    prr::Prr [boxed],
    rack_tlp::RackTlp [boxed],
}

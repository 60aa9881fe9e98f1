//! Loss recovery as ns-2 2.35's TCP-Linux runs it (`recovery = linux`; `tcp/tcp-linux.cc`):
//! scoreboard-driven, rate halving. Details: docs/tcp.md, `tcp/recovery/linux.rs`.

use super::scoreboard::{Found, Scoreboard};
use crate::tcp::sender_core::SenderCore;
use crate::tcp::{Ack, AckKind, AnyLaw, CwndAction, Recovery, TcpState, WindowLaw};
use crate::time::Time;

/// Linux's `tcp_max_burst`, as ns-2's TCP-Linux sets it: the most a window may exceed what is in
/// flight when recovery ends.
const MAX_BURST_PKTS: i64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CaState {
    Open,
    Recovery,
    Loss,
}

pub const ENTRY: super::RecoveryEntry = super::RecoveryEntry {
    name: "linux",
    make: || Linux::default().into(),
    releases: &["window"],
    jitter: false,
};

pub struct Linux {
    board: Scoreboard,
    state: CaState,
    /// ns-2's `next_pkts_in_flight_`: what rate halving still lets be in flight.
    next_pif: i64,
}

impl Default for Linux {
    fn default() -> Self {
        Self { board: Scoreboard::default(), state: CaState::Open, next_pif: 0 }
    }
}

impl Linux {
    fn in_flight(&self, st: &TcpState) -> i64 {
        self.board.in_flight(st.highest_ack + 1, st.t_seqno)
    }

    /// ns-2 `tcp_fastretrans_alert`, for an ACK that is not a plain new ACK in Open.
    fn alert(&mut self, core: &mut SenderCore, law: &mut AnyLaw, found: Found, now: Time) {
        let st = &mut core.st;
        if self.state != CaState::Open && st.highest_ack >= st.recover {
            self.board.clear();
            if st.cwnd < st.ssthresh {
                st.cwnd = st.ssthresh.min((self.in_flight(st) + MAX_BURST_PKTS) as f64);
            }
            self.state = CaState::Open;
            st.last_action = CwndAction::Exited;
            self.next_pif = 0;
            return;
        }
        if self.state != CaState::Recovery && found.newly_lost {
            st.recover = st.maxseq;
            st.last_action = CwndAction::DupAck;
            self.next_pif = st.cwnd as i64;
            law.on_fast_retransmit(st, now);
            if let Some(w) = law.min_cwnd(st) {
                st.cwnd = w.min(st.wmax);
            }
            core.stats.fast_retransmits += 1;
            self.state = CaState::Recovery;
        }
    }

    /// ns-2 `send_much`.
    fn send_much(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) {
        self.next_pif = self.next_pif.min(self.in_flight(&core.st) + 1);
        let mut sent = 0;
        loop {
            let st = &core.st;
            let window = st.cwnd.min(st.wmax) as i64;
            let in_flight = self.in_flight(st);
            if in_flight >= window.max(self.next_pif) {
                break;
            }
            if let Some(seq) = self.board.next_retransmission() {
                self.board.mark_retransmitted(seq, st.t_seqno);
                core.retransmit(now, seq, out);
            } else if st.t_seqno < core.size_pkts() && st.t_seqno <= st.highest_ack + st.wmax as i64 {
                core.send_next(now, out);
            } else {
                break;
            }
            self.next_pif = self.next_pif.min((self.in_flight(&core.st) - 1).max(1));
            sent += 1;
            if core.max_burst() > 0 && sent >= core.max_burst() {
                break;
            }
        }
    }
}

impl Recovery for Linux {
    fn on_new_ack(&mut self, st: &mut TcpState, law: &mut AnyLaw, ack: &Ack, _ackno: i64) -> AckKind {
        // Not reached: `on_any_ack` takes every ACK.
        law.on_ack(st, ack);
        AckKind::Full
    }

    fn send_budget(&self, _st: &TcpState, _max_burst: u32) -> Option<u32> {
        None // `send` decides
    }

    fn inflates_window(&self) -> bool {
        false
    }

    fn uses_sack(&self) -> bool {
        true
    }

    fn in_flight(&self, st: &TcpState) -> i64 {
        Linux::in_flight(self, st)
    }

    fn counts_rtt_ticks(&self) -> bool {
        true
    }

    fn goes_back_n(&self) -> bool {
        false
    }

    fn on_any_ack(
        &mut self,
        core: &mut SenderCore,
        law: &mut AnyLaw,
        ack: &Ack,
        ackno: i64,
        sack: &[(i64, i64)],
        out: &mut Vec<i64>,
    ) -> bool {
        let advanced = ackno > core.st.highest_ack;
        let prior_in_flight = self.in_flight(&core.st);
        let found =
            if !sack.is_empty() || !self.board.is_empty() { self.board.update(ackno, sack) } else { Found::default() };
        // Linux's tcp_ack_is_dubious and tcp_may_raise_cwnd.
        let dubious = !advanced || found.newly_sacked || self.state != CaState::Open;
        // Every module's cong_avoid returns first unless the window was full before this ACK
        // (`tcp_is_cwnd_limited`, which ns-2's glue defines as in flight >= cwnd).
        if advanced && self.state != CaState::Recovery && prior_in_flight as f64 >= core.st.cwnd.min(core.st.wmax) {
            law.on_ack(&mut core.st, ack);
        }
        if advanced {
            core.st.highest_ack = ackno;
            core.st.t_seqno = core.st.t_seqno.max(ackno + 1);
        }
        core.renew_rto(ack.now);
        if dubious {
            self.alert(core, law, found, ack.now);
        }
        self.send_much(core, ack.now, out);
        true
    }

    fn send(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
        self.send_much(core, now, out);
        true
    }

    fn on_timeout(&mut self, st: &TcpState) {
        self.board.mark_all_lost(st.highest_ack + 1, st.t_seqno);
        self.state = CaState::Loss;
        self.next_pif = 0;
    }
}

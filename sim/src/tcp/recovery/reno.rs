//! Reno recovery (RFC 5681), as ns-2 2.35's `Agent/TCP/Reno`.
//! Details: docs/tcp.md, `tcp/recovery/reno.rs`.

use crate::tcp::{Ack, AckKind, AnyLaw, CwndAction, Recovery, TcpState, WindowLaw};

pub const ENTRY: super::RecoveryEntry = super::RecoveryEntry {
    name: "reno",
    make: || Reno.into(),
    releases: &[],
    jitter: false,
};

pub struct Reno;

impl Recovery for Reno {
    fn on_new_ack(&mut self, st: &mut TcpState, law: &mut AnyLaw, ack: &Ack, _ackno: i64) -> AckKind {
        if st.last_action == CwndAction::DupAck {
            st.last_action = CwndAction::Exited;
        }
        st.dupwnd = 0;
        law.on_ack(st, ack);
        AckKind::Full
    }

    fn send_budget(&self, st: &TcpState, max_burst: u32) -> Option<u32> {
        // ns-2 Reno sends on ordinary ACKs and from the third duplicate on, never on the first two.
        (st.dupacks == 0 || st.dupacks >= 3).then_some(max_burst)
    }
}

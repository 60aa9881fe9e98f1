//! NewReno recovery (RFC 6582), as ns-2 2.35's `Agent/TCP/Newreno`.
//! Details: docs/tcp.md, `tcp/recovery/newreno.rs`.

use crate::tcp::{Ack, AckKind, AnyLaw, CwndAction, Recovery, TcpState, WindowLaw};

pub const ENTRY: super::RecoveryEntry = super::RecoveryEntry {
    name: "newreno",
    make: || NewReno::default().into(),
    releases: &[],
    jitter: false,
};

#[derive(Default)]
pub struct NewReno {
    /// A partial ACK has been seen in the current recovery.
    first_partial_seen: bool,
}

impl Recovery for NewReno {
    fn on_new_ack(&mut self, st: &mut TcpState, law: &mut AnyLaw, ack: &Ack, ackno: i64) -> AckKind {
        if ackno >= st.recover || st.last_action != CwndAction::DupAck {
            if st.dupwnd > 0 {
                st.dupwnd = 0;
                if st.last_action == CwndAction::DupAck {
                    st.last_action = CwndAction::Exited;
                }
            }
            self.first_partial_seen = false;
            law.on_ack(st, ack);
            return AckKind::Full;
        }
        // Partial ACK: deflate by the amount acknowledged, add back one for the retransmission.
        let deflate = ackno - st.highest_ack;
        if st.dupwnd > deflate {
            st.dupwnd -= deflate - 1;
        } else {
            st.cwnd -= (deflate - st.dupwnd) as f64;
            st.dupwnd = 1; // still > 0: flags fast recovery
        }
        if st.cwnd < 1.0 {
            st.cwnd = 1.0;
        }
        let restart_timer = !self.first_partial_seen;
        self.first_partial_seen = true;
        AckKind::Partial { restart_timer }
    }

    fn send_budget(&self, st: &TcpState, max_burst: u32) -> Option<u32> {
        // ns-2 NewReno: normal sending on ordinary ACKs; during recovery at most 2 per ACK.
        if st.dupacks == 0 {
            Some(max_burst)
        } else if st.dupacks >= 3 {
            Some(2)
        } else {
            None
        }
    }

    fn on_fast_retransmit(&mut self, _st: &mut TcpState) {
        self.first_partial_seen = false;
    }
}

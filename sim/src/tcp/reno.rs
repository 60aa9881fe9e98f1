//! TCP Reno (RFC 5681), as ns-2's `Agent/TCP/Reno`: any new ACK ends fast recovery and deflates
//! the window to ssthresh. A second loss in the same window cannot start another fast
//! retransmit (ns-2's `bugFix_`; the duplicate ACKs are below `recover`), so it usually ends in a
//! retransmission timeout: the weakness that makes Reno need larger buffers.

use super::{AckKind, CwndAction, TcpState, Variant};

pub struct Reno;

impl Variant for Reno {
    fn on_new_ack(&mut self, st: &mut TcpState, _ack: i64) -> AckKind {
        if st.last_action == CwndAction::DupAck {
            st.last_action = CwndAction::Exited;
        }
        st.dupwnd = 0;
        st.open_cwnd();
        AckKind::Full
    }

    fn send_budget(&self, st: &TcpState, max_burst: u32) -> Option<u32> {
        // ns-2 Reno sends on ordinary ACKs and from the third duplicate on, never on the first two.
        (st.dupacks == 0 || st.dupacks >= 3).then_some(max_burst)
    }
}

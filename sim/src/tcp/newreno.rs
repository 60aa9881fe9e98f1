//! The AIMD window law of Reno and NewReno (`cc = newreno`), as ns-2 2.35's `Agent/TCP`
//! (`opencwnd`, `slowdown`). Details: docs/tcp.md, `tcp/newreno.rs`.

use super::{Ack, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{normalize, Value, VariantDef};
use crate::time::Time;

crate::params! {
    /// The AIMD law has no parameters of its own.
    pub struct NewRenoParams as "NewRenoParams" {}
}

pub const ENTRY: LawEntry = LawEntry {
    def: VariantDef {
        name: "newreno",
        doc: "AIMD (RFC 5681 / 6582 window law, ns-2 opencwnd / slowdown)",
        params: NewRenoParams::specs,
        keys: NewRenoParams::KEYS,
        normalize: normalize::<NewRenoParams>,
    },
    factory,
    needs_ecn: false,
    needs_pacing: false,
    modes: &[],
};

fn factory(_: &Value) -> LawFactory {
    Box::new(|| Aimd.into())
}

pub struct Aimd;

impl WindowLaw for Aimd {
    fn on_ack(&mut self, st: &mut TcpState, _ack: &Ack) {
        if st.cwnd < st.ssthresh {
            st.cwnd += 1.0;
        } else {
            st.cwnd += 1.0 / st.cwnd;
        }
        if st.cwnd > st.wmax {
            st.cwnd = st.wmax;
        }
    }

    fn on_fast_retransmit(&mut self, st: &mut TcpState, _now: Time) {
        let half = 0.5 * st.loss_window();
        st.ssthresh = half.floor().max(2.0);
        st.cwnd = half.max(1.0);
    }

    fn on_timeout(&mut self, st: &mut TcpState, _now: Time) {
        st.ssthresh = (0.5 * st.loss_window()).floor().max(2.0);
        st.cwnd = 1.0;
    }

    /// ns-3's `TcpNewReno::GetSsThresh`: half the flight, at least 2, unfloored (ns-3 counts bytes);
    /// a repeated timeout keeps ssthresh (`ReTxTimeout`). At a fast retransmit the window is
    /// ssthresh, as ns-3's `TcpClassicRecovery::EnterRecovery` sets it.
    fn on_loss_from_flight(&mut self, st: &mut TcpState, _now: Time, flight: f64, timeout: Option<bool>) {
        let ssthresh = (0.5 * flight).max(2.0);
        match timeout {
            None => (st.ssthresh, st.cwnd) = (ssthresh, ssthresh),
            Some(repeated) => {
                if !repeated {
                    st.ssthresh = ssthresh;
                }
                st.cwnd = 1.0;
            }
        }
    }

    /// Linux's Reno module (`tcp_reno_min_cwnd`), for the `linux` recovery.
    fn min_cwnd(&self, st: &TcpState) -> Option<f64> {
        Some(super::linux::LinuxCwnd::reno_min_cwnd(st))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack() -> Ack {
        Ack { now: 0, acked_pkts: 1, rtt_sample_s: None }
    }

    #[test]
    fn slow_start_then_one_packet_per_window() {
        let mut st = TcpState::new(2.0, 4.0, 100.0);
        let mut law = Aimd;
        law.on_ack(&mut st, &ack());
        law.on_ack(&mut st, &ack());
        assert_eq!(st.cwnd, 4.0);
        law.on_ack(&mut st, &ack());
        assert_eq!(st.cwnd, 4.25);
    }

    #[test]
    fn losses_halve_or_collapse() {
        let mut st = TcpState::new(2.0, 100.0, 100.0);
        st.cwnd = 21.0;
        Aimd.on_fast_retransmit(&mut st, 0);
        assert_eq!((st.ssthresh, st.cwnd), (10.0, 10.5));
        Aimd.on_timeout(&mut st, 0);
        assert_eq!((st.ssthresh, st.cwnd), (5.0, 1.0));
    }
}

//! The AIMD window law of Reno and NewReno (`cc = newreno`), as ns-2 2.35's `Agent/TCP`
//! (`opencwnd`, `slowdown`): one packet of growth an ACK in slow start, 1/cwnd in congestion
//! avoidance. With `count_acked`, as Linux's `tcp_reno_cong_avoid` (`tcp_slow_start`,
//! `tcp_cong_avoid_ai` in net/ipv4/tcp_cong.c): the packets an ACK acknowledges, so a delayed ACK
//! covering two grows the window twice as much. Details: docs/tcp.md, `tcp/newreno.rs`.

use super::{Ack, LawEntry, LawFactory, TcpState, WindowLaw};
use crate::params::{normalize, Param, Value, VariantDef};
use crate::time::Time;

crate::params! {
    /// The AIMD law's one choice.
    pub struct NewRenoParams as "NewRenoParams" {
        /// Grow by the packets each ACK acknowledges (Linux, RFC 3465's counting), not per ACK
        /// (ns-2): with delayed ACKs, a packet a round trip in congestion avoidance, not half.
        count_acked: bool = false;
    }
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

fn factory(v: &Value) -> LawFactory {
    let count_acked = NewRenoParams::parse(v).expect("validated").count_acked;
    Box::new(move || Aimd { count_acked }.into())
}

#[derive(Default)]
pub struct Aimd {
    count_acked: bool,
}

impl WindowLaw for Aimd {
    fn on_ack(&mut self, st: &mut TcpState, ack: &Ack) {
        if self.count_acked {
            // tcp_slow_start up to ssthresh, what is left to tcp_cong_avoid_ai (1/cwnd a packet).
            let acked = ack.acked_pkts.max(1) as f64;
            let slow = if st.cwnd < st.ssthresh { acked.min(st.ssthresh - st.cwnd) } else { 0.0 };
            st.cwnd += slow;
            st.cwnd += (acked - slow) / st.cwnd;
        } else if st.cwnd < st.ssthresh {
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
        let mut law = Aimd::default();
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
        Aimd::default().on_fast_retransmit(&mut st, 0);
        assert_eq!((st.ssthresh, st.cwnd), (10.0, 10.5));
        Aimd::default().on_timeout(&mut st, 0);
        assert_eq!((st.ssthresh, st.cwnd), (5.0, 1.0));
    }

    /// Counting what each ACK acknowledges (Linux): a delayed ACK of 2 packets grows slow start
    /// by 2, up to ssthresh, and the rest at 1/cwnd a packet; per ACK (ns-2) it grows by 1.
    #[test]
    fn counting_acked_packets_grows_as_linux_with_delayed_acks() {
        let two = Ack { now: 0, acked_pkts: 2, rtt_sample_s: None };
        let mut st = TcpState::new(2.0, 5.0, 100.0);
        let mut law = Aimd { count_acked: true };
        law.on_ack(&mut st, &two);
        assert_eq!(st.cwnd, 4.0);
        law.on_ack(&mut st, &two);
        assert_eq!(st.cwnd, 5.0 + 1.0 / 5.0, "one packet to ssthresh 5, the other at 1/cwnd");
        let mut per_ack = TcpState::new(2.0, 5.0, 100.0);
        Aimd::default().on_ack(&mut per_ack, &two);
        assert_eq!(per_ack.cwnd, 3.0);
    }
}

//! Proportional Rate Reduction (`recovery = prr`), RFC 6937 over RFC 6675's SACK scoreboard and
//! `NextSeg()` (`sack.rs`): during recovery, each ACK lets out data in proportion to what it
//! delivered, ssthresh / RecoverFS of it while pipe is above ssthresh, then up to ssthresh with
//! the slow-start reduction bound. SSRB's extra segment goes only with an ACK that advances the
//! cumulative ACK (conservative otherwise), as Linux's `tcp_cwnd_reduction` and ns-3's
//! `TcpPrrRecovery` (after draft-ietf-tcpm-prr-rfc6937bis) do. Recovery ends with cwnd = ssthresh.
//! Details: docs/tcp.md, `tcp/recovery/prr.rs`.

use super::sack::Sack;
use crate::tcp::sender_core::SenderCore;
use crate::tcp::{Ack, AckKind, AnyLaw, Recovery, Reports, TcpState};
use crate::time::Time;

pub const ENTRY: super::RecoveryEntry = super::RecoveryEntry {
    name: "prr",
    make: || Prr::default().into(),
    releases: &[],
    jitter: false,
};

/// PRR's counters for one recovery episode, and RFC 6937's `sndcnt` (also used by `rack_tlp`).
#[derive(Clone, Copy, Debug, Default)]
pub struct PrrCount {
    /// Data delivered (cumulatively or by SACK) and sent since recovery began, in packets.
    pub delivered: i64,
    pub out: i64,
    /// RecoverFS: snd.nxt - snd.una when recovery began.
    pub recover_fs: i64,
}

impl PrrCount {
    pub fn start(recover_fs: i64) -> Self {
        Self { delivered: 0, out: 0, recover_fs }
    }

    /// RFC 6937 section 3's `sndcnt` for an ACK that delivered `delivered` packets (already
    /// added to `self.delivered`), given pipe and ssthresh.
    pub fn sndcnt(&self, pipe: i64, ssthresh: f64, delivered: i64, una_advanced: bool) -> i64 {
        let n = if pipe as f64 > ssthresh {
            (self.delivered as f64 * ssthresh / self.recover_fs.max(1) as f64).ceil() as i64 - self.out
        } else {
            let bound = (self.delivered - self.out).max(delivered) + i64::from(una_advanced);
            bound.min((ssthresh - pipe as f64).floor() as i64)
        };
        n.max(0)
    }
}

#[derive(Default)]
pub struct Prr {
    sack: Sack,
    count: PrrCount,
    /// The cumulative ACK and the SACKed count after the last ACK, to measure DeliveredData.
    last_una: i64,
    last_sacked: i64,
    /// The window law sets the window (BBR): recover as RFC 6675 does, without PRR's count.
    law_sets_window: bool,
}

impl Recovery for Prr {
    fn on_sack(&mut self, st: &TcpState, blocks: &[(i64, i64)], ackno: i64) {
        self.sack.on_sack(st, blocks, ackno);
    }

    fn report_deliveries(&mut self) -> Reports {
        self.sack.report_deliveries()
    }

    fn delivered(&self) -> &[(i64, i64)] {
        self.sack.delivered()
    }

    fn on_new_ack(&mut self, st: &mut TcpState, law: &mut AnyLaw, ack: &Ack, ackno: i64) -> AckKind {
        if self.sack.in_recovery() && ackno >= st.recover && !self.law_sets_window {
            st.cwnd = st.ssthresh.min(st.wmax); // RFC 6937: the window at the end of recovery
        }
        self.sack.on_new_ack(st, law, ack, ackno)
    }

    fn send_budget(&self, st: &TcpState, max_burst: u32) -> Option<u32> {
        self.sack.send_budget(st, max_burst)
    }

    /// The retransmission the sender just made is the first of `prr_out`.
    fn on_fast_retransmit(&mut self, st: &mut TcpState) {
        self.sack.on_fast_retransmit(st);
        self.count = PrrCount { out: 1, ..PrrCount::start(st.outstanding()) };
    }

    fn inflates_window(&self) -> bool {
        false
    }

    fn configure(&mut self, law_sets_window: bool, _paced: bool) {
        self.law_sets_window = law_sets_window;
    }

    fn send(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) -> bool {
        if self.law_sets_window {
            return self.sack.send(core, now, out);
        }
        let (una, sacked) = (core.st.highest_ack, self.sack.sacked_pkts());
        let delivered = (una - self.last_una).max(0) + (sacked - self.last_sacked);
        let una_advanced = una > self.last_una;
        (self.last_una, self.last_sacked) = (una, sacked);
        if !self.sack.in_recovery() {
            return false;
        }
        if delivered <= 0 {
            return true; // Linux: nothing delivered, nothing sent
        }
        self.count.delivered += delivered;
        let pipe = self.sack.pipe(&core.st);
        let sndcnt = self.count.sndcnt(pipe, core.st.ssthresh, delivered, una_advanced);
        core.st.cwnd = (pipe + sndcnt) as f64;
        for _ in 0..sndcnt {
            if !self.sack.send_one(core, now, out) {
                break;
            }
            self.count.out += 1;
        }
        true
    }

    fn uses_sack(&self) -> bool {
        true
    }

    fn mark_lost(&mut self, st: &TcpState) -> u64 {
        self.sack.mark_lost(st)
    }

    fn in_flight(&self, st: &TcpState) -> i64 {
        self.sack.pipe(st)
    }

    fn on_timeout(&mut self, st: &TcpState) {
        self.sack.on_timeout(st);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6937 section 5's first example: 20 segments out, one lost, ssthresh 10. While pipe is
    /// above ssthresh, PRR sends one segment for every other one delivered (ssthresh / RecoverFS
    /// = 1/2), spreading the reduction over the RTT instead of RFC 6675's silence then burst.
    #[test]
    fn above_ssthresh_one_segment_per_two_delivered() {
        let mut prr = PrrCount { out: 1, ..PrrCount::start(20) };
        let mut sent = vec![];
        let mut pipe = 19; // the lost segment is out of pipe, its retransmission in it
        for _ in 0..19 {
            prr.delivered += 1;
            let n = prr.sndcnt(pipe, 10.0, 1, false);
            prr.out += n;
            pipe = pipe - 1 + n;
            sent.push(n);
        }
        // The fast retransmission took the first ACK's share (prr_out starts at 1).
        assert_eq!(&sent[..7], &[0, 0, 1, 0, 1, 0, 1], "{sent:?}");
        assert_eq!(prr.out, 10, "ssthresh's worth sent over the round: {sent:?}");
    }

    /// RFC 6937 section 5's second example: when pipe falls below ssthresh (further losses), the
    /// slow-start reduction bound sends at most one more than delivered, and catches up only
    /// on ACKs that advance the cumulative ACK; otherwise the conservative bound holds.
    #[test]
    fn below_ssthresh_the_reduction_bound_limits_catch_up() {
        let prr = PrrCount { delivered: 8, out: 8, recover_fs: 20 };
        assert_eq!(prr.sndcnt(4, 10.0, 1, true), 2, "SSRB: delivered + 1");
        assert_eq!(prr.sndcnt(4, 10.0, 1, false), 1, "CRB: what was delivered");
        assert_eq!(prr.sndcnt(9, 10.0, 3, true), 1, "never above ssthresh - pipe");
        let prr = PrrCount { delivered: 12, out: 6, recover_fs: 20 };
        assert_eq!(prr.sndcnt(4, 10.0, 1, false), 6, "owed from earlier ACKs (delivered - out)");
    }
}

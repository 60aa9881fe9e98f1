//! Tests of the sender (`sender.rs`) through a tiny in-test network: losses, recoveries, ECN.

use super::*;
use crate::rng::{stream, Stream};
use crate::tcp::receiver::{SackList, TcpReceiver};
use crate::tcp::TcpConfig;
use std::collections::{HashSet, VecDeque};

/// The test senders' settings (`TcpParams::for_tests`).
pub(crate) fn params() -> TcpParams {
    TcpParams::for_tests()
}

/// A sender of the tcp preset `name`.
fn make(name: &str) -> TcpSender {
    let t = TcpConfig::named(name);
    TcpSender::new(
        params().into(),
        (t.law_factory())(),
        t.make_recovery(),
        t.make_release(stream(1, Stream::Sender, 0)),
    )
}

/// A sender of window law `cc` with the `linux` recovery.
fn linux(cc: &str) -> TcpSender {
    with_recovery(cc, "linux")
}

/// A sender of window law `cc` with loss recovery `recovery`.
fn with_recovery(cc: &str, recovery: &str) -> TcpSender {
    let v = crate::params::Value::map(vec![
        ("cc", crate::params::Value::str(cc)),
        ("recovery", crate::params::Value::str(recovery)),
    ]);
    let t = <TcpConfig as crate::params::Param>::parse(&v).unwrap();
    TcpSender::new(
        params().into(),
        (t.law_factory())(),
        t.make_recovery(),
        t.make_release(stream(1, Stream::Sender, 0)),
    )
}

/// A lossless-except-`drops` path with a 100 ms RTT and 1 ms between packets; returns the
/// retransmitted sequences (in order) and the number of timeouts until `until` is acked.
fn recover(variant: &str, drops: &[i64], until: i64) -> (Vec<i64>, u64) {
    let s = make(variant);
    let (retx, timeouts, _) = drive(s, drops, until);
    (retx, timeouts)
}

/// `recover` for a given sender; also returns every sequence sent.
fn drive(s: TcpSender, drops: &[i64], until: i64) -> (Vec<i64>, u64, HashSet<i64>) {
    let (retx, timeouts, sent) = drive_timed(s, drops, until);
    (retx.into_iter().map(|(_, seq)| seq).collect(), timeouts, sent)
}

const RTT: Time = 100_000_000_000;

/// `drive`, with the time of each retransmission. The receiver's ACKs carry its SACK blocks
/// (a sender without SACK ignores them).
fn drive_timed(mut s: TcpSender, drops: &[i64], until: i64) -> (Vec<(Time, i64)>, u64, HashSet<i64>) {
    let (retx, timeouts, sent, _) = drive_logged(&mut s, drops, until);
    (retx, timeouts, sent)
}

/// `drive_timed`, with every transmission's (time, sequence) as well.
#[allow(clippy::type_complexity)]
fn drive_logged(
    s: &mut TcpSender,
    drops: &[i64],
    until: i64,
) -> (Vec<(Time, i64)>, u64, HashSet<i64>, Vec<(Time, i64)>) {
    const GAP: Time = 1_000_000_000;
    let mut log = Vec::new();
    let mut r = TcpReceiver::new(false, 0);
    let mut dropped: HashSet<i64> = HashSet::new();
    let mut wire: VecDeque<(Time, i64, bool)> = VecDeque::new(); // (arrival at receiver, seq, PSH)
    let mut acks: VecDeque<(Time, i64, SackList)> = VecDeque::new();
    let mut sent: HashSet<i64> = HashSet::new();
    let mut retx = Vec::new();
    let mut out = Vec::new();
    let mut now: Time = 0;
    let mut last_tx: Time = 0;
    s.start(now, &mut out);
    for _ in 0..100_000 {
        for seq in out.drain(..) {
            log.push((now, seq));
            if !sent.insert(seq) {
                retx.push((now, seq));
            }
            last_tx = last_tx.max(now) + GAP;
            if drops.contains(&seq) && dropped.insert(seq) {
                continue; // first transmission lost
            }
            wire.push_back((last_tx + RTT / 2, seq, s.take_push(seq)));
        }
        if s.st().highest_ack >= until {
            return (retx, s.stats().timeouts, sent, log);
        }
        let next_data = wire.front().map(|w| w.0);
        let next_ack = acks.front().map(|a| a.0);
        let next_rto = s.rto_deadline();
        let t = [next_data, next_ack, next_rto].into_iter().flatten().min().expect("stalled");
        now = t;
        if next_data == Some(t) {
            let (_, seq, push) = wire.pop_front().unwrap();
            if let (Some(a), _) = r.on_data(now, seq, push) {
                acks.push_back((now + RTT / 2, a, r.sack_blocks(3)));
            }
        } else if next_ack == Some(t) {
            let (_, a, sack) = acks.pop_front().unwrap();
            s.on_ack_with(now, a, sack.as_slice(), &mut out);
        } else {
            s.on_rto_timer(now, &mut out);
        }
    }
    panic!("no progress");
}

/// An ECN path of 100 ms RTT, 1 ms between packets, that marks CE on the sequences in
/// `marks` (the receiver echoes ECE until CWR); returns (ackno, cwnd after it, reductions)
/// per ACK until `until` is acked.
fn drive_ecn(mut s: TcpSender, marks: &[i64], until: i64) -> Vec<(i64, f64, u64)> {
    const GAP: Time = 1_000_000_000;
    let mut r = TcpReceiver::new(false, 0);
    let mut wire: VecDeque<(Time, i64, bool, bool)> = VecDeque::new(); // (arrival, seq, CWR, PSH)
    let mut acks: VecDeque<(Time, i64, bool)> = VecDeque::new(); // (arrival, ackno, ECE)
    let (mut out, mut log, mut last_tx) = (Vec::new(), Vec::new(), 0);
    s.start(0, &mut out);
    while s.st().highest_ack < until {
        for seq in out.drain(..) {
            last_tx += GAP;
            let cwr = s.take_cwr();
            wire.push_back((last_tx + RTT / 2, seq, cwr, s.take_push(seq)));
        }
        let next_data = wire.front().map(|w| w.0).unwrap_or(Time::MAX);
        let next_ack = acks.front().map(|a| a.0).unwrap_or(Time::MAX);
        if next_data <= next_ack {
            let (now, seq, cwr, push) = wire.pop_front().expect("the path stalled");
            last_tx = last_tx.max(now);
            r.on_ecn(marks.contains(&seq), cwr);
            if let (Some(a), _) = r.on_data(now, seq, push) {
                acks.push_back((now + RTT / 2, a, r.ece));
            }
        } else {
            let (now, a, ece) = acks.pop_front().unwrap();
            last_tx = last_tx.max(now);
            if ece {
                s.on_ece(now, a);
            }
            s.on_ack(now, a, &mut out);
            log.push((a, s.st().cwnd, s.stats().ecn_reductions));
        }
    }
    log
}

/// RFC 3168 6.1.2 as ns-3 and Linux do it: one cut for the marks of a window, no growth in
/// CWR (until an ACK passes what was outstanding at the cut), growth after it, and a second
/// cut for a mark in a later window.
fn check_ecn_response(s: TcpSender) {
    let log = drive_ecn(s, &[20, 22, 90], 150);
    let cut = log.iter().position(|e| e.2 == 1).expect("the mark at 20 cuts the window");
    let (before, after) = (log[cut - 1].1, log[cut].1);
    assert!(after < 0.9 * before, "cut from {before} to {after}");
    let held = log[cut..].iter().take_while(|e| e.1 == after).count();
    assert!(held >= before as usize - 2, "cwnd held at {after} for {held} ACKs, about a window ({before})");
    let second = log.iter().position(|e| e.2 == 2).expect("the mark at 90 cuts again");
    assert!(log[second - 1].1 > after, "the window grew after CWR");
    assert!(log[second - 1].0 >= 89, "22 was in the first cut's window, so no cut before 90's ACK");
    assert_eq!(log.last().unwrap().2, 2);
}

#[test]
fn ece_cuts_once_per_window_and_the_window_holds_through_cwr() {
    for (name, sender) in [("sack", make("sack")), ("cubic_2622, linux recovery", linux("cubic_2622"))] {
        let mut s = sender;
        std::rc::Rc::make_mut(&mut s.core.p).ecn = true;
        s.core.st.ssthresh = 10.0; // congestion avoidance from the start
        eprintln!("{name}");
        check_ecn_response(s);
    }
}

/// RFC 6937's point: after a loss, RFC 6675 sends nothing new until pipe falls to the halved
/// window, then one packet per ACK; PRR sends about one per two ACKs from the start. Both
/// send about half a window of new data during the recovery, with no timeout.
#[test]
fn prr_spreads_the_reduction_over_the_recovery_round() {
    let mut silences = vec![];
    for recovery in ["sack", "prr"] {
        let mut s = with_recovery("newreno", recovery);
        s.core.st.cwnd = 40.0;
        s.core.st.ssthresh = 40.0;
        let (retx, timeouts, _, log) = drive_logged(&mut s, &[100], 200);
        assert_eq!((retx.len(), timeouts), (1, 0), "{recovery}: {retx:?}");
        let (t_fr, _) = retx[0];
        let next_round = t_fr + RTT;
        let new: Vec<Time> = log.iter().filter(|&&(t, q)| t > t_fr && t < next_round && q > 100).map(|e| e.0).collect();
        assert!((18..=22).contains(&new.len()), "{recovery}: {} new packets in the recovery round", new.len());
        silences.push(new[0] - t_fr);
    }
    let ms = |t: Time| t as f64 / 1e9;
    assert!(silences[0] > 15 * 1_000_000_000, "sack waits for pipe to fall: {} ms", ms(silences[0]));
    assert!(silences[1] <= 3 * 1_000_000_000, "prr sends within 2 ACKs: {} ms", ms(silences[1]));
}

/// A law that sets its own window (BBR) keeps it through recovery: PRR and RACK-TLP neither
/// count for it nor set cwnd = ssthresh when recovery ends (ssthresh here is 10,000 packets, which
/// BBR never sets: the window would jump to it).
#[test]
fn recovery_leaves_bbrs_window_to_bbr() {
    for recovery in ["prr", "rack_tlp"] {
        let mut s = with_recovery("bbr", recovery);
        (s.core.st.ssthresh, s.core.st.wmax) = (10_000.0, 10_000.0);
        let (retx, timeouts, _, _) = drive_logged(&mut s, &[30], 120);
        let resent: Vec<i64> = retx.iter().map(|r| r.1).collect();
        assert_eq!((resent, timeouts), (vec![30], 0), "{recovery}");
        assert!(s.st().cwnd < 500.0, "{recovery}: cwnd {} after recovery", s.st().cwnd);
    }
}

/// Every SACK-based recovery repairs three holes of one window within an RTT.
#[test]
fn sack_recoveries_repair_three_losses_in_one_rtt() {
    for recovery in ["prr", "rack_tlp"] {
        let (retx, timeouts, _) = drive_timed(with_recovery("newreno", recovery), &[12, 15, 17], 60);
        assert_eq!(retx.iter().map(|r| r.1).collect::<Vec<_>>(), vec![12, 15, 17], "{recovery}: only the holes");
        assert_eq!(timeouts, 0, "{recovery}");
        assert!(retx[2].0 - retx[0].0 < RTT, "{recovery}: {retx:?}");
    }
}

/// The last packets of a transfer are lost: with no duplicate ACKs to count, SACK recovery
/// waits for the RTO; RACK-TLP's probe brings the SACK that shows the loss, with no timeout.
#[test]
fn a_tail_loss_costs_sack_a_timeout_and_rack_tlp_a_probe() {
    let (_, timeouts, _) = drive_timed(make("sack").with_size(30), &[28, 29], 29);
    assert_eq!(timeouts, 1, "sack");
    let (retx, timeouts, _) = drive_timed(with_recovery("newreno", "rack_tlp").with_size(30), &[28, 29], 29);
    assert_eq!((timeouts, retx.iter().map(|r| r.1).collect::<Vec<_>>()), (0, vec![29, 28]), "the probe, then RACK");
}

/// Most of a first window is lost, too few duplicates for a fast retransmit: the timeout comes
/// with 8 and 9 SACKed. `sack` forgets that (RFC 2018, ns-2's Sack1) and sends them again;
/// `sack_retain` keeps it (RFC 6675 section 5.1, as ns-3 and Linux) and resends only the holes.
#[test]
fn after_a_timeout_sack_resends_sacked_packets_and_sack_retain_does_not() {
    let lost: Vec<i64> = (0..8).collect();
    let (retx, timeouts, _) = drive(make("sack").with_size(10), &lost, 9);
    assert_eq!(timeouts, 1);
    assert!(retx.contains(&8) && retx.contains(&9), "go-back-N: {retx:?}");
    let (retx, timeouts, _) = drive(with_recovery("newreno", "sack_retain").with_size(10), &lost, 9);
    assert_eq!((timeouts, retx), (1, lost), "only the holes, in order");
}

#[test]
fn newreno_repairs_several_losses_in_one_window_without_timeout() {
    let (retx, timeouts) = recover("newreno", &[2, 5, 7], 40);
    assert_eq!(retx, vec![2, 5, 7], "only the holes are retransmitted");
    assert_eq!(timeouts, 0);
}

#[test]
fn reno_needs_a_timeout_for_the_second_loss_of_a_window() {
    let (retx, timeouts) = recover("reno", &[2, 5, 7], 40);
    assert_eq!(timeouts, 1);
    assert_eq!(retx[0], 2, "the first loss is fast-retransmitted");
    assert!(retx.contains(&5) && retx.contains(&7));
}

#[test]
fn sack_repairs_three_losses_in_one_rtt_without_timeout() {
    let (retx, timeouts, _) = drive_timed(make("sack"), &[12, 15, 17], 60);
    assert_eq!(retx.iter().map(|r| r.1).collect::<Vec<_>>(), vec![12, 15, 17], "only the holes");
    assert_eq!(timeouts, 0);
    let (first, last) = (retx[0].0, retx[2].0);
    assert!(last - first < RTT, "all three within one RTT of the fast retransmit: {} ps", last - first);
    // NewReno needs one RTT per hole.
    let (retx, _, _) = drive_timed(make("newreno"), &[12, 15, 17], 60);
    assert!(retx[2].0 - retx[0].0 >= 2 * RTT, "newreno: {:?}", retx);
}

#[test]
fn linux_repairs_three_losses_in_one_rtt_from_the_scoreboard() {
    for cc in ["newreno", "cubic_2622"] {
        let (retx, timeouts, _) = drive_timed(linux(cc), &[12, 15, 17], 60);
        assert_eq!(retx.iter().map(|r| r.1).collect::<Vec<_>>(), vec![12, 15, 17], "{cc}: only the holes");
        assert_eq!(timeouts, 0, "{cc}");
        assert!(retx[2].0 - retx[0].0 < RTT, "{cc}: within one RTT: {:?}", retx);
    }
}

#[test]
fn linux_enters_recovery_at_min_cwnd_and_leaves_at_ssthresh() {
    // Reno's min_cwnd: ssthresh / 2 = 10; CUBIC 2.1 has none: cwnd = ssthresh = 40 x 819 / 1024.
    // On leaving, a window below ssthresh is raised to it, but to at most in flight (0) + 3.
    for (cc, in_recovery, after) in [("newreno", 10.0, 3.0), ("cubic_2622", 31.0, 31.0)] {
        let mut s = linux(cc);
        let mut out = Vec::new();
        s.core.st.cwnd = 40.0;
        s.core.st.ssthresh = 40.0;
        s.core.st.t_seqno = 60;
        s.core.st.maxseq = 59;
        s.core.st.highest_ack = 19; // 20..=59 in flight; 20 lost, 21..=24 SACKed
        s.on_ack_with(0, 19, &[(21, 25)], &mut out);
        assert_eq!(s.stats().fast_retransmits, 1, "{cc}: FACK: 20 <= 24 - 4");
        assert_eq!(s.st().cwnd, in_recovery, "{cc}");
        assert_eq!(out, vec![20], "{cc}: the hole goes at once (rate halving allows one)");
        // The retransmission and everything else arrive: the full ACK ends recovery.
        s.on_ack_with(RTT, 59, &[], &mut out);
        assert_eq!(s.st().cwnd, after, "{cc}");
    }
}

#[test]
fn linux_grows_the_window_only_when_it_was_full() {
    // ns-2's tcp_is_cwnd_limited: an ACK grows cwnd only if in flight before it was >= cwnd.
    for (in_flight, grows) in [(10, true), (5, false)] {
        let mut s = linux("newreno");
        let mut out = Vec::new();
        s.core.st.cwnd = 10.0;
        s.core.st.ssthresh = 100.0; // slow start: +1 per ACK
        s.core.st.highest_ack = 19;
        s.core.st.t_seqno = 20 + in_flight;
        s.core.st.maxseq = 19 + in_flight;
        s.on_ack_with(0, 20, &[], &mut out);
        assert_eq!(s.st().cwnd > 10.0, grows, "in flight {in_flight}: cwnd {}", s.st().cwnd);
    }
}

#[test]
fn linux_after_a_timeout_resends_only_what_was_not_sacked() {
    // 15 and 17 are SACKed and too few to mark 14 lost: a timeout, then 14, 16, 18, 19 only.
    let (retx, timeouts, sent) = drive(linux("newreno").with_size(20), &[14, 16, 18, 19], 19);
    assert_eq!((retx, timeouts), (vec![14, 16, 18, 19], 1));
    assert_eq!(sent, (0..20).collect::<HashSet<i64>>());
    // Going back to 14 (sack) resends 17 too.
    let (retx, _, _) = drive(make("sack").with_size(20), &[14, 16, 18, 19], 19);
    assert!(retx.contains(&17), "{retx:?}");
}

#[test]
fn sack_repairs_a_burst_of_six_losses_with_at_most_one_timeout() {
    let (retx, timeouts, sent) = drive(make("sack").with_size(40), &[5, 6, 7, 8, 9, 10], 39);
    assert!(timeouts <= 1, "{timeouts}");
    assert!((5..=10).all(|s| retx.contains(&s)));
    assert_eq!(sent, (0..40).collect::<HashSet<i64>>());
}

#[test]
fn single_loss_is_one_fast_retransmit_for_both() {
    for v in ["reno", "newreno", "sack"] {
        let (retx, timeouts) = recover(v, &[4], 40);
        assert_eq!(retx, vec![4], "{v}");
        assert_eq!(timeouts, 0, "{v}");
    }
}

#[test]
fn a_sized_transfer_sends_exactly_its_packets_and_finishes() {
    for v in ["reno", "newreno", "paced"] {
        let s = make(v).with_size(14);
        assert!(!s.finished());
        let (retx, _, sent) = drive(s, &[3, 13], 13);
        assert_eq!(sent, (0..14).collect::<HashSet<i64>>(), "{v}: packets 0..14 and nothing beyond");
        assert!(retx.contains(&3) && retx.contains(&13), "{v}: both losses repaired");
    }
}

#[test]
fn rto_follows_rfc6298_with_backoff() {
    let mut s = make("reno").core;
    assert_eq!(s.rto_s(), 3.0); // initial RTO
    s.rtt_sample(0.1);
    assert!((s.rto_s() - 0.3).abs() < 1e-12); // srtt 0.1 + 4 x 0.05
    s.rtt_sample(0.1);
    // rttvar = 0.75 x 0.05 = 0.0375 -> 0.1 + 0.15 = 0.25
    assert!((s.rto_s() - 0.25).abs() < 1e-12);
    s.backoff = 4;
    assert!((s.rto_s() - 1.0).abs() < 1e-12);
    // A short path: srtt + 4 rttvar below the 200 ms minimum, which is applied before the
    // backoff doubles it (RFC 6298 5.5, ns-2's rfc2988_).
    let mut s = make("reno").core;
    s.rtt_sample(0.01);
    s.backoff = 1;
    assert!((s.rto_s() - 0.2).abs() < 1e-12, "{}", s.rto_s());
    s.backoff = 2;
    assert!((s.rto_s() - 0.4).abs() < 1e-12, "{}", s.rto_s());
    s.backoff = 64;
    assert!((s.rto_s() - 12.8).abs() < 1e-9, "{}", s.rto_s());
}

/// A `sack` sender, with ns-3's two rules (`tcp.ssthresh_from_pipe`, `tcp.rto_first_partial_only`)
/// or without.
fn sack_with_ns3_rules(on: bool) -> TcpSender {
    let t = TcpConfig::named("sack");
    let p = TcpParams { ssthresh_from_pipe: on, rto_first_partial_only: on, ..params() };
    TcpSender::new(p.into(), (t.law_factory())(), t.make_recovery(), t.make_release(stream(1, Stream::Sender, 0)))
}

/// ns-3's rules, by hand: packet 1 lost among 1..13 (two sent by Limited Transmit), three SACKed
/// above it, so the pipe is 13 - 3 SACKed - 1 lost = 9. ns-3's ssthresh is half of it, 4.5 (ours:
/// half the window of 11, 5 and a window of 5.5); its fast retransmit leaves the running timer (ours
/// restarts it); of the partial ACKs only the first restarts it (ours: each).
#[test]
fn ns3_rules_halve_the_pipe_and_restart_the_timer_only_at_the_first_partial_ack() {
    let ms = |t: Time| t * 1_000_000_000;
    for on in [false, true] {
        let (mut s, mut out) = (sack_with_ns3_rules(on), Vec::new());
        s.start(0, &mut out);
        s.on_ack_with(ms(100), 0, &[], &mut out); // an RTT of 100 ms: RTO 300 ms
        assert_eq!(s.rto_deadline(), Some(ms(400)));
        for (t, end) in [(110, 3), (120, 4), (130, 5)] {
            s.on_ack_with(ms(t), 0, &[(2, end)], &mut out);
        }
        assert_eq!((s.stats().fast_retransmits, s.st().maxseq), (1, 13));
        let (ssthresh, cwnd, at_fr) = (s.st().ssthresh, s.st().cwnd, s.rto_deadline());
        s.on_ack_with(ms(200), 4, &[], &mut out); // partial ACKs: 5 lost, then 8
        let first = s.rto_deadline();
        s.on_ack_with(ms(210), 7, &[], &mut out);
        let second = s.rto_deadline();
        if on {
            assert_eq!((ssthresh, cwnd), (4.5, 4.5));
            assert_eq!((at_fr, first, second), (Some(ms(400)), Some(ms(500)), Some(ms(500))));
        } else {
            assert_eq!((ssthresh, cwnd), (5.0, 5.5));
            assert_eq!((at_fr, first, second), (Some(ms(430)), Some(ms(500)), Some(ms(510))));
        }
    }
}

/// ns-3's backoff (`tcp.rto_backoff_reset_on_ack`): the ACK of a packet resent at a timeout gives
/// no RTT sample (Karn), so ours keeps the doubled timeout; ns-3's `NewAck` drops it at once.
#[test]
fn ns3s_backoff_ends_at_any_ack_that_advances() {
    let ms = |t: Time| t * 1_000_000_000;
    for on in [false, true] {
        let t = TcpConfig::named("sack");
        let p = TcpParams { rto_backoff_reset_on_ack: on, ..params() };
        let release = t.make_release(stream(1, Stream::Sender, 0));
        let (mut s, mut out) = (TcpSender::new(p.into(), (t.law_factory())(), t.make_recovery(), release), vec![]);
        s.start(0, &mut out);
        assert!(s.on_rto_timer(ms(3000), &mut out)); // no sample yet: the initial 3 s
        assert_eq!(s.core.backoff, 2);
        s.on_ack_with(ms(3100), 0, &[], &mut out);
        assert_eq!(s.core.backoff, if on { 1 } else { 2 });
    }
}

/// `tcp.handshake`: the SYN's RTT is the first sample, so the RTO comes from it (not init_rto_s),
/// and BBR paces its initial window at high_gain x cwnd / srtt (`bbr_init`), where without a
/// sample the window leaves at once.
#[test]
fn handshake_gives_the_first_rtt_sample() {
    for handshake in [false, true] {
        let t = TcpConfig::named("bbr");
        let p = TcpParams { handshake, ..params() };
        let release = t.make_release(stream(1, Stream::Sender, 0));
        let mut s = TcpSender::new(p.into(), (t.law_factory())(), t.make_recovery(), release);
        s.connect(0, 0.05, false);
        let mut out = Vec::new();
        s.start(0, &mut out);
        if handshake {
            assert_eq!(s.core.rto_s(), 0.2, "srtt 50 ms + 4 x 25 ms, at least the 200-ms minimum");
            assert!(out.len() <= 2 && s.send_deadline().is_some(), "paced: {out:?}");
        } else {
            assert_eq!(s.core.rto_s(), 3.0);
            assert_eq!(out.len(), 10, "no sample: the initial window at once");
        }
    }
}

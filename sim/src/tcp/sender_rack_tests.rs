//! RACK-TLP (`recovery = rack_tlp`, `tcp/recovery/rack_tlp.rs`) driven through a whole sender:
//! RFC 8985's reordering window, its timers and the tail loss probe.

use crate::params::{Param, Value};
use crate::rng::{stream, Stream};
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;
use crate::time::{from_secs, Time};

const MS: Time = 1_000_000_000;

/// A NewReno-law sender with RACK-TLP, 10 packets of window, exact RTT samples.
fn sender(size_pkts: i64) -> TcpSender {
    sender_with(size_pkts, 0.25)
}

/// `sender`, with a reordering window of `reo_wnd` min RTTs.
fn sender_with(size_pkts: i64, reo_wnd: f64) -> TcpSender {
    let v = Value::map(vec![("cc", Value::str("newreno")), ("recovery", Value::str("rack_tlp"))]);
    let t = TcpConfig::parse(&v).unwrap();
    let p = crate::tcp::sender_core::TcpParams { rack_reo_wnd: reo_wnd, ..super::tests::params() };
    let s =
        TcpSender::new(p.into(), (t.law_factory())(), t.make_recovery(), t.make_release(stream(1, Stream::Sender, 0)));
    s.with_size(size_pkts)
}

/// Packets 0-9 leave at t = 0; 0 is acknowledged at 100 ms (RACK.rtt and min RTT 100 ms).
fn started(size_pkts: i64) -> (TcpSender, Vec<i64>) {
    let mut s = sender(size_pkts);
    let mut out = vec![];
    s.start(0, &mut out);
    assert_eq!(out, (0..10).collect::<Vec<_>>());
    out.clear();
    s.on_ack_with(100 * MS, 0, &[], &mut out);
    (s, out)
}

/// RFC 8985 section 6.2: packet 1 is missing when 2 is SACKed. With one packet SACKed and no
/// reordering seen, the reordering window is min RTT / 4 = 25 ms: 1 is lost only at
/// 101 + 25 ms, when the reordering timer fires, and recovery retransmits it then.
#[test]
fn a_hole_waits_out_the_reordering_window() {
    let (mut s, mut out) = started(12);
    out.clear();
    s.on_ack_with(101 * MS, 0, &[(2, 3)], &mut out);
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(s.rto_deadline(), Some(126 * MS), "the reordering timer: sent 0 + RACK.rtt 101 + 25 ms");
    assert!(s.on_rto_timer(126 * MS, &mut out));
    assert_eq!(out, vec![1], "marked lost and retransmitted");
    assert_eq!((s.stats().fast_retransmits, s.stats().timeouts), (1, 0));
}

/// `tcp.rack_reo_wnd_min_rtts` = 0.5: the same hole waits 50 ms, not 25.
#[test]
fn the_reordering_window_follows_its_key() {
    let mut s = sender_with(12, 0.5);
    let mut out = vec![];
    s.start(0, &mut out);
    s.on_ack_with(100 * MS, 0, &[], &mut out);
    s.on_ack_with(101 * MS, 0, &[(2, 3)], &mut out);
    assert_eq!(s.rto_deadline(), Some(151 * MS), "sent 0 + RACK.rtt 101 + 50 ms");
}

/// With DupThresh (3) packets SACKed and no reordering seen, the window is 0: the hole is
/// lost as soon as a packet sent after it is delivered.
#[test]
fn three_sacked_close_the_window() {
    let (mut s, mut out) = started(12);
    out.clear();
    s.on_ack_with(101 * MS, 0, &[(2, 4)], &mut out);
    assert!(out.is_empty());
    s.on_ack_with(102 * MS, 0, &[(2, 5)], &mut out);
    assert_eq!(out.first(), Some(&1), "{out:?}");
    assert_eq!(s.stats().fast_retransmits, 1);
}

/// A hole that fills by itself within the window was reordering, not loss: nothing is
/// retransmitted, and later holes get the reordering window even with 3 SACKed.
#[test]
fn reordering_is_not_loss_and_widens_the_window() {
    let (mut s, mut out) = started(40);
    out.clear();
    s.on_ack_with(101 * MS, 0, &[(2, 3)], &mut out);
    s.on_ack_with(110 * MS, 2, &[], &mut out); // 1 arrived late
    assert!(!out.contains(&1), "{out:?}");
    s.on_ack_with(111 * MS, 2, &[(4, 7)], &mut out);
    assert!(!out.contains(&3), "reordering seen: 3 SACKed no longer close the window: {out:?}");
    assert_eq!(s.stats().fast_retransmits, 0);
}

/// RFC 8985 section 7: the last two packets are lost. With two packets out, the probe timer
/// is 2 SRTT (200 ms) after the last ACK, before the RTO (srtt + 4 rttvar = 300 ms); with no
/// new data the probe retransmits the last packet, whose SACK then shows 8 lost.
#[test]
fn a_tail_loss_probe_fires_at_two_srtt() {
    let (mut s, mut out) = started(10);
    for a in 1..=7 {
        s.on_ack_with(100 * MS, a, &[], &mut out);
    }
    assert_eq!(s.rto_deadline(), Some(300 * MS), "2 SRTT after the last ACK");
    out.clear();
    assert!(s.on_rto_timer(300 * MS, &mut out));
    assert_eq!((out.clone(), s.stats().timeouts), (vec![9], 0), "the probe: the last packet again");
    out.clear();
    s.on_ack_with(400 * MS, 7, &[(9, 10)], &mut out);
    assert_eq!(out, vec![8], "RACK: 8 was sent before the delivered probe");
    s.on_ack_with(500 * MS, 9, &[], &mut out);
    assert!(s.finished());
    assert_eq!(s.stats().timeouts, 0);
}

/// One packet out: the probe would wait 2 SRTT plus the worst-case delayed ACK (400 ms), so
/// it fires in the RTO's place, at 300 ms, and sends the packet again without a timeout.
#[test]
fn a_lone_packet_probes_no_later_than_the_rto() {
    let (mut s, mut out) = started(10);
    for a in 1..=8 {
        s.on_ack_with(100 * MS, a, &[], &mut out);
    }
    assert_eq!(s.rto_deadline(), Some(100 * MS + from_secs(0.3)));
    out.clear();
    assert!(s.on_rto_timer(400 * MS, &mut out));
    assert_eq!((out, s.stats().timeouts), (vec![9], 0));
}

/// `tcp.tso_defer` (Linux's TSO deferral, `tso_defer.rs`): 70 packets out at t = 0, then an ACK
/// every 0.25 ms that frees 2. Without it each ACK's 2 leave at once; with it, after the first
/// (the last send was 10 ms before), they wait until an skb's worth, 1.2 x 70 / srtt (10-15 ms)
/// x 2^-10 s = 5-8 packets, is free, and leave together. (Past packet 69, sent at 10 ms, the
/// next ACK is due more than 1 ms away: no wait.)
#[test]
fn tso_deferral_gathers_what_acks_free_into_skbs() {
    let runs = |tso_defer: bool| {
        let v = Value::map(vec![("cc", Value::str("newreno")), ("recovery", Value::str("rack_tlp"))]);
        let t = TcpConfig::parse(&v).unwrap();
        let params = super::tests::params();
        let p = crate::tcp::sender_core::TcpParams {
            init_cwnd: 70.0,
            init_ssthresh: 60.0,
            wmax: 1000.0,
            tso_defer,
            ..params
        };
        let release = t.make_release(stream(1, Stream::Sender, 0));
        let mut s = TcpSender::new(p.into(), (t.law_factory())(), t.make_recovery(), release);
        let mut out = vec![];
        s.start(0, &mut out);
        assert_eq!(out.len(), 70);
        (0..32) // ACKs of packets 0-63, all sent at t = 0: the next is due at once
            .map(|k| {
                out.clear();
                s.on_ack_with(10 * MS + k * MS / 4, 2 * k as i64 + 1, &[], &mut out);
                out.len()
            })
            .collect::<Vec<_>>()
    };
    let (off, on) = (runs(false), runs(true));
    assert!(off.iter().all(|&n| n == 2), "{off:?}");
    assert_eq!(on[0], 2, "the first ACK's send follows 10 ms of quiet: at once");
    let skbs: Vec<_> = on[1..].iter().copied().filter(|&n| n > 0).collect();
    assert!(skbs.len() >= 4 && skbs.iter().all(|&n| (5..=8).contains(&n)), "{on:?}");
    let (sent_on, sent_off) = (on.iter().sum::<usize>(), off.iter().sum::<usize>());
    assert!(sent_off - sent_on < 8, "held back at most one skb: {sent_on} of {sent_off}");
}

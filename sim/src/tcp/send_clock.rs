//! When a recovery that decides every transmission (`rack_tlp`) may send its next packet. Paced:
//! at Linux's earliest departure time (`tcp_update_skb_after_send`, net/ipv4/tcp_output.c: each
//! send moves it one packet's time on, less the send's lateness up to half of that, which Linux
//! credits for "OS jitter"). With `tcp.send_jitter_ms`, a host's latency: each send waits a
//! random time, uniform in [0, send_jitter_ms], past the moment it could leave; ACK-clocked, what
//! the window then allows leaves together, as ns-2's `overhead_`. A paced skb holds up to the window
//! law's `tso_segs` packets (BBR's `bbr_tso_segs_goal`: 2 above 1.2 Mb/s), which leave back to
//! back: Linux builds GSO skbs whatever the device, and segments them in software (tcp.c's
//! `tcp_xmit_size_goal`, `tcp_mss_split_point`); the next skb then waits their time together. Not
//! modelled: Linux's first 10 packets unpaced. Details: docs/tcp.md, `tcp/send_clock.rs`.

use super::sender_core::SenderCore;
use crate::time::{from_secs, Time};

#[derive(Default)]
pub struct SendClock {
    /// The next paced packet's earliest departure time (Linux `tcp_wstamp_ns`).
    edt: Time,
    /// When the pending wait ends (None: none drawn yet).
    gate: Option<Time>,
    /// The paced skb being filled: when it left, its packets so far, and how late it left.
    skb: Skb,
}

#[derive(Default)]
struct Skb {
    at: Time,
    segs: u32,
    late: Time,
}

impl SendClock {
    /// Whether a packet may leave at `now`; if not, `core.send_deadline` is armed for when it may.
    pub fn ready(&mut self, core: &mut SenderCore, now: Time, paced: bool) -> bool {
        if paced && self.joins_skb(core, now) {
            return true;
        }
        let gate = *self.gate.get_or_insert_with(|| {
            let from = if paced { self.edt.max(now) } else { now };
            from + core.draw_send_jitter()
        });
        if now < gate {
            core.send_deadline = Some(gate);
        }
        now >= gate
    }

    /// A packet left at `now`: paced, it joins the skb that left at this instant if there is room,
    /// or starts one; the next skb's departure time is the skb's time on (its packets' gaps), less
    /// its lateness up to half of that (`tcp_update_skb_after_send`); and the next packet's wait.
    pub fn sent(&mut self, core: &SenderCore, now: Time, paced: bool) {
        if paced {
            if !self.joins_skb(core, now) {
                self.skb = Skb { at: now, segs: 0, late: now.saturating_sub(self.edt) };
            }
            self.skb.segs += 1;
            let len = from_secs(core.release_gap_s()) * self.skb.segs as Time;
            self.edt = now + len - self.skb.late.min(len / 2);
            self.gate = None;
        }
    }

    /// A packet at `now` would join the skb that left at this instant: it has room.
    fn joins_skb(&self, core: &SenderCore, now: Time) -> bool {
        self.skb.segs > 0 && self.skb.at == now && self.skb.segs < core.tso_segs
    }

    /// The sending is over for now: an ACK-clocked wait that has ended is spent, and the next
    /// packet the window allows draws a new one.
    pub fn done(&mut self, now: Time) {
        if self.gate.is_some_and(|g| g <= now) {
            self.gate = None;
        }
    }

    /// A wait is pending: its timer must come back here, not to the release.
    pub fn waiting(&self) -> bool {
        self.gate.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SimRng;
    use crate::tcp::sender_core::TcpParams;
    use rand::SeedableRng;
    use std::rc::Rc;

    const MS: Time = 1_000_000_000;

    fn core(jitter: Time) -> SenderCore {
        let p = TcpParams { send_jitter: jitter, ..TcpParams::for_tests() };
        let mut c = SenderCore::new(Rc::new(p));
        c.pacing_rate_pps = Some(1000.0); // a packet's time: 1 ms
        c.set_jitter_rng(SimRng::seed_from_u64(1));
        c
    }

    /// Paced without jitter: a packet a millisecond; one that leaves late is credited up to half
    /// a gap (Linux), so the next leaves sooner after it and the rate holds.
    #[test]
    fn paced_departures_credit_lateness_up_to_half_a_gap() {
        let (mut c, mut clock) = (core(0), SendClock::default());
        assert!(clock.ready(&mut c, 0, true));
        clock.sent(&c, 0, true);
        assert!(!clock.ready(&mut c, MS / 2, true) && c.send_deadline == Some(MS));
        assert!(clock.ready(&mut c, MS, true));
        clock.sent(&c, MS + MS / 5, true); // 0.2 ms late: the next is due 0.8 ms on
        assert!(!clock.ready(&mut c, 2 * MS - 1, true) && clock.ready(&mut c, 2 * MS, true));
        clock.sent(&c, 5 * MS, true); // 3 ms late: half a gap's credit at most
        assert!(!clock.ready(&mut c, 5 * MS + MS / 2 - 1, true) && clock.ready(&mut c, 5 * MS + MS / 2, true));
    }

    /// Skbs of 2 packets (BBR above 1.2 Mb/s): both leave at once and the next skb waits both
    /// their gaps; an skb the window leaves with one packet waits one gap.
    #[test]
    fn paced_skbs_leave_their_packets_together() {
        let (mut c, mut clock) = (core(0), SendClock::default());
        c.tso_segs = 2;
        for _ in 0..2 {
            assert!(clock.ready(&mut c, 0, true));
            clock.sent(&c, 0, true);
        }
        assert!(!clock.ready(&mut c, 0, true) && c.send_deadline == Some(2 * MS), "a third waits");
        assert!(clock.ready(&mut c, 2 * MS, true));
        clock.sent(&c, 2 * MS, true);
        assert!(!clock.ready(&mut c, 2 * MS + 1, true) && c.send_deadline == Some(3 * MS), "alone: one gap");
    }

    /// With jitter, each paced packet waits its own draw past its departure time, within the
    /// bound; the mean wait is half of it, and the lateness credit keeps the rate (jitter up to
    /// half a gap leaves the departures on their grid on average).
    #[test]
    fn paced_jitter_delays_each_departure_within_its_bound() {
        let (mut c, mut clock) = (core(MS / 2), SendClock::default());
        let (mut now, mut waits) = (0, vec![]);
        for _ in 0..2000 {
            let due = clock.edt.max(now);
            while !clock.ready(&mut c, now, true) {
                now = c.send_deadline.unwrap();
            }
            waits.push(now - due);
            clock.sent(&c, now, true);
        }
        assert!(waits.iter().all(|&w| (0..=MS / 2).contains(&w)));
        let mean = waits.iter().sum::<Time>() as f64 / waits.len() as f64 / MS as f64;
        assert!((mean - 0.25).abs() < 0.02, "mean wait {mean} ms");
        let gap_ms = now as f64 / MS as f64 / 1999.0;
        assert!((gap_ms - 1.0).abs() < 0.01, "on the 1-ms grid: a packet every {gap_ms} ms");
    }

    /// ACK-clocked with jitter: the first send waits; at the wait's end everything goes, and the
    /// next send draws a new wait. Without jitter nothing waits and nothing is drawn.
    #[test]
    fn ack_clocked_jitter_holds_then_releases_together() {
        let (mut c, mut clock) = (core(MS), SendClock::default());
        let gate = if clock.ready(&mut c, 0, false) { 0 } else { c.send_deadline.unwrap() };
        assert!((0..=MS).contains(&gate) && clock.waiting());
        assert!(clock.ready(&mut c, gate, false) && clock.ready(&mut c, gate, false));
        clock.done(gate);
        assert!(!clock.waiting());
        let (mut still, mut clock) = (core(0), SendClock::default());
        assert!(clock.ready(&mut still, 7, false) && still.send_deadline.is_none());
    }
}

//! The handshake of a connection with `tcp.handshake`, as Linux opens one (docs/engine.md,
//! `world/handshake.rs`). The SYN crosses the forward route's queues like a data packet, and can
//! wait there or be dropped. The receiver answers at once with a SYN-ACK on the return path. The
//! SYN's RTT, queueing included, is the sender's first RTT sample; data starts when the SYN-ACK
//! arrives. A lost SYN is resent after 1 s, 5 times a second apart, then doubling: 10 times.
//!
//! Read in Linux 6.18 `net/ipv4/`:
//! - `tcp_output.c` `tcp_connect` arms the retransmit timer at TCP_TIMEOUT_INIT (1 s).
//! - `tcp_timer.c` `tcp_retransmit_timer` keeps it for the first `tcp_syn_linear_timeouts`
//!   (default 4, since 6.5) resent SYNs and doubles it after; `tcp_write_timeout` gives up after
//!   `tcp_syn_retries` (6) plus those 4.
//! - `tcp_input.c` `tcp_rcv_synsent_state_process` takes the RTT sample (`tcp_ack_update_rtt`).
//!   With timestamps (on by default) that sample is from the SYN the SYN-ACK answers, so a resent
//!   SYN still gives one.
//! - `tcp_init_transfer` starts the window at 1 packet after more than one SYN retransmission,
//!   unless `tcp_try_undo_spurious_syn` found the SYN-ACK answering the first SYN.
//!
//! Not modelled: the third ACK of the handshake (the first data packets follow it at once, and
//! losing it loses nothing), and the receiver's listen queue.

use super::World;
use crate::event::Event;
use crate::packet::{Kind, Packet, SYN_BYTES, SYN_SEQ};
use crate::time::{to_secs, Time, PS_PER_S};

/// Linux's TCP_TIMEOUT_INIT (RFC 6298's initial RTO), which the SYN's timer starts at. Not
/// `tcp.init_rto_s`: with a handshake the data's first RTO comes from the SYN's RTT, and the
/// Linux presets keep that key's ns-2 value so that the configs, and the kernel runs keyed on
/// them, stay the same.
const SYN_TIMEOUT: Time = PS_PER_S as Time;
/// Linux's `tcp_syn_linear_timeouts` default: resent SYNs 1 to 4 are followed by the same 1-s
/// timeout, later ones by a doubled one.
const SYN_LINEAR: u8 = 4;
/// Linux's `tcp_syn_retries` default plus the linear ones: when the timeout after the 10th resent
/// SYN expires (131 s after the first), the connection fails and the flow never sends.
const SYN_RETRIES: u8 = 6 + SYN_LINEAR;

/// A connection whose SYN is out: when the first SYN left, and how many were resent (the last
/// one's timer expires at `sent_at(first, resent + 1)`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opening {
    first: Time,
    resent: u8,
}

/// The timeout after try `k`'s SYN (0 is the first SYN): 1 s up to the 4th resent, then doubling.
fn timeout_after(k: u8) -> Time {
    SYN_TIMEOUT << k.saturating_sub(SYN_LINEAR)
}

/// When try `k`'s SYN leaves: the timeouts of the tries before it after the first.
fn sent_at(first: Time, k: u8) -> Time {
    first + (0..k).map(timeout_after).sum::<Time>()
}

impl World<'_> {
    /// Flow `f` starts: it sends a SYN if its TCP opens with a handshake, else its first window.
    pub(super) fn open(&mut self, f: usize) {
        if !self.conns.senders[f].params().handshake {
            return self.start_sending(f);
        }
        self.conns.opening.insert(f as u32, Opening { first: self.now, resent: 0 });
        self.events.push(sent_at(self.now, 1), Event::SynTimer(f as u32));
        self.send_syn(f, 0);
    }

    fn send_syn(&mut self, f: usize, k: u8) {
        self.transfer_entered(f);
        let syn = Packet::new(Kind::Data, f, SYN_BYTES, SYN_SEQ + k as i64);
        self.enter(syn, self.conns.conn[f].fwd);
    }

    /// Flow `f`'s SYN timer: if the connection is still opening and this is its current
    /// deadline (a slot reused by a later transfer has its own), the SYN is resent.
    pub(super) fn syn_timer(&mut self, f: usize) {
        let Some(o) = self.conns.opening.get_mut(&(f as u32)) else { return };
        if sent_at(o.first, o.resent + 1) != self.now {
            return;
        }
        if o.resent == SYN_RETRIES {
            self.conns.opening.remove(&(f as u32));
            return;
        }
        o.resent += 1;
        let (k, first) = (o.resent, o.first);
        self.events.push(sent_at(first, k + 1), Event::SynTimer(f as u32));
        self.send_syn(f, k);
    }

    /// A SYN or SYN-ACK reached the end of its route (its `seq` is `SYN_SEQ` + the try it
    /// answers). The receiver answers a SYN; a SYN-ACK opens the connection, once.
    pub(super) fn deliver_handshake(&mut self, pkt: Packet) {
        let f = pkt.flow as usize;
        if pkt.kind() == Kind::Data {
            self.transfer_entered(f);
            let synack = Packet::new(Kind::Ack, f, SYN_BYTES, pkt.seq);
            self.enter(synack, self.conns.conn[f].rev);
        } else if let Some(o) = self.conns.opening.remove(&(f as u32)) {
            let k = (pkt.seq - SYN_SEQ) as u8;
            let rtt_s = to_secs(self.now - sent_at(o.first, k));
            let cut = o.resent > 1 && k > 0;
            self.conns.senders[f].connect(self.now, rtt_s, cut);
            self.start_sending(f);
        }
        self.transfer_left(f);
    }

    /// Flow `f`'s connection is open: its sender sends its first window.
    fn start_sending(&mut self, f: usize) {
        self.conns.senders[f].start(self.now, &mut self.conns.outbox);
        self.flush(f);
    }
}

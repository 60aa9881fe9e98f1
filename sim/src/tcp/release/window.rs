//! ACK-clocked release: packets leave as soon as the window allows (bursts are possible), or, with
//! `tcp.send_jitter_ms`, after a random wait as ns-2 2.35's `TcpAgent::send_much` does with
//! `overhead_`: a send finding no wait pending starts one, uniform in [0, overhead_], and when it
//! ends everything the window then allows leaves (`force`). As in ns-2's Reno, NewReno and Sack1,
//! what the sender sends itself (a fast retransmit, Limited Transmit) leaves at once; so do a
//! SACK recovery's later retransmissions (Sack1 delays those). docs/fidelity.md, "Phase effects".

use crate::rng::SimRng;
use crate::tcp::sender_core::SenderCore;
use crate::tcp::Release;
use crate::time::Time;
use rand::Rng;

pub const ENTRY: super::ReleaseEntry = super::ReleaseEntry { name: "window", make: |rng| Window { rng }.into() };

/// The flow's random stream: drawn from only with a send jitter, so runs without one are as before.
pub struct Window {
    rng: SimRng,
}

impl Release for Window {
    fn send(&mut self, core: &mut SenderCore, now: Time, budget: u32, out: &mut Vec<i64>) {
        let jitter = core.send_jitter();
        if jitter == 0 {
            return core.send_window(now, budget, out);
        }
        if core.send_deadline.is_none() && core.can_send() {
            let wait = (self.rng.random::<f64>() * jitter as f64) as Time;
            core.send_deadline = Some(now + wait);
        }
    }

    fn on_timer(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) {
        let burst = core.max_burst();
        core.send_window(now, burst, out);
    }
}

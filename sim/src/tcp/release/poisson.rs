//! Poisson release, the sender of Enachescu et al.'s Theorem 1: rate window / srtt.
//! Details: docs/tcp.md, `tcp/release/poisson.rs`.

use crate::rng::SimRng;
use crate::tcp::sender_core::SenderCore;
use crate::tcp::Release;
use crate::time::{from_secs, Time};
use rand_distr::{Distribution, Exp1};

pub const ENTRY: super::ReleaseEntry = super::ReleaseEntry { name: "poisson", make: |rng| Poisson::new(rng).into() };

pub struct Poisson {
    rng: SimRng,
}

impl Poisson {
    pub fn new(rng: SimRng) -> Self {
        Self { rng }
    }

    fn gap(&mut self, core: &SenderCore) -> Time {
        let e: f64 = Exp1.sample(&mut self.rng);
        from_secs(e * core.release_gap_s()).max(1)
    }
}

impl Release for Poisson {
    fn send(&mut self, core: &mut SenderCore, now: Time, budget: u32, out: &mut Vec<i64>) {
        if core.srtt_s().is_none() {
            return core.send_window(now, budget, out);
        }
        if core.send_deadline.is_none() {
            core.send_deadline = Some(now + self.gap(core));
        }
    }

    fn on_timer(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) {
        if core.srtt_s().is_none() {
            let burst = core.max_burst();
            return core.send_window(now, burst, out);
        }
        let st = &core.st;
        let in_flight = st.t_seqno - st.highest_ack - 1;
        if (in_flight as f64) < 2.0 * st.wmax && st.t_seqno < core.size_pkts() {
            core.send_next(now, out);
        }
        if core.st.t_seqno < core.size_pkts() {
            core.send_deadline = Some(now + self.gap(core));
        }
    }
}

//! Paced release (Paced TCP of Enachescu et al. 2006): one packet every srtt / window.
//! Details: docs/tcp.md, `tcp/release/paced.rs`.

use crate::tcp::sender_core::SenderCore;
use crate::tcp::Release;
use crate::time::{from_secs, Time};

pub const ENTRY: super::ReleaseEntry = super::ReleaseEntry { name: "paced", make: |_| Paced::default().into() };

#[derive(Default)]
pub struct Paced {
    /// Earliest time of the next release.
    next_release: Time,
}

impl Release for Paced {
    fn send(&mut self, core: &mut SenderCore, now: Time, budget: u32, out: &mut Vec<i64>) {
        if core.srtt_s().is_none() {
            return core.send_window(now, budget, out);
        }
        if core.can_send() && now >= self.next_release {
            core.send_next(now, out);
            self.next_release = now + from_secs(core.release_gap_s());
        }
        core.send_deadline = core.can_send().then_some(self.next_release.max(now));
    }

    fn on_timer(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) {
        let burst = core.max_burst();
        self.send(core, now, burst, out);
    }

    fn restart(&mut self, now: Time) {
        self.next_release = now;
    }

    fn paces(&self) -> bool {
        true
    }
}

//! ACK-clocked release: packets leave as soon as the window allows (bursts are possible).

use crate::tcp::sender_core::SenderCore;
use crate::tcp::Release;
use crate::time::Time;

pub const ENTRY: super::ReleaseEntry = super::ReleaseEntry { name: "window", make: |_| Window.into() };

pub struct Window;

impl Release for Window {
    fn send(&mut self, core: &mut SenderCore, now: Time, budget: u32, out: &mut Vec<i64>) {
        core.send_window(now, budget, out);
    }

    fn on_timer(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) {
        let burst = core.max_burst();
        core.send_window(now, burst, out);
    }
}

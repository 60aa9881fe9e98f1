//! Release disciplines (`tcp.release`): how the packets the window allows leave the sender. One
//! file each, one line in `releases!` below. Before the first RTT sample there is no srtt to pace
//! by, so every discipline sends its initial window as an ordinary window.

use super::sender_core::SenderCore;
use super::Release;
use crate::rng::SimRng;
use crate::time::Time;

/// A registered release: its name (`tcp.release`) and its constructor, given the flow's random
/// stream.
pub struct ReleaseEntry {
    pub name: &'static str,
    pub make: fn(SimRng) -> AnyRelease,
}

/// Declares the releases: for each `module::Type`, `pub mod module;`, an `AnyRelease` variant
/// dispatching `Release` to it, and `module::ENTRY` in `RELEASES` (see `tcp` on why a macro).
macro_rules! releases {
    ($($module:ident::$ty:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// A release discipline, statically dispatched.
        pub enum AnyRelease {
            $($ty($module::$ty),)*
        }

        $(impl From<$module::$ty> for AnyRelease {
            fn from(r: $module::$ty) -> Self {
                AnyRelease::$ty(r)
            }
        })*

        impl Release for AnyRelease {
            #[inline]
            fn send(&mut self, core: &mut SenderCore, now: Time, budget: u32, out: &mut Vec<i64>) {
                match self { $(AnyRelease::$ty(r) => r.send(core, now, budget, out),)* }
            }
            #[inline]
            fn on_timer(&mut self, core: &mut SenderCore, now: Time, out: &mut Vec<i64>) {
                match self { $(AnyRelease::$ty(r) => r.on_timer(core, now, out),)* }
            }
            #[inline]
            fn restart(&mut self, now: Time) {
                match self { $(AnyRelease::$ty(r) => r.restart(now),)* }
            }
            #[inline]
            fn paces(&self) -> bool {
                match self { $(AnyRelease::$ty(r) => r.paces(),)* }
            }
        }

        /// The release disciplines (`tcp.release`).
        pub const RELEASES: &[ReleaseEntry] = &[$($module::ENTRY,)*];
    };
}

// The releases: one line each.
releases! {
    window::Window,
    paced::Paced,
    poisson::Poisson,
}

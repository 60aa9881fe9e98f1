//! buffersweep's simulator core: a packet-level simulator of TCP flows (long-lived and short, with
//! open-loop traffic beside them) over a network of drop-tail links. The engine is plain Rust
//! (`world::run`); the `python` feature adds the PyO3 bindings used by the `sim` Python package.
//!
//! A map for newcomers: `config` (the run's parameters, declared with `params`) -> `topology`
//! (the network) -> `world` (events: `event`, links: `link`, `queue`, TCP: `tcp`, traffic:
//! `short`, `source`, buffer policies: `policy`) -> `world::finish` (the tables of `output`).

pub mod config;
pub mod event;
pub mod link;
pub mod metrics;
pub mod output;
pub mod packet;
pub mod params;
pub mod policy;
pub mod queue;
pub mod rng;
pub mod source;
pub mod tcp;
pub mod time;
pub mod topology;
pub mod trace;
pub mod traffic;
pub mod world;

#[cfg(feature = "python")]
mod python;

pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

//! buffersweep's simulator core: a packet-level simulator of long-lived TCP flows (with short
//! TCP flows and open-loop traffic beside them) through a drop-tail bottleneck. The engine is plain Rust (`world::run`);
//! the `python` feature adds the PyO3 bindings used by the `sim` Python package.

pub mod config;
pub mod controller;
pub mod event;
pub mod link;
pub mod metrics;
pub mod packet;
pub mod queue;
pub mod rng;
pub mod short;
pub mod source;
pub mod tcp;
pub mod time;
pub mod trace;
pub mod world;

#[cfg(feature = "python")]
mod python;

pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

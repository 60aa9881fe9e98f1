//! buffersweep's simulator core: packet-level TCP over a network of links, in plain Rust
//! (`world::run`), with PyO3 bindings under the `python` feature.
//! Details: docs/engine.md, `lib.rs`.

pub mod config;
pub mod estimate;
pub mod event;
pub mod link;
pub mod memory;
pub mod metrics;
pub mod output;
pub mod packet;
pub mod params;
pub mod policy;
pub mod precision;
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
#[cfg(feature = "python")]
mod python_columns;

pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

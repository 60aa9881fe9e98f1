//! Buffer controllers: called every `interval_ms` with a view of the bottleneck's queue since the
//! previous call, they may set a new buffer capacity. This is the hook for adaptive buffer
//! sizing (ABS and the like); a new controller is one file implementing `BufferController`, plus
//! one line in `CONTROLLERS`.

pub mod abs;
pub mod adt;
pub mod schedule;

use crate::params::{positive, ConfigError, UnionDef, Value, VariantDef};

/// What a controller sees at each call (counts are since the previous call).
#[derive(Clone, Copy, Debug)]
pub struct QueueView {
    pub now_s: f64,
    pub len_pkts: u64,
    pub capacity_pkts: f64,
    pub arrivals: u64,
    pub drops: u64,
    /// Time spent transmitting / the interval (departures).
    pub utilization: f64,
    /// Bits that arrived (enqueued or dropped) / (capacity x interval): ABS's u(n), an input rate.
    pub input_utilization: f64,
}

pub trait BufferController: Send {
    /// Called once at t = 0 with the link's initial state, before any interval was measured:
    /// may set the initial capacity. Not a sample (an integral term fed the empty interval's
    /// zero utilization would wind up on it).
    fn start(&mut self, view: &QueueView) -> Option<u64> {
        let _ = view;
        None
    }

    /// At the end of each control interval: returns the new capacity in packets, or None to
    /// keep the current one.
    fn on_tick(&mut self, view: &QueueView) -> Option<u64>;
}

/// A registered controller: its parameters (the union variant) and its constructor.
pub struct ControllerEntry {
    pub def: VariantDef,
    pub make: fn(&Value) -> Result<Box<dyn BufferController>, ConfigError>,
}

pub const CONTROLLERS: &[ControllerEntry] = &[schedule::ENTRY, abs::ENTRY, abs::UNDAMPED_ENTRY, adt::ENTRY];

crate::params! {
    /// Settings common to every buffer controller.
    pub struct ControllerCommon as "ControllerCommon" {
        /// How often the controller is called.
        interval_ms: f64 = 100.0, unit "ms", check positive(1e6);
    }
}

pub static CONTROLLER: UnionDef = UnionDef {
    name: "controller",
    tag: "name",
    default_tag: "schedule",
    variants: || CONTROLLERS.iter().map(|e| &e.def).collect(),
    presets: &[],
};

/// The `controller` section of a run config (null = none).
#[derive(Clone, Debug, PartialEq)]
pub struct ControllerConfig(pub crate::params::Tagged<ControllerCommon>);

crate::union_param!(ControllerConfig, CONTROLLER, ControllerCommon);

impl ControllerConfig {
    pub fn interval_ms(&self) -> f64 {
        self.0.common.interval_ms
    }

    pub fn make(&self) -> Box<dyn BufferController> {
        let entry = CONTROLLERS.iter().find(|e| e.def.name == self.0.variant).expect("validated controller");
        (entry.make)(&self.0.params).expect("controller parameters validated in config")
    }
}

pub fn names() -> Vec<&'static str> {
    CONTROLLERS.iter().map(|e| e.def.name).collect()
}

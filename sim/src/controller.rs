//! Buffer controllers: called every `controller_interval_ms` with a view of the bottleneck
//! queue since the previous call, they may set a new buffer capacity. This is the hook for
//! adaptive buffer sizing (ABS and the like); a new controller is one struct implementing
//! `BufferController` plus one line in `make` / `names`.

use crate::config::SimConfig;

/// What a controller sees at each call (counts are since the previous call).
#[derive(Clone, Copy, Debug)]
pub struct QueueView {
    pub now_s: f64,
    pub len_pkts: u64,
    pub capacity_pkts: f64,
    pub arrivals: u64,
    pub drops: u64,
    pub utilization: f64,
}

pub trait BufferController: Send {
    /// Returns the new capacity in packets, or None to keep the current one.
    fn on_tick(&mut self, view: &QueueView) -> Option<u64>;
}

/// A fixed schedule of (time_s, buffer_pkts) steps: the trivial controller, for tests.
pub struct Schedule {
    steps: Vec<(f64, u64)>,
    next: usize,
}

impl BufferController for Schedule {
    fn on_tick(&mut self, view: &QueueView) -> Option<u64> {
        let mut set = None;
        while self.next < self.steps.len() && self.steps[self.next].0 <= view.now_s {
            set = Some(self.steps[self.next].1);
            self.next += 1;
        }
        set
    }
}

pub fn names() -> Vec<&'static str> {
    vec!["none", "schedule"]
}

pub fn make(cfg: &SimConfig) -> Option<Box<dyn BufferController>> {
    match cfg.controller.as_str() {
        "schedule" => {
            let mut steps: Vec<(f64, u64)> = cfg.buffer_schedule.iter().map(|&(t, b)| (t, b as u64)).collect();
            steps.sort_by(|a, b| a.0.total_cmp(&b.0));
            Some(Box::new(Schedule { steps, next: 0 }))
        }
        _ => None,
    }
}

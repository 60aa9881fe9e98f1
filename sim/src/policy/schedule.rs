//! `schedule`: a fixed list of (time_s, buffer_pkts) steps, applied at the first call at or after
//! each: scripted buffer changes, and the trivial adaptive policy for tests.

use super::{BufferPolicy, ControlState, PolicyEntry, QueueView};
use crate::params::{int_in, non_negative, normalize, Check, ConfigError, Param, Value, VariantDef, MAX_PKTS};

crate::params! {
    /// One step: from time_s on, the buffer is buffer_pkts.
    pub struct ScheduleStep as "ScheduleStep" {
        /// When the step applies (at the first controller call at or after it).
        time_s: f64 = 0.0, unit "s", check non_negative(1e6);
        /// The buffer from then on.
        buffer_pkts: i64 = 0, unit "pkts", check int_in(0, MAX_PKTS);
    }
}

fn not_empty() -> Check<Vec<ScheduleStep>> {
    Check::new("at least one step", |v: &Vec<ScheduleStep>| {
        v.is_empty().then(|| "must list at least one (time_s, buffer_pkts) step".to_string())
    })
}

crate::params! {
    /// Buffer steps at given times.
    pub struct ScheduleParams as "Schedule" {
        /// The (time_s, buffer_pkts) steps, in any order.
        steps: Vec<ScheduleStep> = vec![], check not_empty();
    }
}

pub const ENTRY: PolicyEntry = PolicyEntry {
    def: VariantDef {
        name: "schedule",
        doc: "sets the buffer at given times",
        params: ScheduleParams::specs,
        keys: ScheduleParams::KEYS,
        normalize: normalize::<ScheduleParams>,
    },
    adaptive: true,
    make: |v, _| make(v),
};

fn make(v: &Value) -> Result<Box<dyn BufferPolicy>, ConfigError> {
    let p = ScheduleParams::parse(v)?;
    let mut steps: Vec<(f64, u64)> = p.steps.iter().map(|s| (s.time_s, s.buffer_pkts as u64)).collect();
    steps.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(Box::new(Schedule { steps, next: 0, last_set: None }))
}

pub struct Schedule {
    steps: Vec<(f64, u64)>,
    next: usize,
    last_set: Option<u64>,
}

impl BufferPolicy for Schedule {
    /// Steps at time 0 set the initial buffer.
    fn start(&mut self, view: &QueueView) -> Option<u64> {
        self.on_tick(view)
    }

    fn on_tick(&mut self, view: &QueueView) -> Option<u64> {
        let mut set = None;
        while self.next < self.steps.len() && self.steps[self.next].0 <= view.now_s {
            set = Some(self.steps[self.next].1);
            self.next += 1;
        }
        self.last_set = set.or(self.last_set);
        set
    }

    fn state(&self) -> ControlState {
        ControlState { b_pkts: self.last_set.map(|b| b as f64), ..ControlState::default() }
    }
}

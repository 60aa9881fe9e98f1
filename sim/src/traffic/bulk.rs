//! `bulk`: long-lived TCP flows on the group's route, with an optional on/off schedule (ABS Fig. 4).
//! Details: docs/engine.md, `traffic/bulk.rs`.

use super::TrafficEntry;
use crate::params::{int_in, non_negative, normalize, ConfigError, VariantDef, MAX_FLOWS};

crate::params! {
    /// One step of an on/off schedule.
    pub struct ActiveStep as "ActiveStep" {
        /// When the step applies.
        time_s: f64 = 0.0, unit "s", check non_negative(1e6);
        /// Flows of the group sending from then on (the first ones by index).
        active_flows: i64 = 0, unit "count", check int_in(0, MAX_FLOWS);
    }
}

crate::params! {
    /// Long-lived TCP flows.
    pub struct BulkParams as "Bulk" {
        /// Flows in the group.
        flows: i64 = 1, unit "count", check int_in(1, MAX_FLOWS);
        /// On/off steps (time_s, active_flows), in time order; null = every flow sends throughout.
        schedule: Option<Vec<ActiveStep>> = None;
    }
}

pub const ENTRY: TrafficEntry = TrafficEntry {
    def: VariantDef {
        name: "bulk",
        doc: "long-lived TCP flows, optionally leaving and returning on a schedule",
        params: BulkParams::specs,
        keys: BulkParams::KEYS,
        normalize: normalize::<BulkParams>,
    },
    tcp: true,
};

impl BulkParams {
    pub fn check(&self) -> Result<(), ConfigError> {
        let Some(steps) = &self.schedule else { return Ok(()) };
        if steps.is_empty() {
            return Err(ConfigError::at("schedule", "must list at least one (time_s, active_flows) step, or be null"));
        }
        for (i, s) in steps.iter().enumerate() {
            if s.active_flows > self.flows {
                return Err(ConfigError::at(
                    &format!("schedule.{i}.active_flows"),
                    format!("must be <= flows ({}), got {}", self.flows, s.active_flows),
                ));
            }
            if i > 0 && s.time_s < steps[i - 1].time_s {
                return Err(ConfigError::at(
                    &format!("schedule.{i}.time_s"),
                    format!("steps must be in time order; {} follows {}", s.time_s, steps[i - 1].time_s),
                ));
            }
        }
        Ok(())
    }

    /// Flows active at time `t_s` (all of them before the first step).
    pub fn active_at(&self, t_s: f64) -> i64 {
        let Some(steps) = &self.schedule else { return self.flows };
        steps.iter().take_while(|s| s.time_s <= t_s).last().map_or(self.flows, |s| s.active_flows)
    }
}

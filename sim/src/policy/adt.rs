//! ADT, the adaptive drop-tail buffer ABS compares against: b(n) = b(n-1) + K (u* - u(n)).
//! Details: docs/engine.md, `policy/adt.rs`.

use super::{measured_util, target_util, util_measures, BufferPolicy, ControlState, PolicyEntry, QueueView};
use crate::params::{non_negative, normalize, one_of, ConfigError, Param, Value, VariantDef};

crate::params! {
    /// ADT: b(n) = b(n-1) + K (u* - u(n)).
    pub struct AdtParams as "Adt" {
        /// u*: the utilization to reach.
        target_util: f64 = 0.98, unit "1", check target_util();
        /// K: packets per unit of utilization error and interval.
        gain: f64 = 100.0, unit "pkts", check non_negative(1e12);
        /// u(n): input (the paper's (S1 + S2) / (C T)) or departure (time transmitting / T).
        util_measure: String = "input".to_string(), unit "", check one_of(util_measures);
    }
}

pub const ENTRY: PolicyEntry = PolicyEntry {
    def: VariantDef {
        name: "adt",
        doc: "ADT: one integral controller on utilization with a fixed gain",
        params: AdtParams::specs,
        keys: AdtParams::KEYS,
        normalize: normalize::<AdtParams>,
    },
    adaptive: true,
    make: |v, _| make(v),
};

fn make(v: &Value) -> Result<Box<dyn BufferPolicy>, ConfigError> {
    let p = AdtParams::parse(v)?;
    Ok(Box::new(Adt { target_util: p.target_util, gain: p.gain, b: 0.0, util_measure: p.util_measure, u: 0.0 }))
}

/// The controller's state: the buffer as a real number.
pub struct Adt {
    pub target_util: f64,
    pub gain: f64,
    pub b: f64,
    pub util_measure: String,
    /// The last u(n).
    pub u: f64,
}

impl Adt {
    pub fn step(&mut self, u: f64) -> f64 {
        self.u = u;
        self.b += self.gain * (self.target_util - u);
        self.b
    }
}

impl BufferPolicy for Adt {
    fn start(&mut self, view: &QueueView) -> Option<u64> {
        self.b = view.capacity_pkts;
        None
    }

    fn on_tick(&mut self, view: &QueueView) -> Option<u64> {
        Some(super::whole_pkts(self.step(measured_util(view, &self.util_measure))))
    }

    fn state(&self) -> ControlState {
        ControlState { b_pkts: Some(self.b), u: Some(self.u), ..ControlState::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adt_follows_its_equation() {
        let mut a = Adt { target_util: 0.9, gain: 50.0, b: 20.0, util_measure: "input".into(), u: 0.0 };
        assert_eq!(a.step(0.8), 25.0);
        assert_eq!(a.step(1.0), 20.0);
    }
}

//! ADT (the adaptive drop-tail buffer the ABS paper compares against): one integral controller
//! on utilization with a fixed gain, b(n) = b(n-1) + K (u* - u(n)), u(n) measured as ABS does
//! (the input rate over capacity; see `abs`).

use super::abs::measure;
use super::{BufferController, ControllerEntry, QueueView};
use crate::params::{float_in, non_negative, normalize, ConfigError, Param, Value, VariantDef};

crate::params! {
    /// ADT: b(n) = b(n-1) + K (u* - u(n)).
    pub struct AdtParams as "Adt" {
        /// u*: the utilization to reach.
        target_util: f64 = 0.98, unit "1", check float_in(0.0, 1.0);
        /// K: packets per unit of utilization error and interval.
        gain: f64 = 100.0, unit "pkts", check non_negative(1e12);
    }
}

pub const ENTRY: ControllerEntry = ControllerEntry {
    def: VariantDef {
        name: "adt",
        doc: "ADT: one integral controller on utilization with a fixed gain",
        params: AdtParams::specs,
        keys: AdtParams::KEYS,
        normalize: normalize::<AdtParams>,
    },
    make,
};

fn make(v: &Value) -> Result<Box<dyn BufferController>, ConfigError> {
    let p = AdtParams::parse(v)?;
    Ok(Box::new(Adt { target_util: p.target_util, gain: p.gain, b: 0.0 }))
}

/// The controller's state: the buffer as a real number.
pub struct Adt {
    pub target_util: f64,
    pub gain: f64,
    pub b: f64,
}

impl Adt {
    pub fn step(&mut self, u: f64) -> f64 {
        self.b += self.gain * (self.target_util - u);
        self.b
    }
}

impl BufferController for Adt {
    fn start(&mut self, view: &QueueView) -> Option<u64> {
        self.b = view.capacity_pkts;
        None
    }

    fn on_tick(&mut self, view: &QueueView) -> Option<u64> {
        let (u, _) = measure(view);
        Some(self.step(u).round().max(1.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adt_follows_its_equation() {
        let mut a = Adt { target_util: 0.9, gain: 50.0, b: 20.0 };
        assert_eq!(a.step(0.8), 25.0);
        assert_eq!(a.step(1.0), 20.0);
    }
}

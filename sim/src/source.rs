//! Open-loop sources feeding the bottleneck directly: Poisson (exponential gaps) and constant
//! bit rate. Used to validate the queue against queueing theory and as non-TCP background load.

use crate::rng::SimRng;
use crate::time::{from_secs, Time};
use rand_distr::{Distribution, Exp1};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Poisson,
    Cbr,
}

pub struct OpenLoopSource {
    pattern: Pattern,
    mean_gap_s: f64,
    pub bytes: u16,
    rng: SimRng,
}

impl OpenLoopSource {
    pub fn new(pattern: Pattern, rate_mbps: f64, bytes: u16, rng: SimRng) -> Self {
        let mean_gap_s = bytes as f64 * 8.0 / (rate_mbps * 1e6);
        Self { pattern, mean_gap_s, bytes, rng }
    }

    /// The mean time between packets.
    pub fn mean_gap_s(&self) -> f64 {
        self.mean_gap_s
    }

    /// Time to the next packet.
    pub fn next_gap(&mut self) -> Time {
        let s = match self.pattern {
            Pattern::Poisson => {
                let e: f64 = Exp1.sample(&mut self.rng);
                e * self.mean_gap_s
            }
            Pattern::Cbr => self.mean_gap_s,
        };
        from_secs(s)
    }
}

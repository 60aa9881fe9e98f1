//! Simulated time is an integer number of picoseconds, so that event order never depends on
//! floating-point rounding (u64 picoseconds cover about 213 days of simulated time).

pub type Time = u64;

pub const PS_PER_S: f64 = 1e12;

/// Seconds (f64) to simulated time, rounded to the nearest picosecond.
pub fn from_secs(s: f64) -> Time {
    (s * PS_PER_S).round() as Time
}

pub fn to_secs(t: Time) -> f64 {
    t as f64 / PS_PER_S
}

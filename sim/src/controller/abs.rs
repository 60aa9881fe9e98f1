//! Adaptive Buffer Sizing (Zhang and Loguinov, "ABS: Adaptive Buffer Sizing for Heterogeneous
//! Networks", Computer Networks 2010, section 3; `../shared/seeds/`), followed equation by
//! equation, and its two simpler relatives:
//! - `abs`: the loss sub-controller (6) b_p(n) = b_p(n-1) + I_p T (p(n) - p*), the damped
//!   utilization sub-controller (8) b_u(n) = b_u(n-1) - I_u T (u(n) - u(n-1)) (u(n) - u*), the
//!   buffer (9) b(n) = max(b_u(n), b_p(n)) capped by memory, min(., b(n-1) + M(n)), and the gain
//!   training (15) I_u(n) = I_u(n-1) - gamma T (u(n) - u(n-1)) (u(n) - u*) and (16) I_p(n) =
//!   I_p(n-1) - gamma T (p* - p(n)), applied with the new sample before the control step that
//!   uses it (the paper trains I(n+1) on u(n+1), then sets b(n+1) with it); `train = false` keeps
//!   the initial gains (Fig. 2);
//! - `abs_u_undamped`: (7) b_u(n) = b_u(n-1) - I_u T (u(n) - u*) with (6) and (9), which drives a
//!   non-bottleneck link's buffer to infinity (the reason for (8));
//! - `adt`: one integral controller with a fixed gain, b(n) = b(n-1) + K (u* - u(n)).
//! u(n) is the input rate over capacity, (S1 + S2) / (C T) with S1 and S2 the bytes enqueued and
//! dropped in the interval (section 4.1); p(n) = S2 / (S1 + S2). Buffers are real-valued inside
//! the controller and floored at 1 packet when applied.

use super::QueueView;

/// The targets, gains and options of an ABS-family controller.
#[derive(Clone, Debug, PartialEq)]
pub struct AbsGains {
    pub target_util: f64,
    pub target_loss: f64,
    /// Initial I_u and I_p.
    pub gain_util: f64,
    pub gain_loss: f64,
    pub interval_s: f64,
    pub train: bool,
    pub gamma: f64,
    /// Use (7) instead of (8).
    pub undamped: bool,
}

/// The controller's state after a step (what the time series records).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AbsState {
    pub b: f64,
    pub b_u: f64,
    pub b_p: f64,
    pub i_u: f64,
    pub i_p: f64,
    pub u: f64,
    pub p: f64,
}

pub struct Abs {
    g: AbsGains,
    st: AbsState,
    /// u(n-1); None before the first sample.
    prev_u: Option<f64>,
}

impl Abs {
    /// Starts from buffer `b0` (b_u = b_p = b0).
    pub fn new(g: AbsGains, b0: f64) -> Self {
        let st = AbsState { b: b0, b_u: b0, b_p: b0, i_u: g.gain_util, i_p: g.gain_loss, u: 0.0, p: 0.0 };
        Self { g, st, prev_u: None }
    }

    pub fn state(&self) -> AbsState {
        self.st
    }

    /// One control step on the interval's measured u(n) and p(n), with `memory` the extra
    /// packets M(n) the buffer may grow by (None: unbounded). Returns b(n).
    pub fn step(&mut self, u: f64, p: f64, memory: Option<f64>) -> f64 {
        let g = &self.g;
        let t = g.interval_s;
        let du = self.prev_u.map_or(0.0, |prev| u - prev);
        let s = &mut self.st;
        if g.train {
            s.i_u -= g.gamma * t * du * (u - g.target_util); // (15)
            s.i_p -= g.gamma * t * (g.target_loss - p); // (16)
        }
        s.b_p += s.i_p * t * (p - g.target_loss); // (6)
        s.b_u -= if g.undamped { s.i_u * t * (u - g.target_util) } else { s.i_u * t * du * (u - g.target_util) }; // (7), (8)
        let want = s.b_u.max(s.b_p); // (9)
        s.b = match memory {
            Some(m) => want.min(s.b + m),
            None => want,
        };
        (s.u, s.p) = (u, p);
        self.prev_u = Some(u);
        s.b
    }
}

/// ADT: b(n) = b(n-1) + K (u* - u(n)).
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

/// u(n) and p(n) of an interval as ABS section 4.1 measures them.
pub fn measure(view: &QueueView) -> (f64, f64) {
    let total = view.arrivals;
    let p = if total > 0 { view.drops as f64 / total as f64 } else { 0.0 };
    (view.input_utilization, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gains(train: bool, undamped: bool) -> AbsGains {
        AbsGains { target_util: 0.95, target_loss: 0.005, gain_util: 3000.0, gain_loss: 3000.0, interval_s: 0.2, train,
                   gamma: 1.0, undamped }
    }

    #[test]
    fn abs_follows_eqs_6_8_9_15_16_step_by_step() {
        let mut c = Abs::new(gains(true, false), 100.0);
        let samples = [(0.90, 0.01), (0.93, 0.002), (0.97, 0.0), (0.96, 0.008)];
        // The same equations, written out independently.
        let (mut b_u, mut b_p, mut i_u, mut i_p, mut prev_u) = (100.0f64, 100.0f64, 3000.0f64, 3000.0f64, None::<f64>);
        for (u, p) in samples {
            let b = c.step(u, p, None);
            let du = prev_u.map_or(0.0, |x: f64| u - x);
            i_u = i_u - 1.0 * 0.2 * du * (u - 0.95);
            i_p = i_p - 1.0 * 0.2 * (0.005 - p);
            b_p = b_p + i_p * 0.2 * (p - 0.005);
            b_u = b_u - i_u * 0.2 * du * (u - 0.95);
            assert_eq!(b.to_bits(), b_u.max(b_p).to_bits(), "u {u} p {p}");
            let s = c.state();
            assert_eq!((s.b_u, s.b_p, s.i_u, s.i_p), (b_u, b_p, i_u, i_p));
            prev_u = Some(u);
        }
        // The first step: p = 1% > 0.5% grows b_p by I_p T (p - p*), about 3 packets.
        let mut c = Abs::new(gains(false, false), 100.0);
        assert!((c.step(0.90, 0.01, None) - 103.0).abs() < 1e-9);
    }

    #[test]
    fn the_memory_cap_binds() {
        let mut c = Abs::new(gains(false, false), 100.0);
        let b = c.step(0.5, 0.5, Some(10.0)); // loss far above target: b_p jumps by ~300
        assert_eq!(b, 110.0);
        assert!(c.state().b_p > 300.0);
    }

    #[test]
    fn undamped_utilization_control_diverges_below_target_and_the_damped_one_does_not() {
        // A non-bottleneck link: u stays at 0.5 < u* = 0.95 and nothing is lost.
        let mut damped = Abs::new(gains(false, false), 100.0);
        let mut undamped = Abs::new(gains(false, true), 100.0);
        let (mut bd, mut bu) = (0.0, 0.0);
        for _ in 0..1000 {
            bd = damped.step(0.5, 0.0, None);
            bu = undamped.step(0.5, 0.0, None);
        }
        assert!(bu > 250_000.0, "(7) grows by I_u T (u* - u) = 270 a step: {bu}");
        assert!(bd <= 100.0, "(8) holds still when u does not move: {bd}");
    }

    #[test]
    fn adt_follows_its_equation() {
        let mut a = Adt { target_util: 0.9, gain: 50.0, b: 20.0 };
        assert_eq!(a.step(0.8), 25.0);
        assert_eq!(a.step(1.0), 20.0);
    }
}

//! Adaptive Buffer Sizing (Zhang and Loguinov, Computer Networks 2010, section 3, eqs. 6-9, 15-16),
//! equation by equation, with the `damping` choice for eq. (8).
//! Details: docs/engine.md, `policy/abs.rs`.

use super::{
    measured_loss, measured_util, target_loss, target_util, util_measures, BufferPolicy, ControlState, PolicyEntry,
    QueueView,
};
use crate::params::{non_negative, normalize, one_of, ConfigError, Param, Value, VariantDef};

crate::params! {
    /// One step of the memory bound: from time_s on, the buffer may not exceed pkts.
    pub struct MemoryStep as "MemoryStep" {
        /// When the bound applies.
        time_s: f64 = 0.0, unit "s", check non_negative(1e6);
        /// The physical memory for the buffer from then on: b(n-1) + M(n) in the paper's cap.
        pkts: f64 = 0.0, unit "pkts", check non_negative(1e12);
    }
}

crate::params! {
    /// ABS (Zhang and Loguinov 2010): two integral controllers with trained gains.
    pub struct AbsParams as "Abs" {
        /// u*: the utilization (input rate over capacity) to reach.
        target_util: f64 = 0.98, unit "1", check target_util();
        /// p*: the loss rate not to exceed.
        target_loss: f64 = 0.02, unit "1", check target_loss();
        /// Initial I_u (the paper's Fig. 2 uses 3000).
        gain_util: f64 = 3000.0, unit "pkts/s", check non_negative(1e12);
        /// Initial I_p.
        gain_loss: f64 = 3000.0, unit "pkts/s", check non_negative(1e12);
        /// Train the gains online (eqs. 15-16); false keeps them fixed (Fig. 2).
        train: bool = true, unit "";
        /// The gradient step of the training (1 in the paper).
        gamma: f64 = 1.0, unit "1", check non_negative(1e12);
        /// The memory bound over time, (time_s, pkts) steps; null = unbounded.
        memory_schedule: Option<Vec<MemoryStep>> = None;
        /// u(n): input (the paper's (S1 + S2) / (C T)) or departure (time transmitting / T).
        util_measure: String = "input".to_string(), unit "", check one_of(util_measures);
        /// The damping factor of (8) and (15): signed, u(n) - u(n-1) as printed, or magnitude,
        /// |u(n) - u(n-1)| (see the module's comment).
        damping: String = "signed".to_string(), unit "", check one_of(dampings);
    }
}

pub fn dampings() -> Vec<&'static str> {
    vec!["signed", "magnitude"]
}

pub const ENTRY: PolicyEntry = PolicyEntry {
    def: VariantDef {
        name: "abs",
        doc: "ABS: loss and damped utilization integral controllers, trained gains (Zhang and Loguinov 2010)",
        params: AbsParams::specs,
        keys: AbsParams::KEYS,
        normalize: normalize::<AbsParams>,
    },
    adaptive: true,
    make: |v, _| make(v, false),
};

pub(super) fn make(v: &Value, undamped: bool) -> Result<Box<dyn BufferPolicy>, ConfigError> {
    let p = AbsParams::parse(v)?;
    let damping = match (undamped, p.damping.as_str()) {
        (true, _) => Damping::None,
        (false, "magnitude") => Damping::Magnitude,
        _ => Damping::Signed,
    };
    let mut memory: Vec<(f64, f64)> = p.memory_schedule.iter().flatten().map(|m| (m.time_s, m.pkts)).collect();
    memory.sort_by(|a, b| a.0.total_cmp(&b.0));
    let gains = AbsGains {
        target_util: p.target_util,
        target_loss: p.target_loss,
        gain_util: p.gain_util,
        gain_loss: p.gain_loss,
        interval_s: 0.0,
        train: p.train,
        gamma: p.gamma,
        damping,
    };
    Ok(Box::new(AbsController { abs: Abs::new(gains, 0.0), memory, last_now_s: 0.0, util_measure: p.util_measure }))
}

/// `Abs` on a link: measures each interval as section 4.1 says and applies the buffer.
struct AbsController {
    abs: Abs,
    /// (from time_s, bound in pkts), in time order.
    memory: Vec<(f64, f64)>,
    last_now_s: f64,
    util_measure: String,
}

impl AbsController {
    fn bound_at(&self, t_s: f64) -> Option<f64> {
        self.memory.iter().take_while(|m| m.0 <= t_s).last().map(|m| m.1)
    }
}

impl BufferPolicy for AbsController {
    /// b(0) = b_u(0) = b_p(0) = the link's initial buffer.
    fn start(&mut self, view: &QueueView) -> Option<u64> {
        let g = self.abs.g.clone();
        self.abs = Abs::new(g, view.capacity_pkts);
        self.last_now_s = view.now_s;
        None
    }

    fn on_tick(&mut self, view: &QueueView) -> Option<u64> {
        self.abs.g.interval_s = view.now_s - self.last_now_s;
        self.last_now_s = view.now_s;
        let (u, p) = (measured_util(view, &self.util_measure), measured_loss(view));
        let memory = self.bound_at(view.now_s).map(|bound| bound - self.abs.state().b);
        let b = self.abs.step(u, p, memory);
        Some(super::whole_pkts(b))
    }

    fn state(&self) -> ControlState {
        let s = self.abs.state();
        ControlState {
            b_pkts: Some(s.b),
            b_u_pkts: Some(s.b_u),
            b_p_pkts: Some(s.b_p),
            gain_util: Some(s.i_u),
            gain_loss: Some(s.i_p),
            u: Some(s.u),
            p: Some(s.p),
        }
    }
}

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
    pub damping: Damping,
}

/// The factor on (u(n) - u*) in the utilization sub-controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Damping {
    /// (7): none.
    None,
    /// (8) as printed: u(n) - u(n-1).
    Signed,
    /// |u(n) - u(n-1)|.
    Magnitude,
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
    pub g: AbsGains,
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
        // (15) as printed trains with u(n) - u(n-1), also for (7), which the paper does not train.
        let (damp, train_damp) = match g.damping {
            Damping::None => (1.0, du),
            Damping::Signed => (du, du),
            Damping::Magnitude => (du.abs(), du.abs()),
        };
        let s = &mut self.st;
        if g.train {
            s.i_u -= g.gamma * t * train_damp * (u - g.target_util); // (15)
            s.i_p -= g.gamma * t * (g.target_loss - p); // (16)
        }
        s.b_p += s.i_p * t * (p - g.target_loss); // (6)
        s.b_u -= s.i_u * t * damp * (u - g.target_util); // (7), (8)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn gains(train: bool, undamped: bool) -> AbsGains {
        let damping = if undamped { Damping::None } else { Damping::Signed };
        AbsGains {
            target_util: 0.95,
            target_loss: 0.005,
            gain_util: 3000.0,
            gain_loss: 3000.0,
            interval_s: 0.2,
            train,
            gamma: 1.0,
            damping,
        }
    }

    #[test]
    #[allow(clippy::assign_op_pattern)] // written as the paper's equations: b(n) = b(n-1) + ...
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
    fn signed_damping_only_drifts_down_and_magnitude_damping_integrates_the_shortfall() {
        // u oscillates around 0.80 < u* = 0.95, nothing is lost.
        let mut signed = Abs::new(gains(false, false), 100.0);
        let mut magnitude = Abs::new(AbsGains { damping: Damping::Magnitude, ..gains(false, false) }, 100.0);
        for n in 0..1000 {
            let u = if n % 2 == 0 { 0.78 } else { 0.82 };
            signed.step(u, 0.0, None);
            magnitude.step(u, 0.0, None);
        }
        // Signed: each step adds -I_u T du (u - u*); over a period of two steps that is
        // -I_u T (0.04 (0.82 - 0.95) - 0.04 (0.78 - 0.95)) = -I_u T 0.0016 < 0.
        assert!(signed.state().b_u < 100.0 - 400.0, "{}", signed.state().b_u);
        // Magnitude: +I_u T 0.04 (0.95 - u) per step, about 600 x 0.04 x 0.15 = 3.6.
        assert!(
            (magnitude.state().b_u - (100.0 + 999.0 * 600.0 * 0.04 * 0.15)).abs() < 1.0,
            "{}",
            magnitude.state().b_u
        );
    }
}

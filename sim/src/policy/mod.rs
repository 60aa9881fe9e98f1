//! Buffer policies: a static rule resolved before the run, or an adaptive controller called every
//! `interval_ms`; one file each, one line in `POLICIES`. Details: docs/engine.md, `policy/mod.rs`.

use crate::params::{positive, Check, ConfigError, UnionDef, Value, VariantDef};

/// What a static rule knows of its link when the run starts.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkContext {
    pub rate_bps: f64,
    pub pkt_bytes: u32,
    /// Two-way propagation delays of the long TCP flows (flat and bulk) crossing the link; empty
    /// if none does.
    pub rtts_s: Vec<f64>,
    /// `rtt_ms`, for a link that no long flow crosses.
    pub default_rtt_s: f64,
    /// The receiver window cap.
    pub wmax_pkts: f64,
}

impl LinkContext {
    /// N: the long flows crossing the link (at least 1, so that a rule dividing by N is defined).
    pub fn flows(&self) -> f64 {
        self.rtts_s.len().max(1) as f64
    }

    /// The harmonic mean of the flows' RTTs (ABS section 4.2 and BSCL use it: it weighs each flow
    /// by its rate, which is inversely proportional to its RTT).
    pub fn rtt_harmonic_s(&self) -> f64 {
        if self.rtts_s.is_empty() {
            return self.default_rtt_s;
        }
        self.rtts_s.len() as f64 / self.rtts_s.iter().map(|r| 1.0 / r).sum::<f64>()
    }

    /// C x R in packets, for an RTT R.
    pub fn pkts_in(&self, rtt_s: f64) -> f64 {
        self.rate_bps * rtt_s / (8.0 * self.pkt_bytes as f64)
    }

    /// The link as a rule sized for a nominal RTT sees it: every long flow's RTT is `rtt_ms`
    /// (N unchanged). `None` keeps the flows' own RTTs.
    pub fn assuming_rtt(&self, rtt_ms: Option<f64>) -> LinkContext {
        let Some(ms) = rtt_ms else { return self.clone() };
        let r = ms / 1e3;
        LinkContext { rtts_s: vec![r; self.rtts_s.len()], default_rtt_s: r, ..self.clone() }
    }

    /// The peak load the long flows can offer: sum of Wmax / RTT over C.
    pub fn peak_load(&self) -> f64 {
        let bits = self.wmax_pkts * 8.0 * self.pkt_bytes as f64;
        let rtts: &[f64] =
            if self.rtts_s.is_empty() { std::slice::from_ref(&self.default_rtt_s) } else { &self.rtts_s };
        rtts.iter().map(|r| bits / r).sum::<f64>() / self.rate_bps
    }
}

/// What an adaptive policy sees at each call (counts are since the previous call).
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

/// A controller's state after a call: what the `control` table records. `b_pkts` is the buffer
/// the controller computed (real-valued; the link applies it rounded, at least 1 packet).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ControlState {
    pub b_pkts: Option<f64>,
    pub b_u_pkts: Option<f64>,
    pub b_p_pkts: Option<f64>,
    pub gain_util: Option<f64>,
    pub gain_loss: Option<f64>,
    /// u(n) and p(n) as the controller measured them.
    pub u: Option<f64>,
    pub p: Option<f64>,
}

pub trait BufferPolicy: Send {
    /// Called once at t = 0 with the link's initial state, before any interval was measured:
    /// may set the initial capacity. Not a sample (an integral term fed the empty interval's
    /// zero utilization would wind up on it).
    fn start(&mut self, view: &QueueView) -> Option<u64> {
        let _ = view;
        None
    }

    /// At the end of each control interval: returns the new capacity in packets, or None to
    /// keep the current one. Static rules are never called.
    fn on_tick(&mut self, view: &QueueView) -> Option<u64> {
        let _ = view;
        None
    }

    /// The state to record after a call.
    fn state(&self) -> ControlState {
        ControlState::default()
    }
}

/// A registered policy: its parameters (the union variant), whether it runs during the run, and
/// its constructor (given the link it is attached to).
pub struct PolicyEntry {
    pub def: VariantDef,
    pub adaptive: bool,
    pub make: MakePolicy,
}

/// A policy's constructor: its parameters and the link it is attached to.
pub type MakePolicy = fn(&Value, &LinkContext) -> Result<Box<dyn BufferPolicy>, ConfigError>;

crate::registry! {
    /// The buffer policies (`buffer_policy`): one line each.
    POLICIES: PolicyEntry = [
        fixed,
        bdp,
        stanford,
        enachescu,
        dick_newreno,
        bscl,
        abs,
        abs_u_undamped,
        adt,
        schedule,
    ]
}

crate::params! {
    /// Settings common to every buffer policy.
    pub struct PolicyCommon as "PolicyCommon" {
        /// The control interval T of adaptive policies (at least sample_interval_s); static rules
        /// are resolved once, before the run.
        interval_ms: f64 = 100.0, unit "ms", check positive(1e6);
    }
}

pub static BUFFER_POLICY: UnionDef = UnionDef {
    name: "buffer_policy",
    tag: "name",
    default_tag: "fixed",
    variants: || POLICIES.iter().map(|e| &e.def).collect(),
    presets: &[],
    renamed: &[],
};

/// A `buffer_policy` section of a run config.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyConfig(pub crate::params::Tagged<PolicyCommon>);

crate::union_param!(PolicyConfig, BUFFER_POLICY, PolicyCommon);

impl PolicyConfig {
    pub fn interval_ms(&self) -> f64 {
        self.0.common.interval_ms
    }

    fn entry(&self) -> &'static PolicyEntry {
        POLICIES.iter().find(|e| e.def.name == self.0.variant).expect("validated policy")
    }

    /// The policy runs during the run (an adaptive controller), not only at its start.
    pub fn adaptive(&self) -> bool {
        self.entry().adaptive
    }

    pub fn make(&self, link: &LinkContext) -> Box<dyn BufferPolicy> {
        (self.entry().make)(&self.0.params, link).expect("policy parameters validated in config")
    }
}

pub fn names() -> Vec<&'static str> {
    POLICIES.iter().map(|e| e.def.name).collect()
}

/// A static rule's buffer: resolved once, set by `start`.
pub struct Static(pub u64);

impl BufferPolicy for Static {
    fn start(&mut self, _: &QueueView) -> Option<u64> {
        Some(self.0)
    }
}

/// A rule's real-valued buffer in whole packets: factor x rule, rounded half to even (as
/// Python's `round`, as `sim.rules` users round the formulas), at least 1.
pub fn whole_pkts(b: f64) -> u64 {
    b.round_ties_even().max(1.0) as u64
}

/// Builds a static rule from its parameters: `pkts` computes the buffer from them and the link.
pub fn static_rule<P: crate::params::Param>(
    v: &Value,
    link: &LinkContext,
    pkts: fn(&P, &LinkContext) -> f64,
) -> Result<Box<dyn BufferPolicy>, ConfigError> {
    let p = P::parse(v)?;
    Ok(Box::new(Static(whole_pkts(pkts(&p, link)))))
}

/// u*: a utilization in (0, 1].
pub fn target_util() -> Check<f64> {
    Check::new("a number in (0, 1]", |v: &f64| {
        (!(*v > 0.0 && *v <= 1.0)).then(|| format!("must be in (0, 1], got {v}"))
    })
}

/// p*: a loss rate in [0, 1).
pub fn target_loss() -> Check<f64> {
    Check::new("a number in [0, 1)", |v: &f64| {
        (!(*v >= 0.0 && *v < 1.0)).then(|| format!("must be in [0, 1), got {v}"))
    })
}

/// How an adaptive policy measures u(n).
pub fn util_measures() -> Vec<&'static str> {
    vec!["input", "departure"]
}

/// u(n) of an interval: `input` is ABS section 4.1's (S1 + S2) / (C T), the bytes that arrived
/// (enqueued or dropped) over what the link could send; `departure` is the time the link spent
/// transmitting over T.
pub fn measured_util(view: &QueueView, measure: &str) -> f64 {
    if measure == "departure" {
        view.utilization
    } else {
        view.input_utilization
    }
}

/// p(n) = S2 / (S1 + S2): drops over arrivals in the interval (0 if nothing arrived).
pub fn measured_loss(view: &QueueView) -> f64 {
    crate::metrics::ratio(view.drops, view.arrivals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(rtts_ms: &[f64]) -> LinkContext {
        LinkContext {
            rate_bps: 16e6,
            pkt_bytes: 1000,
            rtts_s: rtts_ms.iter().map(|r| r / 1e3).collect(),
            default_rtt_s: 0.1,
            wmax_pkts: 64.0,
        }
    }

    #[test]
    fn the_link_context_uses_the_harmonic_mean_rtt() {
        let l = link(&[50.0, 150.0]);
        assert!((l.rtt_harmonic_s() - 0.075).abs() < 1e-12);
        assert_eq!(l.flows(), 2.0);
        assert_eq!(l.pkts_in(0.1), 200.0);
        let empty = link(&[]);
        assert_eq!((empty.rtt_harmonic_s(), empty.flows()), (0.1, 1.0));
        assert!((link(&[100.0]).peak_load() - 64.0 * 8000.0 / 0.1 / 16e6).abs() < 1e-12);
        let nominal = l.assuming_rtt(Some(80.0));
        assert_eq!((nominal.rtt_harmonic_s(), nominal.flows()), (0.08, 2.0));
        assert_eq!(empty.assuming_rtt(Some(80.0)).rtt_harmonic_s(), 0.08);
        assert_eq!(l.assuming_rtt(None), l);
    }

    #[test]
    fn whole_packets_round_half_to_even_and_keep_one() {
        assert_eq!((whole_pkts(2.5), whole_pkts(3.5), whole_pkts(-4.0), whole_pkts(0.2)), (2, 4, 1, 1));
    }
}

//! `enachescu`: Enachescu et al. (2006), Theorem 1: factor x log_{1/rho}(Wmax^2 / (2 (1 - theta))).
//! Details: docs/engine.md, `policy/enachescu.rs`.

use super::{static_rule, LinkContext, PolicyEntry};
use crate::params::{VariantDef, float_in, normalize, opt, positive};

crate::params! {
    /// b = factor x log(Wmax^2 / (2 (1 - theta))) / log(1 / rho).
    pub struct EnachescuParams as "Enachescu" {
        /// Multiplies the rule.
        factor: f64 = 1.0, unit "1", check positive(1e6);
        /// The effective utilization the buffer is sized for.
        theta: f64 = 0.9, unit "1", check float_in(0.01, 0.99);
        /// Size for this RTT instead of the harmonic mean of the flows' RTTs (a rule of thumb
        /// applied to a link's nominal RTT); null: the flows' own.
        rtt_ms: Option<f64> = None, unit "ms", check opt(positive(1e5));
    }
}

pub const ENTRY: PolicyEntry = PolicyEntry {
    def: VariantDef {
        name: "enachescu",
        doc: "factor x log_{1/rho}(Wmax^2 / (2 (1 - theta))) (Enachescu et al. 2006, paced senders)",
        params: EnachescuParams::specs,
        keys: EnachescuParams::KEYS,
        normalize: normalize::<EnachescuParams>,
    },
    adaptive: false,
    make: |v, link| static_rule(v, link, pkts),
};

pub fn pkts(p: &EnachescuParams, link: &LinkContext) -> f64 {
    let link = &link.assuming_rtt(p.rtt_ms);
    let rho = link.peak_load().clamp(0.05, 0.95);
    p.factor * (link.wmax_pkts.powi(2) / (2.0 * (1.0 - p.theta))).ln() / (1.0 / rho).ln()
}

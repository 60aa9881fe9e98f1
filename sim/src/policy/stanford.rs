//! `stanford`: Appenzeller, Keslassy and McKeown (2004), b = factor x C x R / sqrt(N) for N long
//! flows, R the harmonic mean of their RTTs. factor = 1 is the paper's rule; ABS section 4.2
//! compares against factor = 2.

use super::{static_rule, LinkContext, PolicyEntry};
use crate::params::{VariantDef, normalize, opt, positive};

crate::params! {
    /// b = factor x C x R / sqrt(N).
    pub struct StanfordParams as "Stanford" {
        /// Multiplies the rule (ABS uses 2).
        factor: f64 = 1.0, unit "1", check positive(1e6);
        /// Size for this RTT instead of the harmonic mean of the flows' RTTs (a rule of thumb
        /// applied to a link's nominal RTT); null: the flows' own.
        rtt_ms: Option<f64> = None, unit "ms", check opt(positive(1e5));
    }
}

pub const ENTRY: PolicyEntry = PolicyEntry {
    def: VariantDef {
        name: "stanford",
        doc: "factor x C x RTT / sqrt(N) (Appenzeller et al. 2004; ABS uses factor 2)",
        params: StanfordParams::specs,
        keys: StanfordParams::KEYS,
        normalize: normalize::<StanfordParams>,
    },
    adaptive: false,
    make: |v, link| static_rule(v, link, pkts),
};

pub fn pkts(p: &StanfordParams, link: &LinkContext) -> f64 {
    let link = &link.assuming_rtt(p.rtt_ms);
    p.factor * link.pkts_in(link.rtt_harmonic_s()) / link.flows().sqrt()
}

//! `dick_newreno`: Dick (2005): a NewReno flow that loses k packets in a congestion event halves
//! its window once, not k times, so it keeps the link busy with b = k x C x R / 2, R the harmonic
//! mean RTT of the link's long flows; `factor` is k.

use super::{static_rule, LinkContext, PolicyEntry};
use crate::params::{VariantDef, normalize, opt, positive};

crate::params! {
    /// b = factor x C x R / 2.
    pub struct DickNewrenoParams as "DickNewreno" {
        /// k: the packets lost per congestion event.
        factor: f64 = 1.0, unit "1", check positive(1e6);
        /// Size for this RTT instead of the harmonic mean of the flows' RTTs (a rule of thumb
        /// applied to a link's nominal RTT); null: the flows' own.
        rtt_ms: Option<f64> = None, unit "ms", check opt(positive(1e5));
    }
}

pub const ENTRY: PolicyEntry = PolicyEntry {
    def: VariantDef {
        name: "dick_newreno",
        doc: "factor x C x RTT / 2 (Dick 2005, NewReno losing factor packets per event)",
        params: DickNewrenoParams::specs,
        keys: DickNewrenoParams::KEYS,
        normalize: normalize::<DickNewrenoParams>,
    },
    adaptive: false,
    make: |v, link| static_rule(v, link, pkts),
};

pub fn pkts(p: &DickNewrenoParams, link: &LinkContext) -> f64 {
    let link = &link.assuming_rtt(p.rtt_ms);
    p.factor * link.pkts_in(link.rtt_harmonic_s()) / 2.0
}

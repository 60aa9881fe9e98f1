//! `bdp`: the bandwidth-delay rule of thumb (Villamizar and Song 1994), b = factor x C x R, with R
//! the harmonic mean of the RTTs of the long flows crossing the link, as ABS (section 4.2) and
//! BSCL (Dhamdhere et al. 2005) use it.

use super::{static_rule, LinkContext, PolicyEntry};
use crate::params::{VariantDef, normalize, opt, positive};

crate::params! {
    /// b = factor x C x R (harmonic mean RTT).
    pub struct BdpParams as "Bdp" {
        /// Multiplies the rule.
        factor: f64 = 1.0, unit "1", check positive(1e6);
        /// Size for this RTT instead of the harmonic mean of the flows' RTTs (a rule of thumb
        /// applied to a link's nominal RTT); null: the flows' own.
        rtt_ms: Option<f64> = None, unit "ms", check opt(positive(1e5));
    }
}

pub const ENTRY: PolicyEntry = PolicyEntry {
    def: VariantDef {
        name: "bdp",
        doc: "factor x C x RTT, RTT the harmonic mean of the link's long flows",
        params: BdpParams::specs,
        keys: BdpParams::KEYS,
        normalize: normalize::<BdpParams>,
    },
    adaptive: false,
    make: |v, link| static_rule(v, link, pkts),
};

pub fn pkts(p: &BdpParams, link: &LinkContext) -> f64 {
    let link = &link.assuming_rtt(p.rtt_ms);
    p.factor * link.pkts_in(link.rtt_harmonic_s())
}
